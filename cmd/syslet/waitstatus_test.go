package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const waitCommit = "89abcdef0123456789abcdef0123456789abcdef"

// giteaStatuses answers Gitea's combined-status read of waitCommit from
// states, which the test changes as hosts would; each read advances
// every context listed in next by one step.
type giteaStatuses struct {
	mu    sync.Mutex
	steps map[string][]string // context → its states, read after read
	reads int
	code  int
}

func (g *giteaStatuses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.code != 0 {
		http.Error(w, `{"message":"token is required"}`, g.code)
		return
	}
	if r.URL.Path != "/api/v1/repos/ops/infra/commits/"+waitCommit+"/status" || r.Header.Get("Authorization") != "token s3cret-token" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var items []map[string]string
	for c, states := range g.steps {
		st := states[min(g.reads, len(states)-1)]
		if st == "" {
			continue // no status yet
		}
		items = append(items, map[string]string{"context": c, "status": st, "description": st + " on " + c})
	}
	g.reads++
	json.NewEncoder(w).Encode(map[string]any{"statuses": items})
}

func waitRun(t *testing.T, g *giteaStatuses, extra ...string) (int, string, string) {
	t.Helper()
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"wait-status", "--forge", "gitea", "--api", srv.URL + "/api/v1", "--repo", "ops/infra", "--token-file", tok,
		"--context", "syslet/c1", "--context", "syslet/c2", "--interval", "1s"}, extra...)
	args = append(args, waitCommit)
	var stdout, stderr bytes.Buffer
	code := run(args, nil, &stdout, &stderr)
	if strings.Contains(stdout.String()+stderr.String(), "s3cret-token") {
		t.Fatalf("the token was printed:\n%s%s", stdout.String(), stderr.String())
	}
	return code, stdout.String(), stderr.String()
}

func TestWaitStatus(t *testing.T) {
	t.Run("SuccessOnceBothHostsDeployed", func(t *testing.T) {
		g := &giteaStatuses{steps: map[string][]string{
			"syslet/c1":    {"pending", "success"},
			"syslet/c2":    {"", "pending", "success"},
			"syslet/other": {"failure"}, // a host of another ring: not waited for
		}}
		code, out, errOut := waitRun(t, g)
		if code != 0 || !strings.Contains(out, "every status is success: 89abcdef0123 may be promoted") ||
			!strings.Contains(out, "syslet/c2: success (success on syslet/c2)") || strings.Contains(out, "other") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("OneFailureStopsAtOnce", func(t *testing.T) {
		g := &giteaStatuses{steps: map[string][]string{"syslet/c1": {"pending"}, "syslet/c2": {"failure"}}}
		code, out, errOut := waitRun(t, g)
		if code != 1 || g.reads != 1 || !strings.Contains(out, "89abcdef0123 failed on syslet/c2 (failure): do not promote it") {
			t.Fatalf("exit %d after %d reads\n%s%s", code, g.reads, out, errOut)
		}
	})
	t.Run("StillPendingAtTheTimeout", func(t *testing.T) {
		g := &giteaStatuses{steps: map[string][]string{"syslet/c1": {"success"}, "syslet/c2": {"pending"}}}
		code, out, errOut := waitRun(t, g, "--timeout", "1500ms")
		if code != 3 || !strings.Contains(out, "still waiting after 1.5s: syslet/c2 (pending): not promoted") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("RefusedRead", func(t *testing.T) {
		g := &giteaStatuses{code: 401}
		code, out, errOut := waitRun(t, g)
		if code != 2 || !strings.Contains(errOut, "HTTP 401") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("UsageMistakes", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"wait-status", "--forge", "gitea", "--repo", "ops/infra", "--token-file", "t", "--context", "c", waitCommit}, "--api: required for gitea"},
			{[]string{"wait-status", "--forge", "github", "--repo", "ops/infra", "--token-file", "t", "--context", "c", "main"}, `"main" is not a full commit id`},
			{[]string{"wait-status", "--forge", "github", "--repo", "ops/infra", "--token-file", "t", waitCommit}, "--context: name at least one"},
			{[]string{"wait-status", "--forge", "gitea", "--api", "http://git.example/api/v1", "--repo", "ops/infra", "--token-file", "t", "--context", "c", waitCommit}, "would send the token in clear"},
			{[]string{"wait-status", "--forge", "github", "--repo", "infra", "--token-file", "t", "--context", "c", waitCommit}, `--repo: "infra": want owner/name`},
			{[]string{"wait-status", "--forge", "github", "--repo", "ops/infra", "--token-file", "t", "--context", "c", "--interval", "10ms", waitCommit}, "--interval 10ms is shorter than 1s"},
		} {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%v: exit %d\n%s", tc.args, code, stderr.String())
			}
		}
	})
	t.Run("LooseTokenFile", func(t *testing.T) {
		tok := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tok, []byte("s3cret-token\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run([]string{"wait-status", "--forge", "github", "--repo", "ops/infra", "--token-file", tok, "--context", "c", waitCommit}, nil, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "readable by group or others") {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	})
}

// ringDir writes a hosts dir of three canaries and two main hosts, with
// their labels files.
func ringDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hosts")
	for h, ls := range map[string]string{
		"canary1": "ring=canary\nsite=fra\n", "canary2": "ring=canary\nsite=ams\n", "canary3": "ring=canary\n",
		"main1": "ring=main\n", "main2": "ring=main\n", "common": "ring=canary\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, h, "labels"), []byte(ls), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ringRun is waitRun over the canary ring of ringDir, by selector.
func ringRun(t *testing.T, g *giteaStatuses, extra ...string) (int, string, string) {
	t.Helper()
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"wait-status", "--forge", "gitea", "--api", srv.URL + "/api/v1", "--repo", "ops/infra", "--token-file", tok,
		"--hosts-dir", ringDir(t), "--select", "ring=canary", "--interval", "1s"}, extra...)
	var stdout, stderr bytes.Buffer
	code := run(append(args, waitCommit), nil, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestWaitStatusThreshold(t *testing.T) {
	t.Run("PromotedWithOneCanaryMissing", func(t *testing.T) {
		g := &giteaStatuses{steps: map[string][]string{
			"syslet/canary1": {"pending", "success"},
			"syslet/canary2": {"", "success"},
			"syslet/main1":   {"failure"}, // not of the ring
		}}
		code, out, errOut := ringRun(t, g, "--min-success", "60%")
		if code != 0 || g.reads != 2 || !strings.Contains(out, "waiting for 2 of 3 host(s) (--min-success 60%) to run 89abcdef0123, read from gitea ops/infra (at most 30m): ring=canary: canary1, canary2, canary3") ||
			!strings.Contains(out, "2 of 3 host(s) succeeded, 2 needed (--min-success 60%): 89abcdef0123 may be promoted; not successful: canary3 (missing: no report)") || strings.Contains(out, "main1") {
			t.Fatalf("exit %d after %d reads\n%s%s", code, g.reads, out, errOut)
		}
	})
	t.Run("FailsFastOnTwoRollbacks", func(t *testing.T) {
		// Each host's context by a pattern of its own.
		g := &giteaStatuses{steps: map[string][]string{"deploy/canary1": {"pending", "failure"}, "deploy/canary2": {"failure"}}}
		code, out, errOut := ringRun(t, g, "--min-success", "60%", "--context", "deploy/{host}", "--timeout", "1m")
		if code != 1 || g.reads != 2 || !strings.Contains(out, "89abcdef0123 failed on canary1 (failure), canary2 (failure): at most 1 of 3 host(s) can still succeed, 2 needed (--min-success 60%): do not promote it") {
			t.Fatalf("exit %d after %d reads\n%s%s", code, g.reads, out, errOut)
		}
	})
	t.Run("ACountAndTheTimeout", func(t *testing.T) {
		g := &giteaStatuses{steps: map[string][]string{"syslet/canary1": {"success"}, "syslet/canary2": {"pending"}}}
		code, out, errOut := ringRun(t, g, "--min-success", "2", "--timeout", "1500ms")
		if code != 3 || !strings.Contains(out, "still waiting after 1.5s: 1 of 3 host(s) succeeded, 2 needed (--min-success 2); not successful: canary2 (pending), canary3 (missing: no report): not promoted") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("UsageMistakes", func(t *testing.T) {
		dir := ringDir(t)
		base := []string{"wait-status", "--forge", "gitea", "--api", "https://git.example/api/v1", "--repo", "ops/infra", "--token-file", "t"}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--hosts-dir", dir, "--select", "ring", waitCommit}, `--select: "ring": want key=value or key!=value`},
			{[]string{"--hosts-dir", dir, "--select", "ring=canary,ring=main", waitCommit}, "--select: \"ring=main\": label ring is already required"},
			{[]string{"--hosts-dir", dir, "--select", "ring=canary", "--min-success", "150%", waitCommit}, `--min-success: invalid size "150%": more than 100%`},
			{[]string{"--hosts-dir", dir, "--select", "ring=canary", "--min-success", "0", waitCommit}, `--min-success: invalid size "0": less than 1`},
			{[]string{"--hosts-dir", dir, "--select", "ring=canary", "--min-success", "sixty", waitCommit}, `--min-success: invalid size "sixty"`},
			{[]string{"--hosts-dir", dir, "--select", "ring=canary", "--min-success", "4", waitCommit}, "--min-success 4: 4 host(s) must succeed, but only 3 are selected"},
			{[]string{"--hosts-dir", dir, "--select", "ring=edge", waitCommit}, "--select ring=edge: none of the 5 host(s) of"},
			{[]string{"--select", "ring=canary", waitCommit}, "--select: give --hosts-dir DIR"},
			{[]string{"--hosts-dir", dir, waitCommit}, "--hosts-dir: give --select too"},
			{[]string{"--hosts-dir", dir, "--select", "ring=canary", "--context", "syslet/canary1", waitCommit}, `--context "syslet/canary1": with --select, the pattern needs {host}`},
			{[]string{"--hosts-dir", dir, "--select", "ring=canary", "--prometheus", "http://prom:9090", waitCommit}, "--prometheus reads webhookd's metrics: --forge, --api, --repo and --token-file are for the forge's statuses"},
		} {
			var stdout, stderr bytes.Buffer
			if code := run(append(slices.Clone(base), tc.args...), nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%v: exit %d\n%s", tc.args, code, stderr.String())
			}
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"wait-status", "--prometheus", "http://prom:9090", "--context", "c", waitCommit}, "--prometheus: give --hosts-dir and --select"},
			{[]string{"wait-status", "--prometheus", "prom:9090", "--hosts-dir", dir, "--select", "ring=canary", waitCommit}, `--prometheus "prom:9090": want Prometheus's base URL`},
		} {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, nil, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%v: exit %d\n%s", tc.args, code, stderr.String())
			}
		}
	})
}
