package gate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/syslet/syslet/pkg/probe"
)

// Probed is what the gate's probe of one container found: the probe as
// the plan names it, whether (and how soon) it was ready, how many tries
// it made and the last answer.
type Probed struct {
	Service string        `json:"service"`
	Probe   string        `json:"probe"`
	Ready   bool          `json:"ready"`
	ReadyIn time.Duration `json:"readyIn,omitempty"`
	Tries   int           `json:"tries"`
	Last    *probe.Answer `json:"last,omitempty"`
}

// prober runs one container's probe from the gate's start to its end, a
// try every interval (the next one at once when a try took longer), and
// keeps the tally the gate judges by.
type prober struct {
	u     Unit
	start time.Time
	// wake tells the gate, without waiting, that the probe became ready
	// or failed: it judges at once rather than at its next poll.
	wake chan<- struct{}

	mu    sync.Mutex
	tries int
	last  *probe.Answer
	// oks and fails are the current streak's length (one of them is
	// zero); alike is how many of the last failures answered alike.
	oks, fails int
	alike      int
	readyIn    time.Duration // from the gate's start; 0: not ready yet
	// failure is why the ready probe failed, said when its failures in a
	// row first reached the probe's failures (later tries do not change
	// the verdict's words).
	failure string
}

// startProbes starts a prober for each unit that has a probe; they stop
// when ctx ends.
func startProbes(ctx context.Context, h Host, units []Unit, start time.Time, wake chan<- struct{}) map[string]*prober {
	ps := map[string]*prober{}
	for _, u := range units {
		if u.probe == nil {
			continue
		}
		p := &prober{u: u, start: start, wake: wake}
		ps[u.service] = p
		go p.run(ctx, h)
	}
	return ps
}

func (p *prober) run(ctx context.Context, h Host) {
	every := time.Duration(p.u.probe.Interval)
	for {
		began := time.Now()
		a := h.Probe(ctx, p.u.container, p.u.probe)
		if ctx.Err() != nil {
			return // cut short by the gate's end: not an answer
		}
		p.record(a)
		t := time.NewTimer(max(0, every-time.Since(began)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (p *prober) record(a probe.Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	news := false
	if a.OK {
		p.oks, p.fails = p.oks+1, 0
		if p.readyIn == 0 && p.oks >= p.u.probe.Successes {
			p.readyIn, news = max(time.Since(p.start), time.Nanosecond), true
		}
	} else {
		if p.fails > 0 && p.last.String() == a.String() {
			p.alike++
		} else {
			p.alike = 1
		}
		p.oks, p.fails = 0, p.fails+1
	}
	p.last = &a
	if p.readyIn > 0 && p.failure == "" && p.fails >= p.u.probe.Failures {
		p.failure, news = "probe "+p.u.probe.Name()+" "+p.streak(p.fails), true
	}
	if news {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// ready reports whether the probe has been ready (its successes in a
// row) since the gate began.
func (p *prober) ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readyIn > 0
}

// failed is why a ready probe fails its container: its failures in a
// row; "" while it holds.
func (p *prober) failed() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failure
}

// notReady is why a probe that is not ready by its deadline fails its
// container.
func (p *prober) notReady() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	why := "no answer yet"
	switch {
	case p.last == nil:
	case p.last.OK:
		why = fmt.Sprintf("%s, only %d of the %d times in a row it needs", p.last, p.oks, p.u.probe.Successes)
	default:
		// Before it was ready what it answered last is the news (a
		// refused connect or two while the server started is not),
		// unless it answered otherwise every time.
		n := p.alike
		if n == 1 {
			n = p.fails
		}
		why = p.streak(n)
	}
	return fmt.Sprintf("probe %s not ready within %s: %s", p.u.probe.Name(), p.u.probe.Deadline, why)
}

// streak says what the last n failures in a row answered: alike, or not.
func (p *prober) streak(n int) string {
	switch {
	case n <= 1:
		return p.last.String()
	case p.alike >= n:
		return fmt.Sprintf("%s %d times in a row", p.last, n)
	}
	return fmt.Sprintf("failed %d times in a row, the last: %s", n, p.last)
}

// deadline is when the probe must be ready by.
func (p *prober) deadline() time.Time { return p.start.Add(time.Duration(p.u.probe.Deadline)) }

// report is the probe's line of the gate's report.
func (p *prober) report() Probed {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Probed{Service: p.u.service, Probe: p.u.probe.String(), Ready: p.readyIn > 0, ReadyIn: p.readyIn, Tries: p.tries, Last: p.last}
}
