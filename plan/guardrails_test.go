package plan_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

func format(p *plan.Plan) string {
	var b bytes.Buffer
	view.Plan(&b, p)
	return b.String()
}

func TestDriftHoldsHandEditsUnlessForced(t *testing.T) {
	out := renderStream(t, base)
	unitPath := "/etc/containers/systemd/api.container"
	confPath := "/etc/containers/config/web/etc/web.conf"
	for _, tt := range []struct {
		name, path, edit string
		held             string
	}{
		{"unit edited", unitPath, "Environment=TUNED_BY_HAND=1\n", "api.container"},
		{"config file edited", confPath, "a=hand\n", "web.container"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := install(t, out)
			cur, err := os.ReadFile(h.root.Path(tt.path))
			must(t, err)
			data := []byte(strings.Replace(string(cur), "[Container]\n", "[Container]\n"+tt.edit, 1))
			if tt.path == confPath {
				data = []byte(tt.edit)
			}
			must(t, os.WriteFile(h.root.Path(tt.path), data, 0o644))
			h.reread(t)

			p := plan.Build(out, h.obs, plan.Options{})
			if effect(p, tt.held) != plan.EffectDrift || !p.Drifted() {
				t.Fatalf("effect of %s = %s, want drift", tt.held, effect(p, tt.held))
			}
			if len(p.Actions) != 0 {
				t.Errorf("a drifted unit must not be touched: %q", actions(p))
			}
			text := format(p)
			if !strings.Contains(text, "! "+tt.held) || !strings.Contains(text, "--force") || !strings.Contains(text, "hand") {
				t.Errorf("plan must show the drift and its diff:\n%s", text)
			}

			forced := plan.Build(out, h.obs, plan.Options{Force: true})
			if forced.Drifted() || len(forced.Actions) == 0 {
				t.Errorf("--force must replace the edit: %q", actions(forced))
			}
		})
	}
}

func TestUnitWithoutDigestIsNotDrift(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	// An older syslet wrote units without Digest= lines; they are managed
	// (marker present) and replaced as before, never held as drift.
	p := h.root.Path("/etc/containers/systemd/api.container")
	data, err := os.ReadFile(p)
	must(t, err)
	var kept []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "Digest=") {
			kept = append(kept, l)
		}
	}
	must(t, os.WriteFile(p, []byte(strings.Join(kept, "\n")+"# old\n"), 0o644))
	h.reread(t)
	pl := plan.Build(out, h.obs, plan.Options{})
	if pl.Drifted() || effect(pl, "api.container") != plan.EffectMetadata {
		t.Errorf("api.container: effect %s, want metadata-only", effect(pl, "api.container"))
	}
}

func TestStaleHandEditedUnitIsKept(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	p := h.root.Path("/etc/containers/systemd/idle.container")
	data, _ := os.ReadFile(p)
	must(t, os.WriteFile(p, append(data, "# mine now\n"...), 0o644))
	h.reread(t)
	less := renderStream(t, strings.Replace(base, `{"apiVersion":"v1","type":"container","name":"idle","desiredState":"stopped","unit":{"Container":{"Image":"registry.example/idle:1"}}}`, "", 1))
	pl := plan.Build(less, h.obs, plan.Options{})
	if effect(pl, "idle.container") != plan.EffectDrift {
		t.Errorf("a hand-edited stale unit must be kept, got %s (%q)", effect(pl, "idle.container"), actions(pl))
	}
}

func TestTakeOverHandWrittenUnitWithSameMeaning(t *testing.T) {
	out := renderStream(t, `{"apiVersion":"v1","type":"container","name":"web","unit":{"Unit":{"Description":"web"},"Container":{"Image":"registry.example/web:1","PublishPort":["8080:80","8443:443"]},"Service":{"Restart":"always"},"Install":{"WantedBy":"multi-user.target default.target"}}}`)
	h := install(t, &render.Output{})
	hand := "# written by hand\n[Container]\nPublishPort=8080:80\nImage=registry.example/web:1\nContainerName=web\nPublishPort=8443:443\n\n[Install]\nWantedBy=multi-user.target default.target\n[Service]\nRestart=always\n[Unit]\nDescription=my web server\n"
	must(t, h.root.WriteFile("/etc/containers/systemd/web.container", []byte(hand), 0o644))
	h.obs.Images["registry.example/web:1"] = true
	h.obs.Units["web.service"] = host.UnitState{Name: "web.service", LoadState: "loaded", ActiveState: "active"}
	h.reread(t)
	p := plan.Build(out, h.obs, plan.Options{})
	if !p.Appliable() || effect(p, "web.container") != plan.EffectMetadata {
		t.Fatalf("same meaning: want metadata-only, got %s refusals %v actions %q", effect(p, "web.container"), p.Refusals, actions(p))
	}
	// A different meaning (another port) is still not syslet's to change.
	must(t, h.root.WriteFile("/etc/containers/systemd/web.container", []byte(strings.Replace(hand, "8443:443", "9443:443", 1)), 0o644))
	h.reread(t)
	if p := plan.Build(out, h.obs, plan.Options{}); p.Appliable() {
		t.Errorf("a hand-written unit with another meaning must be refused: %q", actions(p))
	}
}

func TestSymlinkOnTheWayIsRefused(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	elsewhere := t.TempDir()
	must(t, os.RemoveAll(h.root.Path("/etc/containers/config/web")))
	must(t, os.Symlink(elsewhere, h.root.Path("/etc/containers/config/web")))
	h.reread(t)
	p := plan.Build(out, h.obs, plan.Options{})
	if p.Appliable() {
		t.Fatalf("a symlinked config dir must be refused: %q", actions(p))
	}
	if text := format(p); !strings.Contains(text, "/etc/containers/config/web is a symlink") {
		t.Errorf("the refusal must name the link:\n%s", text)
	}
}

func TestPrivateFileContentIsHidden(t *testing.T) {
	secret := "password=hunter2-do-not-print"
	stream := strings.Replace(base, `"content":"a=1\n"}`, `"content":"a=1\n","mode":"0600"}`, 1)
	out := renderStream(t, stream)
	h := install(t, out)
	next := renderStream(t, strings.Replace(stream, `"a=1\n"`, `"`+secret+`\n"`, 1))
	p := plan.Build(next, h.obs, plan.Options{})
	text := format(p)
	if strings.Contains(text, "hunter2") || strings.Contains(text, "a=1") {
		t.Errorf("content of a 0600 file printed:\n%s", text)
	}
	if !strings.Contains(text, "(content hidden: mode 0600, 4 bytes, sha256 ") {
		t.Errorf("want a hidden-content line:\n%s", text)
	}
}

func TestControlCharactersInHostNamesAreEscaped(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	must(t, os.WriteFile(h.root.Path("/etc/containers/config/web/evil\x1b[2J\nname"), []byte("x"), 0o644))
	h.reread(t)
	text := format(plan.Build(out, h.obs, plan.Options{}))
	if strings.Contains(text, "\x1b") || !strings.Contains(text, `evil\x1b[2J\x0aname`) {
		t.Errorf("name not escaped:\n%q", text)
	}
}

// TestInterruptedRunIsNotDrift: a run stopped after writing a config file
// (step 3) but before the unit recording its digest (step 4) left content
// no marker knows; the journal's digests say it is syslet's own.
func TestInterruptedRunIsNotDrift(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	conf := "/etc/containers/config/web/etc/web.conf"
	must(t, os.WriteFile(h.root.Path(conf), []byte("a=interrupted\n"), 0o644))
	h.reread(t)
	next := renderStream(t, strings.Replace(base, `"a=1\n"`, `"a=3\n"`, 1))
	if p := plan.Build(next, h.obs, plan.Options{}); !p.Drifted() {
		t.Fatalf("without the journal the file looks hand-edited")
	}
	sum := sha256.Sum256([]byte("a=interrupted\n"))
	written := map[string]map[string]bool{conf: {hex.EncodeToString(sum[:]): true}}
	p := plan.Build(next, h.obs, plan.Options{Written: written})
	if p.Drifted() || effect(p, "web.container") != plan.EffectRestart {
		t.Errorf("effect %s, want restart", effect(p, "web.container"))
	}
}

// TestConfigDirDrift: a file of a config dir edited by hand — through its
// link (an editor, `>>`) or replaced by a regular file (`sed -i`) — is
// drift, kept without --force and replaced with it, as a config file is.
// Its digest lives in the dir's version (layout.Digests), not in the unit,
// so the unit is never rewritten for it.
func TestConfigDirDrift(t *testing.T) {
	dir := "/etc/containers/config/web/etc/web.d"
	for _, tt := range []struct {
		name, file string
		edit       func(t *testing.T, h *hostState)
	}{
		{"edited through its link", "x.conf", func(t *testing.T, h *hostState) {
			f, err := os.OpenFile(h.root.Path(dir+"/x.conf"), os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteString("tuned=by-hand\n")
			must(t, err)
			must(t, f.Close())
		}},
		{"replaced by a regular file", "x.conf", func(t *testing.T, h *hostState) {
			must(t, os.Remove(h.root.Path(dir+"/x.conf")))
			must(t, os.WriteFile(h.root.Path(dir+"/x.conf"), []byte("x\ntuned=by-hand\n"), 0o644))
		}},
		{"file added by hand", "extra.conf", func(t *testing.T, h *hostState) {
			must(t, os.WriteFile(h.root.Path(dir+"/extra.conf"), []byte("tuned=by-hand\n"), 0o644))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := renderStream(t, base)
			h := install(t, out)
			tt.edit(t, h)
			h.reread(t)

			p := plan.Build(out, h.obs, plan.Options{})
			if effect(p, "web.container") != plan.EffectDrift || len(p.Actions) != 0 {
				t.Fatalf("effect %s actions %q, want drift and nothing done", effect(p, "web.container"), actions(p))
			}
			text := format(p)
			if !strings.Contains(text, "! "+dir+"/"+tt.file) || !strings.Contains(text, "-tuned=by-hand") || !strings.Contains(text, "--force") {
				t.Errorf("plan must show the edited file with its diff:\n%s", text)
			}
			// A later change of the spec does not override the hand edit either.
			next := renderStream(t, strings.Replace(base, `"content":"x\n"`, `"content":"y\n"`, 1))
			if p := plan.Build(next, h.obs, plan.Options{}); effect(p, "web.container") != plan.EffectDrift || len(p.Actions) != 0 {
				t.Errorf("changed spec: effect %s actions %q", effect(p, "web.container"), actions(p))
			}

			forced := plan.Build(out, h.obs, plan.Options{Force: true})
			if forced.Drifted() || effect(forced, "web.container") != plan.EffectReload {
				t.Fatalf("--force: effect %s, want reload", effect(forced, "web.container"))
			}
			if got := actions(forced); !slices.Equal(got, []string{"write-config-dir " + dir, "reload web.service"}) {
				t.Errorf("--force replaces the dir version and reloads, nothing more: %q", got)
			}
			// After the forced write the host is converged.
			for _, a := range forced.Actions {
				if a.Op == plan.OpWriteDir {
					must(t, h.root.WriteDir(a.Target, a.Files))
				}
			}
			h.reread(t)
			if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
				t.Errorf("after --force: %q", actions(p))
			}
		})
	}
}

// TestConfigDirChangeKeepsTheUnit: syslet's own config-dir change is a
// reload; the digests go into the new version, never into the unit.
func TestConfigDirChangeKeepsTheUnit(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	next := renderStream(t, strings.Replace(base, `"content":"x\n"`, `"content":"y\n"`, 1))
	p := plan.Build(next, h.obs, plan.Options{})
	if p.WritesUnits() || effect(p, "web.container") != plan.EffectReload {
		t.Fatalf("effect %s actions %q, want a reload and no unit write", effect(p, "web.container"), actions(p))
	}
	for _, u := range next.Units {
		if u.FileName == "web.container" && strings.Contains(string(u.Bytes()), "web.d") && strings.Contains(string(u.Bytes()), "x.conf") {
			t.Errorf("the unit names config-dir files:\n%s", u.Bytes())
		}
	}
}

// TestConfigDirWithoutDigestsIsNotDrift: a config dir written before
// syslet recorded digests (no manifest in its version) is unknown, not
// drift: a converged host stays converged after the upgrade, and a
// changed file is replaced as before — its new version then records
// the digests.
func TestConfigDirWithoutDigestsIsNotDrift(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	dir := "/etc/containers/config/web/etc/web.d"
	for _, d := range out.Dirs {
		must(t, h.root.WriteDir(d.Path, d.Files)) // the old format: no manifest
	}
	h.reread(t)
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
		t.Fatalf("converged old-format host: %q", actions(p))
	}
	must(t, os.WriteFile(h.root.Path(dir+"/x.conf"), []byte("edited\n"), 0o644))
	h.reread(t)
	p := plan.Build(out, h.obs, plan.Options{})
	if p.Drifted() || effect(p, "web.container") != plan.EffectReload {
		t.Fatalf("effect %s, want reload", effect(p, "web.container"))
	}
	for _, a := range p.Actions {
		if a.Op == plan.OpWriteDir {
			must(t, h.root.WriteDir(a.Target, a.Files))
		}
	}
	h.reread(t)
	if _, ok := h.obs.Files[dir+"/..v3/..digests"]; !ok { // v1 by install, v2 old-format, v3 now
		t.Fatalf("the rewritten version must record the digests")
	}
	if _, ok := h.obs.Files[dir+"/..digests"]; ok {
		t.Fatalf("the manifest must get no link of its own")
	}
	must(t, os.WriteFile(h.root.Path(dir+"/x.conf"), []byte("edited again\n"), 0o644))
	h.reread(t)
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Drifted() {
		t.Errorf("once rewritten, the dir records digests and an edit is drift: %q", actions(p))
	}
}

// TestPrivateConfigDirDriftIsHidden: the drift diff of a 0600 config-dir
// file follows the redaction rule of every file.
func TestPrivateConfigDirDriftIsHidden(t *testing.T) {
	stream := strings.Replace(base, `"content":"x\n"}`, `"content":"x\n","mode":"0600"}`, 1)
	out := renderStream(t, stream)
	h := install(t, out)
	must(t, os.WriteFile(h.root.Path("/etc/containers/config/web/etc/web.d/x.conf"), []byte("token=hunter2-private\n"), 0o600))
	h.reread(t)
	text := format(plan.Build(out, h.obs, plan.Options{}))
	if strings.Contains(text, "hunter2") || !strings.Contains(text, "drift") || !strings.Contains(text, "(content hidden: mode 0600") {
		t.Errorf("drift of a private config-dir file:\n%s", text)
	}
}
