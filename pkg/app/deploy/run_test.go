package deploy

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
)

// stack is a small host: a network, a volume reclaimed on removal, a
// container with a config file and a config dir it reloads for, a plain
// container and a oneshot job.
const stack = `{"apiVersion":"v1","type":"network","name":"net","unit":{}}
{"apiVersion":"v1","type":"volume","name":"data","reclaimPolicy":"Delete","unit":{}}
{"apiVersion":"v1","type":"container","name":"web","configFiles":[{"mountPath":"/etc/web.conf","content":"a=1\n"}],"configDirs":[{"mountPath":"/etc/web.d","files":[{"name":"x.conf","content":"x\n"}]}],"unit":{"Container":{"Image":"registry.example/web:1","Network":"net.network","Volume":"data.volume:/data"},"Service":{"ExecReload":"/bin/kill -HUP $MAINPID"}}}
{"apiVersion":"v1","type":"container","name":"api","unit":{"Container":{"Image":"registry.example/api:1","Network":"net.network"}}}
{"apiVersion":"v1","type":"container","name":"job","desiredState":"oneshot","unit":{"Container":{"Image":"registry.example/job:1"}}}
`

// stackUnits are the unit files stack renders, as staging is asked to
// verify them.
var stackUnits = []string{"api.container", "data.volume", "job.container", "net.network", "web.container"}

// stackStarts are the services a first apply of stack starts, in order:
// resources before the containers that use them.
var stackStarts = []string{"start net-network.service", "start data-volume.service", "start api.service", "start job.service", "start web.service"}

// stackPulls are its images, each pulled once.
var stackPulls = []string{"pull registry.example/api:1", "pull registry.example/job:1", "pull registry.example/web:1"}

func TestFirstApplyThenConverged(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	r := h.apply(t, specs)

	// The host: files under root, one daemon-reload between the pulls and
	// the starts, every start once.
	want := append(append(append([]string{"stage"}, stackPulls...), "daemon-reload"), stackStarts...)
	if got := h.Calls(); !slices.Equal(got, want) {
		t.Errorf("host calls:\n got %q\nwant %q", got, want)
	}
	for p, want := range map[string]string{
		"/etc/containers/config/web/etc/web.conf":     "a=1\n",
		"/etc/containers/config/web/etc/web.d/x.conf": "x\n",
	} {
		if got := h.file(t, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if u := h.file(t, layout.UnitPath("web.container")); !strings.Contains(u, "Image=registry.example/web:1") || !strings.Contains(u, "[X-Syslet]") {
		t.Errorf("web.container as written:\n%s", u)
	}
	for _, u := range stackUnits {
		if !h.exists(layout.UnitPath(u)) {
			t.Errorf("%s not written", u)
		}
	}
	if len(h.staged) != 1 || !slices.Equal(slices.Sorted(slices.Values(h.staged[0])), stackUnits) {
		t.Errorf("staging verified %q, want every unit written: %q", h.staged, stackUnits)
	}
	if h.closed != 1 {
		t.Errorf("systemd closed %d times, want once", h.closed)
	}
	if who, busy, _ := held(h.root); busy {
		t.Errorf("the apply lock is still held by %s", who)
	}

	// The journal: the intent, one line per action, all landed, then "ok".
	runs := h.runs(t)
	if len(runs) != 1 {
		t.Fatalf("journal holds %d runs, want 1", len(runs))
	}
	ri := runs[0]
	n := len(ri.Intent.Actions)
	if n != 16 || len(ri.Actions) != n {
		t.Fatalf("intent has %d actions, %d landed; want 16 and 16: %q", n, len(ri.Actions), intentOps(ri))
	}
	for _, a := range ri.Actions {
		if a.Result != runlog.ResultOK || *a.Index < 0 || *a.Index >= n || ri.Intent.Actions[*a.Index].Target != a.Target {
			t.Errorf("journal action %+v does not match the intent", a)
		}
	}
	if ri.End == nil || ri.End.Result != runlog.ResultOK || ri.End.Applied != n || ri.End.Failed+ri.End.NotReached != 0 {
		t.Errorf("journal end = %+v, want ok with %d applied", ri.End, n)
	}
	if ri.ID() != r.out.RunID || ri.Intent.Source != specs || ri.Intent.InputDigest == "" || ri.Intent.PlanDigest == "" || ri.Intent.PID != os.Getpid() {
		t.Errorf("journal intent %+v; want run %s from %s", ri.Intent, r.out.RunID, specs)
	}
	var steps []int
	for _, s := range ri.Steps {
		steps = append(steps, s.Step)
	}
	if !slices.Equal(steps, []int{1, 3, 4, 7, 9}) {
		t.Errorf("journalled steps %v, want the five that had actions", steps)
	}

	// The outcome.
	o := r.out
	if o.Summary != "16 applied, 0 failed, 0 not reached" || o.Error != "" || o.Specs != 5 || o.Sources != 1 || o.Source != specs {
		t.Errorf("outcome: summary %q error %q specs %d sources %d source %q", o.Summary, o.Error, o.Specs, o.Sources, o.Source)
	}
	if o.Result == nil || len(o.Result.Applied) != 16 || o.Digest != ri.Intent.PlanDigest || !o.Pending() {
		t.Errorf("outcome result %+v digest %s", o.Result, o.Digest)
	}
	for _, want := range []string{"Applying (run " + o.RunID + ")", "Summary: 16 applied, 0 failed, 0 not reached"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}

	// A second run finds the host converged: it asks for nothing, not even
	// staging or podman's release, and journals that it changed nothing.
	h.reset()
	r = h.apply(t, specs)
	if got := h.Calls(); len(got) != 0 {
		t.Errorf("converged host was asked %q", got)
	}
	if !r.out.Plan.Empty() || r.out.Pending() || r.out.Result != nil || r.out.Summary != "No changes detected. The host matches the specs." {
		t.Errorf("second run: plan %d actions, summary %q", len(r.out.Plan.Actions), r.out.Summary)
	}
	last := h.last(t)
	if len(h.runs(t)) != 2 || last.Result() != runlog.ResultNoChanges || last.ID() != r.out.RunID || len(last.Intent.Actions) != 0 {
		t.Errorf("second run journalled as %s (%s), want no-changes (%s)", last.Result(), last.ID(), r.out.RunID)
	}
	if h.versionCalls != 0 {
		t.Errorf("podman's release was asked %d times for specs every podman understands", h.versionCalls)
	}
}

// A --diff plans against the live host and prints, and nothing else: no
// change, no journal line, no lock file.
func TestDiffChangesNothing(t *testing.T) {
	h := newHost(t)
	req := h.request(writeSpecs(t, stack))
	req.Diff = true
	r := h.run(t, req)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := h.Calls(); !slices.Equal(got, []string{"stage"}) {
		t.Errorf("--diff asked the host for %q; only staging may run", got)
	}
	if files := h.managedTrees(t); len(files) != 0 {
		t.Errorf("--diff wrote %q", files)
	}
	for _, p := range []string{layout.Journal, layout.LockFile, layout.StoredSpecs} {
		if h.exists(p) {
			t.Errorf("--diff created %s", p)
		}
	}
	o := r.out
	if o.RunID != "" || o.Result != nil || !o.Pending() || len(o.Plan.Actions) != 16 || !strings.HasPrefix(o.Summary, "Plan: 5 to create") {
		t.Errorf("outcome: run %q result %v pending %v summary %q", o.RunID, o.Result, o.Pending(), o.Summary)
	}
	if !r.view.has("Plan ") || r.view.has("Applying") || r.out.Verdict != verdict.Planned {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// Input that is not a valid spec set stops the run before the host is
// opened: nothing is written, locked, stored or journalled.
func TestInvalidInputChangesNothing(t *testing.T) {
	tests := []struct {
		name    string
		path    string // "-": stdin
		input   string
		finding string // in the findings on stderr
	}{
		{"container without image", "", `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{}}}`, "[Container] Image is required"},
		{"unknown type", "", `{"apiVersion":"v1","type":"deployment","name":"p","unit":{}}`, `type "deployment" is not one of`},
		{"not JSON", "", `{"apiVersion":`, "invalid JSON: line 1"},
		{"empty stdin", "-", "", "stdin: holds no JSON value"},
		{"blank stdin", "-", " \n\t\n", "stdin: holds no JSON value"},
		{"empty file", "", "", "holds no JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			opened := 0
			req := h.request(tt.path)
			req.Host = func(ctx context.Context, r *Request) (*Live, error) { opened++; return h.live(ctx, r) }
			if tt.path == "-" {
				req.Stdin = strings.NewReader(tt.input)
			} else {
				req.Path = writeSpecs(t, tt.input)
			}
			r := h.run(t, req)
			if r.out.Verdict != verdict.Invalid {
				t.Fatalf("err = %v, want ErrInvalid", r.err)
			}
			if !strings.Contains(r.stderr, tt.finding) || len(r.out.Findings) == 0 {
				t.Errorf("findings %v; stderr should name %q:\n%s", r.out.Findings, tt.finding, r.stderr)
			}
			if !strings.HasSuffix(r.out.Summary, "in the specs; nothing was changed") || r.out.Plan != nil || r.out.Error == "" {
				t.Errorf("outcome: summary %q plan %v error %q", r.out.Summary, r.out.Plan, r.out.Error)
			}
			if opened != 0 || len(h.Calls()) != 0 {
				t.Errorf("host opened %d times, asked %q", opened, h.Calls())
			}
			for _, p := range []string{layout.Journal, layout.LockFile, layout.StoredSpecs, layout.UnitDir} {
				if h.exists(p) {
					t.Errorf("%s created", p)
				}
			}
		})
	}
}

// Confirm is asked once the plan is printed: a no changes nothing, a yes
// applies. A plan with nothing to do does not ask.
func TestConfirm(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	asked := 0
	req := h.request(specs)
	req.Confirm = func() bool { asked++; return false }
	r := h.run(t, req)
	if r.out.Verdict != verdict.Declined || asked != 1 {
		t.Fatalf("declined: err %v, asked %d times", r.err, asked)
	}
	if files := h.managedTrees(t); len(files) != 0 || h.exists(layout.Journal) || !slices.Equal(h.Calls(), []string{"stage"}) {
		t.Errorf("a declined apply changed the host: files %q calls %q", files, h.Calls())
	}
	if !strings.Contains(r.stdout, "Steps, in the order they run:") {
		t.Errorf("the plan was not printed before asking:\n%s", r.stdout)
	}

	req.Confirm = func() bool { asked++; return true }
	if r := h.run(t, req); r.err != nil || asked != 2 || !h.exists(layout.UnitPath("web.container")) {
		t.Fatalf("confirmed: err %v, asked %d", r.err, asked)
	}
	if r := h.run(t, req); r.err != nil || asked != 2 {
		t.Errorf("converged: err %v, asked %d times (an empty plan needs no yes)", r.err, asked)
	}
}
