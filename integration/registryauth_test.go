//go:build integration

package integration

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// authRegistry is a second registry on the test host, on localhost:5001,
// that answers only a client with htpasswd credentials.
const authRegistry = "localhost:5001"

// hostAuthFile is where podman, run as root, keeps registry logins (and
// where the image library syslet links reads them): a login by the
// operator is what an update uses.
const hostAuthFile = "/run/containers/0/auth.json"

// TestUpdateWithRegistryAuth: an image in a registry that needs a login is
// deployed and updated with the host's auth file, as podman reads it; with
// the login gone, the update stops naming the image and changes nothing.
func TestUpdateWithRegistryAuth(t *testing.T) {
	t.Parallel()
	r := rollbackHost(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret-pass"), bcrypt.DefaultCost)
	must(t, err)
	must(t, r.WriteFile("/etc/docker/registry/htpasswd", append([]byte("ops:"), append(hash, '\n')...), 0o600))
	must(t, r.WriteFile("/etc/docker/registry/auth.yml", []byte(`version: 0.1
storage:
  filesystem:
    rootdirectory: /var/lib/docker-registry-auth
http:
  addr: 127.0.0.1:5001
auth:
  htpasswd:
    realm: syslet-test
    path: /etc/docker/registry/htpasswd
`), 0o644))
	must(t, r.WriteFile("/etc/containers/registries.conf.d/60-auth.conf", []byte("[[registry]]\nlocation = \""+authRegistry+"\"\ninsecure = true\n"), 0o644))
	r.MustRun(t, "systemd-run -q --unit registry-auth /usr/bin/docker-registry serve /etc/docker/registry/auth.yml && "+
		"for i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:5001/v2/ && break; sleep 0.2; done")
	if code := strings.TrimSpace(r.MustRun(t, "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:5001/v2/")); code != "401" {
		t.Fatalf("the registry answers %s without credentials, want 401", code)
	}
	r.MustRun(t, "podman login -u ops -p s3cret-pass --authfile "+hostAuthFile+" "+authRegistry)
	push := func(marker string) {
		t.Helper()
		r.MustRun(t, "KEEP=1 testhost-mkimage app-src:"+marker+" "+marker+" >/dev/null && podman push -q --authfile "+hostAuthFile+" localhost:5000/app-src:"+marker+" docker://"+authRegistry+"/app:1 && podman rmi localhost:5000/app-src:"+marker+" >/dev/null")
	}
	push("marker-a")
	r.writeStack(webSpec{image: authRegistry + "/app:1", conf: "MODE=ok\n"})
	if res := r.syslet("--soak", "2s", rbDir); !res.OK() {
		t.Fatalf("deploy from the registry that needs a login:\n%s", res)
	}
	if got := r.serves(); got != "marker-a" {
		t.Fatalf("web serves %q", got)
	}

	push("marker-b")
	t.Run("update with the host's login", func(t *testing.T) {
		r.t = t
		diff := r.syslet("update", "--diff", "--detailed-exitcode", rbDir)
		t.Logf("syslet update --diff:\n%s", diff.Stdout)
		if diff.Code != 3 || !strings.Contains(diff.Stdout, authRegistry+"/app:1") || !strings.Contains(diff.Stdout, "restarts web.service") {
			t.Fatalf("want the update planned (exit 3):\n%s", diff)
		}
		if res := r.syslet("update", "--soak", "2s", rbDir); !res.OK() {
			t.Fatalf("update:\n%s", res)
		}
		if got := r.serves(); got != "marker-b" {
			t.Errorf("web serves %q, want marker-b", got)
		}
	})
	t.Run("without the login", func(t *testing.T) {
		r.t = t
		r.MustRun(t, "mv "+hostAuthFile+" /root/auth.json.away")
		push2 := "KEEP=1 testhost-mkimage app-src:c marker-c >/dev/null && podman push -q --authfile /root/auth.json.away localhost:5000/app-src:c docker://" + authRegistry + "/app:1"
		r.MustRun(t, push2)
		before := r.MustRun(t, unitsAndFiles("web.service"))
		res := r.syslet("update", rbDir)
		t.Logf("syslet update without a login:\n%s", res)
		if res.Code != 1 || !strings.Contains(res.Stdout+res.Stderr, `"`+authRegistry+`/app:1"`) {
			t.Errorf("want exit 1 naming the image, got:\n%s", res)
		}
		if after := r.MustRun(t, unitsAndFiles("web.service")); after != before {
			t.Errorf("the host changed:\n%s\n---\n%s", before, after)
		}
		if got := r.serves(); got != "marker-b" {
			t.Errorf("web serves %q, want marker-b", got)
		}
	})
}
