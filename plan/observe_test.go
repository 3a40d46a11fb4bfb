package plan_test

import (
	"context"
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
				files[u.Path] = host.File{Data: u.File.Bytes(), Mode: 0o644, ModTime: load.Add(-time.Hour)}
			}
			files[layout.UnitDir+"/web.container"] = host.File{Data: []byte("x"), Mode: 0o644, ModTime: tc.modTime}
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
