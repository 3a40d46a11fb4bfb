package deploy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
)

// A host that cannot be opened ends the run before the lock is taken.
func TestHostUnreachable(t *testing.T) {
	h := newHost(t)
	down := errors.New("connecting to systemd: no such file or directory")
	req := h.request(writeSpecs(t, stack))
	req.Host = func(context.Context, *Request) (*Live, error) { return nil, down }
	r := h.run(t, req)
	if !errors.Is(r.err, down) || r.out.Error != down.Error() || r.out.Summary != "error: "+down.Error() {
		t.Fatalf("err %v, outcome error %q summary %q", r.err, r.out.Error, r.out.Summary)
	}
	for _, p := range []string{layout.LockFile, layout.Journal, layout.UnitDir} {
		if h.exists(p) {
			t.Errorf("%s created", p)
		}
	}
}

// Reading the host's state is bounded by ReadTimeout: a systemd that does
// not answer fails the run with the deadline named, and nothing changes.
func TestReadTimeout(t *testing.T) {
	h := newHost(t)
	h.blockStates = true
	req := h.request(writeSpecs(t, stack))
	req.ReadTimeout = 100 * time.Millisecond
	t0 := time.Now()
	r := h.run(t, req)
	if r.err == nil || !strings.Contains(r.err.Error(), "reading the host's state did not finish within 100ms") || !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", r.err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("a 100ms read timeout took %s", d)
	}
	if len(h.Calls()) != 0 || h.exists(layout.Journal) || h.exists(layout.UnitDir) {
		t.Errorf("changed: calls %q", h.Calls())
	}
	if _, busy, _ := held(h.root); busy {
		t.Error("the lock is held after the run")
	}
}

// Without Request.Host, a root other than "/" is a tree of files: --diff
// plans against it without systemd or podman; an apply that would change
// it is refused, since there is no host to start anything on.
func TestTreeWithoutHost(t *testing.T) {
	root := t.TempDir()
	specs := writeSpecs(t, stack)
	v := newSeenView()
	req := Request{Path: specs, Root: root, Diff: true, View: v}
	out, err := Run(context.Background(), req)
	stdout := v.stdout
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "(no host: systemd and podman are not read") || len(out.Plan.Actions) == 0 {
		t.Errorf("plan without a host:\n%s", stdout.String())
	}
	if !slices.ContainsFunc(out.Plan.Actions, func(a plan.Action) bool { return a.Target == layout.UnitPath("web.container") }) {
		t.Errorf("web.container not planned")
	}

	req.Diff = false
	out, err = Run(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "an apply needs the running host") {
		t.Fatalf("apply without a host: err = %v", err)
	}
	if out.Result != nil || existsUnder(root, layout.UnitDir) || existsUnder(root, layout.Journal) {
		t.Errorf("an apply without a host changed %s", root)
	}
}
