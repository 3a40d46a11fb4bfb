package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
)

// The rest of quadlet (issue 26): pods, image units, kube units, templates
// with instances, drop-ins and ServiceName=, each planned, applied to a
// scratch root and planned again.

const stack = `
{"apiVersion":"v1","type":"pod","name":"shop","unit":{"Pod":{"PublishPort":"127.0.0.1:8080:80"}}}
{"apiVersion":"v1","type":"image","name":"bb","unit":{"Image":{"Image":"localhost:5000/busybox:1","TLSVerify":"false"}}}
{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"bb.image","Pod":"shop.pod","Exec":"httpd -f"}},"dropIns":{"10-env.conf":{"Container":{"Environment":"A=1"}}}}
{"apiVersion":"v1","type":"container","name":"side","unit":{"Container":{"Image":"bb.image","Pod":"shop.pod","Exec":"sleep 1d"}}}
{"apiVersion":"v1","type":"container","name":"work","unit":{"Container":{"Image":"registry.example/w:1","Exec":"sleep %i"}},"instances":["1","2"]}
{"apiVersion":"v1","type":"kube","name":"play","yaml":"kind: Pod\n","unit":{}}
{"apiVersion":"v1","type":"container","name":"api","unit":{"Container":{"Image":"registry.example/api:1","ServiceName":"shop-api"}}}
`

// applied is a scratch root an apply of each plan is carried out on, with
// systemd's and podman's side kept as the plan's starts and stops leave it.
type applied struct {
	t    *testing.T
	root fsroot.Root
	obs  *plan.Observed
}

func newApplied(t *testing.T) *applied {
	return &applied{t: t, root: fsroot.New(t.TempDir()),
		obs: &plan.Observed{Units: map[string]host.UnitState{}, Secrets: map[string]host.Secret{}, Images: map[string]bool{}, UnitsKnown: true, StoreKnown: true}}
}

func (a *applied) read() {
	files, err := a.root.ReadTree(layout.UnitDir, layout.ConfigRoot, layout.BuildRoot, layout.KubeRoot)
	must(a.t, err)
	a.obs.Files = files
}

// plan builds the plan of stream against the root as it is.
func (a *applied) plan(stream string) *plan.Plan {
	a.t.Helper()
	a.read()
	return plan.Build(renderStream(a.t, stream), a.obs, plan.Options{})
}

// apply carries out p's file and unit actions on the root.
func (a *applied) apply(p *plan.Plan) {
	a.t.Helper()
	if !p.Appliable() {
		a.t.Fatalf("refused: %v", p.Refusals)
	}
	for _, x := range p.Actions {
		switch x.Op {
		case plan.OpPull:
			a.obs.Images[x.Target] = true
		case plan.OpWriteFile, plan.OpWriteUnit:
			must(a.t, a.root.WriteFile(x.Target, x.Content, x.Mode))
		case plan.OpWriteDir:
			must(a.t, a.root.WriteDir(x.Target, x.Files))
		case plan.OpLinkUnit:
			must(a.t, a.root.WriteLink(x.Target, x.Link))
		case plan.OpRemoveUnit, plan.OpRemoveFile:
			must(a.t, a.root.Remove(x.Target, x.Data().Root))
		case plan.OpStop:
			a.obs.Units[x.Target] = host.UnitState{Name: x.Target, LoadState: "loaded", ActiveState: "inactive"}
		case plan.OpStart:
			a.obs.Units[x.Target] = host.UnitState{Name: x.Target, LoadState: "loaded", ActiveState: "active"}
		}
	}
	a.read()
}

// converge applies stream and checks that a second plan is empty.
func (a *applied) converge(stream string) *plan.Plan {
	a.t.Helper()
	p := a.plan(stream)
	a.apply(p)
	if again := a.plan(stream); !again.Empty() {
		a.t.Fatalf("not converged after applying; the next plan: %q", actions(again))
	}
	return p
}

func has(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
}

func hasNot(t *testing.T, got []string, not ...string) {
	t.Helper()
	for _, w := range not {
		if slices.Contains(got, w) {
			t.Errorf("unexpected %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
}

func before(t *testing.T, got []string, a, b string) {
	t.Helper()
	i, j := slices.Index(got, a), slices.Index(got, b)
	if i < 0 || j < 0 || i > j {
		t.Errorf("want %q before %q in\n%s", a, b, strings.Join(got, "\n"))
	}
}

func TestQuadletTypesFirstDeploy(t *testing.T) {
	a := newApplied(t)
	p := a.converge(stack)
	got := actions(p)
	has(t, got,
		"pull-image localhost:5000/busybox:1", "pull-image registry.example/w:1", "pull-image registry.example/api:1",
		"write-unit /etc/containers/systemd/shop.pod", "write-unit /etc/containers/systemd/bb.image",
		"write-unit /etc/containers/systemd/web.container.d/10-env.conf",
		"write-unit /etc/containers/systemd/work@.container",
		"link-unit /etc/containers/systemd/work@1.container", "link-unit /etc/containers/systemd/work@2.container",
		"write-file /etc/containers/kube/play/play.yaml",
		"start bb-image.service", "start shop-pod.service", "start web.service", "start side.service",
		"start work@1.service", "start work@2.service", "start play.service", "start shop-api.service")
	hasNot(t, got, "start work@.service", "start api.service", "pull-image bb.image")
	before(t, got, "start bb-image.service", "start web.service")
	before(t, got, "start shop-pod.service", "start web.service")
	for _, x := range p.Actions {
		if x.Op == plan.OpPull && x.Target == "localhost:5000/busybox:1" && (x.Pull == nil || x.Pull.TLSVerify == nil || *x.Pull.TLSVerify) {
			t.Errorf("the image unit's pull must carry its TLSVerify=false: %+v", x.Pull)
		}
	}
	if l := a.obs.Files[layout.UnitPath("work@2.container")].Link; l != "work@.container" {
		t.Errorf("instance link -> %q", l)
	}
}

func TestPodChangeRestartsItsContainers(t *testing.T) {
	a := newApplied(t)
	a.converge(stack)
	p := a.plan(strings.Replace(stack, "127.0.0.1:8080:80", "127.0.0.1:8081:80", 1))
	got := actions(p)
	has(t, got, "stop shop-pod.service", "stop web.service", "stop side.service", "start shop-pod.service", "start web.service", "start side.service")
	hasNot(t, got, "stop work@1.service", "stop bb-image.service")
	before(t, got, "stop web.service", "stop shop-pod.service")
	if e := effect(p, "side.container"); e != plan.EffectRestart {
		t.Errorf("side.container: %s", e)
	}
}

func TestImageUnitChangePullsFirst(t *testing.T) {
	a := newApplied(t)
	a.converge(stack)
	p := a.plan(strings.Replace(stack, "busybox:1", "busybox:2", 1))
	got := actions(p)
	has(t, got, "pull-image localhost:5000/busybox:2", "stop web.service", "stop side.service", "start bb-image.service", "start web.service")
	if got[0] != "pull-image localhost:5000/busybox:2" {
		t.Errorf("the pull comes first, before any stop: %q", got)
	}
	hasNot(t, got, "stop shop-pod.service", "stop work@1.service")
	if e := effect(p, "bb.image"); e != plan.EffectPull {
		t.Errorf("bb.image: %s", e)
	}
}

func TestInstanceRemovedAlone(t *testing.T) {
	a := newApplied(t)
	a.converge(stack)
	next := strings.Replace(stack, `"instances":["1","2"]`, `"instances":["1"]`, 1)
	p := a.converge(next)
	got := actions(p)
	has(t, got, "stop work@2.service", "remove-unit /etc/containers/systemd/work@2.container", "write-unit /etc/containers/systemd/work@.container")
	hasNot(t, got, "stop work@1.service", "start work@1.service")
	if e := effect(p, "work@.container"); e != plan.EffectMetadata {
		t.Errorf("template: %s", e)
	}
	if e := effect(p, "work@1.container"); e != plan.EffectNone && e != "absent" {
		t.Errorf("instance 1: %s", e)
	}
	// And back: a new instance starts alone.
	p = a.converge(stack)
	got = actions(p)
	has(t, got, "link-unit /etc/containers/systemd/work@2.container", "start work@2.service")
	hasNot(t, got, "stop work@1.service", "start work@1.service")
}

func TestTemplateChangeRestartsEveryInstance(t *testing.T) {
	a := newApplied(t)
	a.converge(stack)
	p := a.plan(strings.Replace(stack, `"sleep %i"`, `"sleep 1%i"`, 1))
	has(t, actions(p), "stop work@1.service", "stop work@2.service", "start work@1.service", "start work@2.service")
}

func TestDropInChanges(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           plan.Effect
	}{
		{"a key", `"Environment":"A=1"`, `"Environment":"A=2"`, plan.EffectRestart},
		{"description only", `"10-env.conf":{"Container":{"Environment":"A=1"}}`, `"10-env.conf":{"Container":{"Environment":"A=1"}},"20-desc.conf":{"Unit":{"Description":"the web"}}`, plan.EffectMetadata},
		{"removed", `,"dropIns":{"10-env.conf":{"Container":{"Environment":"A=1"}}}`, ``, plan.EffectRestart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newApplied(t)
			a.converge(stack)
			next := strings.Replace(stack, tc.from, tc.to, 1)
			p := a.plan(next)
			if e := effect(p, "web.container"); e != tc.want {
				t.Errorf("web.container: %s, want %s (%q)", e, tc.want, actions(p))
			}
			hasNot(t, actions(p), "stop shop-pod.service", "stop side.service")
			a.apply(p)
			if again := a.plan(next); !again.Empty() {
				t.Errorf("not converged: %q", actions(again))
			}
		})
	}
}

func TestOthersDropInsAreNeverSyslets(t *testing.T) {
	a := newApplied(t)
	a.converge(stack)
	mine := layout.UnitPath("web.container.d/50-mine.conf")
	must(t, a.root.WriteFile(mine, []byte("[Service]\nTimeoutStopSec=3\n"), 0o644))
	// Someone else's drop-in is no change of syslet's...
	if p := a.plan(stack); !p.Empty() {
		t.Fatalf("a drop-in of someone else's changed the plan: %q", actions(p))
	}
	// ...and is left alone when syslet's own go, or the unit itself goes.
	next := strings.Replace(stack, `,"dropIns":{"10-env.conf":{"Container":{"Environment":"A=1"}}}`, ``, 1)
	p := a.converge(next)
	has(t, actions(p), "remove-unit /etc/containers/systemd/web.container.d/10-env.conf")
	hasNot(t, actions(p), "remove-unit "+mine)
	var noWeb []string
	for _, l := range strings.Split(strings.TrimSpace(next), "\n") {
		if !strings.Contains(l, `"name":"web"`) {
			noWeb = append(noWeb, l)
		}
	}
	p = a.plan(strings.Join(noWeb, "\n"))
	has(t, actions(p), "remove-unit /etc/containers/systemd/web.container")
	hasNot(t, actions(p), "remove-unit "+mine)
	// Edited by hand, syslet's own drop-in is drift.
	a = newApplied(t)
	a.converge(stack)
	must(t, a.root.WriteFile(layout.UnitPath("web.container.d/10-env.conf"), []byte("[Container]\nEnvironment=A=9\n"), 0o644))
	p = a.plan(strings.Replace(stack, `"Environment":"A=1"`, `"Environment":"A=2"`, 1))
	if e := effect(p, "web.container"); e != plan.EffectDrift {
		t.Errorf("edited drop-in: %s (%q)", e, actions(p))
	}
}

func TestKubeYamlIsAConfigFile(t *testing.T) {
	a := newApplied(t)
	a.converge(stack)
	p := a.plan(strings.Replace(stack, `"kind: Pod\n"`, `"kind: Pod\nmetadata: {}\n"`, 1))
	has(t, actions(p), "write-file /etc/containers/kube/play/play.yaml", "stop play.service", "start play.service")
}

func TestServiceNameIsFollowed(t *testing.T) {
	a := newApplied(t)
	a.converge(stack)
	var noAPI []string
	for _, l := range strings.Split(strings.TrimSpace(stack), "\n") {
		if !strings.Contains(l, `"name":"api"`) {
			noAPI = append(noAPI, l)
		}
	}
	p := a.plan(strings.Join(noAPI, "\n"))
	has(t, actions(p), "stop shop-api.service", "remove-unit /etc/containers/systemd/api.container")
	hasNot(t, actions(p), "stop api.service")
}

// A host of hand-written units (no marker): a pod, a template with an
// instance link, drop-ins. Specs that say what they say take them over
// with no stop and no start.
func TestHandWrittenTakenOverWithoutRestart(t *testing.T) {
	a := newApplied(t)
	w := func(p, s string) { must(t, a.root.WriteFile(layout.UnitPath(p), []byte(s), 0o644)) }
	w("shop.pod", "[Pod]\nPodName=shop\n")
	w("web.container", "[Unit]\nDescription=web\n[Container]\nImage=docker.io/library/busybox:1.37\nContainerName=web\nPod=shop.pod\n[Service]\nRestart=always\n[Install]\nWantedBy=multi-user.target default.target\n")
	w("web.container.d/10-env.conf", "[Container]\nEnvironment=A=1\n")
	w("work@.container", "[Container]\nImage=docker.io/library/busybox:1.37\nContainerName=work-%i\nExec=sleep 1d\n[Service]\nRestart=always\n[Install]\nWantedBy=multi-user.target default.target\n")
	must(t, a.root.WriteLink(layout.UnitPath("work@1.container"), "work@.container"))
	for _, s := range []string{"shop-pod.service", "web.service", "work@1.service"} {
		a.obs.Units[s] = host.UnitState{Name: s, LoadState: "loaded", ActiveState: "active"}
	}
	a.obs.Images["docker.io/library/busybox:1.37"] = true
	specs := `
{"apiVersion":"v1","type":"pod","name":"shop","unit":{"Pod":{}}}
{"apiVersion":"v1","type":"container","name":"web","unit":{"Unit":{"Description":"web"},"Container":{"Image":"docker.io/library/busybox:1.37","Pod":"shop.pod"}},"dropIns":{"10-env.conf":{"Container":{"Environment":"A=1"}}}}
{"apiVersion":"v1","type":"container","name":"work","unit":{"Container":{"Image":"docker.io/library/busybox:1.37","Exec":"sleep 1d"}},"instances":["1"]}
`
	p := a.converge(specs)
	for _, x := range p.Actions {
		if x.Op == plan.OpStop || x.Op == plan.OpStart {
			t.Errorf("taking over must not %s %s", x.Op, x.Target)
		}
	}
	for _, f := range []string{"shop.pod", "web.container", "work@.container", "work@1.container"} {
		if e := effect(p, f); e != plan.EffectMetadata && e != plan.EffectNone {
			t.Errorf("%s: %s", f, e)
		}
	}
}
