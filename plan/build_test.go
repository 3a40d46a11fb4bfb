package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// base is a small stack: a network, two volumes, a build, four containers.
const base = `
{"apiVersion":"v1","type":"network","name":"net","unit":{}}
{"apiVersion":"v1","type":"volume","name":"data","reclaimPolicy":"Delete","unit":{}}
{"apiVersion":"v1","type":"volume","name":"keep","reclaimPolicy":"Retain","removalAllowed":false,"unit":{}}
{"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM busybox\n","contextFiles":[{"filename":"run.sh","content":"echo hi\n"}],"unit":{"Build":{"ImageTag":"localhost/app:v1"}}}
{"apiVersion":"v1","type":"container","name":"web","configFiles":[{"mountPath":"/etc/web.conf","content":"a=1\n"}],"configDirs":[{"mountPath":"/etc/web.d","files":[{"name":"x.conf","content":"x\n"}]}],"unit":{"Container":{"Image":"registry.example/web:1","Network":"net.network","Volume":"data.volume:/data"},"Service":{"ExecReload":"/bin/kill -HUP $MAINPID"}}}
{"apiVersion":"v1","type":"container","name":"api","unit":{"Container":{"Image":"app.build","Network":"net.network"}}}
{"apiVersion":"v1","type":"container","name":"job","desiredState":"oneshot","unit":{"Container":{"Image":"registry.example/job:1","Volume":"keep.volume:/k"}}}
{"apiVersion":"v1","type":"container","name":"idle","desiredState":"stopped","unit":{"Container":{"Image":"registry.example/idle:1"}}}
`

func renderStream(t *testing.T, stream string) *render.Output {
	t.Helper()
	set := load.Bytes("test.json", []byte(stream))
	if set.Report.HasErrors() {
		t.Fatalf("specs invalid:\n%s", set.Report.String())
	}
	// Planned as a run plans it: once its checks are done (Release).
	set.DropSpecs()
	return set.Out
}

// edit applies textual replacements to the base stream.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	s := base
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("edit: %q not in base", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// installed writes out into a scratch root exactly as an apply would and
// reads it back, with every service active and every image present.
type hostState struct {
	root fsroot.Root
	obs  *plan.Observed
}

func install(t *testing.T, out *render.Output) *hostState {
	t.Helper()
	r := fsroot.New(t.TempDir())
	for _, u := range out.Units {
		must(t, r.WriteFile(u.Path, u.Bytes(), 0o644))
	}
	for _, f := range out.Files {
		must(t, r.WriteFile(f.Path, f.Content, f.Mode))
	}
	for _, d := range out.Dirs {
		must(t, r.WriteDir(d.Path, d.Installed()))
	}
	obs := runningHost(out)
	h := &hostState{root: r, obs: obs}
	h.reread(t)
	return h
}

// runningHost is the systemd and podman side of a host that runs out as
// declared: every service in its desired state, every image and secret
// present. Files are left to the caller.
func runningHost(out *render.Output) *plan.Observed {
	obs := &plan.Observed{Units: map[string]host.UnitState{}, Secrets: map[string]host.Secret{}, Images: map[string]bool{}, UnitsKnown: true, StoreKnown: true}
	for _, u := range out.Units {
		st := "active"
		if u.Kind == spec.Build || u.State == spec.Stopped || u.State == spec.Oneshot {
			st = "inactive"
		}
		obs.Units[u.Service] = host.UnitState{Name: u.Service, LoadState: "loaded", ActiveState: st}
		if u.Image != "" {
			obs.Images[u.Image] = true
		}
		if u.Kind == spec.Build {
			obs.Images[u.Resource] = true
		}
	}
	for _, s := range out.Secrets {
		for _, k := range s.Keys {
			obs.Secrets[s.PodmanName(k)] = host.Secret{Name: s.PodmanName(k), Labels: map[string]string{render.HashLabel: s.Hash}}
		}
	}
	return obs
}

func (h *hostState) reread(t *testing.T) {
	files, err := h.root.ReadTree(layout.UnitDir, layout.ConfigRoot, layout.BuildRoot, layout.SocketDir)
	must(t, err)
	h.obs.Files = files
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// actions lists a plan's actions as "op target" strings in order.
func actions(p *plan.Plan) []string {
	var s []string
	for _, a := range p.Actions {
		s = append(s, string(a.Op)+" "+a.Target)
	}
	return s
}

func effect(p *plan.Plan, file string) plan.Effect {
	for _, u := range p.Units {
		if u.FileName == file {
			return u.Effect
		}
	}
	return "absent"
}

func TestConvergedHostPlansNothing(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	p := plan.Build(out, h.obs, plan.Options{})
	if !p.Empty() || !p.Appliable() {
		t.Fatalf("converged host: want no actions, got %q refusals %v", actions(p), p.Refusals)
	}
	// Without systemd or podman, a root holding the rendered files is
	// converged too.
	h.obs.UnitsKnown, h.obs.StoreKnown = false, false
	h.obs.Units, h.obs.Images = map[string]host.UnitState{}, map[string]bool{}
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
		t.Fatalf("hostless converged root: want no actions, got %q", actions(p))
	}
}

func TestFreshHost(t *testing.T) {
	out := renderStream(t, base)
	obs := &plan.Observed{Files: map[string]host.File{}, UnitsKnown: true, StoreKnown: true}
	p := plan.Build(out, obs, plan.Options{})
	got := actions(p)
	// Steps in order; pulls first; exactly one daemon-reload; resources
	// start before containers; the stopped container is never started.
	var steps []plan.Step
	for _, a := range p.Actions {
		steps = append(steps, a.Step)
	}
	if !slices.IsSorted(steps) {
		t.Errorf("actions not in step order: %q", got)
	}
	for _, want := range []string{"pull-image registry.example/web:1", "pull-image registry.example/job:1", "daemon-reload systemd",
		"start net-network.service", "start app-build.service", "start web.service", "start api.service", "start job.service"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	if slices.Contains(got, "start idle.service") || slices.Contains(got, "pull-image registry.example/idle:1") {
		t.Errorf("stopped container must not be pulled or started: %q", got)
	}
	if slices.Index(got, "start net-network.service") > slices.Index(got, "start web.service") {
		t.Errorf("network must start before its containers: %q", got)
	}
	if n := countOp(p, plan.OpDaemonReload); n != 1 {
		t.Errorf("daemon-reloads = %d, want 1", n)
	}
}

func countOp(p *plan.Plan, op plan.Op) int {
	n := 0
	for _, a := range p.Actions {
		if a.Op == op {
			n++
		}
	}
	return n
}

func TestChanges(t *testing.T) {
	tests := []struct {
		name    string
		stream  func(t *testing.T) string
		tweak   func(t *testing.T, h *hostState)
		want    []string // exact action list
		effects map[string]plan.Effect
		refused bool
	}{
		{
			name:   "image tag change restarts only that container, pull first",
			stream: func(t *testing.T) string { return edit(t, "registry.example/web:1", "registry.example/web:2") },
			want: []string{"pull-image registry.example/web:2", "stop web.service", "write-unit /etc/containers/systemd/web.container",
				"daemon-reload systemd", "start web.service"},
			effects: map[string]plan.Effect{"web.container": plan.EffectRestart, "api.container": plan.EffectNone},
		},
		{
			name:    "config dir change reloads in place",
			stream:  func(t *testing.T) string { return edit(t, `"content":"x\n"`, `"content":"y\n"`) },
			want:    []string{"write-config-dir /etc/containers/config/web/etc/web.d", "reload web.service"},
			effects: map[string]plan.Effect{"web.container": plan.EffectReload},
		},
		{
			name:    "config file change restarts",
			stream:  func(t *testing.T) string { return edit(t, `"a=1\n"`, `"a=2\n"`) },
			want:    []string{"stop web.service", "write-file /etc/containers/config/web/etc/web.conf", "write-unit /etc/containers/systemd/web.container", "daemon-reload systemd", "start web.service"},
			effects: map[string]plan.Effect{"web.container": plan.EffectRestart},
		},
		{
			name: "description change is metadata only",
			stream: func(t *testing.T) string {
				return edit(t, `"unit":{"Container":{"Image":"app.build"`, `"unit":{"Unit":{"Description":"the api"},"Container":{"Image":"app.build"`)
			},
			want:    []string{"write-unit /etc/containers/systemd/api.container", "daemon-reload systemd"},
			effects: map[string]plan.Effect{"api.container": plan.EffectMetadata},
		},
		{
			name: "volume change with Delete marker recreates it and restarts users",
			stream: func(t *testing.T) string {
				return edit(t, `"name":"data","reclaimPolicy":"Delete","unit":{}}`, `"name":"data","reclaimPolicy":"Delete","unit":{"Volume":{"Label":"x=1"}}}`)
			},
			// Its data is carried over (carry.go): created again through
			// its service, the export imported, before web starts.
			want: []string{"stop web.service", "stop data-volume.service", "write-unit /etc/containers/systemd/data.volume",
				"delete-volume data", "daemon-reload systemd", "create-volume data", "import-volume data", "start web.service"},
			effects: map[string]plan.Effect{"data.volume": plan.EffectRecreate, "web.container": plan.EffectRestart},
		},
		{
			name: "volume change without permission is refused",
			stream: func(t *testing.T) string {
				return edit(t, `"removalAllowed":false,"unit":{}}`, `"removalAllowed":false,"unit":{"Volume":{"Label":"x=1"}}}`)
			},
			refused: true,
		},
		{
			name: "network change recreates it and restarts attached containers",
			stream: func(t *testing.T) string {
				return edit(t, `"name":"net","unit":{}}`, `"name":"net","unit":{"Network":{"Subnet":"10.1.0.0/24"}}}`)
			},
			want: []string{"stop api.service", "stop web.service", "stop net-network.service", "write-unit /etc/containers/systemd/net.network",
				"delete-network net", "daemon-reload systemd", "start net-network.service", "start api.service", "start web.service"},
			effects: map[string]plan.Effect{"net.network": plan.EffectRecreate, "api.container": plan.EffectRestart, "web.container": plan.EffectRestart},
		},
		{
			name:    "build context change rebuilds and restarts users",
			stream:  func(t *testing.T) string { return edit(t, `"echo hi\n"`, `"echo bye\n"`) },
			want:    []string{"stop api.service", "write-file /etc/containers/builds/app/run.sh", "write-unit /etc/containers/systemd/app.build", "daemon-reload systemd", "start app-build.service", "start api.service"},
			effects: map[string]plan.Effect{"app.build": plan.EffectRebuild, "api.container": plan.EffectRestart},
		},
		{
			name:   "crashed running container is started again; finished oneshot is left alone",
			stream: func(t *testing.T) string { return base },
			tweak: func(t *testing.T, h *hostState) {
				h.obs.Units["web.service"] = host.UnitState{LoadState: "loaded", ActiveState: "failed"}
			},
			want:    []string{"start web.service"},
			effects: map[string]plan.Effect{"web.container": plan.EffectStart, "job.container": plan.EffectNone},
		},
		{
			name:   "stopped container that runs is stopped",
			stream: func(t *testing.T) string { return base },
			tweak: func(t *testing.T, h *hostState) {
				h.obs.Units["idle.service"] = host.UnitState{LoadState: "loaded", ActiveState: "active"}
			},
			want:    []string{"stop idle.service"},
			effects: map[string]plan.Effect{"idle.container": plan.EffectStop},
		},
		{
			name: "removed specs: stop, remove unit and config, delete Delete volume, keep Retain+RemovalAllowed=false",
			stream: func(t *testing.T) string {
				return edit(t,
					`{"apiVersion":"v1","type":"volume","name":"data","reclaimPolicy":"Delete","unit":{}}`, ``,
					`{"apiVersion":"v1","type":"volume","name":"keep","reclaimPolicy":"Retain","removalAllowed":false,"unit":{}}`, ``,
					`,"Volume":"data.volume:/data"`, ``,
					`,"Volume":"keep.volume:/k"`, ``)
			},
			want: []string{"stop web.service", "stop data-volume.service", "write-unit /etc/containers/systemd/job.container", "write-unit /etc/containers/systemd/web.container",
				"remove-unit /etc/containers/systemd/data.volume", "delete-volume data", "daemon-reload systemd", "start job.service", "start web.service"},
			effects: map[string]plan.Effect{"data.volume": plan.EffectRemove, "keep.volume": plan.EffectKeep},
		},
		{
			name: "whole container removed with its config",
			stream: func(t *testing.T) string {
				return edit(t, `{"apiVersion":"v1","type":"container","name":"idle","desiredState":"stopped","unit":{"Container":{"Image":"registry.example/idle:1"}}}`, ``)
			},
			tweak: func(t *testing.T, h *hostState) {
				must(t, h.root.WriteFile("/etc/containers/config/idle/etc/x", []byte("x"), 0o644))
				h.reread(t)
			},
			want:    []string{"remove-unit /etc/containers/systemd/idle.container", "remove-file /etc/containers/config/idle", "daemon-reload systemd"},
			effects: map[string]plan.Effect{"idle.container": plan.EffectRemove},
		},
		{
			name:   "hand-written unit is reported and untouched; a spec colliding with it is refused",
			stream: func(t *testing.T) string { return base },
			tweak: func(t *testing.T, h *hostState) {
				h.root.WriteFile("/etc/containers/systemd/hand.container", []byte("[Container]\nImage=x\n"), 0o644)
				h.reread(t)
			},
			want:    nil,
			effects: map[string]plan.Effect{"hand.container": plan.EffectIgnore},
		},
		{
			name: "config file dropped from a kept container is pruned and the container restarts",
			stream: func(t *testing.T) string {
				return edit(t, `"configFiles":[{"mountPath":"/etc/web.conf","content":"a=1\n"}],`, ``)
			},
			want:    []string{"stop web.service", "write-unit /etc/containers/systemd/web.container", "remove-file /etc/containers/config/web/etc/web.conf", "daemon-reload systemd", "start web.service"},
			effects: map[string]plan.Effect{"web.container": plan.EffectRestart},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := install(t, renderStream(t, base))
			if tc.tweak != nil {
				tc.tweak(t, h)
			}
			out := renderStream(t, tc.stream(t))
			p := plan.Build(out, h.obs, plan.Options{})
			// A set not released (as a rollback's generation is planned)
			// plans the same, to the byte.
			whole := load.Bytes("test.json", []byte(tc.stream(t))).Out
			if got, want := planJSON(t, p), planJSON(t, plan.Build(whole, h.obs, plan.Options{})); got != want {
				t.Errorf("released and whole sets plan differently:\n%s\n%s", got, want)
			}
			if tc.refused {
				if p.Appliable() {
					t.Fatalf("want a refusal, got actions %q", actions(p))
				}
				return
			}
			if !p.Appliable() {
				t.Fatalf("unexpected refusals: %v", p.Refusals)
			}
			if got := actions(p); !slices.Equal(got, tc.want) {
				t.Errorf("actions:\n got %q\nwant %q", got, tc.want)
			}
			for f, e := range tc.effects {
				if got := effect(p, f); got != e {
					t.Errorf("%s: effect %q, want %q", f, got, e)
				}
			}
		})
	}
}

func TestUnmanagedCollisionRefused(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	must(t, h.root.WriteFile("/etc/containers/systemd/web.container", []byte("[Container]\nImage=mine\n"), 0o644))
	h.reread(t)
	p := plan.Build(out, h.obs, plan.Options{})
	if p.Appliable() || !strings.Contains(fmt.Sprint(p.Refusals), "not syslet's") {
		t.Fatalf("want refusal for unmanaged web.container, got %v / %q", p.Refusals, actions(p))
	}
}

const sops = "password: ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\nsops:\n    age:\n        - recipient: age1xyz\n          enc: x\n    version: 3.9.0\n"

func TestSecrets(t *testing.T) {
	stream := base + `{"apiVersion":"v1","type":"secret","name":"db","ciphertext":` + quote(sops) + "}\n"
	stream = strings.Replace(stream, `"Image":"app.build"`, `"Image":"app.build","Secret":"db-password"`, 1)
	out := renderStream(t, stream)
	h := install(t, out)
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
		t.Fatalf("converged secrets: %q", actions(p))
	}
	// Changed ciphertext: the secret is replaced and its user restarted.
	out2 := renderStream(t, strings.Replace(stream, "data:x", "data:X", 1))
	p := plan.Build(out2, h.obs, plan.Options{})
	want := []string{"stop api.service", "create-secret db-password", "start api.service"}
	if got := actions(p); !slices.Equal(got, want) {
		t.Errorf("changed secret:\n got %q\nwant %q", got, want)
	}
	for _, a := range p.Actions {
		if strings.Contains(fmt.Sprintf("%+v", a), "ENC[") {
			t.Errorf("ciphertext leaked into action %v", a.Op)
		}
	}
	// A labelled secret no longer declared is removed; an unlabelled one
	// is never touched, and a declared name that collides with it is refused.
	h.obs.Secrets["old-key"] = host.Secret{Name: "old-key", Labels: map[string]string{render.HashLabel: "x"}}
	h.obs.Secrets["theirs"] = host.Secret{Name: "theirs"}
	p = plan.Build(out, h.obs, plan.Options{})
	if got := actions(p); !slices.Equal(got, []string{"remove-secret old-key"}) {
		t.Errorf("stale secret: got %q", got)
	}
	if !slices.ContainsFunc(p.Notes, func(n plan.Note) bool {
		return n.Unit == "secret theirs" && strings.Contains(n.Message, "not managed by syslet")
	}) {
		t.Errorf("the unlabelled secret is not reported: %+v", p.Notes)
	}
	h.obs.Secrets["db-password"] = host.Secret{Name: "db-password"}
	if p := plan.Build(out, h.obs, plan.Options{}); p.Appliable() {
		t.Errorf("unlabelled collision must be refused")
	}
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// TestExternalSecrets: a secret declared external is podman's and the
// operator's. The plan checks that it exists (refusing, naming spec and
// secret, when it does not), never creates, replaces or removes it —
// whatever its labels say — and cannot check it without podman.
func TestExternalSecrets(t *testing.T) {
	stream := base + `{"apiVersion":"v1","type":"secret","name":"dbpass","external":true}` + "\n"
	stream = strings.Replace(stream, `"Image":"app.build"`, `"Image":"app.build","Secret":"dbpass,type=env,target=DB_PASSWORD"`, 1)
	out := renderStream(t, stream)
	if len(out.Secrets) != 0 || len(out.ExternalSecrets) != 1 || out.ExternalSecrets[0].Name != "dbpass" {
		t.Fatalf("rendered secrets %v, external %v", out.Secrets, out.ExternalSecrets)
	}
	h := install(t, out)

	h.obs.Secrets["dbpass"] = host.Secret{Name: "dbpass"} // made by hand: no label
	p := plan.Build(out, h.obs, plan.Options{})
	if !p.Empty() || !p.Appliable() || len(p.Notes) != 0 || len(p.Secrets) != 0 {
		t.Fatalf("present external secret: actions %q refusals %v notes %v", actions(p), p.Refusals, p.Notes)
	}

	// Once syslet's (labelled), now declared external: handed over, kept.
	h.obs.Secrets["dbpass"] = host.Secret{Name: "dbpass", Labels: map[string]string{render.HashLabel: "x"}}
	h.obs.Secrets["gone-key"] = host.Secret{Name: "gone-key", Labels: map[string]string{render.HashLabel: "y"}}
	if got := actions(plan.Build(out, h.obs, plan.Options{})); !slices.Equal(got, []string{"remove-secret gone-key"}) {
		t.Errorf("only the stale managed secret may go: %q", got)
	}
	delete(h.obs.Secrets, "gone-key")

	delete(h.obs.Secrets, "dbpass")
	p = plan.Build(out, h.obs, plan.Options{})
	if p.Appliable() || len(p.Refusals) != 1 {
		t.Fatalf("missing external secret must be refused: %+v", p.Refusals)
	}
	r := p.Refusals[0]
	if r.Unit != "secret dbpass" || r.Source != "test.json [8]" || !strings.Contains(r.Message, "podman secret create dbpass") {
		t.Errorf("refusal: %+v", r)
	}
	if slices.ContainsFunc(p.Actions, func(a plan.Action) bool { return a.Op == plan.OpCreateSecret }) {
		t.Errorf("syslet must never create an external secret: %q", actions(p))
	}

	// Under --root podman is not read: nothing to refuse, and a note.
	h.obs.StoreKnown = false
	p = plan.Build(out, h.obs, plan.Options{})
	if !p.Appliable() || !p.Empty() || len(p.Notes) != 1 || p.Notes[0].Unit != "secret dbpass" {
		t.Errorf("hostless: refusals %v notes %v actions %q", p.Refusals, p.Notes, actions(p))
	}
	h.obs.StoreKnown = true

	// An external secret is no managed unit: specs holding nothing else
	// still trip the mass-removal guard, and the secret stays.
	only := renderStream(t, `{"apiVersion":"v1","type":"secret","name":"dbpass","external":true}`)
	h.obs.Secrets["dbpass"] = host.Secret{Name: "dbpass"}
	p = plan.Build(only, h.obs, plan.Options{})
	p.GuardRemovals()
	if p.Appliable() || slices.ContainsFunc(p.Actions, func(a plan.Action) bool { return a.Target == "dbpass" }) {
		t.Errorf("guard: refusals %v actions %q", p.Refusals, actions(p))
	}
}

// TestObserveReadsSecretsForExternalOnly: a fresh host whose specs use
// only external secrets still has its secret store read, so the plan can
// tell whether they exist.
func TestObserveReadsSecretsForExternalOnly(t *testing.T) {
	out := renderStream(t, `{"apiVersion":"v1","type":"secret","name":"dbpass","external":true}`)
	store := &secretStore{secrets: []host.Secret{{Name: "dbpass"}}}
	obs, err := plan.Observe(t.Context(), plan.Sources{Files: fsroot.New(t.TempDir()), Store: store}, out)
	must(t, err)
	if store.calls != 1 || !obs.StoreKnown {
		t.Fatalf("secret store read %d times", store.calls)
	}
	if _, ok := obs.Secrets["dbpass"]; !ok {
		t.Errorf("observed secrets: %v", obs.Secrets)
	}
	if p := plan.Build(out, obs, plan.Options{}); !p.Empty() || !p.Appliable() {
		t.Errorf("present external secret: %q %v", actions(p), p.Refusals)
	}
}

type secretStore struct {
	secrets []host.Secret
	calls   int
}

func (s *secretStore) Secrets(context.Context) ([]host.Secret, error) {
	s.calls++
	return s.secrets, nil
}

func (s *secretStore) ImageExists(context.Context, string) (bool, error) { return true, nil }
func (s *secretStore) ImageID(context.Context, string) (string, error)   { return "", nil }

func planJSON(t *testing.T, p *plan.Plan) string {
	t.Helper()
	b, err := json.Marshal(p)
	must(t, err)
	return string(b) + " " + p.Digest()
}

// An installed unit file that is no unit file at all is not syslet's: it
// is refused, never taken for the rendered unit and never written over.
func TestUnparsableInstalledUnitIsRefused(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	broken := []string{"data.volume", "net.network", "web.container"}
	for _, name := range broken {
		must(t, h.root.WriteFile(layout.UnitPath(name), []byte("[Volume\nnot a unit\n"), 0o644))
	}
	h.reread(t)
	p := plan.Build(out, h.obs, plan.Options{Force: true})
	if len(p.Actions) != 0 || len(p.Refusals) != len(broken) {
		t.Fatalf("actions %q, refusals %v", actions(p), p.Refusals)
	}
	for _, name := range broken {
		if got := effect(p, name); got != plan.EffectIgnore {
			t.Errorf("%s: effect %q, want %q", name, got, plan.EffectIgnore)
		}
	}
}
