package fleetsim

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/fleet"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/clone"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/metrics"
	"github.com/syslet/syslet/webhookd/queue"
)

// Repo is the repository's name in every host's configuration.
const Repo = "fleet"

// Host is one simulated host: its name, its labels, and whether it is
// down (never started: it fetches nothing and its scrape fails).
type Host struct {
	Name   string
	Labels fleet.Labels
	Down   bool
	// m is the metrics of the host's running worker (nil before its
	// first start); the exporter reads it on every scrape.
	m atomic.Pointer[metrics.Set]
}

// Branch is the branch the host follows: its ring's.
func (h *Host) Branch() string {
	if h.Labels["ring"] == "canary" {
		return "canary"
	}
	return "main"
}

// Layout is a fleet of n hosts h00001…: one in twenty in ring=canary (the
// rest ring=main), spread over three regions of four sites each, and
// about one in a hundred of each ring down (drawn from a fixed seed, so
// every run has the same fleet).
func Layout(n int) []*Host {
	regions := []string{"eu", "us", "ap"}
	r := rand.New(rand.NewPCG(57, 10000))
	hosts := make([]*Host, n)
	for i := range hosts {
		ring := "main"
		if i%20 == 0 {
			ring = "canary"
		}
		region := regions[i%3]
		hosts[i] = &Host{
			Name:   fmt.Sprintf("h%05d", i+1),
			Labels: fleet.Labels{"ring": ring, "region": region, "site": fmt.Sprintf("%s%d", region, i/3%4+1)},
			Down:   r.IntN(100) == 0,
		}
	}
	return hosts
}

// LabelsFile is the host's labels file, as its directory of the
// repository holds it.
func (h *Host) LabelsFile() []byte {
	var b []byte
	for _, k := range h.Labels.Keys() {
		b = fmt.Appendf(b, "%s=%s\n", k, h.Labels[k])
	}
	return b
}

// ApplyDelay draws an apply's duration from a log-normal distribution of
// the given median whose 95th percentile is p95: the modelled apply.
func ApplyDelay(median, p95 time.Duration) func() time.Duration {
	sigma := math.Log(float64(p95)/float64(median)) / 1.645
	return func() time.Duration {
		return time.Duration(float64(median) * math.Exp(sigma*rand.NormFloat64()))
	}
}

// Options say how the fleet's hosts poll, and what they share.
type Options struct {
	// Dir holds each host's state: Dir/<host>/{clone,tree,status.json}
	// (Prepare makes them).
	Dir string
	// URL, SSHKey, KnownHosts and TokenFile are the repository's, as in
	// webhookd.yaml (SSHKey and KnownHosts for ssh://, TokenFile for
	// https://).
	URL, SSHKey, KnownHosts, TokenFile string
	// Poll and Spread are repos[].poll and repos[].pollSpread (Spread < 0:
	// not set, the whole interval).
	Poll, Spread time.Duration
	// Apply draws the duration of one modelled apply.
	Apply func() time.Duration
	// Fetches records every fetch.
	Fetches *Recorder
}

// Config is the host's webhookd configuration of the repository.
func (o Options) Config(h *Host) (*config.Repo, error) {
	y := fmt.Sprintf("repos:\n  - name: %s\n    url: %s\n    branch: %s\n    path: hosts/{hostname}\n    poll: %s\n", Repo, o.URL, h.Branch(), o.Poll)
	if o.SSHKey != "" {
		y += fmt.Sprintf("    sshKey: %s\n    knownHosts: %s\n", o.SSHKey, o.KnownHosts)
	}
	if o.TokenFile != "" {
		y += fmt.Sprintf("    tokenFile: %s\n", o.TokenFile)
	}
	if o.Spread >= 0 {
		y += fmt.Sprintf("    pollSpread: %s\n", o.Spread)
	}
	c, err := config.Parse(h.Name+".yaml", []byte(y), h.Name)
	if err != nil {
		return nil, err
	}
	return &c.Repos[0], nil
}

// Prepare makes the host's state as a webhookd that applied commit at
// applied leaves it: its clone (a copy of template, the branch fetched
// once, its packs hard-linked), its labels in the checkout, and its
// status file.
func (o Options) Prepare(h *Host, template, commit string, applied time.Time) error {
	dir := filepath.Join(o.Dir, h.Name)
	if err := SeedClone(template, filepath.Join(dir, "clone")); err != nil {
		return err
	}
	spec := filepath.Join(dir, "tree", "hosts", h.Name)
	if err := os.MkdirAll(spec, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(spec, "labels"), h.LabelsFile(), 0o644); err != nil {
		return err
	}
	v, err := verdict.Applied.MarshalText()
	if err != nil {
		return err
	}
	st, err := json.Marshal(map[string]any{
		"lastApplied": commit, "lastAppliedAt": applied,
		"last": map[string]any{"commit": commit, "trigger": "poll", "pushes": 1, "verdict": string(v), "started": applied, "durationSeconds": 7},
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "status.json"), st, 0o600)
}

// Run is a started fleet.
type Run struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

// Start runs the worker of every host that is not down, each in its own
// goroutine, until Stop. Each starts as webhookd does: it reads its
// status file, exports its labels from its last checkout, and its first
// poll waits its spread delay.
func Start(hosts []*Host, o Options) (*Run, error) {
	r := &Run{stop: make(chan struct{})}
	for _, h := range hosts {
		if h.Down {
			continue
		}
		w, err := o.worker(h)
		if err != nil {
			close(r.stop)
			r.wg.Wait()
			return nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		r.wg.Go(func() { w.Run(r.stop) })
	}
	return r, nil
}

// StopWithin stops every worker and waits until each has returned (a
// deploy in progress finishes first, as in webhookd), or d has passed; it
// reports whether all returned. A fetch the forge does not answer holds
// its worker up to webhookd's fetch timeout.
func (r *Run) StopWithin(d time.Duration) bool {
	close(r.stop)
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// worker is webhookd's worker of the repository on host h: the real clone
// and poll loop, the modelled checkout and apply.
func (o Options) worker(h *Host) (*queue.Worker, error) {
	repo, err := o.Config(h)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(o.Dir, h.Name)
	m := metrics.New([]config.Repo{*repo}, nil, queue.Results)
	// The Go runtime's and the process's series describe this one
	// process, not a host: the exporter serves a fixed copy instead.
	m.Reg.Unregister(collectors.NewGoCollector())
	m.Reg.Unregister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	tree := filepath.Join(dir, "tree")
	co := &checkout{real: clone.New(repo, filepath.Join(dir, "clone")), tree: tree, rec: o.Fetches}
	w := queue.New(repo, queue.Options{
		Checkout: co, Deployer: applyModel{o.Apply}, Log: zerolog.Nop(), Metrics: m,
		StatusFile: filepath.Join(dir, "status.json"), Hostname: h.Name,
	})
	// As webhookd's startLabels: the labels of the last checkout.
	if err := m.ReadLabels(Repo, h.Name, filepath.Join(tree, "hosts", h.Name)); err != nil {
		return nil, err
	}
	h.m.Store(m)
	return w, nil
}

// checkout is webhookd's clone with its fetches recorded and its
// checkout modelled: the prepared tree holds the host's labels file, all
// a modelled apply reads.
type checkout struct {
	real clone.Checkout
	tree string
	rec  *Recorder
}

func (c *checkout) Fetch(ctx context.Context) (string, error) {
	c.rec.inFlight.Add(1)
	defer c.rec.inFlight.Add(-1)
	t0 := time.Now()
	tip, err := c.real.Fetch(ctx)
	f := Fetch{At: t0, Took: time.Since(t0)}
	if err != nil {
		f.Err = err.Error()
	}
	c.rec.Add(f)
	return tip, err
}

func (c *checkout) Contains(from, commit string) (bool, error) { return c.real.Contains(from, commit) }
func (c *checkout) RawCommit(commit string) ([]byte, error)    { return c.real.RawCommit(commit) }
func (c *checkout) Checkout(string) (string, error)            { return c.tree, nil }
func (c *checkout) Repack(ctx context.Context) (clone.Repacked, error) {
	return c.real.Repack(ctx)
}

// applyModel is the modelled apply: a sleep of a drawn duration, then
// success.
type applyModel struct{ delay func() time.Duration }

func (a applyModel) Deploy(ctx context.Context, _ queue.DeployRequest) (queue.DeployReport, error) {
	select {
	case <-time.After(a.delay()):
	case <-ctx.Done():
		return queue.DeployReport{}, ctx.Err()
	}
	return queue.DeployReport{Verdict: verdict.Applied, Summary: "modelled apply"}, nil
}

func (applyModel) Check(context.Context, queue.DeployRequest) (queue.CheckReport, error) {
	return queue.CheckReport{}, nil
}
