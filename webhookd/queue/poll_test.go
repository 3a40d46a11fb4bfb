package queue

import (
	"slices"
	"testing"
	"time"

	"github.com/syslet/syslet/webhookd/config"
)

// TestFleetPollSpread: 1,000 hosts with `poll: 5m` and no pollSpread
// (so the spread is the whole interval), all started in the same second,
// draw their first polls evenly over the interval: each tenth of it gets
// about a tenth of the fleet, and no second gets more than a handful of
// fetches, where with `pollSpread: 0s` all 1,000 fetch in the first
// second. The bounds are many standard deviations wide: the draw is
// random, the test must not be.
func TestFleetPollSpread(t *testing.T) {
	const hosts = 1000
	spread := pollRepo(t, "")
	if spread.PollInterval != 5*time.Minute || spread.PollDelay != spread.PollInterval {
		t.Fatalf("poll 5m without pollSpread: interval %s, spread %s", spread.PollInterval, spread.PollDelay)
	}
	interval := spread.PollInterval
	offsets, perSecond := firstPolls(t, spread, hosts)
	tenths := make([]int, 10)
	for _, d := range offsets {
		tenths[d*10/interval]++
	}
	idle := 0
	for _, n := range perSecond {
		if n == 0 {
			idle++
		}
	}
	_, atOnce := firstPolls(t, pollRepo(t, "0s"), hosts)
	t.Logf("%d hosts, poll %s, first polls from %s to %s after the start; per tenth of the interval (30s): %v (min %d, max %d; even would be %d); busiest second %d fetches (even: %.2f a second), %d of %d seconds without any; with pollSpread 0s: %d fetches in the busiest second",
		hosts, interval, offsets[0].Round(time.Millisecond), offsets[hosts-1].Round(time.Millisecond), tenths, slices.Min(tenths), slices.Max(tenths), hosts/10,
		slices.Max(perSecond), float64(hosts)/interval.Seconds(), idle, len(perSecond), slices.Max(atOnce))
	// Each tenth: 100 expected, standard deviation about 9.5.
	for i, n := range tenths {
		if n < 50 || n > 150 {
			t.Errorf("tenth %d of the interval got %d of %d first polls, want about %d", i, n, hosts, hosts/10)
		}
	}
	// Per second: Poisson with mean 3.3; 20 or more has odds below 1e-9.
	if n := slices.Max(perSecond); n >= 20 {
		t.Errorf("%d first polls in one second", n)
	}
	if atOnce[0] != hosts {
		t.Errorf("pollSpread 0s: %d of %d hosts polled in the first second", atOnce[0], hosts)
	}
}

// pollRepo is a repository polled every 5m, with pollSpread spread ("":
// not set).
func pollRepo(t *testing.T, spread string) config.Repo {
	t.Helper()
	y := "repos:\n  - name: infra\n    url: /srv/git/infra.git\n    poll: 5m\n"
	if spread != "" {
		y += "    pollSpread: " + spread + "\n"
	}
	c, err := config.Parse("test.yaml", []byte(y), "web1")
	if err != nil {
		t.Fatal(err)
	}
	return c.Repos[0]
}

// firstPolls draws the first-poll delay of hosts hosts started together,
// as each worker does on its start, and counts them per second of the
// interval; it returns the delays sorted.
func firstPolls(t *testing.T, r config.Repo, hosts int) ([]time.Duration, []int) {
	t.Helper()
	offsets := make([]time.Duration, hosts)
	perSecond := make([]int, int(r.PollInterval/time.Second))
	for i := range offsets {
		d := randomDelay(r.PollDelay)
		if d < 0 || d >= r.PollInterval {
			t.Fatalf("host %d drew %s, outside [0, %s)", i, d, r.PollInterval)
		}
		offsets[i] = d
		perSecond[d/time.Second]++
	}
	slices.Sort(offsets)
	return offsets, perSecond
}
