//go:build integration

package integration

// The registry down, refusing, or hanging in the middle of a pull: step 1
// must end the run before anything changes. integration/faultproxy stands
// in front of the guest's registry on 127.0.0.1:5001 and fails on purpose;
// the new image is pulled through it.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// faultSpecs is a small host for the fault tests that need no examples/:
// web serves its config file on 8080, side sleeps, both with RunInit so a
// stop is prompt.
func faultSpecs(webImage, index string, webService map[string]string, sideService map[string]string) string {
	spec := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	web := map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
		"configFiles": []map[string]string{{"mountPath": "/www/index.html", "content": index}},
		"unit":        map[string]any{"Container": map[string]any{"Image": webImage, "RunInit": "true", "Exec": "httpd -f -p 8080 -h /www", "PublishPort": "127.0.0.1:8080:8080"}}}
	if webService != nil {
		web["unit"].(map[string]any)["Service"] = webService
	}
	side := map[string]any{"apiVersion": "v1", "type": "container", "name": "side",
		"unit": map[string]any{"Container": map[string]any{"Image": "localhost:5000/busybox:latest", "RunInit": "true", "Exec": "sleep infinity"}}}
	if sideService != nil {
		side["unit"].(map[string]any)["Service"] = sideService
	}
	return spec(web) + "\n" + spec(side) + "\n"
}

// faultHost boots a host with syslet and podman's socket, and applies
// faultSpecs as they are first (web serving "v1").
func faultHost(t *testing.T) *testhost.Host {
	t.Helper()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	writeFaultSpecs(t, h, "/root/v1", faultSpecs("localhost:5000/busybox:latest", "v1\n", nil, nil))
	if r := syslet(h, "--soak", "0", "/root/v1"); !r.OK() {
		t.Fatalf("first apply:\n%s", r)
	}
	return h
}

func writeFaultSpecs(t *testing.T, h *testhost.Host, dir, specs string) {
	t.Helper()
	h.MustRun(t, "mkdir -p "+dir)
	must(t, h.WriteFile(dir+"/specs.json", []byte(specs), 0o644))
}

// serving is web's InvocationID and what it serves.
func serving(t *testing.T, h *testhost.Host) (string, string) {
	t.Helper()
	return prop(t, h, "web.service", "InvocationID"), strings.TrimSpace(h.Run("curl -fsS -m 5 http://127.0.0.1:8080/").Stdout)
}

func TestFaultRegistry(t *testing.T) {
	t.Parallel()
	h := faultHost(t)
	ref, err := h.MakeImage("busybox:v3", "marker-v3")
	must(t, err)
	proxied := strings.Replace(ref, "localhost:5000/", "localhost:5001/", 1)
	must(t, h.CopyIn(faultproxyBin, "/usr/local/bin/faultproxy"))
	must(t, h.WriteFile("/etc/containers/registries.conf.d/60-faultproxy.conf", []byte("[[registry]]\nlocation = \"localhost:5001\"\ninsecure = true\n"), 0o644))
	h.MustRun(t, "systemctl stop podman.service") // its socket starts it again, reading the new registry

	writeFaultSpecs(t, h, "/root/v3", faultSpecs(proxied, "v3\n", nil, nil))
	proxy := func(mode string) {
		h.Run("systemctl stop faultproxy; systemctl reset-failed faultproxy")
		if mode != "" {
			h.MustRun(t, "systemd-run -q --unit faultproxy /usr/local/bin/faultproxy -mode "+mode)
			if r := h.Eventually("curl -s -o /dev/null http://127.0.0.1:5001/v2/", 10*time.Second); !r.OK() {
				t.Fatalf("faultproxy -mode %s does not answer: %s", mode, r)
			}
		}
	}
	const pullTimeout = 8 * time.Second
	for _, tc := range []struct {
		mode, fault, want string
	}{
		{"", "registry down (connection refused)", "connection refused"},
		{"refuse", "registry refusing (403 DENIED)", "denied"},
		{"hang", "registry hanging mid-pull (half a layer sent, then nothing)", fmt.Sprintf("did not finish within %s", pullTimeout)},
	} {
		t.Run(strings.Fields(tc.fault)[1], func(t *testing.T) {
			proxy(tc.mode)
			inv, serves := serving(t, h)
			before := contents(t, h, "/etc/containers")
			t0 := time.Now()
			r := syslet(h, "--pull-timeout", pullTimeout.String(), "/root/v3")
			took := time.Since(t0)
			t.Logf("%s: exit %d after %s:\n%s", tc.fault, r.Code, took.Round(time.Millisecond), r.Stderr)
			if r.OK() || !strings.Contains(r.Stdout+r.Stderr, "FAILED 1. pull-image "+proxied) || !strings.Contains(r.Stdout+r.Stderr, tc.want) {
				t.Errorf("the run must fail in step 1 pulling %s with %q:\n%s", proxied, tc.want, r)
			}
			if took > pullTimeout+20*time.Second {
				t.Errorf("the failed pull took %s", took)
			}
			if i, s := serving(t, h); i != inv || s != serves || s != "v1" {
				t.Errorf("web was touched: invocation %s → %s, serves %q → %q", inv, i, serves, s)
			}
			if after := contents(t, h, "/etc/containers"); after != before {
				t.Errorf("files under /etc/containers changed after a failed pull")
			}
			sane(t, h, true)
			if last := history(t, h); last[len(last)-1].Applied != 0 || last[len(last)-1].Result != "failed" {
				t.Errorf("the journal must record a failed run with nothing applied: %+v", last[len(last)-1])
			}
			recordFault(t, faultRow{Fault: tc.fault + " while pulling the new image", Tries: 1, Survived: 1,
				DataLost: "none: the run stopped in step 1, nothing stopped or written", NextRun: "this run: " + firstLine(r.Stdout, "FAILED 1.")})
		})
	}
	// The registry back: one plain run converges.
	proxy("pass")
	r := syslet(h, "--soak", testSoak, "/root/v3")
	if !r.OK() {
		t.Fatalf("the run with the registry back:\n%s", r)
	}
	if _, s := serving(t, h); s != "v3" {
		t.Errorf("web serves %q, want v3", s)
	}
	if m := strings.TrimSpace(h.MustRun(t, "podman exec web cat /etc/testhost-marker")); m != "marker-v3" {
		t.Errorf("web runs image marker %q, want marker-v3", m)
	}
	if d := syslet(h, "--diff", "/root/v3"); !strings.Contains(d.Stdout, "No changes") {
		t.Errorf("the plan after converging:\n%s", d.Stdout)
	}
	t.Logf("with the registry back: %s", nextRun(r.Stdout))
}
