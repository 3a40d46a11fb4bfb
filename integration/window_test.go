//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// whWindow is a repository's maintenance window as /status shows it.
type whWindow struct {
	Open     bool
	Windows  []string
	NextOpen *time.Time
	Waiting  string
}

// window is the window part of the repository's /status (nil: none).
func (w *whHost) window() *whWindow {
	w.t.Helper()
	var doc struct {
		Repos []struct{ Window *whWindow }
	}
	out := w.MustRun(w.t, "curl -sSf "+whURL+"/status")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Repos) != 1 {
		w.t.Fatalf("/status: %v\n%s", err, out)
	}
	return doc.Repos[0].Window
}

// TestMaintenanceWindow: issue 57's acceptance for windows. A repository
// whose window is closed now: a push is queued, /status, the page and the
// metrics say it waits for the next opening, and the host is untouched
// (the same container, unit file and service invocation); when the window
// opens (a daily window a minute and a half after the config is written,
// two minutes long) it deploys and the host runs the new commit. A
// misspelt window is refused by --check, naming its key.
func TestMaintenanceWindow(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	w.writeSpec("localhost:5000/web:v1", "1", "")
	v1 := w.deploy("web v1")

	bad := w.Run("printf 'repos:\\n  - name: infra\\n    url: /srv/git/infra.git\\n    secretFile: " + whSecret + "\\n    windows: [{calendar: \"Fri..Mon 02:00\", duration: 3h}]\\n' > /tmp/bad.yaml && webhookd --check --config /tmp/bad.yaml")
	if bad.Code != 2 || !strings.Contains(bad.Stderr, `repos[0].windows[0].calendar: "Fri..Mon 02:00": weekday range "Fri..Mon" runs backwards`) {
		t.Fatalf("--check of a backwards weekday range: exit %d\n%s%s", bad.Code, bad.Stdout, bad.Stderr)
	}

	// The window: every day at the guest's clock plus 90 s, in UTC.
	opens := strings.TrimSpace(w.MustRun(t, "date -u -d '+90 sec' +%H:%M:%S"))
	w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    secretFile: "+whSecret,
		"    windows:", fmt.Sprintf("      - {calendar: \"*-*-* %s UTC\", duration: 2m}", opens))
	w.MustRun(t, "webhookd --check --config "+whConfig+" && systemctl restart webhookd.service")
	unitFile := "/etc/containers/systemd/web.container"
	unitBefore := w.MustRun(t, "sha256sum "+unitFile)
	invocation := prop(t, w.Host, "web.service", "InvocationID")
	deploysBefore := w.deploys()

	w.writeSpec("localhost:5000/web:v2", "2", "")
	v2 := w.commit("web v2")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: v2}); code != 202 {
		t.Fatalf("push refused: %d %s", code, reply)
	}
	st := w.waitStatus("v2 queued", func(s whStatus) bool { return s.Queued == v2 })
	win := w.window()
	if win == nil || win.Open || win.NextOpen == nil || !strings.HasPrefix(win.Waiting, "waiting for window ") ||
		!strings.Contains(win.Waiting, opens[:5]+" UTC") {
		t.Fatalf("window %+v, want closed and waiting for %s UTC; status %+v", win, opens, st)
	}
	t.Logf("/status: queued %s, %q, next opening %s, windows %v", v2[:12], win.Waiting, win.NextOpen.Format(time.RFC3339), win.Windows)
	if page := w.MustRun(t, "curl -sSf "+whURL+"/"); !strings.Contains(page, win.Waiting) {
		t.Errorf("the page does not say %q", win.Waiting)
	}
	if v := w.metric(`webhookd_window_waiting{repo="infra"}`); v != 1 {
		t.Errorf("webhookd_window_waiting %v, want 1", v)
	}
	if v := w.metric(`webhookd_window_next_open_timestamp_seconds{repo="infra"}`); int64(v) != win.NextOpen.Unix() {
		t.Errorf("webhookd_window_next_open_timestamp_seconds %v, want %d", v, win.NextOpen.Unix())
	}

	// The host is untouched while the commit waits.
	image, marker, rev := w.running()
	if !strings.HasSuffix(image, "web:v1") || marker != "marker-1" || rev != "1" {
		t.Errorf("while v2 waits the host runs %s %s REV=%s", image, marker, rev)
	}
	if now := w.MustRun(t, "sha256sum "+unitFile); now != unitBefore {
		t.Error("the unit file changed while v2 waited")
	}
	if now := prop(t, w.Host, "web.service", "InvocationID"); now != invocation {
		t.Error("web.service was restarted while v2 waited")
	}
	if st := w.status(); st.LastApplied != v1 || w.deploys() != deploysBefore {
		t.Errorf("while v2 waited: applied %s (want %s), %v deploys (want %v)", st.LastApplied, v1, w.deploys(), deploysBefore)
	}

	// The window opens: v2 is deployed, once, and the host runs it.
	deadline := time.Now().Add(5 * time.Minute)
	for w.status().LastApplied != v2 {
		if time.Now().After(deadline) {
			log, _ := w.JournalSince("", "-u", "webhookd.service", "-n", "40", "-o", "cat")
			t.Fatalf("v2 not deployed 5 minutes after the window was to open at %s:\n%s", opens, log)
		}
		time.Sleep(time.Second)
	}
	st = w.status()
	image, marker, rev = w.running()
	if !strings.HasSuffix(image, "web:v2") || marker != "marker-2" || rev != "2" {
		t.Errorf("after the window opened the host runs %s %s REV=%s", image, marker, rev)
	}
	var doc struct {
		Repos []struct{ Last struct{ Started time.Time } }
	}
	must(t, json.Unmarshal([]byte(w.MustRun(t, "curl -sSf "+whURL+"/status")), &doc))
	at := doc.Repos[0].Last.Started
	if at.Before(*win.NextOpen) {
		t.Errorf("v2's deploy started at %s, before the window opened at %s", at, win.NextOpen)
	}
	if st.Last.Result != "success" || w.deploys() != deploysBefore+1 {
		t.Errorf("the window's deploy: %+v, %v deploys (want %v)", st.Last, w.deploys(), deploysBefore+1)
	}
	t.Logf("v2 deployed: started %s, window opened %s, %s", at.Format(time.RFC3339), win.NextOpen.Format(time.RFC3339), st.Last.Summary)
}

// TestMaintenanceWindowOverride: a commit waiting for a window that opens
// only in 2199 is deployed at once after `webhookd --open-window`, whose
// record (who, until when, why) the deploy's trigger carries; once the
// override is removed the next push waits again, the host untouched.
func TestMaintenanceWindowOverride(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    secretFile: "+whSecret,
		"    windows: [{calendar: \"2199-01-01 00:00 UTC\", duration: 1h}]")
	w.MustRun(t, "webhookd --check --config "+whConfig+" && systemctl restart webhookd.service")
	w.writeSpec("localhost:5000/web:v2", "2", "")
	v2 := w.commit("web v2")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: v2}); code != 202 {
		t.Fatalf("push refused: %d %s", code, reply)
	}
	w.waitStatus("v2 queued", func(s whStatus) bool { return s.Queued == v2 })
	if win := w.window(); win == nil || win.Waiting != "waiting for window Tue 2199-01-01 00:00 UTC" {
		t.Fatalf("window %+v", win)
	}
	if r := w.Run("systemctl is-active web.service"); strings.TrimSpace(r.Stdout) == "active" {
		t.Fatal("web.service runs before any deploy")
	}

	out := w.MustRun(t, "SUDO_USER=alice webhookd --open-window infra --for 10m --reason 'CVE-2026-1234: patched image'")
	t.Logf("webhookd --open-window: %s", strings.TrimSpace(out))
	st := w.waitStatus("v2 applied through the override", func(s whStatus) bool { return s.LastApplied == v2 && s.State == "idle" })
	if !strings.Contains(st.Last.Trigger, "outside the windows: opened by alice until ") || !strings.Contains(st.Last.Trigger, ": CVE-2026-1234: patched image") {
		t.Errorf("the deploy's trigger %q does not carry the override", st.Last.Trigger)
	}
	image, marker, rev := w.running()
	if !strings.HasSuffix(image, "web:v2") || marker != "marker-2" || rev != "2" {
		t.Errorf("after the override the host runs %s %s REV=%s", image, marker, rev)
	}
	t.Logf("deployed: %s", st.Last.Trigger)

	// Closed again: the next commit waits, the host keeps v2.
	w.MustRun(t, "webhookd --open-window infra --for 0s")
	w.writeSpec("localhost:5000/web:v3", "3", "")
	v3 := w.commit("web v3")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: v3}); code != 202 {
		t.Fatalf("push refused: %d %s", code, reply)
	}
	w.waitStatus("v3 queued", func(s whStatus) bool { return s.Queued == v3 })
	if _, _, rev := w.running(); rev != "2" || w.status().LastApplied != v2 {
		t.Errorf("after the override was removed: REV=%s, applied %s", rev, w.status().LastApplied)
	}
}
