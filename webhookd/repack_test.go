package webhookd

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/webhookd/clone"
	"github.com/syslet/syslet/webhookd/queue"
)

// The worker repacks between deploys: after a burst of pushes, each
// deployed (one fetch, one pack each), the clone holds few packs and the
// metrics say so.
func TestWorkerRepacksBetweenDeploys(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	f.start()
	for i := range clone.MinPacks + 2 {
		c := f.remote.commit(fmt.Sprintf(`{"v":%d}`, i))
		f.push(GitHub, "refs/heads/main", c)
		f.wait("deployed", func(s queue.RepoStatus) bool { return s.LastApplied == c && s.State == "idle" })
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := metricValue(t, f, `webhookd_git_repacks_total{repo="infra",result="merged"}`)
		packs := metricValue(t, f, `webhookd_git_packs{repo="infra"}`)
		if n >= 1 && packs > 0 && packs < clone.MinPacks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d deploys: %v repacks, %v packs", clone.MinPacks+2, n, packs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metricValue is one series' value in /metrics (0 when absent).
func metricValue(t *testing.T, f *fixture, series string) float64 {
	t.Helper()
	for _, l := range strings.Split(f.metrics(), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			var x float64
			_, err := fmt.Sscan(v, &x)
			must(t, err)
			return x
		}
	}
	return 0
}
