package deploy

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// stopAt returns a Request that closes its Stop channel when the fake
// host is asked for call (during that action) or when step ends
// (AfterStep), whichever is set, and the steps AfterStep saw.
func (h *fakeHost) stopAt(path, call string, step int) (Request, *[]int) {
	req := h.request(path)
	stop := make(chan struct{})
	var once sync.Once
	req.Stop = stop
	seen := &[]int{}
	req.AfterStep = func(s int, _ string) {
		*seen = append(*seen, s)
		if s == step {
			once.Do(func() { close(stop) })
		}
	}
	if call != "" {
		h.before = func(c string) {
			if c == call {
				once.Do(func() { close(stop) })
			}
		}
	}
	return req, seen
}

// A graceful stop finishes the action in progress, runs nothing after
// it, and journals the run as interrupted. The next run resumes it: the
// actions only the journal knows are still owed are carried and run, and
// every service ends up started exactly once over both runs.
func TestInterruptedRunResumes(t *testing.T) {
	tests := []struct {
		name       string
		call       string // stop while the host does this
		step       int    // or when this step ends
		landed     []string
		steps      []int // the steps AfterStep saw
		applied    int
		carried    []string // actions the resume carries from the journal
		nextCalls  []string
		notReached int
	}{
		{
			name: "after daemon-reload", step: 7,
			landed: append(slices.Clone(stackPulls), "daemon-reload"), steps: []int{1, 3, 4, 7},
			applied: 11, notReached: 5,
			// The unit files are in place and loaded: only the journal says
			// the volume, the network and the oneshot were never started.
			carried:   []string{"start net-network.service", "start data-volume.service", "start job.service"},
			nextCalls: stackStarts,
		},
		{
			name: "during a pull", call: "pull registry.example/job:1",
			landed: stackPulls[:2], steps: []int{},
			applied: 2, notReached: 14,
			// Nothing was written: the new plan holds every action anyway.
			nextCalls: append(append(append([]string{"stage"}, stackPulls[2]), "daemon-reload"), stackStarts...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			specs := writeSpecs(t, stack)
			req, seen := h.stopAt(specs, tt.call, tt.step)
			r := h.run(t, req)
			if r.out.Verdict != verdict.Interrupted {
				t.Fatalf("err = %v, want ErrInterrupted", r.err)
			}
			if got := h.Calls()[1:]; !slices.Equal(got, tt.landed) {
				t.Errorf("host calls after staging:\n got %q\nwant %q", got, tt.landed)
			}
			if !slices.Equal(*seen, tt.steps) {
				t.Errorf("AfterStep saw steps %v, want %v", *seen, tt.steps)
			}
			res := r.out.Result
			if !res.Interrupted || len(res.Applied) != tt.applied || len(res.Failed) != 0 || len(res.NotReached) != tt.notReached {
				t.Errorf("result: %s (interrupted %v)", r.out.Summary, res.Interrupted)
			}
			if !strings.HasPrefix(r.out.Summary, "interrupted: ") || !strings.Contains(r.stdout, "Summary — interrupted:") {
				t.Errorf("summary %q; stdout:\n%s", r.out.Summary, r.stdout)
			}
			first := h.last(t)
			if first.Result() != runlog.ResultInterrupted || first.End.Applied != tt.applied || first.End.NotReached != tt.notReached {
				t.Errorf("journal end %+v, want interrupted", first.End)
			}

			h.before = nil
			h.reset()
			r = h.apply(t, specs)
			if got := h.Calls(); !slices.Equal(got, tt.nextCalls) {
				t.Errorf("resuming run asked:\n got %q\nwant %q", got, tt.nextCalls)
			}
			p := r.out.Plan
			if p.Resume == nil || p.Resume.Run != first.ID() || p.Resume.Unfinished != tt.notReached || p.Resume.Resumed != tt.notReached || p.Resume.Carried != len(tt.carried) {
				t.Fatalf("resume %+v, want run %s: %d unfinished, all resumed, %d carried", p.Resume, first.ID(), tt.notReached, len(tt.carried))
			}
			var carried []string
			for _, a := range p.Actions {
				if a.Carried {
					carried = append(carried, string(a.Op)+" "+a.Target)
				}
			}
			if !slices.Equal(carried, tt.carried) {
				t.Errorf("carried %q, want %q", carried, tt.carried)
			}
			if len(r.view.plans) != 1 || r.view.plans[0].Resume == nil || r.view.plans[0].Resume.Run != first.ID() {
				t.Errorf("the plan shown does not resume %s: %q", first.ID(), r.view.Calls())
			}
			next := h.last(t)
			if next.Intent.Resumes != first.ID() || next.Result() != runlog.ResultOK {
				t.Errorf("journal: run %s resumes %q, ended %s", next.ID(), next.Intent.Resumes, next.Result())
			}
			for _, a := range next.Intent.Actions {
				if a.Carried != slices.Contains(tt.carried, a.Op+" "+a.Target) {
					t.Errorf("journal intent marks %s %s carried=%v", a.Op, a.Target, a.Carried)
				}
			}

			// Resumed and converged: the third run does nothing and carries
			// nothing.
			h.reset()
			if r := h.apply(t, specs); !r.out.Plan.Empty() || r.out.Plan.Resume != nil || len(h.Calls()) != 0 {
				t.Errorf("after the resume: plan %d actions, resume %+v, calls %q", len(r.out.Plan.Actions), r.out.Plan.Resume, h.Calls())
			}
		})
	}
}

// A oneshot whose start the interrupted run never journalled is run by
// the resume only when systemd has not started it since that run began:
// a job systemd already ran for it must not run twice.
func TestResumeRunsOneshotOnce(t *testing.T) {
	tests := []struct {
		name    string
		started func(runBegan time.Time) (time.Time, bool)
		runs    bool
	}{
		{"never started", func(time.Time) (time.Time, bool) { return time.Time{}, false }, true},
		{"started before the run began", func(b time.Time) (time.Time, bool) { return b.Add(-time.Hour), true }, true},
		{"started after the run began", func(b time.Time) (time.Time, bool) { return b.Add(time.Second), true }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			specs := writeSpecs(t, stack)
			req, _ := h.stopAt(specs, "", int(plan.StepDaemonReload))
			if r := h.run(t, req); r.out.Verdict != verdict.Interrupted {
				t.Fatalf("first run: %v", r.err)
			}
			began := h.last(t).Intent.Time
			if at, ok := tt.started(began); ok {
				h.started["job.service"] = at // what systemd reports, e.g. after a kill mid-start
			}
			h.reset()
			r := h.apply(t, specs)
			if got := slices.Contains(h.Calls(), "start job.service"); got != tt.runs {
				t.Errorf("job.service started by the resume: %v, want %v (calls %q)", got, tt.runs, h.Calls())
			}
			if !slices.Contains(h.Calls(), "start web.service") || r.out.Plan.Resume == nil {
				t.Errorf("the rest of the interrupted run was not resumed: calls %q resume %+v", h.Calls(), r.out.Plan.Resume)
			}
		})
	}
}

// Runs refused before any change are looked past: an interrupted run
// followed by a refused one is still resumed by the run after.
func TestResumeLooksPastRefusedRuns(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	req, _ := h.stopAt(specs, "", int(plan.StepDaemonReload))
	if r := h.run(t, req); r.out.Verdict != verdict.Interrupted {
		t.Fatalf("first run: %v", r.err)
	}
	interrupted := h.last(t).ID()

	// A new image for web: a unit write, which staging rejects.
	h.fail["stage"] = errors.New("quadlet rejected the units")
	changed := writeSpecs(t, strings.Replace(stack, "registry.example/web:1", "registry.example/web:2", 1))
	if r := h.run(t, h.request(changed)); r.out.Verdict != verdict.Refused || !errors.Is(r.err, ErrStaging) {
		t.Fatalf("second run: %v, want ErrStaging", r.err)
	}
	if got := h.last(t).Result(); got != runlog.ResultRefused {
		t.Fatalf("second run journalled %s, want refused", got)
	}

	delete(h.fail, "stage")
	h.reset()
	r := h.apply(t, specs)
	if r.out.Plan.Resume == nil || r.out.Plan.Resume.Run != interrupted {
		t.Fatalf("resume %+v, want run %s", r.out.Plan.Resume, interrupted)
	}
	if got := h.Calls(); !slices.Equal(got, stackStarts) {
		t.Errorf("calls %q, want the starts the interrupted run owed: %q", got, stackStarts)
	}
}

// A --diff while an apply holds the lock says so, and does not offer to
// resume the journal's last run: that run is the one in progress.
func TestDiffDuringApplyDoesNotResume(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	req, _ := h.stopAt(specs, "", int(plan.StepDaemonReload))
	if r := h.run(t, req); r.out.Verdict != verdict.Interrupted {
		t.Fatalf("first run: %v", r.err)
	}
	diff := h.request(specs)
	diff.Diff = true
	if r := h.run(t, diff); r.err != nil || r.out.Plan.Resume == nil {
		t.Fatalf("without a running apply, --diff shows the resume: err %v resume %+v", r.err, r.out.Plan.Resume)
	}

	lk, err := acquire(t.Context(), nil, h.root, time.Second, Holder{PID: 4242, Since: time.Now(), Source: "git infra@abc"}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.unlock()
	r := h.run(t, diff)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.out.Plan.Resume != nil || slices.ContainsFunc(r.out.Plan.Actions, func(a plan.Action) bool { return a.Carried }) {
		t.Errorf("--diff during an apply carries the running apply's actions: %+v", r.out.Plan.Resume)
	}
	if !r.view.has("Busy pid 4242 (source git infra@abc") {
		t.Errorf("stderr does not name the running apply:\n%s", r.stderr)
	}
}
