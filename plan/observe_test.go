package plan_test

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
)

type treeReader map[string]host.File

func (t treeReader) ReadTree(...string) (map[string]host.File, error) { return t, nil }

// units answers every unit as loaded and active, and counts the per-unit
// NeedDaemonReload reads.
type units struct {
	loadedAt time.Time
	stale    map[string]bool
	asked    int
}

func (u *units) UnitStates(_ context.Context, names []string) (map[string]host.UnitState, error) {
	out := map[string]host.UnitState{}
	for _, n := range names {
		out[n] = host.UnitState{Name: n, LoadState: "loaded", ActiveState: "active"}
	}
	return out, nil
}

func (u *units) UnitsLoadedAt(context.Context) (time.Time, error) { return u.loadedAt, nil }

func (u *units) NeedDaemonReload(_ context.Context, names []string) (map[string]bool, error) {
	u.asked++
	return u.stale, nil
}

// A converged host costs one call to systemd for reload state; only a unit
// file newer than systemd's last load makes syslet ask unit by unit.
func TestObserveAsksForReloadStateOnlyWhenAFileIsNewer(t *testing.T) {
	out := renderStream(t, base)
	load := time.Unix(2000, 0)
	for _, tc := range []struct {
		name    string
		modTime time.Time
		asked   int
	}{
		{"files older than the last load", load.Add(-time.Minute), 0},
		{"a file newer than the last load", load.Add(time.Second), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := treeReader{}
			for _, u := range out.Units {
				files[u.Path] = host.File{Data: u.Bytes(), Mode: 0o644, ModTime: load.Add(-time.Hour).UnixNano()}
			}
			files[layout.UnitDir+"/web.container"] = host.File{Data: []byte("x"), Mode: 0o644, ModTime: nanos(tc.modTime)}
			u := &units{loadedAt: load, stale: map[string]bool{"web.service": true}}
			obs, err := plan.Observe(context.Background(), plan.Sources{Files: files, Units: u}, out)
			if err != nil {
				t.Fatal(err)
			}
			if u.asked != tc.asked {
				t.Fatalf("asked unit by unit %d time(s), want %d", u.asked, tc.asked)
			}
			if got := obs.Units["web.service"].NeedDaemonReload; got != (tc.asked == 1) {
				t.Errorf("web.service NeedDaemonReload = %v", got)
			}
		})
	}
}

// store is podman's store: one image present, one secret; it counts the
// secret listings.
type store struct{ listed int }

func (s *store) Secrets(context.Context) ([]host.Secret, error) {
	s.listed++
	return []host.Secret{{Name: "old-token"}}, nil
}

func (s *store) ImageExists(_ context.Context, ref string) (bool, error) { return true, nil }
func (s *store) ImageID(context.Context, string) (string, error)         { return "", nil }

// Files, systemd and podman are read side by side; what only the files
// reveal is asked afterwards: the state of a unit installed but no longer
// declared, and the secret store of a host syslet has managed before.
func TestObserveReadsWhatTheFilesAdd(t *testing.T) {
	out := renderStream(t, base)
	for _, tc := range []struct {
		name    string
		managed bool
		listed  int
	}{
		{"a fresh host", false, 0},
		{"a host syslet managed before", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := "[Container]\nImage=busybox\n"
			if tc.managed {
				old += "\n[X-Syslet]\nManagedBy=syslet\n"
			}
			files := treeReader{layout.UnitDir + "/old.container": {Data: []byte(old), Mode: 0o644}}
			st := &store{}
			obs, err := plan.Observe(context.Background(), plan.Sources{Files: files, Units: &units{}, Store: st}, out)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := obs.Units["old.service"]; !ok {
				t.Errorf("the installed, undeclared old.service was not read: %v", obs.Units)
			}
			for _, u := range out.Units {
				if _, ok := obs.Units[u.Service]; !ok {
					t.Errorf("declared %s was not read", u.Service)
				}
			}
			if st.listed != tc.listed {
				t.Errorf("secret store listed %d time(s), want %d", st.listed, tc.listed)
			}
			if _, ok := obs.Secrets["old-token"]; ok != (tc.listed == 1) {
				t.Errorf("secrets: %v", obs.Secrets)
			}
			if len(obs.Images) == 0 || !obs.UnitsKnown || !obs.StoreKnown {
				t.Errorf("images %v, unitsKnown %v, storeKnown %v", obs.Images, obs.UnitsKnown, obs.StoreKnown)
			}
		})
	}
}

// What an interrupted apply left — temporary names anywhere in the
// trees, config dir versions ..data does not name — is set apart: the
// plan does not see it (no remove-file, no rebuild), the apply removes it.
func TestObserveSetsLeftoversApart(t *testing.T) {
	out := renderStream(t, base)
	dir := layout.ConfigRoot + "/app/etc/app/conf.d"
	tmp := "0123456789abcdef"
	files := treeReader{
		layout.UnitDir + "/" + layout.TempPrefix + tmp:              {Data: []byte("[Container]\n"), Mode: 0o600},
		layout.ConfigRoot + "/web/www/" + layout.BackupPrefix + tmp: {Data: []byte("old"), Mode: 0o644},
		layout.BuildRoot + "/app/" + layout.TempPrefix + tmp:        {Data: []byte("x"), Mode: 0o644},
		dir:                                    {Mode: 0o755 | fs.ModeDir},
		dir + "/..data":                        {Link: "..v2", Mode: fs.ModeSymlink},
		dir + "/..v1":                          {Mode: 0o755 | fs.ModeDir},
		dir + "/..v1/a.conf":                   {Data: []byte("1"), Mode: 0o644},
		dir + "/..v2":                          {Mode: 0o755 | fs.ModeDir},
		dir + "/..v2/a.conf":                   {Data: []byte("2"), Mode: 0o644},
		dir + "/a.conf":                        {Link: "..data/a.conf", Mode: fs.ModeSymlink},
		dir + "/" + layout.DirTempPrefix + tmp: {Link: "..v3", Mode: fs.ModeSymlink},
		layout.ConfigRoot + "/web/www/" + layout.TempPrefix + "x":         {Data: []byte("a user's file"), Mode: 0o644},
		layout.ConfigRoot + "/web/" + layout.TempPrefix + tmp:             {Mode: 0o755 | fs.ModeDir},
		layout.ConfigRoot + "/web/" + layout.TempPrefix + tmp + "/..v1":   {Mode: 0o755 | fs.ModeDir},
		layout.ConfigRoot + "/web/" + layout.TempPrefix + tmp + "/..data": {Link: "..v1", Mode: fs.ModeSymlink},
	}
	obs, err := plan.Observe(context.Background(), plan.Sources{Files: files}, out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		layout.BuildRoot + "/app/" + layout.TempPrefix + tmp,
		dir + "/" + layout.DirTempPrefix + tmp,
		dir + "/..v1",
		layout.ConfigRoot + "/web/" + layout.TempPrefix + tmp,
		layout.ConfigRoot + "/web/www/" + layout.BackupPrefix + tmp,
		layout.UnitDir + "/" + layout.TempPrefix + tmp,
	}
	slices.Sort(want)
	if !slices.Equal(obs.Leftovers, want) {
		t.Errorf("leftovers\n got %q\nwant %q", obs.Leftovers, want)
	}
	for _, p := range append(want, dir+"/..v1/a.conf", layout.ConfigRoot+"/web/"+layout.TempPrefix+tmp+"/..v1") {
		if _, ok := obs.Files[p]; ok {
			t.Errorf("%s is still among the files the plan reads", p)
		}
	}
	for _, p := range []string{dir + "/..v2/a.conf", layout.ConfigRoot + "/web/www/" + layout.TempPrefix + "x"} {
		if _, ok := obs.Files[p]; !ok {
			t.Errorf("%s was taken for a leftover", p)
		}
	}
	p := plan.Build(out, obs, plan.Options{})
	if !slices.Equal(p.Leftovers, want) {
		t.Errorf("plan leftovers %q", p.Leftovers)
	}
	for _, a := range p.Actions {
		if strings.Contains(a.Target, layout.TempPrefix+tmp) || strings.Contains(a.Target, "..v1") {
			t.Errorf("the plan acts on a leftover: %s %s", a.Op, a.Target)
		}
	}
}

// nanos is t as host.File.ModTime holds it (zero for the zero time).
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
