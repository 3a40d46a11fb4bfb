package webhookd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/webhookd/queue"
)

// The replay memory survives a restart: a delivery accepted before it is
// refused after it, the file is 0600 and holds digests, not ids.
func TestReplayMemorySurvivesARestart(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	body := pushBody("refs/heads/main", a)
	h := map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "keep-me-1", "X-Hub-Signature-256": "sha256=" + sign([]byte(testSecret), body)}
	if code, rep := f.post("/hooks/infra", h, body); code != http.StatusAccepted {
		t.Fatalf("first delivery: %d %+v", code, rep)
	}
	f.wait("a applied", func(s queue.RepoStatus) bool { return s.LastApplied == a })
	f.d.Stop()

	file := filepath.Join(f.state, ".status", replayFile)
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("replay file: %v %v", fi, err)
	}
	// Two identities per delivery: its id and its signed body.
	if b, _ := os.ReadFile(file); strings.Contains(string(b), "keep-me-1") || len(b) != 2*seenLine {
		t.Errorf("replay file holds %q, want two digest lines", b)
	}

	cfg := *f.d.cfg
	d2, err := New(&cfg, Options{Deployer: dep, Log: zerolog.New(zerolog.NewTestWriter(t))})
	must(t, err)
	d2.Start()
	t.Cleanup(d2.Stop)
	f.d = d2
	if code, rep := f.post("/hooks/infra", h, body); code != http.StatusConflict || !strings.Contains(rep.Reason, "replay") {
		t.Fatalf("the replay after a restart: %d %+v", code, rep)
	}
	fresh := map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "keep-me-2", "X-Hub-Signature-256": h["X-Hub-Signature-256"]}
	if code, rep := f.post("/hooks/infra", fresh, body); code != http.StatusConflict || !strings.Contains(rep.Reason, "replay") {
		t.Fatalf("the signed body replayed under a fresh id after a restart: %d %+v", code, rep)
	}
	if st := d2.Status()[0]; st.LastApplied != a {
		t.Errorf("the applied commit was forgotten: %+v", st)
	}
}

// The file stays bounded: past twice the ids remembered it is rewritten
// with those alone, and a reopen remembers exactly them.
func TestReplayFileIsBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", ".deliveries")
	s, err := openSeenSet(3, file, func(err error) { t.Error(err) })
	must(t, err)
	for i := range 20 {
		if !s.addAll(fmt.Sprintf("id-%d", i)) {
			t.Fatalf("id-%d reported as seen", i)
		}
		if fi, _ := os.Stat(file); fi.Size() > 6*seenLine {
			t.Fatalf("after %d ids the file has %d bytes", i+1, fi.Size())
		}
	}
	s.close()
	// A torn last line, as a crash mid-write leaves.
	fh, _ := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	fh.WriteString("0123")
	fh.Close()
	s, err = openSeenSet(3, file, func(err error) { t.Error(err) })
	must(t, err)
	defer s.close()
	for _, i := range []int{19, 18, 17} {
		if s.addAll(fmt.Sprintf("id-%d", i)) {
			t.Errorf("id-%d forgotten by the reopen", i)
		}
	}
	if !s.addAll("id-16") {
		t.Error("id-16 is remembered: more than 3 ids came back")
	}
}

// A deploy the daemon did not finish (killed mid-deploy) is saved before
// it starts and deployed again first thing after a restart.
func TestInterruptedDeployIsDoneAgainAfterARestart(t *testing.T) {
	dep := &fakeDeployer{gate: make(chan struct{}), started: make(chan string, 4)}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	if code, rep := f.push(GitHub, "refs/heads/main", a); code != http.StatusAccepted {
		t.Fatalf("push: %d %+v", code, rep)
	}
	<-dep.started // the deploy is running: what a kill would cut short
	b, err := os.ReadFile(filepath.Join(f.state, ".status", "infra.json"))
	must(t, err)
	var saved queue.RepoStatus // as the status file holds its persisted part
	must(t, json.Unmarshal(b, &saved))
	if saved.InFlight == nil || saved.InFlight.Commit != a {
		t.Fatalf("the running deploy is not in the saved status:\n%s", b)
	}

	// A second daemon on the same state, as systemd starts after a kill.
	dep2 := &fakeDeployer{}
	cfg := *f.d.cfg
	d2, err := New(&cfg, Options{Deployer: dep2, Log: zerolog.New(zerolog.NewTestWriter(t))})
	must(t, err)
	d2.Start()
	t.Cleanup(d2.Stop)
	deadline := time.Now().Add(20 * time.Second)
	for d2.Status()[0].LastApplied != a {
		if time.Now().After(deadline) {
			t.Fatalf("the interrupted deploy was not done again: %+v", d2.Status()[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, _ := dep2.deploys()
	if len(got) != 1 || got[0].Commit != a {
		t.Fatalf("deploys after the restart: %+v", got)
	}
	st := d2.Status()[0]
	if st.InFlight != nil || st.Last.Result() != queue.ResultSuccess || !strings.HasPrefix(st.Last.Trigger, "resumed after a restart (github push") {
		t.Errorf("status after the redo: %+v last %+v", st, st.Last)
	}
	close(dep.gate) // let the first daemon's deploy end for its cleanup
}
