//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDriftReconcileInWebhookd: with `drift: {reconcile: true}`, a hand
// edit a drift check finds is put back by deploying the applied commit
// again with --force: the unit file is the rendered one again, the
// container runs without the hand-added variable, the deploy is told with
// trigger "reconcile", the drift gauge returns to zero, and the next checks
// find nothing, so it deploys once, not on every interval.
func TestDriftReconcileInWebhookd(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	c := startReceiver(t, w.Host)
	const interval = 5 * time.Second
	w.writeNotifyConfig("github", rcvURL+"/github", "auto", fmt.Sprintf("    drift: {interval: %s, reconcile: true}", interval))
	w.writeSpec("localhost:5000/web:v2", "reconcile", "")
	applied := w.deploy("web v2")
	unitFile := "/etc/containers/systemd/web.container"
	rendered := w.MustRun(t, "sha256sum "+unitFile)

	// The hand edit, made live: the container runs with it. It is made
	// under the apply lock, as an operator's own tooling might: a drift
	// check that reads the edited file before the restart is done would
	// otherwise reconcile at once and cancel the restart ("Job for
	// web.service canceled", seen on a loaded CI machine). The reconcile
	// waits for the lock, so it begins only once the edit runs.
	hasHand := func() bool {
		env := w.MustRun(t, "podman inspect web --format '{{range .Config.Env}}{{println .}}{{end}}'")
		return strings.Contains(env, "HAND=edited")
	}
	edited := strings.TrimSpace(w.MustRun(t, `mkdir -p /run/syslet && flock /run/syslet/apply.lock sh -ec "
sed -i '/^\[Container\]/a Environment=HAND=edited' `+unitFile+`
systemctl daemon-reload && systemctl restart web.service
podman inspect web --format '{{range .Config.Env}}{{println .}}{{end}}' | grep -qx HAND=edited
systemctl show -P InvocationID web.service"`))
	if edited == "" {
		t.Fatal("no InvocationID of web.service after the hand edit")
	}
	t0 := time.Now()

	// Within an interval and a deploy the reconcile has put it back.
	st := w.waitStatus("a reconcile deploy", func(s whStatus) bool {
		return s.Last != nil && strings.HasPrefix(s.Last.Trigger, "reconcile") && s.State == "idle"
	})
	took := time.Since(t0)
	if st.Last.Result != "success" || st.LastApplied != applied {
		t.Fatalf("the reconcile deploy: %+v (applied %s, want %s)", st.Last, st.LastApplied, applied)
	}
	if now := w.MustRun(t, "sha256sum "+unitFile); now != rendered {
		t.Errorf("after the reconcile the unit file is not the rendered one:\n%s", w.MustRun(t, "cat "+unitFile))
	}
	if hasHand() {
		t.Error("after the reconcile the container still runs with HAND=edited")
	}
	if now := prop(t, w.Host, "web.service", "InvocationID"); now == edited {
		t.Error("the reconcile did not restart web.service onto the rendered unit")
	}
	if active := prop(t, w.Host, "web.service", "ActiveState"); active != "active" {
		t.Errorf("web.service is %s after the reconcile", active)
	}
	_, _, rev := w.running()
	if rev != "reconcile" {
		t.Errorf("the container runs REV=%q, want the spec's", rev)
	}
	t.Logf("the hand edit was put back %s after it was made (interval %s): %s", took.Round(100*time.Millisecond), interval, st.Last.Summary)

	// The gauge returns to zero, and the checks after find nothing to
	// reconcile: two deploys in all.
	deadline := time.Now().Add(interval + 30*time.Second)
	for w.metric(`webhookd_drift_units{kind="drift",repo="infra"}`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the drift gauge stays up after the reconcile")
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(3 * interval)
	if n := w.deploys(); n != 2 {
		t.Errorf("%v deploys, want 2 (the push and one reconcile)", n)
	}
	if checks := w.metric(`webhookd_drift_checks_total{repo="infra",result="ok"}`); checks < 3 {
		t.Errorf("only %v drift checks ran", checks)
	}
	var triggers []string
	drifts, reconciled := 0, 0
	for _, ev := range hookEvents(t, received(t, w.Host, "/hook"), c.hookSecret, applied) {
		triggers = append(triggers, ev.Event+" ("+ev.Source.Trigger+")")
		switch {
		case ev.Event == "drift" && ev.Source.Trigger == "drift check":
			drifts++
		case ev.Event == "succeeded" && strings.HasPrefix(ev.Source.Trigger, "reconcile"):
			reconciled++
		}
	}
	joined := strings.Join(triggers, ", ")
	if drifts != 1 || reconciled != 1 {
		t.Errorf("notifications of the applied commit: %s", joined)
	}
	t.Logf("notifications of the applied commit: %s", joined)
}
