package webhookd

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/webhookd/queue"
)

const registryToken = "registry-token-0123456789abcdef"

// envelopeBody is a registry's notification of a manifest push of
// repo:tag through host, as Distribution 2.8 writes it.
func envelopeBody(id, host, repo, tag string) []byte {
	return []byte(fmt.Sprintf(`{"events":[{"id":%q,"timestamp":"2026-12-04T17:00:00Z","action":"push",
"target":{"mediaType":"application/vnd.oci.image.manifest.v1+json","size":500,"digest":"sha256:aa","length":500,"repository":%q,"url":"http://%s/v2/%s/manifests/sha256:aa","tag":%q},
"request":{"id":"r1","addr":"10.0.0.1:4000","host":%q,"method":"PUT","useragent":"podman"},"actor":{},"source":{"addr":"reg:5000","instanceID":"i1"}},
{"id":"blob-%s","action":"push","target":{"mediaType":"application/octet-stream","digest":"sha256:bb","repository":%q},"request":{"host":%q}}]}`,
		id, repo, host, repo, tag, host, id, repo, host))
}

// A registry's push notification, with the right bearer token, queues an
// update of the pushed tag on the applied commit: one deploy, Update set,
// in /status; a wrong or missing token is refused 401 and nothing is
// queued; the same event again is acknowledged and ignored.
func TestRegistryNotificationUpdates(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "registry.token")
	must(t, os.WriteFile(tokenFile, []byte(registryToken+"\n"), 0o600))
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "registry:\n  tokenFile: "+tokenFile+"\n")
	f.start()
	c1 := f.remote.commit(`{"v":1}`)
	f.push(GitHub, "refs/heads/main", c1)
	f.wait("the first deploy", func(st queue.RepoStatus) bool { return st.LastApplied == c1 })

	ct := map[string]string{"Content-Type": "application/vnd.docker.distribution.events.v1+json"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range h {
			out[a] = b
		}
		out[k] = v
		return out
	}
	for _, auth := range []string{"", "Bearer wrong-token-0123456789abcdef", "Basic " + registryToken} {
		h := ct
		if auth != "" {
			h = with(ct, "Authorization", auth)
		}
		if code, rep := f.post("/registry", h, envelopeBody("e0", "localhost:5000", "app", "2")); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d %+v, want 401", auth, code, rep)
		}
	}
	good := with(ct, "Authorization", "Bearer "+registryToken)
	if code, _ := f.post("/registry", with(good, "Content-Type", "application/json"), envelopeBody("e1", "localhost:5000", "app", "2")); code != http.StatusUnsupportedMediaType {
		t.Errorf("plain JSON: %d, want 415", code)
	}
	if got, _ := dep.deploys(); len(got) != 1 {
		t.Fatalf("refused notifications deployed: %+v", got)
	}
	code, rep := f.post("/registry", good, envelopeBody("e2", "localhost:5000", "team/app", "2"))
	if code != http.StatusAccepted || rep.Status != "queued" {
		t.Fatalf("notification: %d %+v", code, rep)
	}
	st := f.wait("the update", func(st queue.RepoStatus) bool {
		return st.Last != nil && strings.HasPrefix(st.Last.Trigger, "registry push")
	})
	got, _ := dep.deploys()
	if len(got) != 2 || !slices.Equal(got[1].Update, []string{"localhost:5000/team/app:2"}) || got[1].Commit != c1 ||
		!strings.Contains(got[1].Source, "registry push localhost:5000/team/app:2") {
		t.Fatalf("deploys %+v", got)
	}
	if st.Last.Trigger != "registry push localhost:5000/team/app:2" {
		t.Errorf("status trigger %q", st.Last.Trigger)
	}
	if code, rep := f.post("/registry", good, envelopeBody("e2", "localhost:5000", "team/app", "2")); code != http.StatusOK || rep.Status != "ignored" {
		t.Errorf("replayed event: %d %+v, want 200 ignored (a registry retries anything else)", code, rep)
	}
	if m := f.metrics(); !strings.Contains(m, `webhookd_deliveries_total{outcome="unauthorized",repo="(registry)"} 3`) {
		t.Errorf("metrics:\n%s", m)
	}
}

// Pulls, blob pushes and pushes by digest name no tag: nothing to update.
func TestPushedTags(t *testing.T) {
	refs, ids, err := pushedTags(envelopeBody("x", "reg.example:5000", "a/b", "v1"))
	if err != nil || !slices.Equal(refs, []string{"reg.example:5000/a/b:v1"}) || !slices.Equal(ids, []string{"x"}) {
		t.Fatalf("refs %q ids %q err %v", refs, ids, err)
	}
	refs, _, err = pushedTags([]byte(`{"events":[{"id":"p","action":"pull","target":{"repository":"a","tag":"1"},"request":{"host":"r"}}]}`))
	if err != nil || len(refs) != 0 {
		t.Errorf("a pull: %q %v", refs, err)
	}
	if _, _, err := pushedTags([]byte(`{"events":[{"id":"p","action":"push","target":{"repository":"a b","tag":"1"},"request":{"host":"r"}}]}`)); err == nil {
		t.Errorf("a repository with a space was read")
	}
}

// An update a kill cut short is done again after a restart as the same
// update, not as a plain deploy of the commit.
func TestInterruptedUpdateIsResumedAsAnUpdate(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "registry.token")
	must(t, os.WriteFile(tokenFile, []byte(registryToken), 0o600))
	dep := &fakeDeployer{started: make(chan string, 4)}
	f := newFixture(t, dep, "registry:\n  tokenFile: "+tokenFile+"\n")
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	f.push(GitHub, "refs/heads/main", a)
	<-dep.started
	f.wait("a applied", func(s queue.RepoStatus) bool { return s.LastApplied == a })
	dep.mu.Lock()
	dep.gate = make(chan struct{})
	dep.mu.Unlock()
	h := map[string]string{"Content-Type": "application/vnd.docker.distribution.events.v1+json", "Authorization": "Bearer " + registryToken}
	if code, rep := f.post("/registry", h, envelopeBody("e1", "localhost:5000", "app", "2")); code != http.StatusAccepted {
		t.Fatalf("notification: %d %+v", code, rep)
	}
	<-dep.started // the update is running: what a kill would cut short

	dep2 := &fakeDeployer{}
	cfg := *f.d.cfg
	d2, err := New(&cfg, Options{Deployer: dep2, Log: f.d.log})
	must(t, err)
	d2.Start()
	t.Cleanup(d2.Stop)
	f.d = d2
	f.wait("the resumed update", func(s queue.RepoStatus) bool {
		return s.Last != nil && strings.HasPrefix(s.Last.Trigger, "resumed after a restart (registry push")
	})
	if got, _ := dep2.deploys(); len(got) != 1 || !slices.Equal(got[0].Update, []string{"localhost:5000/app:2"}) {
		t.Fatalf("deploys after the restart: %+v", got)
	}
	close(dep.gate)
}
