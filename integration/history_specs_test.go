//go:build integration

package integration

import (
	"strings"
	"testing"
)

// TestHistorySpecsOfAGeneration: syslet history --specs prints the specs a
// kept generation applied, byte for byte (the stream whose digest the
// journal holds), and applying what it printed puts the host back where
// that run left it.
func TestHistorySpecsOfAGeneration(t *testing.T) {
	t.Parallel()
	r := rollbackHost(t)
	r.writeStack(webSpec{image: "localhost:5000/web:v1", conf: "MODE=one\n"})
	if res := r.syslet("--soak", "2s", rbDir); !res.OK() {
		t.Fatalf("first apply:\n%s", res)
	}
	r.MustRun(t, "cp "+rbDir+"/stack.json /root/first.json")
	runs := r.history()
	first := runs[len(runs)-1].Run
	r.writeStack(webSpec{image: "localhost:5000/web:v2", conf: "MODE=two\n"})
	if res := r.syslet("--soak", "2s", rbDir); !res.OK() || r.serves() != "marker-v2" {
		t.Fatalf("second apply:\n%s", res)
	}

	// The newest generation is what the host got last: the second stack.
	if res := r.Run("syslet history --specs > /root/now.json && cmp /root/now.json " + rbDir + "/stack.json"); !res.OK() {
		t.Fatalf("history --specs is not the stack the last run applied:\n%s", res)
	}
	// The first run's, by a prefix of its id: the first stack, and the
	// digest its run's journal line holds.
	if res := r.Run("syslet history " + first[:15] + " --specs > /root/then.json && cmp /root/then.json /root/first.json"); !res.OK() {
		t.Fatalf("history %s --specs is not the stack that run applied:\n%s", first[:15], res)
	}
	sum := strings.Fields(r.MustRun(t, "sha256sum /root/then.json"))[0]
	if n := strings.TrimSpace(r.MustRun(t, "grep -c '\"run\":\""+first+"\".*\"inputDigest\":\""+sum+"\"' /var/lib/syslet/runs.jsonl || true")); n == "0" {
		t.Errorf("the journal holds no line of run %s with inputDigest %s", first, sum)
	}

	// Applying the printed specs is going back to that run's host.
	res := r.syslet("--soak", "2s", "/root/then.json")
	if !res.OK() || !strings.Contains(res.Stdout, "web.service") {
		t.Fatalf("applying the first generation's specs:\n%s", res)
	}
	if got := r.serves(); got != "marker-v1" {
		t.Errorf("web serves %q after applying the first generation's specs, want marker-v1", got)
	}
	if m := strings.TrimSpace(r.MustRun(t, "podman exec web cat /etc/app.conf")); m != "MODE=one" {
		t.Errorf("web's config file: %q, want MODE=one", m)
	}

	// A run with no kept generation is named, and nothing is printed.
	res = r.Run("syslet history 20200101T000000Z-000000 --specs")
	if res.Code != 1 || res.Stdout != "" || !strings.Contains(res.Stderr, `no generation of run "20200101T000000Z-000000" is kept`) {
		t.Errorf("a run without a generation:\n%s", res)
	}
}
