//go:build integration

package integration

// Issue 26's acceptance on real test hosts: pods, image units, templates
// with instances and drop-ins, applied and judged by systemd, podman and
// what the containers see; hand-written ones adopted without a restart; a
// pod change killed half-way and resumed.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

const podDir = "/root/pod"

// podHost boots a host with syslet, podman's socket and examples/pod at
// /root/pod, applied.
func podHost(t *testing.T) *testhost.Host {
	t.Helper()
	h := startWithSyslet(t)
	root, err := testhost.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	must(t, h.CopyIn(filepath.Join(root, "examples", "pod"), podDir))
	h.MustRun(t, "systemctl enable --now podman.socket")
	apply(t, h, podDir)
	waitActive(t, h, podServices...)
	return h
}

var podServices = []string{"shop-pod.service", "storefront.service", "sidecar.service", "worker@1.service", "worker@2.service"}

func waitActive(t *testing.T, h *testhost.Host, services ...string) {
	t.Helper()
	for _, s := range services {
		if r := h.Eventually("systemctl is-active -q "+s, 60*time.Second); !r.OK() {
			t.Fatalf("%s is not active:\n%s", s, h.Run("systemctl status --no-pager "+s+"; journalctl -n 30 --no-pager -u "+s))
		}
	}
}

// sidecarSees proves the sidecar fetches the storefront over the pod's
// localhost: wget from inside it, and the copy its loop keeps.
func sidecarSees(t *testing.T, h *testhost.Host, want string) {
	t.Helper()
	if r := h.Eventually("podman exec sidecar wget -qO- http://localhost:80/ | grep -qxF "+testhost.Quote(want), 30*time.Second); !r.OK() {
		t.Errorf("the sidecar does not reach the storefront on localhost:\n%s", h.Run("podman exec sidecar wget -qO- http://localhost:80/"))
	}
	if r := h.Eventually("podman exec sidecar cat /tmp/seen | grep -qxF "+testhost.Quote(want), 30*time.Second); !r.OK() {
		t.Errorf("the sidecar's own loop has not fetched the page:\n%s", h.Run("podman exec sidecar cat /tmp/seen"))
	}
}

// 1. A pod with two containers sharing localhost: both in the pod podman
// runs, the sidecar fetching the storefront at localhost:80, the pod's
// published port answering on the host.
func TestPodSidecarSharesLocalhost(t *testing.T) {
	t.Parallel()
	h := podHost(t)
	var pods []struct {
		Name       string
		Containers []struct{ Names string }
	}
	must(t, json.Unmarshal([]byte(h.MustRun(t, "podman pod ps --format json")), &pods))
	var names []string
	for _, p := range pods {
		if p.Name != "shop" {
			continue
		}
		for _, c := range p.Containers {
			names = append(names, c.Names)
		}
	}
	slices.Sort(names)
	if want := []string{"shop-infra", "sidecar", "storefront"}; !slices.Equal(names, want) {
		t.Errorf("pod shop holds %q, want %q", names, want)
	}
	const page = "<h1>shop, served in a pod</h1>"
	sidecarSees(t, h, page)
	if r := h.Eventually("curl -fsS http://127.0.0.1:8090/ | grep -qxF "+testhost.Quote(page), 30*time.Second); !r.OK() {
		t.Errorf("the pod's published port does not serve the page:\n%s", h.Run("curl -sS http://127.0.0.1:8090/"))
	}
	// Both share one network namespace: the pod's infra container's.
	ns := h.MustRun(t, "for c in storefront sidecar shop-infra; do readlink /proc/$(podman inspect -f '{{.State.Pid}}' $c)/ns/net; done | sort -u | wc -l")
	if strings.TrimSpace(ns) != "1" {
		t.Errorf("the pod's containers are in %s network namespaces, want 1", strings.TrimSpace(ns))
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", podDir); d.Code != 0 {
		t.Errorf("a second plan must be empty:\n%s", d)
	}
}

// runActions reads the last run's journal record: its actions in the
// order they landed, as "op target".
func runActions(t *testing.T, h *testhost.Host) []string {
	t.Helper()
	out := h.MustRun(t, `f=/var/lib/syslet/runs.jsonl; r=$(grep '"type":"intent"' $f | tail -n 1 | jq -r .run); jq -rc --arg r "$r" 'select(.type == "action" and .run == $r) | .op + " " + .target' $f`)
	var acts []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			acts = append(acts, l)
		}
	}
	return acts
}

// 2. An image unit's new image is pulled in step 1, before anything
// stops: in the run journal (actions as they landed) and in the host's
// journal (podman's pull before systemd stops the first container).
func TestImageUnitPulledBeforeStop(t *testing.T) {
	t.Parallel()
	h := podHost(t)
	ref, err := h.MakeImage("busybox:v2", "marker-v2")
	must(t, err)
	editFile(t, h, podDir+"/10-shop-pod.json", fmt.Sprintf(`map(if .type == "image" then .unit.Image.Image = %q else . end)`, ref))
	c := cursor(t, h)
	r := apply(t, h, podDir)
	if !strings.Contains(r.Stdout, "image unit busybox.image changed") {
		t.Errorf("the plan does not name the image unit as why its containers restart:\n%s", r.Stdout)
	}
	waitActive(t, h, podServices...)
	// What runs now is the new image.
	for _, ctr := range []string{"storefront", "sidecar", "worker-1", "worker-2"} {
		if m := strings.TrimSpace(h.Run("podman exec " + ctr + " cat /etc/testhost-marker").Stdout); m != "marker-v2" {
			t.Errorf("%s runs marker %q, want marker-v2", ctr, m)
		}
	}
	// The run journal: the pull landed first, before any stop.
	acts := runActions(t, h)
	pull := slices.Index(acts, "pull-image "+ref)
	firstStop := slices.IndexFunc(acts, func(a string) bool { return strings.HasPrefix(a, "stop ") })
	if pull < 0 || firstStop < 0 || pull > firstStop {
		t.Errorf("want the pull of %s before the first stop in the run journal:\n%s", ref, strings.Join(acts, "\n"))
	}
	// The host's journal: the registry served the new image's manifest and
	// layers (the pull) before systemd began stopping any container.
	var pulledAt, stopAt time.Time
	for _, e := range journal(t, h, c) {
		switch {
		case strings.Contains(e.Message, `"GET /v2/busybox/`) && (pulledAt.IsZero() || stopAt.IsZero()):
			pulledAt = e.At // the last request of the pull before the first stop
		case stopAt.IsZero() && e.Fields["_PID"] == "1" && strings.HasPrefix(e.Message, "Stopping "):
			stopAt = e.At
		}
	}
	if pulledAt.IsZero() || stopAt.IsZero() || !pulledAt.Before(stopAt) {
		t.Errorf("host journal: the registry's last request of the pull at %v, first stop at %v; want the pull first\n%s", pulledAt, stopAt, strings.Join(systemdJobs(t, h, c), "\n"))
	}
	t.Logf("host journal: the pull's last registry request at %s, the first stop at %s", pulledAt.Format("15:04:05.000"), stopAt.Format("15:04:05.000"))
	// The pod itself did not change: syslet does not stop it (podman's
	// exit policy stops it when its last container stops, and the
	// containers' start brings it up again).
	if slices.Contains(acts, "stop shop-pod.service") {
		t.Errorf("syslet stopped the pod for a change of the image its containers run:\n%s", strings.Join(acts, "\n"))
	}
}

// 3. A template with instances 1 and 2, both running; instance 2 removed
// from the spec is stopped and removed alone.
func TestTemplateInstancesRemovedAlone(t *testing.T) {
	t.Parallel()
	h := podHost(t)
	for _, c := range []string{"worker-1", "worker-2"} {
		if st := strings.TrimSpace(h.Run("podman inspect -f '{{.State.Status}}' " + c).Stdout); st != "running" {
			t.Fatalf("container %s is %q", c, st)
		}
	}
	if got := strings.TrimSpace(h.MustRun(t, `podman exec worker-2 sh -c 'echo "$QUEUE"'; podman exec worker-1 sh -c 'echo "$QUEUE"'`)); got != "returns\norders" {
		t.Errorf("QUEUE in worker-2, worker-1: %q (the template's drop-in, and instance 2's over it)", got)
	}
	if l := strings.TrimSpace(h.MustRun(t, "readlink /etc/containers/systemd/worker@2.container")); l != "worker@.container" {
		t.Errorf("worker@2.container links to %q", l)
	}
	others := []string{"worker@1.service", "storefront.service", "sidecar.service", "shop-pod.service"}
	before := invocations(t, h, others...)
	c := cursor(t, h)
	editFile(t, h, podDir+"/20-workers.json", `.instances = ["1"]`)
	r := apply(t, h, podDir)
	t.Logf("removing instance 2:\n%s", r.Stdout)
	if !strings.Contains(r.Stdout, "instance 2 of worker@.container") {
		t.Errorf("the plan does not speak of instance 2:\n%s", r.Stdout)
	}
	if st := prop(t, h, "worker@2.service", "ActiveState"); st != "inactive" {
		t.Errorf("worker@2.service is %s, want inactive", st)
	}
	if h.Run("test -e /etc/containers/systemd/worker@2.container || test -e /etc/containers/systemd/worker@2.container.d/20-queue.conf || podman container exists worker-2").OK() {
		t.Errorf("instance 2's link, drop-in or container is still there")
	}
	after := invocations(t, h, others...)
	for _, s := range others {
		if before[s] != after[s] {
			t.Errorf("%s was restarted by the removal of instance 2", s)
		}
	}
	for _, j := range systemdJobs(t, h, c) {
		if (strings.HasPrefix(j, "Stopping ") || strings.HasPrefix(j, "Starting ")) && !strings.Contains(j, "worker@2") && !strings.Contains(j, "podman") {
			t.Errorf("a job on another unit: %s", j)
		}
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", podDir); d.Code != 0 {
		t.Errorf("a second plan must be empty:\n%s", d)
	}
}

// 4. A drop-in change is applied with the right effect: a key that
// changes what runs restarts the unit with it; a Description alone is
// metadata-only (rewritten, daemon-reload, no restart).
func TestDropInChangeApplied(t *testing.T) {
	t.Parallel()
	h := podHost(t)
	inv := prop(t, h, "worker@1.service", "InvocationID")
	editFile(t, h, podDir+"/20-workers.json", `.dropIns["10-queue.conf"].Container.Environment = "QUEUE=priority"`)
	r := apply(t, h, podDir)
	t.Logf("a drop-in key changed:\n%s", r.Stdout)
	waitActive(t, h, "worker@1.service")
	if got := strings.TrimSpace(h.MustRun(t, `podman exec worker-1 sh -c 'echo "$QUEUE"'`)); got != "priority" {
		t.Errorf("worker-1 has QUEUE=%q after the drop-in changed", got)
	}
	if now := prop(t, h, "worker@1.service", "InvocationID"); now == inv {
		t.Errorf("worker@1.service was not restarted for a drop-in that changes its environment")
	}
	if got := strings.TrimSpace(h.MustRun(t, `podman exec worker-2 sh -c 'echo "$QUEUE"'`)); got != "returns" {
		t.Errorf("worker-2's own drop-in must still win: QUEUE=%q", got)
	}
	// Metadata only: a drop-in that sets the description.
	inv = prop(t, h, "sidecar.service", "InvocationID")
	editFile(t, h, podDir+"/10-shop-pod.json", `map(if .name == "sidecar" then .dropIns["20-describe.conf"] = {"Unit": {"Description": "fetches the storefront"}} else . end)`)
	r = apply(t, h, podDir)
	if !strings.Contains(r.Stdout, "metadata-only") {
		t.Errorf("a Description drop-in must be metadata-only:\n%s", r.Stdout)
	}
	if d := prop(t, h, "sidecar.service", "Description"); d != "fetches the storefront" {
		t.Errorf("sidecar.service's Description is %q", d)
	}
	if now := prop(t, h, "sidecar.service", "InvocationID"); now != inv {
		t.Errorf("sidecar.service was restarted for a Description")
	}
	// A drop-in edited by hand is drift: left alone, the plan says so.
	h.MustRun(t, "sed -i s/priority/by-hand/ /etc/containers/systemd/worker@.container.d/10-queue.conf")
	editFile(t, h, podDir+"/20-workers.json", `.dropIns["10-queue.conf"].Container.Environment = "QUEUE=next"`)
	if d := syslet(h, "--diff", podDir); !strings.Contains(d.Stdout, "drift") || !strings.Contains(d.Stdout, "10-queue.conf") {
		t.Errorf("a hand-edited drop-in must be drift:\n%s", d)
	}
}

// 5. A host of hand-written pod, template and drop-in units, started by
// hand, is adopted: the apply of the adopted specs restarts nothing
// (every InvocationID unchanged, no job on them) and the next plan is
// empty.
func TestAdoptPodsTemplatesDropIns(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && podman pull -q localhost:5000/busybox:latest")
	root, err := testhost.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	must(t, h.CopyIn(filepath.Join(root, "pkg/app/adopt/testdata/pods"), "/root/pods"))
	h.MustRun(t, "mkdir -p /etc/containers/systemd && cp -a /root/pods/. /etc/containers/systemd/ && test -L /etc/containers/systemd/work@1.container && systemctl daemon-reload")
	services := []string{"shop-pod.service", "web.service", "side.service", "work@1.service", "work@2.service"}
	h.MustRun(t, "systemctl start "+strings.Join(services, " "))
	waitActive(t, h, services...)
	if got := strings.TrimSpace(h.MustRun(t, `podman exec web sh -c 'echo "$MODE"'; podman exec work-2 sh -c 'echo "$SHARD"; echo "$ROLE"'`)); got != "by-hand\ntwo\nworker" {
		t.Fatalf("the hand-written drop-ins are not in effect: %q", got)
	}
	before := invocations(t, h, services...)

	r := h.Run("syslet adopt /etc/containers/systemd/* > /root/adopted.json")
	if !r.OK() || strings.Contains(r.Stderr, "note:") {
		t.Fatalf("adopt:\n%s", r)
	}
	t.Logf("adopt: %s", r.Stderr)
	c := cursor(t, h)
	a := syslet(h, "/root/adopted.json")
	if !a.OK() || !strings.Contains(a.Stdout, "taken over") {
		t.Fatalf("applying the adopted specs:\n%s", a)
	}
	t.Logf("apply of the adopted specs:\n%s", a.Stdout)
	after := invocations(t, h, services...)
	for _, s := range services {
		if before[s] != after[s] {
			t.Errorf("%s was restarted by the apply of the adopted specs (InvocationID %s -> %s)", s, before[s], after[s])
		}
	}
	for _, j := range systemdJobs(t, h, c) {
		for _, s := range services {
			if strings.HasPrefix(j, "Stopping "+s) || strings.HasPrefix(j, "Starting "+s) || strings.Contains(j, strings.TrimSuffix(s, ".service")+".service") && (strings.HasPrefix(j, "Stopp") || strings.HasPrefix(j, "Start")) {
				t.Errorf("systemd job on an adopted unit during the apply: %s", j)
			}
		}
	}
	// syslet's now: each unit carries the marker, instances are listed in
	// the template's, drop-ins recorded.
	if !h.Run(`grep -q '^\[X-Syslet\]' /etc/containers/systemd/shop.pod && grep -qx 'Instance=2' /etc/containers/systemd/work@.container && grep -q 'work@2.container.d/20-shard.conf' /etc/containers/systemd/work@.container`).OK() {
		t.Errorf("the adopted units do not carry syslet's marker:\n%s", h.Run("cat /etc/containers/systemd/work@.container"))
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", "/root/adopted.json"); d.Code != 0 {
		t.Errorf("second plan after adopting must be empty:\n%s", d)
	}
}

// 6. A pod change killed half-way (after its containers and the pod
// stopped, and again after the units are written) is finished by the
// next plain run: the pod and its containers run the new definition, the
// sidecar reaches the storefront, and a third run does nothing.
func TestResumePodChange(t *testing.T) {
	t.Parallel()
	for _, step := range []int{2, 7} {
		t.Run(fmt.Sprintf("killed after step %d", step), func(t *testing.T) {
			t.Parallel()
			h := podHost(t)
			editFile(t, h, podDir+"/10-shop-pod.json", `map(if .type == "pod" then .unit.Pod.PublishPort = "127.0.0.1:8091:80" else . end)`)
			d := syslet(h, "--diff", podDir)
			for _, want := range []string{"stop                     sidecar.service", "shop-pod.service", "pod shop restarts"} {
				if !strings.Contains(d.Stdout, want) {
					t.Fatalf("the pod change's plan lacks %q:\n%s", want, d.Stdout)
				}
			}
			pid := startPaused(t, h, step, podDir, "/root/first.log")
			h.MustRun(t, fmt.Sprintf("kill -KILL %d", pid))
			waitGone(t, h, pid)
			r := apply(t, h, podDir)
			t.Logf("resuming run:\n%s", r.Stdout)
			waitActive(t, h, "shop-pod.service", "storefront.service", "sidecar.service")
			for _, u := range []string{"shop-pod.service", "storefront.service", "sidecar.service"} {
				if prop(t, h, u, "NeedDaemonReload") != "no" {
					t.Errorf("%s runs an old definition", u)
				}
			}
			if got := h.Eventually("curl -fsS http://127.0.0.1:8091/", 30*time.Second); !got.OK() {
				t.Errorf("the pod does not publish its new port:\n%s", got)
			}
			sidecarSees(t, h, "<h1>shop, served in a pod</h1>")
			if d := syslet(h, "--diff", "--detailed-exitcode", podDir); d.Code != 0 {
				t.Errorf("a third run must have nothing to do:\n%s", d)
			}
		})
	}
}
