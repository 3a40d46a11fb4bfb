package plan_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/plan"
)

// earlierName is the name the earlier syslet gave a config file or dir on
// the host: basename, "-", the first 8 hex digits of sha256 of the mount
// path as the spec wrote it (trailing slash included).
func earlierName(mountPath string) string {
	sum := sha256.Sum256([]byte(mountPath))
	return path.Base(mountPath) + "-" + hex.EncodeToString(sum[:])[:8]
}

// earlierHost writes unit files (name → content, as the earlier syslet
// left them: every line sorted) and, for each config dir, its layout
// (<dir>/1/<file>, ..data → 1, <file> → ..data/<file>), and reads the
// tree back as a running host.
func earlierHost(t *testing.T, stream string, units map[string]string, dirs map[string]map[string]string) (*plan.Plan, *hostState) {
	t.Helper()
	out := renderStream(t, stream)
	r := fsroot.New(t.TempDir())
	for name, content := range units {
		must(t, r.WriteFile(layout.UnitPath(name), []byte(content), 0o644))
	}
	for dir, files := range dirs {
		for name, content := range files {
			must(t, r.WriteFile(path.Join(dir, "1", name), []byte(content), 0o644))
			must(t, os.Symlink("..data/"+name, r.Path(path.Join(dir, name))))
		}
		must(t, os.Symlink("1", r.Path(path.Join(dir, "..data"))))
	}
	h := &hostState{root: r, obs: runningHost(out)}
	h.reread(t)
	return plan.Build(out, h.obs, plan.Options{}), h
}

func unitChange(t *testing.T, p *plan.Plan, file string) plan.UnitChange {
	t.Helper()
	for _, u := range p.Units {
		if u.FileName == file {
			return u
		}
	}
	t.Fatalf("%s is not in the plan", file)
	return plan.UnitChange{}
}

// TestTakeOverEarlierForcedKeys: a host the earlier syslet deployed from
// specs that set Restart=, WantedBy=, a oneshot's Type= or a Network map
// value carries the earlier tool's lines, which are syslet's: nothing is
// written, nothing restarts.
func TestTakeOverEarlierForcedKeys(t *testing.T) {
	stream := `
{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"registry.example/web:1","Network":{"host":"ignored"}},
 "Service":{"Restart":"on-failure"},"Install":{"WantedBy":"multi-user.target"}}}
{"apiVersion":"v1","type":"container","name":"job","desiredState":"Oneshot","unit":{"Container":{"Image":"registry.example/job:1"},"Service":{"Type":"notify"}}}
`
	p, _ := earlierHost(t, stream, map[string]string{
		"web.container": "[Container]\nContainerName=web\nImage=registry.example/web:1\nNetwork=host\n\n[Install]\nWantedBy=multi-user.target default.target\n\n" +
			"[Service]\nRestart=always\n\n[Unit]\nDescription=web container\n\n[X-Syslet]\nRemovalAllowed=true\n",
		"job.container": "[Container]\nContainerName=job\nImage=registry.example/job:1\n\n[Service]\nType=oneshot\n\n" +
			"[Unit]\nDescription=job container\n\n[X-Syslet]\nRemovalAllowed=true\n",
	}, nil)
	if len(p.Warnings) > 0 {
		t.Errorf("warnings %v", p.Warnings)
	}
	takenOver(t, p, "web.container", "job.container")
}

// takenOver checks that each unit is taken over as it is: at most its
// marker is rewritten (syslet records its digests there), no service is
// stopped, started or reloaded.
func takenOver(t *testing.T, p *plan.Plan, files ...string) {
	t.Helper()
	for _, a := range p.Actions {
		if a.Op != plan.OpWriteUnit && a.Op != plan.OpDaemonReload {
			t.Errorf("planned %s %s", a.Op, a.Target)
		}
	}
	for _, f := range files {
		u := unitChange(t, p, f)
		if u.Effect != plan.EffectNone && u.Effect != plan.EffectMetadata {
			t.Errorf("%s: %s %q", f, u.Effect, u.Reasons)
		}
		for _, k := range u.Keys {
			if k.Section != "X-Syslet" {
				t.Errorf("%s: %s [%s] %s %q → %q", f, k.Op, k.Section, k.Key, k.Old, k.New)
			}
		}
	}
}

// TestTakeOverEarlierTrailingSlashConfigDir: the earlier syslet named a
// config dir after its mount path as written ("/etc/nginx/conf.d/") and
// mounted it there; syslet's plan recognises that mount as the same one
// moving to syslet's layout (a restart, the documented config mount
// move, and nothing else), and prunes the old directory.
func TestTakeOverEarlierTrailingSlashConfigDir(t *testing.T) {
	stream := `{"apiVersion":"v1","type":"container","name":"web",
 "configDirs":[{"mountPath":"/etc/nginx/conf.d/","files":[{"name":"site.conf","content":"a\n"}]}],
 "unit":{"Container":{"Image":"registry.example/web:1"},"Service":{"ExecReload":"/bin/kill -HUP $MAINPID"}}}`
	old := path.Join(layout.ConfigDirOf("web"), earlierName("/etc/nginx/conf.d/"))
	if old == path.Join(layout.ConfigDirOf("web"), earlierName("/etc/nginx/conf.d")) {
		t.Fatal("the fixture's name does not depend on the slash")
	}
	p, _ := earlierHost(t, stream, map[string]string{
		"web.container": "[Container]\nContainerName=web\nImage=registry.example/web:1\nVolume=" + old + ":/etc/nginx/conf.d/:ro,Z\n\n" +
			"[Install]\nWantedBy=multi-user.target default.target\n\n[Service]\nExecReload=/bin/kill -HUP $MAINPID\nRestart=always\n\n" +
			"[Unit]\nDescription=web container\n\n[X-Syslet]\nRemovalAllowed=true\n",
	}, map[string]map[string]string{old: {"site.conf": "a\n"}})
	u := unitChange(t, p, "web.container")
	want := "config dir mount /etc/nginx/conf.d moves from " + old + " to " + layout.ConfigPath("web", "/etc/nginx/conf.d")
	// The marker's digests are new to it too; nothing else changes.
	if u.Effect != plan.EffectRestart || len(u.Reasons) == 0 || u.Reasons[0] != want ||
		slices.ContainsFunc(u.Reasons[1:], func(r string) bool { return !strings.HasPrefix(r, "[X-Syslet]") }) {
		t.Errorf("web: %s %q, want restart for %q", u.Effect, u.Reasons, want)
	}
	if !slices.Contains(actions(p), "remove-file "+old) {
		t.Errorf("the earlier directory is not pruned: %q", actions(p))
	}
}

// TestRemovalAllowedDefaultWarns: a spec written when removalAllowed
// defaulted to false, on a host whose marker says RemovalAllowed=false,
// is a metadata-only rewrite that drops the protection: the plan warns
// on that unit. A spec that says removalAllowed (either way) means it.
func TestRemovalAllowedDefaultWarns(t *testing.T) {
	installed := map[string]string{
		"data.volume": "[Volume]\nVolumeName=data\n\n[X-Syslet]\nReclaimPolicy=Delete\nRemovalAllowed=false\n",
		"web.container": "[Container]\nContainerName=web\nImage=registry.example/web:1\n\n[Install]\nWantedBy=multi-user.target default.target\n\n" +
			"[Service]\nRestart=always\n\n[Unit]\nDescription=web container\n\n[X-Syslet]\nRemovalAllowed=false\n",
	}
	specs := func(removal string) string {
		return `{"apiVersion":"v1","type":"volume","name":"data","unit":{}` + removal + `}
{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"registry.example/web:1"}}` + removal + `}`
	}
	p, _ := earlierHost(t, specs(""), installed, nil)
	if len(p.Warnings) != 2 {
		t.Fatalf("want a warning for each unit, got %v", p.Warnings)
	}
	for i, file := range []string{"data.volume", "web.container"} {
		w := p.Warnings[i]
		if w.Rule != spec.RuleRemovalDefault || w.Severity != "warning" || w.Source != "test.json" || !strings.HasPrefix(w.Message, file+": ") ||
			!strings.Contains(w.Message, `"removalAllowed": false`) {
			t.Errorf("warning %d: %+v", i, w)
		}
		if u := unitChange(t, p, file); u.Effect != plan.EffectMetadata {
			t.Errorf("%s: %s %q, want metadata-only", file, u.Effect, u.Reasons)
		}
	}
	if !strings.Contains(p.Warnings[0].Message, "recreates the volume") {
		t.Errorf("the volume's warning does not say a change recreates it: %s", p.Warnings[0].Message)
	}
	if p, _ := earlierHost(t, specs(`,"removalAllowed":true`), installed, nil); len(p.Warnings) > 0 || p.Empty() {
		t.Errorf("an explicit removalAllowed true: warnings %v, actions %q", p.Warnings, actions(p))
	}
	p, _ = earlierHost(t, specs(`,"removalAllowed":false`), installed, nil)
	if len(p.Warnings) > 0 {
		t.Errorf("removalAllowed false as installed: warnings %v", p.Warnings)
	}
	takenOver(t, p, "data.volume", "web.container")
}
