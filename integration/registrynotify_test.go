//go:build integration

package integration

import (
	"strings"
	"testing"
	"time"
)

// TestWebhookdRegistryPush: the test host's registry notifies webhookd of
// each push (its own notifications endpoint, a bearer token); a push to
// the tag web runs deploys the new image with no other action, /status
// shows it as the last deploy; a notification with a wrong token is
// refused 401 and deploys nothing.
func TestWebhookdRegistryPush(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	if _, err := w.MakeImage("app:1", "marker-a"); err != nil {
		t.Fatal(err)
	}
	w.writeSpec("localhost:5000/app:1", "0", "")
	applied := w.deploy("web runs app:1")
	if _, marker, _ := w.running(); marker != "marker-a" {
		t.Fatalf("web runs %q", marker)
	}

	const token = "registry-notify-token-0123456789"
	must(t, w.WriteFile("/etc/syslet/registry.token", []byte(token+"\n"), 0o600))
	w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    secretFile: "+whSecret, "registry:", "  tokenFile: /etc/syslet/registry.token")
	if out := w.Run("webhookd --check --config " + whConfig); !out.OK() {
		t.Fatalf("webhookd --check:\n%s", out)
	}
	w.MustRun(t, "chmod 0644 /etc/syslet/registry.token")
	if out := w.Run("webhookd --check --config " + whConfig); out.OK() || !strings.Contains(out.Stdout+out.Stderr, "registry.tokenFile") {
		t.Errorf("webhookd --check with a token file others can read: want it refused naming registry.tokenFile, got:\n%s", out)
	}
	w.MustRun(t, "chmod 0600 /etc/syslet/registry.token && systemctl restart webhookd.service")
	w.waitStatus("webhookd back", func(s whStatus) bool { return s.LastApplied == applied })

	t.Run("wrong token", func(t *testing.T) {
		w.t = t
		before := w.deploys()
		body := []byte(`{"events":[{"id":"forged-1","action":"push","target":{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:00","repository":"app","tag":"1"},"request":{"host":"localhost:5000"}}]}`)
		code, reply := w.post("/registry", body, []string{"Content-Type: application/vnd.docker.distribution.events.v1+json", "Authorization: Bearer wrong-token-0123456789abcdef"})
		if code != 401 {
			t.Errorf("wrong token: %d %s, want 401", code, reply)
		}
		time.Sleep(2 * time.Second) // a queued deploy would have started by now
		if got := w.deploys(); got != before {
			t.Errorf("a refused notification deployed (%v → %v)", before, got)
		}
		if st := w.status(); st.State != "idle" || st.Last == nil || strings.Contains(st.Last.Trigger, "registry") {
			t.Errorf("status after a refused notification: %s %+v", st.State, st.Last)
		}
	})

	t.Run("push deploys", func(t *testing.T) {
		w.t = t
		webInv := strings.TrimSpace(w.MustRun(t, "systemctl show -P InvocationID web.service"))
		// The registry's notifications endpoint: webhookd, with the token.
		w.MustRun(t, `cat >> /etc/docker/registry/config.yml <<'EOF'
notifications:
  endpoints:
    - name: webhookd
      url: http://127.0.0.1:9090/registry
      headers:
        Authorization: [Bearer `+token+`]
      timeout: 3s
      threshold: 3
      backoff: 1s
EOF
systemctl restart docker-registry.service`)
		w.MustRun(t, "for i in $(seq 50); do curl -sf http://127.0.0.1:5000/v2/ >/dev/null && break; sleep 0.2; done")
		// Nothing but a push: built under another name, pushed to the tag.
		w.MustRun(t, "KEEP=1 testhost-mkimage app:1-next marker-b >/dev/null && podman push -q --tls-verify=false localhost:5000/app:1-next docker://localhost:5000/app:1 && podman rmi localhost:5000/app:1-next >/dev/null")
		deadline := time.Now().Add(whWait)
		for {
			// Between the update's stop and start there is no container.
			if out := w.Run("podman exec web cat /etc/testhost-marker"); out.OK() && strings.TrimSpace(out.Stdout) == "marker-b" {
				break
			}
			if time.Now().After(deadline) {
				log, _ := w.JournalSince("", "-u", "webhookd.service", "-n", "60", "-o", "cat")
				t.Fatalf("web does not run the pushed image after %s; status %+v\nwebhookd log:\n%s", whWait, w.status().Last, log)
			}
			time.Sleep(500 * time.Millisecond)
		}
		st := w.waitStatus("the update's result", func(s whStatus) bool {
			return s.State == "idle" && s.Last != nil && strings.Contains(s.Last.Trigger, "registry push localhost:5000/app:1") && s.Last.Result != ""
		})
		t.Logf("/status last: %+v", st.Last)
		if st.Last.Result != "success" || st.LastApplied != applied {
			t.Errorf("/status: %+v (applied %s)", st.Last, st.LastApplied)
		}
		if inv := strings.TrimSpace(w.MustRun(t, "systemctl show -P InvocationID web.service")); inv == webInv {
			t.Errorf("web was not restarted")
		}
		hist := w.MustRun(t, "syslet history -n 3")
		t.Logf("syslet history -n 3:\n%s", hist)
		if !strings.Contains(hist, "registry push localhost:5000/app:1") || !strings.Contains(hist, "image localhost:5000/app:1 ") {
			t.Errorf("the journal does not show the update from the registry's push:\n%s", hist)
		}
		if n := w.metric(`webhookd_deliveries_total{outcome="accepted",repo="(registry)"}`); n < 1 {
			t.Errorf("webhookd_deliveries_total of accepted registry notifications: %v", n)
		}
	})
}
