package deploy

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// An apply from stdin keeps the stream it applied (0600: specs may hold
// private config), so a later run without a path re-applies the same
// specs; a run from stdin that changes nothing on purpose (--diff, a
// refusal, invalid specs) leaves the stored stream alone.
func TestStdinIsStoredForTheNextRun(t *testing.T) {
	h := newHost(t)
	stored := layout.Under(h.root, layout.StoredSpecs)

	// Nothing stored yet: a run without a path says what to do.
	r := h.run(t, h.request(""))
	if r.err == nil || !strings.Contains(r.err.Error(), "no PATH given and "+stored+" does not exist") {
		t.Fatalf("err = %v", r.err)
	}
	if h.exists(layout.Journal) || h.exists(layout.UnitDir) {
		t.Error("a run without specs changed the host")
	}

	fromStdin := func(stream string, diff bool) ran {
		req := h.request("-")
		req.Stdin, req.Diff = strings.NewReader(stream), diff
		return h.run(t, req)
	}
	if r := fromStdin(stack, true); r.err != nil || h.exists(layout.StoredSpecs) {
		t.Fatalf("--diff from stdin: err %v, stored %v", r.err, h.exists(layout.StoredSpecs))
	}

	r = fromStdin(stack, false)
	if r.err != nil {
		t.Fatal(r.err)
	}
	fi, err := os.Stat(stored)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %04o, want 0600", stored, fi.Mode().Perm())
	}
	if got := h.file(t, layout.StoredSpecs); got != stack {
		t.Errorf("stored stream:\n%q\nwant\n%q", got, stack)
	}
	if src := h.last(t).Intent.Source; src != "stdin" || r.out.Source != "stdin" {
		t.Errorf("journal source %q, outcome source %q; want stdin", src, r.out.Source)
	}

	// Stored again over a copy someone opened up, it is private again.
	if err := os.Chmod(stored, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := fromStdin(stack, false); r.err != nil || !r.out.Plan.Empty() {
		t.Fatalf("same stream again: err %v", r.err)
	}
	if fi, err := os.Stat(stored); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s rewritten with mode %v (%v), want 0600", stored, fi.Mode().Perm(), err)
	}

	// Refused and invalid streams from stdin are not stored.
	for _, bad := range []string{
		`{"apiVersion":"v1","type":"container","name":"other","unit":{"Container":{"Image":"registry.example/other:1"}}}`, // removes all five
		`{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{}}}`,
		"",
	} {
		r := fromStdin(bad, false)
		if !errors.Is(r.err, plan.ErrRefused) && r.out.Verdict != verdict.Invalid {
			t.Errorf("stdin %.40q: err = %v, want a refusal", bad, r.err)
		}
		if got := h.file(t, layout.StoredSpecs); got != stack {
			t.Errorf("stdin %.40q replaced the stored stream", bad)
		}
	}

	// A plain run reads the stored stream: the host is converged.
	h.reset()
	r = h.apply(t, "")
	if !r.out.Plan.Empty() || len(h.Calls()) != 0 || r.out.Specs != 5 {
		t.Errorf("stored stream: %d specs, plan %d actions, calls %q", r.out.Specs, len(r.out.Plan.Actions), h.Calls())
	}
	last := h.last(t)
	if last.Result() != runlog.ResultNoChanges || last.Intent.Source != stored || r.out.Source != stored {
		t.Errorf("journal: %s from %q; want no-changes from %s", last.Result(), last.Intent.Source, stored)
	}
}

// A plain run applies the stream the last apply from stdin stored: its
// plan's header names that file and its age, and when the host's current
// generation came from elsewhere (an apply of a directory since), the run
// warns that it would undo it, naming that run.
func TestStoredSpecsAreNamedAndWarnedWhenNotCurrent(t *testing.T) {
	h := newHost(t)
	req := h.request("-")
	req.Stdin = strings.NewReader(stack)
	if r := h.run(t, req); r.err != nil {
		t.Fatal(r.err)
	}
	plain := h.request("")
	plain.Diff = true
	r := h.run(t, plain)
	stored := layout.Under(h.root, layout.StoredSpecs)
	if r.err != nil || !strings.Contains(r.stdout, "from "+stored+" (stored by the last apply from stdin or rollback, at ") || !strings.Contains(r.stdout, "just now)") {
		t.Fatalf("header of a plain run: %v\n%s", r.err, r.stdout)
	}
	if r.view.has("Warning") {
		t.Errorf("a warning while the stored specs are the current generation's: %q", r.view.Calls("Warning"))
	}

	changed := h.apply(t, writeSpecs(t, strings.Replace(stack, "registry.example/api:1", "registry.example/api:2", 1)))
	r = h.run(t, plain)
	want := stored + " is not what the host's current generation applied (run " + changed.out.RunID
	if !slices.ContainsFunc(r.view.Calls("Warning"), func(c string) bool { return strings.Contains(c, want) }) {
		t.Errorf("no warning %q: %q", want, r.view.Calls())
	}
}

// A stream that names its files (syslet push sends one) is journalled
// with those names, so the host's history says which files a push
// applied, not only "stdin".
func TestStdinRunNamesTheStreamsFiles(t *testing.T) {
	h := newHost(t)
	req := h.request("-")
	req.Stdin = bytes.NewReader(spec.NamedStream([]spec.Source{{Name: "hosts/web1/stack.json", Data: []byte(stack)}}))
	r := h.run(t, req)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if src := h.last(t).Intent.Source; src != "stdin: hosts/web1/stack.json" {
		t.Errorf("journal source %q", src)
	}
	var srcs []spec.Source
	for _, n := range []string{"a.json", "b.json", "c.json", "d.json", "e.json"} {
		srcs = append(srcs, spec.Source{Name: n})
	}
	if got := stdinSource(srcs); got != "stdin: a.json, b.json, c.json and 2 more" {
		t.Errorf("five files: %q", got)
	}
}
