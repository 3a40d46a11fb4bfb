//go:build integration

package integration

// A swap that fails in step 4 after an instance link was swapped in: the
// run puts the link back (a new one is removed again) with everything
// else it swapped, starts again what step 2 stopped, and the next plain
// run converges. The failure is made under a paused apply: after step 3
// the staged link of a later instance is deleted, so its rename fails.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/runlog"
)

// linkSpecs are two container templates, web and worker, with the given
// instances, and a container side whose config file holds conf; with a
// secret spec's JSON, side also mounts its podman secret db-password.
func linkSpecs(web, worker []string, conf string, secret []byte) string {
	tmpl := func(name string, instances []string) string {
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": name, "instances": instances,
			"unit": map[string]any{"Container": map[string]any{"Image": "localhost:5000/busybox:latest", "RunInit": "true", "Exec": "sleep infinity"}}})
		return string(b)
	}
	container := map[string]any{"Image": "localhost:5000/busybox:latest", "RunInit": "true", "Exec": "sleep infinity"}
	if secret != nil {
		container["Secret"] = "db-password"
	}
	side, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "side",
		"configFiles": []map[string]string{{"mountPath": "/etc/side.conf", "content": conf}},
		"unit":        map[string]any{"Container": container}})
	out := tmpl("web", web) + "\n" + tmpl("worker", worker) + "\n" + string(side) + "\n"
	if secret != nil {
		out += string(secret) + "\n"
	}
	return out
}

func TestFaultLinkSwapFailsAndIsPutBack(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	writeFaultSpecs(t, h, "/root/links1", linkSpecs([]string{"1"}, []string{"1"}, "v1\n", nil))
	apply(t, h, "/root/links1")
	// The change: an instance more of each template (two new links, web@2
	// swapped before worker@3), side's config file and a podman secret for
	// it (a stop in step 2, a write and a secret in step 3, so the apply
	// can pause after staging).
	recipient := strings.TrimSpace(h.MustRun(t, "syslet host-key"))
	secret := secretSpec(t, "db", sopsEncryptFor(t, "password: "+randomValue("link-test")+"\n", recipient))
	writeFaultSpecs(t, h, "/root/links2", linkSpecs([]string{"1", "2"}, []string{"1", "3"}, "v2\n", secret))
	d := syslet(h, "--diff", "/root/links2")
	for _, want := range []string{"web@2.container", "worker@3.container", "side.service"} {
		if !strings.Contains(d.Stdout, want) {
			t.Fatalf("the change's plan lacks %q:\n%s", want, d.Stdout)
		}
	}
	units := []string{"web@1.service", "worker@1.service", "side.service"}
	inv := invocations(t, h, units...)
	before := contents(t, h, "/etc/containers")

	pid := startPaused(t, h, 3, "/root/links2", "/root/links2.log")
	// Both links are staged beside their targets; worker@3's is removed.
	staged := func(target string) []string {
		return strings.Fields(h.MustRun(t, "find /etc/containers/systemd -maxdepth 1 -name '.syslet-tmp-*' -type l -lname "+target))
	}
	if w, k := staged("web@.container"), staged("worker@.container"); len(w) != 1 || len(k) != 1 {
		t.Fatalf("staged links: web %q, worker %q; want one each", w, k)
	}
	h.MustRun(t, "rm "+staged("worker@.container")[0]+" && rm /run/syslet/test-paused-3")
	waitGone(t, h, pid)
	log := h.MustRun(t, "cat /root/links2.log")
	t.Logf("the run whose link swap failed:\n%s", log)
	// web@2's link is sent to be swapped before worker@3's (the step's
	// writes go out in plan order), so it was swapped in, and put back.
	for _, want := range []string{"failed error=\"writing /etc/containers/systemd/worker@3.container: no such file or directory\"",
		"applied op=link-unit", "put back op=link-unit", "target=/etc/containers/systemd/web@2.container",
		"Put the host back as it was but for its podman secrets", "keep their new value (db-password)", "Re-run syslet once the cause is fixed"} {
		if !strings.Contains(log, want) {
			t.Errorf("the run's output lacks %q", want)
		}
	}

	// The host as it was: no new link, no staged file, side's config v1
	// and side running again; the instances that ran were not touched.
	if after := contents(t, h, "/etc/containers"); after != before {
		t.Errorf("/etc/containers differs from before the run:\n%s", h.Run("ls -la /etc/containers/systemd; cat /etc/containers/config/side/etc/side.conf"))
	}
	if h.Run("test -e /etc/containers/systemd/web@2.container || test -e /etc/containers/systemd/worker@3.container").OK() {
		t.Error("a link of the failed run is still there")
	}
	if left := strings.TrimSpace(h.MustRun(t, "find /etc/containers -name '.syslet-tmp-*'")); left != "" {
		t.Errorf("staged files left: %s", left)
	}
	waitActive(t, h, "side.service")
	after := invocations(t, h, units...)
	for _, u := range []string{"web@1.service", "worker@1.service"} {
		if after[u] != inv[u] {
			t.Errorf("%s was restarted", u)
		}
	}
	if after["side.service"] == inv["side.service"] {
		t.Error("side.service was not stopped and started again (step 2 stopped it)")
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman exec side cat /etc/side.conf")); got != "v1" {
		t.Errorf("side reads %q after the put-back, want v1", got)
	}
	// The secret step 3 created stays, as the summary said; side runs on
	// its old unit, without it.
	if !h.Run("podman secret exists db-password").OK() || h.Run("podman exec side test -e /run/secrets/db-password").OK() {
		t.Error("want the podman secret kept and side running on its old unit, without it")
	}
	runs := history(t, h)
	if last := runs[len(runs)-1]; last.Result != runlog.ResultFailed {
		t.Errorf("the journal's last run is %s, want failed: %+v", last.Result, last)
	}

	// One plain run converges: both links in place, their instances up.
	next := apply(t, h, "/root/links2")
	if want := "previous run " + runs[len(runs)-1].Run + " failed and put the host back; this plan makes its change again"; !strings.Contains(next.Stdout, want) {
		t.Errorf("the next run's header lacks %q:\n%s", want, next.Stdout)
	}
	for _, l := range []string{"web@2.container web@.container", "worker@3.container worker@.container"} {
		f := strings.Fields(l)
		if got := strings.TrimSpace(h.MustRun(t, "readlink /etc/containers/systemd/"+f[0])); got != f[1] {
			t.Errorf("%s links to %q, want %s", f[0], got, f[1])
		}
	}
	for _, u := range []string{"web@2.service", "worker@3.service"} {
		waitActive(t, h, u)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman exec side sh -c 'cat /etc/side.conf; test -s /run/secrets/db-password && echo secret'")); got != "v2\nsecret" {
		t.Errorf("side reads %q after the next run, want v2 and its secret", got)
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", "/root/links2"); d.Code != 0 {
		t.Errorf("a plan after converging is not empty:\n%s", d)
	}
	recordFault(t, faultRow{Fault: "step 4: an instance link's swap fails after another instance's link was swapped in", Tries: 1, Survived: 1,
		DataLost: "none: the new link removed again, side's config file put back and side started again; the secret it created kept, as the summary says",
		NextRun:  fmt.Sprintf("this run: %s; next run: %s", firstLine(log, "Put the host back"), nextRun(next.Stdout))})
}
