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
