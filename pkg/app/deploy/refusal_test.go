package deploy

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host/stage"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// When the host's generator rejects the future unit set nothing changes:
// the run is journalled as refused (an apply) or not at all (--diff), and
// each message names the spec its unit file comes from.
func TestStagingFailureChangesNothing(t *testing.T) {
	for _, diff := range []bool{false, true} {
		t.Run(map[bool]string{false: "apply", true: "diff"}[diff], func(t *testing.T) {
			h := newHost(t)
			h.stageErr = &stage.Error{Tool: "quadlet", Output: []string{"web.container: unsupported key 'Foo' in group 'Container'"}}
			h.stageWarnings = []string{"api.service: Unknown key name 'X-Bar' in section 'Service', ignoring."}
			h.stageKept = "/tmp/syslet-stage-123"
			specs := writeSpecs(t, stack)
			req := h.request(specs)
			req.Diff = diff
			r := h.run(t, req)
			if r.out.Verdict != verdict.Refused || !errors.Is(r.err, ErrStaging) {
				t.Fatalf("err = %v, want ErrStaging", r.err)
			}
			// web is the third spec of the stream, api the fourth.
			for _, want := range []string{"web.container: unsupported key 'Foo' in group 'Container'  [spec: " + specs + " [2]]"} {
				// Told once: the command prints the error as its last word,
				// and the view not before it.
				if !strings.Contains(r.err.Error(), want) || strings.Contains(r.stderr, want) {
					t.Errorf("error %q should hold %q, and stderr not:\n%s", r.err, want, r.stderr)
				}
			}
			if want := "StagingWarning api.service: Unknown key name 'X-Bar' in section 'Service', ignoring.  [spec: " + specs + " [3]]"; !r.view.has(want) {
				t.Errorf("the view heard no %q: %q", want, r.view.Calls())
			}
			if got := r.view.Calls("Plan", "StagingFailed"); len(got) != 2 || !strings.HasPrefix(got[0], "Plan") || !strings.HasPrefix(got[1], "StagingFailed") {
				t.Errorf("the plan and then the refusal must be shown: %q", r.view.Calls())
			}
			// The kept staging directory is named, for troubleshooting.
			if !r.view.has("StageKept /tmp/syslet-stage-123") || r.out.StageDir != "/tmp/syslet-stage-123" {
				t.Errorf("kept staging directory: outcome %q, view %q", r.out.StageDir, r.view.Calls())
			}
			if got := h.Calls(); !slices.Equal(got, []string{"stage"}) {
				t.Errorf("host calls %q, want only staging", got)
			}
			if files := h.managedTrees(t); len(files) != 0 {
				t.Errorf("files written: %q", files)
			}
			if r.out.Plan == nil || r.out.RunID != "" {
				t.Errorf("outcome: plan %v run %q", r.out.Plan, r.out.RunID)
			}
			if diff {
				if h.exists(layout.Journal) {
					t.Error("--diff journalled a run")
				}
				return
			}
			ri := h.last(t)
			if ri.Result() != runlog.ResultRefused || len(ri.Intent.Actions) != 16 || len(ri.Actions) != 0 || len(ri.Steps) != 0 {
				t.Errorf("journal: %s with %d planned, %d landed; want refused, 16, 0", ri.Result(), len(ri.Intent.Actions), len(ri.Actions))
			}
		})
	}
}

// A plan with refusals changes nothing: it is journalled as refused and
// never staged. A mass removal passes with AllowRemovals.
func TestRefusedPlanChangesNothing(t *testing.T) {
	other := `{"apiVersion":"v1","type":"container","name":"other","unit":{"Container":{"Image":"registry.example/other:1"}}}`
	tests := []struct {
		name    string
		setup   func(t *testing.T, h *fakeHost) // before the refused run
		specs   string
		message string // in the refusal
		wayOut  string // what to do, in the run's error
	}{
		{
			name:    "mass removal",
			setup:   func(t *testing.T, h *fakeHost) { h.apply(t, writeSpecs(t, stack)) },
			specs:   other,
			message: "the plan removes 5 of the 5 managed units (net.network, data.volume, api.container, job.container, web.container); that looks like missing specs",
			wayOut:  "pass --allow-removals to remove them",
		},
		{
			name: "a unit file syslet does not own",
			setup: func(t *testing.T, h *fakeHost) {
				p := layout.Under(h.root, layout.UnitPath("other.container"))
				if err := os.MkdirAll(layout.Under(h.root, layout.UnitDir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("[Container]\nImage=mine\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			specs:   other,
			message: "exists on the host without the [X-Syslet] marker",
			wayOut:  "(remove or rename it, or rename the spec)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			tt.setup(t, h)
			h.reset()
			files := h.managedTrees(t)
			runs := len(h.runs(t))
			r := h.run(t, h.request(writeSpecs(t, tt.specs)))
			if !errors.Is(r.err, plan.ErrRefused) {
				t.Fatalf("err = %v, want plan.ErrRefused", r.err)
			}
			// The run's last word says why and the way out, not only how
			// many refusals the plan above lists.
			if !strings.Contains(r.err.Error(), "nothing was changed") || !strings.Contains(r.err.Error(), tt.message) || !strings.Contains(r.err.Error(), tt.wayOut) {
				t.Errorf("err = %v, want the reason %q and the way out %q", r.err, tt.message, tt.wayOut)
			}
			if !strings.Contains(r.stdout, tt.message) || len(r.out.Plan.Refusals) != 1 {
				t.Errorf("refusals %v; stdout should show %q:\n%s", r.out.Plan.Refusals, tt.message, r.stdout)
			}
			if got := h.Calls(); len(got) != 0 {
				t.Errorf("a refused plan asked the host %q (staging too is skipped)", got)
			}
			if got := h.managedTrees(t); !slices.Equal(got, files) {
				t.Errorf("files changed:\n got %q\nwant %q", got, files)
			}
			all := h.runs(t)
			if len(all) != runs+1 || all[len(all)-1].Result() != runlog.ResultRefused {
				t.Errorf("journal: %d runs (want %d), last %s; want refused", len(all), runs+1, all[len(all)-1].Result())
			}
		})
	}
}

// With AllowRemovals the removals go through, and the resources whose
// reclaim policy says Delete are deleted from podman after their units
// are gone.
func TestAllowRemovals(t *testing.T) {
	h := newHost(t)
	h.apply(t, writeSpecs(t, stack))
	h.reset()
	req := h.request(writeSpecs(t, `{"apiVersion":"v1","type":"container","name":"other","unit":{"Container":{"Image":"registry.example/other:1"}}}`))
	req.AllowRemovals = true
	r := h.run(t, req)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stdout)
	}
	calls := h.Calls()
	for _, want := range []string{"stop web.service", "stop api.service", "rmvol data", "rmnet net", "daemon-reload", "start other.service"} {
		if !slices.Contains(calls, want) {
			t.Errorf("calls %q lack %q", calls, want)
		}
	}
	if slices.Index(calls, "rmvol data") < slices.Index(calls, "stop web.service") || slices.Index(calls, "start other.service") < slices.Index(calls, "daemon-reload") {
		t.Errorf("out of order: %q", calls)
	}
	if got := h.managedTrees(t); !slices.Equal(got, []string{layout.UnitPath("other.container")}) {
		t.Errorf("files left: %q, want only other.container", got)
	}
	if h.last(t).Result() != runlog.ResultOK {
		t.Errorf("journal: %s", h.last(t).Result())
	}
}

// A plan with many refusals repeats the first few in its error, and says
// where the rest are.
func TestRefusedErrorNamesSome(t *testing.T) {
	var rs []plan.Refusal
	for _, u := range []string{"a", "b", "c", "d", "e"} {
		rs = append(rs, plan.Refusal{Unit: u + ".container", Message: "remove it"})
	}
	got := refused(rs).Error()
	want := "the plan has refusals, so nothing was changed:\na.container: remove it\nb.container: remove it\nc.container: remove it\n(and 2 more, listed in the plan above)"
	if got != want || !errors.Is(refused(rs), plan.ErrRefused) {
		t.Errorf("got %q, want %q", got, want)
	}
}
