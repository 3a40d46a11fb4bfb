package clone

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/syslet/syslet/webhookd/config"
)

func packsOf(sizes ...int64) []pack {
	out := make([]pack, len(sizes))
	for i, s := range sizes {
		out[i] = pack{hash: plumbing.NewHash(fmt.Sprintf("%040x", i)), size: s}
	}
	return out
}

// rollUp merges the smallest packs that break the geometric progression,
// and only within the byte bound.
func TestRollUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int64
		max   int64
		want  int
	}{
		{"a progression stays", []int64{1, 2, 4, 8, 1000}, 1 << 30, 0},
		{"two equal small packs merge", []int64{1, 1, 1000}, 1 << 30, 2},
		{"the roll-up takes what it outgrows", []int64{1, 1, 2, 3, 1000}, 1 << 30, 4},
		{"many fetches under a clone pack", []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 << 20}, 1 << 30, 10},
		{"the clone pack joins once outgrown", []int64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 60}, 1 << 30, 11},
		{"never past the byte bound", []int64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 60}, 30, 6},
		{"one pack", []int64{7}, 1 << 30, 0},
	} {
		if got := rollUp(packsOf(tc.sizes...), repackFactor, tc.max); got != tc.want {
			t.Errorf("%s: rollUp(%v) = %d, want %d", tc.name, tc.sizes, got, tc.want)
		}
	}
}

// fetched returns a checkout of r that has fetched n commits, one fetch
// each (so one pack each), and the commits.
func fetched(t *testing.T, r *remote, co *gitCheckout, n int) []string {
	t.Helper()
	var commits []string
	for i := range n {
		commits = append(commits, r.commit(fmt.Sprintf(`{"v":%d,"pad":%q}`, r.n, strings.Repeat("x", 100*i))))
		tip, err := co.Fetch(context.Background())
		must(t, err)
		if tip != commits[len(commits)-1] {
			t.Fatalf("fetched %s, want %s", tip, commits[len(commits)-1])
		}
	}
	return commits
}

func checkoutFor(t *testing.T, r *remote) *gitCheckout {
	t.Helper()
	cfg, err := config.Parse("t.yaml", []byte("repos:\n  - name: infra\n    url: "+r.dir+"\n    poll: 1m\n"), "web1")
	must(t, err)
	return New(&cfg.Repos[0], filepath.Join(t.TempDir(), "infra")).(*gitCheckout)
}

// allReadable walks every commit's tree and reads every blob, through a
// freshly opened repository.
func allReadable(t *testing.T, co *gitCheckout, commits []string) {
	t.Helper()
	repo, err := git.PlainOpen(co.dir)
	must(t, err)
	for _, c := range commits {
		cm, err := repo.CommitObject(plumbing.NewHash(c))
		must(t, err)
		tree, err := cm.Tree()
		must(t, err)
		must(t, tree.Files().ForEach(func(f *object.File) error {
			_, err := f.Contents()
			return err
		}))
	}
}

func TestRepackKeepsPacksFewAndObjectsWhole(t *testing.T) {
	r := newRemote(t)
	co := checkoutFor(t, r)
	commits := fetched(t, r, co, MinPacks-1)
	rep, err := co.Repack(context.Background())
	if err != nil || rep.Merged != 0 || rep.Packs != MinPacks-1 {
		t.Fatalf("below the threshold: %+v %v", rep, err)
	}
	commits = append(commits, fetched(t, r, co, 15)...)
	packs, _ := listPacks(filepath.Join(co.dir, ".git"))
	if len(packs) != len(commits) {
		t.Fatalf("%d packs for %d fetches", len(packs), len(commits))
	}
	rep, err = co.Repack(context.Background())
	if err != nil || rep.Merged < 2 || rep.After != rep.Packs-rep.Merged+1 {
		t.Fatalf("repack: %+v %v", rep, err)
	}
	after, _ := listPacks(filepath.Join(co.dir, ".git"))
	if len(after) != rep.After || len(after) >= MinPacks {
		t.Fatalf("%d packs after the repack (%+v)", len(after), rep)
	}
	allReadable(t, co, commits)
	// The checkout goes on working: a fetch, reachability, a checkout.
	more := fetched(t, r, co, 1)
	if ok, err := co.Contains(more[0], commits[3]); err != nil || !ok {
		t.Fatalf("contains: %v %v", ok, err)
	}
	dir, err := co.Checkout(commits[5])
	must(t, err)
	if b, _ := os.ReadFile(filepath.Join(dir, "hosts/web1/app.json")); !strings.Contains(string(b), `"v":5`) {
		t.Fatalf("checked out %s", b)
	}
	// Many more fetches stay logarithmic.
	commits = append(commits, more...)
	for range 3 {
		commits = append(commits, fetched(t, r, co, 12)...)
		_, err := co.Repack(context.Background())
		must(t, err)
	}
	after, _ = listPacks(filepath.Join(co.dir, ".git"))
	if len(after) >= MinPacks {
		t.Fatalf("%d packs after %d fetches", len(after), len(commits))
	}
	allReadable(t, co, commits)
}

// A repack stopped (a push, a shutdown, its time bound) or killed leaves
// the clone as it was, and what a killed one left behind is cleared.
func TestRepackStoppedLeavesTheCloneAsItWas(t *testing.T) {
	r := newRemote(t)
	co := checkoutFor(t, r)
	commits := fetched(t, r, co, 20)
	gitDir := filepath.Join(co.dir, ".git")
	before, _ := listPacks(gitDir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := co.Repack(ctx)
	if err == nil || !strings.Contains(err.Error(), "the clone is as it was") || rep.Merged != 0 {
		t.Fatalf("a stopped repack: %+v %v", rep, err)
	}
	after, _ := listPacks(gitDir)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("packs changed:\n%v\n%v", before, after)
	}
	if tmps, _ := filepath.Glob(filepath.Join(packDir(gitDir), "tmp_*")); len(tmps) != 0 {
		t.Fatalf("left %v", tmps)
	}
	allReadable(t, co, commits)

	must(t, os.WriteFile(filepath.Join(packDir(gitDir), "tmp_pack_123"), []byte("PACK half"), 0o600))
	if _, err := co.Repack(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(packDir(gitDir), "tmp_*")); len(tmps) != 0 {
		t.Fatalf("left %v", tmps)
	}
	allReadable(t, co, commits)
}

// remote is a git repository on disk standing in for the forge.
type remote struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	n    int
}

func newRemote(t *testing.T) *remote {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	must(t, err)
	return &remote{t: t, dir: dir, repo: r}
}

// commit writes hosts/web1/app.json = content and commits it, returning
// the commit id.
func (r *remote) commit(content string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	must(r.t, err)
	p := filepath.Join(r.dir, "hosts", "web1", "app.json")
	must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(r.t, os.WriteFile(p, []byte(content), 0o644))
	_, err = wt.Add("hosts/web1/app.json")
	must(r.t, err)
	r.n++
	h, err := wt.Commit(fmt.Sprintf("change %d", r.n), &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example", When: time.Unix(int64(1700000000+r.n), 0)}})
	must(r.t, err)
	return h.String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
