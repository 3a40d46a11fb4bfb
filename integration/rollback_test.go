//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// The health gate and rollback on a real host. A small stack: web serves
// its image's /www/index.html on 127.0.0.1:8080 after sourcing its config
// file (so a bad config file can break it) and, in the secret case,
// checking its token; other is a container no change touches.

const rbDir = "/root/rb"

type rbHost struct {
	*testhost.Host
	t       *testing.T
	printed strings.Builder // everything syslet printed, for the leak search
}

func rollbackHost(t *testing.T) *rbHost {
	t.Helper()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p "+rbDir)
	r := &rbHost{Host: h, t: t}
	for _, m := range []string{"v1", "v2"} {
		if _, err := h.MakeImage("web:"+m, "marker-"+m); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// brokenImage builds and pushes an image whose entrypoint runs script
// before anything else (exit at once, crash after a while).
func (r *rbHost) brokenImage(ref, script string) string {
	r.t.Helper()
	return buildBrokenImage(r.t, r.Host, ref, script)
}

// buildBrokenImage builds localhost:5000/REF from web:v1 with an
// entrypoint that runs script (no single quotes in it), and pushes it.
func buildBrokenImage(t *testing.T, h *testhost.Host, ref, script string) string {
	t.Helper()
	ep, _ := json.Marshal([]string{"/bin/sh", "-c", script, "--"})
	h.MustRun(t, fmt.Sprintf(`d=$(mktemp -d) && printf 'FROM localhost:5000/web:v1\nENTRYPOINT %s\n' > $d/Containerfile &&
podman build -q --tls-verify=false -t localhost:5000/%s $d >/dev/null && podman push -q --tls-verify=false localhost:5000/%s && podman rmi -f localhost:5000/%s >/dev/null`,
		string(ep), ref, ref, ref))
	return "localhost:5000/" + ref
}

// webSpec is the web container: image, the content of its config file,
// extra [Container] keys and Secret= entries.
type webSpec struct {
	image, conf string
	keys        map[string]any
	secrets     map[string]string
}

func (r *rbHost) writeStack(w webSpec, extra ...string) {
	r.t.Helper()
	c := map[string]any{"Image": w.image, "RunInit": "true", "PublishPort": "127.0.0.1:8080:8080",
		"Exec": `sh -c '. /etc/app.conf; exec httpd -f -p 8080 -h /www'`}
	if len(w.secrets) > 0 {
		c["Secret"] = w.secrets
		c["Exec"] = `sh -c '. /etc/app.conf; case "$TOKEN" in good-*) ;; *) echo "bad token"; exit 6;; esac; exec httpd -f -p 8080 -h /www'`
	}
	for k, v := range w.keys {
		c[k] = v
	}
	web, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
		"configFiles": []map[string]string{{"mountPath": "/etc/app.conf", "content": w.conf}}, "unit": map[string]any{"Container": c}})
	stream := string(web) + "\n" + string(secretSleeper("other", nil)) + "\n" + strings.Join(extra, "\n")
	must(r.t, r.WriteFile(rbDir+"/stack.json", []byte(stream), 0o644))
}

func (r *rbHost) syslet(args ...string) testhost.Result {
	res := r.Run("syslet " + testhost.QuoteArgs(args...))
	r.printed.WriteString(res.Stdout + res.Stderr)
	return res
}

// serves is what web answers on its port.
func (r *rbHost) serves() string {
	r.t.Helper()
	return strings.TrimSpace(r.MustRun(r.t, "curl -sS --retry 5 --retry-connrefused --retry-delay 1 http://127.0.0.1:8080/"))
}

func (r *rbHost) imageID(container string) string {
	r.t.Helper()
	return strings.TrimSpace(r.MustRun(r.t, "podman inspect --format '{{.Image}}' "+container))
}

func (r *rbHost) invocation(unit string) string {
	r.t.Helper()
	return strings.TrimSpace(r.MustRun(r.t, "systemctl show -P InvocationID "+unit))
}

// history is `syslet history --output json`.
func (r *rbHost) history() []struct {
	Run, Result, Rollback, RollbackOf, Error string
	Generation                               bool
} {
	r.t.Helper()
	var runs []struct {
		Run, Result, Rollback, RollbackOf, Error string
		Generation                               bool
	}
	out := r.MustRun(r.t, "syslet history -n 0 --output json")
	must(r.t, json.Unmarshal([]byte(out), &runs))
	return runs
}

// gone is the gate's reason for web's container ended and removed before
// systemd has heard of it.
const gone = "lost its container web"

// rolledBack checks a bad change's run: exit 4, naming the unit and why,
// then web runs its old image again and serves, other kept running
// throughout, and history shows failed + rolled-back.
func (r *rbHost) rolledBack(res testhost.Result, why, wantServe, wantImage, otherInv string) {
	r.t.Helper()
	// why is one of "|"-separated reasons: a container that exits at once
	// is seen exited (its status), already restarted, or — where systemd
	// has not heard of its end yet (podman 5.8 on a busy host) — gone from
	// podman, as timing has it.
	named := false
	for _, w := range strings.Split(why, "|") {
		named = named || strings.Contains(res.Stdout, "web.service: ") && strings.Contains(res.Stdout, w)
	}
	if res.Code != 4 || !strings.Contains(res.Stdout, "Health gate FAILED") || !named || !strings.Contains(res.Stdout, "ROLLED BACK") {
		r.t.Fatalf("want exit 4 (rolled back) naming web.service and %q, got:\n%s", why, res)
	}
	r.t.Logf("rolled back:\n%s", res.Stdout[strings.Index(res.Stdout, "Health gate FAILED"):])
	if got := r.serves(); got != wantServe {
		r.t.Errorf("web serves %q after the rollback, want %q", got, wantServe)
	}
	if m := strings.TrimSpace(r.MustRun(r.t, "podman exec web cat /www/index.html")); m != wantServe {
		r.t.Errorf("inside web: %q, want %q", m, wantServe)
	}
	if got := r.imageID("web"); got != wantImage {
		r.t.Errorf("web runs image %s, want the old %s", got, wantImage)
	}
	if st := strings.TrimSpace(r.MustRun(r.t, "systemctl is-active web.service")); st != "active" {
		r.t.Errorf("web.service is %s", st)
	}
	if got := r.invocation("other.service"); got != otherInv {
		r.t.Errorf("other.service was restarted (InvocationID %s → %s); the change did not touch it", otherInv, got)
	}
	runs := r.history()
	n := len(runs)
	if n < 2 || runs[n-2].Result != "failed" || runs[n-1].Result != "rolled-back" || runs[n-1].RollbackOf != runs[n-2].Run ||
		!strings.Contains(runs[n-2].Error, "web.service") {
		r.t.Errorf("history's last two runs: %+v", runs[max(0, n-2):])
	}
}

// TestRollbackOnBadChanges: each bad change is applied, fails the health
// gate and is rolled back to the last good generation; the old specs then
// plan nothing.
func TestRollbackOnBadChanges(t *testing.T) {
	t.Parallel()
	r := rollbackHost(t)
	good := webSpec{image: "localhost:5000/web:v1", conf: "MODE=ok\n"}
	r.writeStack(good)
	if res := r.syslet("--soak", "3s", rbDir); !res.OK() || !strings.Contains(res.Stdout, "Health gate: 2 unit(s) up and stayed up for 3s") {
		t.Fatalf("good apply:\n%s", res)
	}
	goodImage, otherInv := r.imageID("web"), r.invocation("other.service")
	if got := r.serves(); got != "marker-v1" {
		t.Fatalf("web serves %q", got)
	}
	runs := r.history()
	if !runs[len(runs)-1].Generation {
		t.Errorf("the good run is not marked as a kept generation: %+v", runs)
	}
	checkOldPlansNothing := func() {
		t.Helper()
		r.writeStack(good)
		if res := r.syslet("--diff", "--detailed-exitcode", rbDir); res.Code != 0 {
			t.Errorf("--diff of the old specs after the rollback: want no changes (exit 0), got:\n%s", res)
		}
	}

	t.Run("image exits at once", func(t *testing.T) {
		r.t = t
		bad := r.brokenImage("web:exits", "echo web-cannot-start; exit 3")
		r.writeStack(webSpec{image: bad, conf: good.conf})
		res := r.syslet("--soak", "3s", rbDir)
		r.rolledBack(res, "exit status 3|restarted|"+gone, "marker-v1", goodImage, otherInv)
		checkOldPlansNothing()
	})
	t.Run("crash loop under Restart=always", func(t *testing.T) {
		r.t = t
		bad := r.brokenImage("web:crashes", "sleep 1; echo web-crashed; exit 4")
		r.writeStack(webSpec{image: bad, conf: good.conf})
		r.rolledBack(r.syslet("--soak", "4s", rbDir), "soak window", "marker-v1", goodImage, otherInv)
		checkOldPlansNothing()
	})
	t.Run("health check never passes", func(t *testing.T) {
		r.t = t
		r.writeStack(webSpec{image: good.image, conf: good.conf, keys: map[string]any{"HealthCmd": "/bin/false", "HealthInterval": "1s", "HealthRetries": "1", "HealthStartPeriod": "0s"}})
		r.rolledBack(r.syslet("--soak", "3s", "--timeout", "30s", rbDir), "unhealthy", "marker-v1", goodImage, otherInv)
		checkOldPlansNothing()
	})
	t.Run("config file breaks the app", func(t *testing.T) {
		r.t = t
		r.writeStack(webSpec{image: good.image, conf: "echo web-bad-config; exit 5\n"})
		r.rolledBack(r.syslet("--soak", "3s", rbDir), "exit status 5|restarted|"+gone, "marker-v1", goodImage, otherInv)
		if got := strings.TrimSpace(r.MustRun(t, "podman exec web cat /etc/app.conf")); got != "MODE=ok" {
			t.Errorf("web's config file after the rollback: %q, want the old MODE=ok", got)
		}
		checkOldPlansNothing()
	})
	t.Run("tag re-pushed to a broken image", func(t *testing.T) {
		r.t = t
		// web follows a moving tag and pulls it at every start.
		if _, err := r.MakeImage("web:moving", "marker-moving"); err != nil {
			t.Fatal(err)
		}
		moving := webSpec{image: "localhost:5000/web:moving", conf: good.conf, keys: map[string]any{"Pull": "always"}}
		r.writeStack(moving)
		if res := r.syslet("--soak", "3s", rbDir); !res.OK() {
			t.Fatalf("apply of web:moving:\n%s", res)
		}
		movingImage := r.imageID("web")
		// The tag moves to an image that exits; a change restarts web, which
		// pulls it.
		r.brokenImage("web:moving", "echo web-moved-tag-is-broken; exit 7")
		moving.conf = "MODE=moved\n"
		r.writeStack(moving)
		res := r.syslet("--soak", "3s", rbDir)
		if res.Code != 4 || !strings.Contains(res.Stdout, "exit status 7") && !strings.Contains(res.Stdout, "restarted") && !strings.Contains(res.Stdout, gone) {
			t.Fatalf("want the re-pushed tag rolled back:\n%s", res)
		}
		if got := r.imageID("web"); got != movingImage {
			t.Errorf("web runs %s after the rollback, want the image it ran before the tag moved (%s)", got, movingImage)
		} else {
			t.Logf("podman's image ID of web before the tag moved: %s; after the rollback: %s (the pin)", movingImage, got)
		}
		if got := r.serves(); got != "marker-moving" {
			t.Errorf("web serves %q, want marker-moving", got)
		}
		pin := r.MustRun(t, "cat /etc/containers/systemd/web.container.d/99-syslet-pin.conf")
		if !strings.Contains(pin, "Image="+movingImage) || !strings.Contains(pin, "Pull=never") {
			t.Errorf("pin drop-in:\n%s", pin)
		}
		moving.conf = good.conf
		r.writeStack(moving)
		if res := r.syslet("--diff", "--detailed-exitcode", rbDir); res.Code != 0 {
			t.Errorf("--diff of the old specs: want no changes, got:\n%s", res)
		}
	})
}

// TestRollbackOfSecretsVolumesAndKills: a secret rotation that breaks the
// app is rolled back to the old value (never in a file or the output); a
// run that deleted a Delete volume marked it irreversible, and the
// rollback names it as not restored; a rollback killed half-way is
// finished by the next plain apply.
func TestRollbackOfSecretsVolumesAndKills(t *testing.T) {
	t.Parallel()
	r := rollbackHost(t)
	rcpt := strings.TrimSpace(r.MustRun(t, "syslet host-key"))
	goodTok, badTok := "good-"+randomValue("tok"), "bad-"+randomValue("tok")
	secret := func(tok string) string {
		return string(secretSpec(t, "app", sopsEncryptFor(t, "token: "+tok+"\n", rcpt)))
	}
	scratch := `{"apiVersion":"v1","type":"volume","name":"scratch","reclaimPolicy":"Delete","unit":{}}`
	good := webSpec{image: "localhost:5000/web:v1", conf: "MODE=ok\n", secrets: map[string]string{"app-token": "type=env,target=TOKEN"}}
	goodSecret := secret(goodTok)
	r.writeStack(good, goodSecret, scratch)
	if res := r.syslet("--soak", "2s", rbDir); !res.OK() {
		t.Fatalf("good apply:\n%s", res)
	}
	goodImage, otherInv := r.imageID("web"), r.invocation("other.service")

	t.Run("secret rotation breaks the app", func(t *testing.T) {
		r.t = t
		r.writeStack(good, secret(badTok), scratch)
		r.rolledBack(r.syslet("--soak", "2s", rbDir), "exit status 6|restarted|"+gone, "marker-v1", goodImage, otherInv)
		if got := strings.TrimSpace(r.MustRun(t, `podman exec web sh -c 'echo "$TOKEN"'`)); got != goodTok {
			t.Errorf("web's token after the rollback is not the old value")
		}
		leaks := &secretsRun{t: t, h: r.Host}
		leaks.printed.WriteString(r.printed.String())
		leaks.noLeaks(goodTok, badTok)
		r.writeStack(good, goodSecret, scratch)
		if res := r.syslet("--diff", "--detailed-exitcode", rbDir); res.Code != 0 {
			t.Errorf("--diff of the old specs: want no changes, got:\n%s", res)
		}
	})
	t.Run("deleted volume is restored from its backup", func(t *testing.T) {
		r.t = t
		r.MustRun(t, "podman volume inspect scratch >/dev/null")
		bad := r.brokenImage("web:exits", "exit 3")
		r.writeStack(webSpec{image: bad, conf: good.conf, secrets: good.secrets}, goodSecret) // scratch removed
		if d := r.syslet("--diff", rbDir); !strings.Contains(d.Stdout, "volume scratch  [backed up first") || !strings.Contains(d.Stdout, "Backed up first: volume scratch (") {
			t.Errorf("the plan does not say the volume is backed up before it is deleted:\n%s", d.Stdout)
		}
		if d := r.syslet("--diff", "--output", "json", rbDir); !strings.Contains(d.Stdout, `"irreversible": true`) {
			t.Errorf("the JSON plan does not mark it either")
		}
		res := r.syslet("--soak", "2s", rbDir)
		r.rolledBack(res, "exit status 3|restarted|"+gone, "marker-v1", goodImage, otherInv)
		// The failed run exported scratch before deleting it: the rollback
		// brings it back from that backup and says so.
		if !strings.Contains(res.Stdout, "Restored: volume scratch from backup ") || strings.Contains(res.Stdout, "volume scratch (deleted by the failed run") {
			t.Errorf("the rollback does not say it restored the deleted volume from its backup:\n%s", res.Stdout)
		}
		r.MustRun(t, "podman volume inspect scratch >/dev/null")
		r.MustRun(t, "ls /var/lib/syslet/backups/*_scratch.tar")
	})
	t.Run("SIGKILL during the rollback", func(t *testing.T) {
		r.t = t
		bad := r.brokenImage("web:exits2", "exit 9")
		r.writeStack(webSpec{image: bad, conf: good.conf, secrets: good.secrets}, goodSecret, scratch)
		r.MustRun(t, "rm -f /run/syslet/test-paused-4")
		r.MustRun(t, "cd "+rbDir+" && (SYSLET_TEST_PAUSE_AFTER_STEP=rollback:4 setsid syslet --stdin --soak 2s < stack.json > /root/killed.log 2>&1 &)")
		if w := r.Eventually("test -s /run/syslet/test-paused-4", 2*time.Minute); !w.OK() {
			t.Fatalf("the rollback did not pause after step 4:\n%s", r.MustRun(t, "cat /root/killed.log"))
		}
		r.MustRun(t, "kill -9 $(cat /run/syslet/test-paused-4)")
		runs := r.history()
		if last := runs[len(runs)-1]; last.Result != "unfinished" || last.Rollback == "" {
			t.Fatalf("the killed rollback's run: %+v\n%s", last, r.MustRun(t, "cat /root/killed.log"))
		}
		res := r.syslet("--soak", "2s")
		if !res.OK() || !strings.Contains(res.Stdout, "did not finish; resuming") {
			t.Fatalf("the next plain apply:\n%s", res)
		}
		if got := r.serves(); got != "marker-v1" || r.imageID("web") != goodImage {
			t.Errorf("after the plain apply web serves %q on %s, want marker-v1 on %s", got, r.imageID("web"), goodImage)
		}
		if res := r.syslet("--diff", "--detailed-exitcode"); res.Code != 0 {
			t.Errorf("a second plain --diff plans something:\n%s", res)
		}
	})
}
