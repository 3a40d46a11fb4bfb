package planfile

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/runlog"
)

// Each thing a saved plan was made from, besides the host's state, is
// named when it differs: the host, the managed root, the input, the podman
// release, the journal's last run.
func TestStalenessNamesEachChange(t *testing.T) {
	saved := &File{Host: "web1", Root: "/", InputDigest: "aaaaaaaaaaaaaaaa", Source: "/srv/specs", Podman: "5.4",
		State: State{LastRun: &RunStamp{Run: "20261201T101003Z-1e331c", Result: runlog.ResultOK}}}
	same := &State{LastRun: &RunStamp{Run: "20261201T101003Z-1e331c", Result: runlog.ResultOK}}
	for _, c := range []struct {
		name                      string
		now                       *State
		host, root, input, podman string
		want                      string // "" : holds
	}{
		{"nothing", same, "web1", "/", "aaaaaaaaaaaaaaaa", "5.4", ""},
		{"another host", same, "web2", "/", "aaaaaaaaaaaaaaaa", "5.4", `the host: the plan was made on "web1", this is "web2"`},
		{"another root", same, "web1", "/srv/root", "aaaaaaaaaaaaaaaa", "5.4", "the managed root: the plan was made for /, this run manages /srv/root"},
		{"another input", same, "web1", "/", "bbbbbbbbbbbbbbbb", "5.4", "the input: its digest is bbbbbbbbbbbb, the plan was made from input aaaaaaaaaaaa (/srv/specs): give the same specs"},
		{"another podman", same, "web1", "/", "aaaaaaaaaaaaaaaa", "5.8", "podman: the units were checked against podman 5.4, now against 5.8"},
		{"another run", &State{LastRun: &RunStamp{Run: "20261201T102044Z-c95ece", Result: runlog.ResultFailed}}, "web1", "/", "aaaaaaaaaaaaaaaa", "5.4",
			"another run since the plan was made: the journal's last run is 20261201T102044Z-c95ece (failed), it was 20261201T101003Z-1e331c (ok)"},
		{"the same run, ended since", &State{LastRun: &RunStamp{Run: "20261201T101003Z-1e331c", Result: runlog.ResultInterrupted}}, "web1", "/", "aaaaaaaaaaaaaaaa", "5.4",
			"the journal's last run is 20261201T101003Z-1e331c (interrupted), it was 20261201T101003Z-1e331c (ok)"},
		{"a first run", &State{LastRun: &RunStamp{Run: "x", Result: runlog.ResultOK}}, "web1", "/", "aaaaaaaaaaaaaaaa", "5.4", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := *saved
			if c.name == "a first run" {
				s.State.LastRun = nil
				c.want = "the journal's last run is x (ok), it was none"
			}
			// A journal whose runs since changed the host: the last run
			// is compared (QuietSince is false).
			busy := []*runlog.RunInfo{{Intent: runlog.Record{Type: runlog.TypeIntent, Run: "x"}, End: &runlog.Record{Type: runlog.TypeEnd, Run: "x", Result: runlog.ResultOK}}}
			got := s.Stale(Now{Host: c.host, Root: c.root, InputDigest: c.input, Podman: c.podman, State: *c.now, Runs: busy})
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("changes %q; want none", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Errorf("changes %q; want one with %q", got, c.want)
			}
		})
	}
}

// QuietSince: only runs that changed nothing (or were refused) after the
// saved one, which must still read as it was saved.
func TestQuietSince(t *testing.T) {
	run := func(id, result string) *runlog.RunInfo {
		ri := &runlog.RunInfo{Intent: runlog.Record{Type: runlog.TypeIntent, Run: id}}
		if result != "" {
			ri.End = &runlog.Record{Type: runlog.TypeEnd, Run: id, Result: result}
		}
		return ri
	}
	stamp := &RunStamp{Run: "r2", Result: runlog.ResultOK}
	for _, c := range []struct {
		name  string
		runs  []*runlog.RunInfo
		stamp *RunStamp
		want  bool
	}{
		{"none since", []*runlog.RunInfo{run("r1", runlog.ResultOK), run("r2", runlog.ResultOK)}, stamp, true},
		{"no changes and refused since", []*runlog.RunInfo{run("r2", runlog.ResultOK), run("r3", runlog.ResultNoChanges), run("r4", runlog.ResultRefused)}, stamp, true},
		{"a change since", []*runlog.RunInfo{run("r2", runlog.ResultOK), run("r3", runlog.ResultNoChanges), run("r4", runlog.ResultOK)}, stamp, false},
		{"a failed run since", []*runlog.RunInfo{run("r2", runlog.ResultOK), run("r3", runlog.ResultFailed)}, stamp, false},
		{"one in progress since", []*runlog.RunInfo{run("r2", runlog.ResultOK), run("r3", "")}, stamp, false},
		{"the saved run reads otherwise now", []*runlog.RunInfo{run("r2", runlog.ResultInterrupted)}, stamp, false},
		{"the saved run is not among them", []*runlog.RunInfo{run("r3", runlog.ResultNoChanges)}, stamp, false},
		{"no run when saved, a quiet one since", []*runlog.RunInfo{run("r1", runlog.ResultNoChanges)}, nil, true},
		{"no run when saved, a change since", []*runlog.RunInfo{run("r1", runlog.ResultOK)}, nil, false},
	} {
		if got := QuietSince(c.runs, c.stamp); got != c.want {
			t.Errorf("%s: quietSince = %v, want %v", c.name, got, c.want)
		}
	}
}
