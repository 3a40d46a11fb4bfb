package deploy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
)

// A failed pull or daemon-reload ends the run where it failed: nothing of
// a later step reaches the host, the journal says "failed" and the summary
// lists what failed and what was not reached.
func TestFailedStepStopsTheRun(t *testing.T) {
	tests := []struct {
		name       string
		fail       string // the host call that fails
		action     string // the plan's action for it
		err        error
		calls      []string // every host call after staging
		written    bool     // whether the files were written
		applied    int
		notReached int
	}{
		{
			name: "pull", fail: "pull registry.example/job:1", action: "pull-image registry.example/job:1", err: errors.New("manifest unknown"),
			calls:   stackPulls[:2],
			applied: 1, notReached: 14,
		},
		{
			name: "daemon-reload", fail: "daemon-reload", action: "daemon-reload systemd", err: errors.New("connection reset by peer"),
			calls:   append(slices.Clone(stackPulls), "daemon-reload"),
			written: true, applied: 10, notReached: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			h.fail[tt.fail] = tt.err
			r := h.run(t, h.request(writeSpecs(t, stack)))
			if !errors.Is(r.err, executor.ErrFailed) || !strings.Contains(r.err.Error(), tt.err.Error()) {
				t.Fatalf("err = %v, want executor.ErrFailed naming %q", r.err, tt.err)
			}
			if got := h.Calls()[1:]; !slices.Equal(got, tt.calls) {
				t.Errorf("host calls after staging:\n got %q\nwant %q", got, tt.calls)
			}
			if got := h.exists(layout.UnitPath("web.container")); got != tt.written {
				t.Errorf("unit files written: %v, want %v", got, tt.written)
			}

			res := r.out.Result
			if res == nil || len(res.Applied) != tt.applied || len(res.Failed) != 1 || len(res.NotReached) != tt.notReached {
				t.Fatalf("result: %s; want %d applied, 1 failed, %d not reached", r.out.Summary, tt.applied, tt.notReached)
			}
			if f := res.Failed[0]; f.Error != tt.err.Error() || string(f.Action.Op)+" "+f.Action.Target != tt.action {
				t.Errorf("failure %+v, want %s", f, tt.action)
			}
			for _, want := range []string{"1 failed", "FAILED", tt.err.Error(), "not reached: ", "start web.service", "Re-run syslet to resume"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("summary lacks %q:\n%s", want, r.stdout)
				}
			}
			if want := fmt.Sprintf("%d applied, 1 failed, %d not reached", tt.applied, tt.notReached); r.out.Summary != want || r.out.Error != r.err.Error() {
				t.Errorf("outcome summary %q error %q, want %q", r.out.Summary, r.out.Error, want)
			}

			ri := h.last(t)
			if ri.Result() != runlog.ResultFailed || ri.End.Applied != tt.applied || ri.End.Failed != 1 || ri.End.NotReached != tt.notReached {
				t.Errorf("journal end %+v, want failed %d/1/%d", ri.End, tt.applied, tt.notReached)
			}
			if len(ri.Actions) != tt.applied+1 || len(ri.Unfinished()) != tt.notReached+1 {
				t.Errorf("journal: %d actions landed, %d unfinished", len(ri.Actions), len(ri.Unfinished()))
			}
			failed := ri.Actions[len(ri.Actions)-1]
			if failed.Result != runlog.ResultFailed || failed.Error != tt.err.Error() {
				t.Errorf("last journal action %+v, want the failure", failed)
			}
		})
	}
}

// Starts are independent: one that fails does not keep the others from
// running, and its failure carries the unit's last log lines. The next
// run starts only what is still down.
func TestFailedStartCarriesItsLog(t *testing.T) {
	h := newHost(t)
	h.fail["start web.service"] = &host.JobError{Unit: "web.service", Op: "start", Result: "failed"}
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("web[42]: line %02d", i))
	}
	h.logs["web.service"] = lines
	specs := writeSpecs(t, stack)
	r := h.run(t, h.request(specs))
	if !errors.Is(r.err, executor.ErrFailed) || !strings.Contains(r.err.Error(), "1 unit(s) failed") {
		t.Fatalf("err = %v, want ErrFailed with 1 unit failed", r.err)
	}
	if got := h.Calls("start "); !slices.Equal(got, stackStarts) {
		t.Errorf("starts %q, want every start attempted: %q", got, stackStarts)
	}
	res := r.out.Result
	if len(res.Applied) != 15 || len(res.Failed) != 1 || len(res.NotReached) != 0 {
		t.Fatalf("result: %d applied, %d failed, %d not reached", len(res.Applied), len(res.Failed), len(res.NotReached))
	}
	f := res.Failed[0]
	// The executor's default: the last 15 lines, oldest first.
	if f.Action.Target != "web.service" || !slices.Equal(f.Log, lines[5:]) || f.Error != "start web.service: job failed" {
		t.Errorf("failure %+v", f)
	}
	for _, want := range []string{"FAILED 9. start web.service: start web.service: job failed", "      | web[42]: line 19", "      | web[42]: line 05"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "line 04") {
		t.Errorf("summary shows more than the last 15 lines:\n%s", r.stdout)
	}
	ri := h.last(t)
	if ri.Result() != runlog.ResultFailed || ri.End.Applied != 15 || ri.End.Failed != 1 {
		t.Errorf("journal end %+v", ri.End)
	}
	if u := ri.Unfinished(); len(u) != 1 || u[0].Target != "web.service" {
		t.Errorf("journal leaves unfinished %+v, want only the start of web.service", u)
	}

	// Fixed: the next run starts web.service and nothing else.
	delete(h.fail, "start web.service")
	h.reset()
	r = h.apply(t, specs)
	if got := h.Calls(); !slices.Equal(got, []string{"start web.service"}) {
		t.Errorf("next run asked %q, want only the failed start", got)
	}
	if r.out.Plan.Resume == nil || r.out.Plan.Resume.Resumed != 1 || r.out.Plan.Resume.Carried != 0 {
		t.Errorf("resume %+v: the start is planned afresh (web is down), and resumes the failed run", r.out.Plan.Resume)
	}
}
