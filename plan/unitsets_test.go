package plan_test

import (
	"io/fs"
	"maps"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
)

// The unit sets staging checks: the directory as read, links read as the
// file beside them, and the future one the plan's unit writes, links and
// removals make of it — an instance's link reading as its template's new
// content, a link to a removed file gone with it.
func TestUnitSets(t *testing.T) {
	const dir = "/etc/containers/systemd/"
	file := func(s string) host.File { return host.File{Data: []byte(s), Mode: 0o644} }
	link := func(to string) host.File { return host.File{Link: to, Mode: fs.ModeSymlink | 0o777} }
	obs := &plan.Observed{Files: map[string]host.File{
		dir[:len(dir)-1]:                {Mode: fs.ModeDir | 0o755},
		dir + "web@.container":          file("tmpl v1"),
		dir + "web@1.container":         link("web@.container"),
		dir + "old@.container":          file("old tmpl"),
		dir + "old@1.container":         link("old@.container"),
		dir + "out.container":           link("/elsewhere/out.container"), // not read as a unit
		dir + "db.volume":               file("db"),
		dir + "gone.volume":             file("gone"),
		dir + "web@.container.d/a.conf": file("a v1"),
		"/etc/containers/config/web/x":  file("not in the unit dir"),
	}}
	p := &plan.Plan{Actions: []plan.Action{
		{Op: plan.OpWriteUnit, Target: dir + "web@.container", Payload: &plan.Payload{Content: []byte("tmpl v2")}},
		{Op: plan.OpLinkUnit, Target: dir + "web@2.container", Payload: &plan.Payload{Link: "web@.container"}},
		{Op: plan.OpWriteUnit, Target: dir + "web@.container.d/a.conf", Payload: &plan.Payload{Content: []byte("a v2")}},
		{Op: plan.OpRemoveUnit, Target: dir + "gone.volume"},
		{Op: plan.OpRemoveUnit, Target: dir + "old@.container"},
		{Op: plan.OpWriteFile, Target: "/etc/containers/config/web/x", Payload: &plan.Payload{Content: []byte("x")}},
	}}
	cur, fut := plan.UnitSets(obs, p)
	want := map[string]string{"web@.container": "tmpl v1", "web@1.container": "tmpl v1", "old@.container": "old tmpl", "old@1.container": "old tmpl",
		"db.volume": "db", "gone.volume": "gone", "web@.container.d/a.conf": "a v1"}
	if got := texts(cur); !maps.Equal(got, want) {
		t.Errorf("current:\n got %v\nwant %v", got, want)
	}
	want = map[string]string{"web@.container": "tmpl v2", "web@1.container": "tmpl v2", "web@2.container": "tmpl v2",
		"db.volume": "db", "web@.container.d/a.conf": "a v2"}
	if got := texts(fut); !maps.Equal(got, want) {
		t.Errorf("future:\n got %v\nwant %v", got, want)
	}
}

func texts(m map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
