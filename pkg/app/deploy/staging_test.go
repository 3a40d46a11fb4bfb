package deploy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
)

// A write that cannot be staged ends the run before anything is stopped:
// the host keeps running what it ran (no stop, no file replaced, nothing
// staged left behind), the summary and the journal say so, and once the
// cause is gone one plain run converges.
func TestStagingFailureStopsNothing(t *testing.T) {
	h := newHost(t)
	h.apply(t, writeSpecs(t, stack))
	before := h.managedTrees(t)
	conf := h.file(t, "/etc/containers/config/web/etc/web.conf")

	// The change: web.conf changes (a restart) and a new config file goes
	// where a file is in the way of its directory, so it cannot be written.
	changed := strings.Replace(stack, `"content":"a=1\n"}]`, `"content":"a=2\n"},{"mountPath":"/srv/extra/big.txt","content":"big\n"}]`, 1)
	blocker := layout.Under(h.root, "/etc/containers/config/web/srv/extra")
	must(t, os.MkdirAll(filepath.Dir(blocker), 0o755))
	must(t, os.WriteFile(blocker, []byte("in the way\n"), 0o644))
	h.reset()
	r := h.run(t, h.request(writeSpecs(t, changed)))
	if !errors.Is(r.err, executor.ErrFailed) || !strings.Contains(r.err.Error(), "/etc/containers/config/web/srv/extra/big.txt") {
		t.Fatalf("err = %v, want a failure naming the file", r.err)
	}
	if got := h.Calls(); slices.ContainsFunc(got, func(c string) bool {
		return strings.HasPrefix(c, "stop ") || strings.HasPrefix(c, "start ") || c == "daemon-reload"
	}) {
		t.Errorf("the host was touched after a staging failure: %q", got)
	}
	if !h.active["web.service"] {
		t.Error("web.service was stopped")
	}
	if got := h.file(t, "/etc/containers/config/web/etc/web.conf"); got != conf {
		t.Errorf("web.conf = %q, want the old %q", got, conf)
	}
	after := h.managedTrees(t)
	if !slices.Equal(after, append(slices.Clone(before), "/etc/containers/config/web/srv/extra")) {
		t.Errorf("the managed trees changed:\n got %q\nwas %q", after, before)
	}
	for _, want := range []string{"FAILED 3. write-file /etc/containers/config/web/srv/extra/big.txt", "Nothing was stopped or replaced"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.out.Summary, "the host was put back as it was") {
		t.Errorf("outcome summary %q", r.out.Summary)
	}
	ri := h.last(t)
	if ri.Result() != runlog.ResultFailed || !strings.Contains(ri.End.Error, "Nothing was stopped or replaced") || !ri.End.PutBack {
		t.Errorf("journal end %+v", ri.End)
	}

	// The cause gone, one plain run converges (and says it makes the change
	// again, not that it finishes it) and the next plans nothing.
	must(t, os.Remove(blocker))
	if r := h.apply(t, writeSpecs(t, changed)); !strings.Contains(r.stdout, "previous run "+ri.ID()+" failed and put the host back; ") {
		t.Errorf("the run after a put-back:\n%s", r.stdout)
	}
	if got := h.file(t, "/etc/containers/config/web/srv/extra/big.txt"); got != "big\n" {
		t.Errorf("big.txt = %q", got)
	}
	if r := h.apply(t, writeSpecs(t, changed)); !strings.Contains(r.stdout, "No changes") {
		t.Errorf("third run:\n%s", r.stdout)
	}
}

// What an interrupted run left in the trees is removed by the next apply,
// before it stages anything, and never planned as a change; a --diff only
// mentions it.
func TestLeftoversAreRemovedByTheNextApply(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	h.apply(t, specs)
	left := []string{
		layout.UnitDir + "/" + layout.TempPrefix + "00112233445566aa",
		"/etc/containers/config/web/etc/" + layout.BackupPrefix + "00112233445566bb",
		"/etc/containers/config/web/etc/web.d/" + layout.DirTempPrefix + "00112233445566cc",
		"/etc/containers/config/web/etc/web.d/..v9",
	}
	for _, p := range left {
		hp := layout.Under(h.root, p)
		if strings.HasSuffix(p, "..v9") {
			must(t, os.MkdirAll(hp, 0o755))
			must(t, os.WriteFile(hp+"/x.conf", []byte("staged\n"), 0o644))
			continue
		}
		must(t, os.WriteFile(hp, []byte("half\n"), 0o644))
	}
	d := h.run(t, Request{Path: specs, Root: h.root, Host: h.live, Diff: true})
	if d.err != nil || !d.out.Plan.Empty() || !d.view.has("Leftovers 4") {
		t.Fatalf("--diff: %v\n%s\n%s", d.err, d.stdout, d.stderr)
	}
	for _, p := range left {
		if !h.exists(p) {
			t.Errorf("--diff removed %s", p)
		}
	}
	r := h.apply(t, specs)
	if !r.view.has("Swept 4") {
		t.Errorf("apply did not say what it removed:\n%s", r.stderr)
	}
	for _, p := range left {
		if h.exists(p) {
			t.Errorf("%s is still there", p)
		}
	}
	if got := h.file(t, "/etc/containers/config/web/etc/web.d/x.conf"); got != "x\n" {
		t.Errorf("the config dir reads %q after the sweep", got)
	}
}
