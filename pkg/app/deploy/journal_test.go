package deploy

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
)

// breakJournal leaves the run journal readable but unable to start a new
// run: the current file is past its rotation size, ends with a run that
// closed well (what the next plan reads), and the rotation's target is a
// directory that cannot be replaced.
func breakJournal(t *testing.T, h *fakeHost) {
	t.Helper()
	p := layout.Under(h.root, layout.Journal)
	if err := os.MkdirAll(p+".1/keep", 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	// Lines that are not records are skipped by every reader.
	filler := []byte(strings.Repeat("#", 1023) + "\n")
	for range runlog.DefaultMaxSize/len(filler) + 1 {
		if _, err := f.Write(filler); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	j := runlog.Open(h.root)
	j.MaxSize = 0 // appended as is, not rotated
	if _, err := j.Record(runlog.Record{Source: "earlier"}, runlog.Record{Result: runlog.ResultOK}); err != nil {
		t.Fatal(err)
	}
}

// An apply whose intent cannot be journalled changes nothing: a change
// the journal does not know of could not be resumed exactly.
func TestJournalUnwritableChangesNothing(t *testing.T) {
	h := newHost(t)
	breakJournal(t, h)
	r := h.run(t, h.request(writeSpecs(t, stack)))
	if !errors.Is(r.err, executor.ErrJournal) || !strings.Contains(r.err.Error(), "nothing was changed") || !strings.Contains(r.err.Error(), "rotating the run journal") {
		t.Fatalf("err = %v, want ErrJournal with nothing changed", r.err)
	}
	if got := h.Calls(); !slices.Equal(got, []string{"stage"}) {
		t.Errorf("host calls %q, want only staging", got)
	}
	if files := h.managedTrees(t); len(files) != 0 {
		t.Errorf("files written: %q", files)
	}
	if r.out.Result != nil {
		t.Errorf("result %+v for a run that never began", r.out.Result)
	}
}

// A run that changes nothing only warns when it cannot journal that: the
// host is as the specs say either way.
func TestJournalUnwritableNoChangesWarns(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	h.apply(t, specs)
	breakJournal(t, h)
	h.reset()
	r := h.apply(t, specs)
	if !r.out.Plan.Empty() || len(h.Calls()) != 0 {
		t.Errorf("converged host: plan %d actions, calls %q", len(r.out.Plan.Actions), h.Calls())
	}
	if !slices.ContainsFunc(r.view.Calls("Warning"), func(c string) bool { return strings.Contains(c, "rotating the run journal") }) {
		t.Errorf("stderr lacks the journal warning:\n%s", r.stderr)
	}
}

// What the journal says landed is what the host saw: every action of the
// intent lands once, step after step, and the host's pulls, reload and
// starts happened in the order of their journal lines. (The file writes
// of a step run side by side and are journalled as one batch in the order
// they finished; their lines carry the intent's index.)
func TestJournalMatchesTheHost(t *testing.T) {
	h := newHost(t)
	h.apply(t, writeSpecs(t, stack))
	ri := h.last(t)
	var idx []int
	step := 0
	var hostSide []string
	for _, a := range ri.Actions {
		idx = append(idx, *a.Index)
		if a.Step < step {
			t.Errorf("journal line %s %s (step %d) after step %d", a.Op, a.Target, a.Step, step)
		}
		step = a.Step
		switch a.Op {
		case "pull-image":
			hostSide = append(hostSide, "pull "+a.Target)
		case "daemon-reload":
			hostSide = append(hostSide, "daemon-reload")
		case "start":
			hostSide = append(hostSide, "start "+a.Target)
		}
	}
	slices.Sort(idx)
	for i := range ri.Intent.Actions {
		if i >= len(idx) || idx[i] != i {
			t.Fatalf("journalled indexes %v, want each of the %d intent actions once", idx, len(ri.Intent.Actions))
		}
	}
	if got := h.Calls("pull ", "start ", "daemon-reload"); !slices.Equal(got, hostSide) {
		t.Errorf("host saw %q, journal says %q", got, hostSide)
	}
}
