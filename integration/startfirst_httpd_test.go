//go:build integration

package integration

import (
	"fmt"
	"testing"
)

// httpdSpec is a start-first container behind syslet's proxy running an
// unmodified busybox httpd on port 8080, probed on GET /; env, when set,
// is a configuration change (an environment variable httpd ignores).
func httpdSpec(img, env string) string {
	e := ""
	if env != "" {
		e = fmt.Sprintf(`,"Environment":%q`, env)
	}
	return fmt.Sprintf(`{"apiVersion":"v1","type":"container","name":"web","removalAllowed":true,`+
		`"proxy":{"listen":"0.0.0.0:8080","port":8080,"drain":"5s"},"probe":{"http":{"port":8080,"path":"/"},"interval":"200ms","deadline":"10s"},`+
		`"unit":{"Container":{"Image":%q,"Exec":"httpd -f -p 8080 -h /www"%s}}}`, img, e)
}

// TestStartFirstBusyboxHttpd is issue 53's case (b) as written: a server
// that knows nothing of sockets or syslet (busybox httpd, unmodified)
// behind the proxy, through an image change, a configuration change and
// the automatic rollback of a dead image (one whose httpd cannot start),
// under load: no request fails, and the dead slot gets none.
func TestStartFirstBusyboxHttpd(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	var imgs []string
	for _, m := range []string{"v1", "v2"} {
		img, err := h.MakeImage("httpd:"+m, "httpd-"+m)
		must(t, err)
		imgs = append(imgs, img)
	}
	// The dead image: busybox without the document root, so its httpd
	// exits at once and its probe never passes.
	dead := "localhost:5000/httpd:dead"
	h.MustRun(t, "podman pull -q --tls-verify=false "+imgs[1]+" >/dev/null && printf 'FROM "+imgs[1]+"\\nRUN rm -rf /www\\n' | podman build -q -t "+dead+" -f - /tmp >/dev/null")
	h.MustRun(t, "mkdir -p /srv/specs")
	must(t, h.WriteFile("/srv/specs/web.json", []byte(httpdSpec(imgs[0], "")), 0o644))
	t.Logf("first deploy:\n%s", h.MustRun(t, "syslet /srv/specs"))
	if got := proxied(t, h); got != "httpd-v1" {
		t.Fatalf("after the first deploy the proxy answers %q, want httpd-v1", got)
	}
	deployEach(t, h, []change{
		{"image change", httpdSpec(imgs[1], ""), "httpd-v2"},
		{"config change", httpdSpec(imgs[1], "MODE=2"), "httpd-v2"},
	})
	_, deadSlot := idleSlot(t, h)
	before := sessionsOf(t, proxyStat(t, h), "web", deadSlot)
	r, s := deployUnderLoad(t, h, httpdSpec(dead, "MODE=2"))
	t.Logf("dead image: syslet said (exit %d):\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	if r.Code != 4 {
		t.Errorf("dead image: syslet exited %d, want 4 (rolled back)", r.Code)
	}
	if s.Failed != 0 {
		t.Errorf("dead image: %d of %d requests failed (%v), want 0", s.Failed, s.Requests, s.Kinds)
	}
	if got := proxied(t, h); got != "httpd-v2" {
		t.Errorf("dead image: after the rollback the proxy answers %q, want httpd-v2", got)
	}
	if n := sessionsOf(t, proxyStat(t, h), "web", deadSlot) - before; n != 0 {
		t.Errorf("dead image: the proxy sent %d session(s) to the dead slot %s, want 0", n, deadSlot)
	} else {
		t.Logf("dead image: the proxy sent 0 sessions to the dead slot %s", deadSlot)
	}
}
