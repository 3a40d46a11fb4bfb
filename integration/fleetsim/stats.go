package fleetsim

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Fetch is one fetch a simulated host made: when it began, how long it
// took, and its error ("" when it went through).
type Fetch struct {
	At   time.Time
	Took time.Duration
	Err  string
}

// Recorder keeps the fleet's fetches; its methods are safe for
// concurrent use.
type Recorder struct {
	mu      sync.Mutex
	fetches []Fetch
	// inFlight counts the fetches begun and not yet ended: a fetch is
	// recorded only when it ends.
	inFlight atomic.Int64
}

// InFlight is how many fetches are running now.
func (r *Recorder) InFlight() int { return int(r.inFlight.Load()) }

// Add records one fetch.
func (r *Recorder) Add(f Fetch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetches = append(r.fetches, f)
}

// Between returns the fetches that began in [from, to).
func (r *Recorder) Between(from, to time.Time) []Fetch {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Fetch
	for _, f := range r.fetches {
		if !f.At.Before(from) && f.At.Before(to) {
			out = append(out, f)
		}
	}
	return out
}

// Load is the forge's load over a window, as the fleet saw it.
type Load struct {
	Window  time.Duration
	Fetches int
	Errors  int
	// FirstError is the text of the earliest failed fetch.
	FirstError string
	// Busiest is the most fetches that began in one second of the window.
	Busiest int
	// P50, P99 and Slowest are of the fetches that went through.
	P50, P99, Slowest  time.Duration
	PerSecond, ErrRate float64
}

// LoadOf sums up fetches made over a window of the given length: rate,
// the busiest second, the latency of the fetches that went through
// (nearest-rank percentiles) and the errors.
func LoadOf(fetches []Fetch, window time.Duration) Load {
	l := Load{Window: window, Fetches: len(fetches)}
	if len(fetches) == 0 || window <= 0 {
		return l
	}
	var took []time.Duration
	perSecond := map[int64]int{}
	first := time.Time{}
	for _, f := range fetches {
		perSecond[f.At.Unix()]++
		if f.Err == "" {
			took = append(took, f.Took)
			continue
		}
		l.Errors++
		if first.IsZero() || f.At.Before(first) {
			first, l.FirstError = f.At, f.Err
		}
	}
	for _, n := range perSecond {
		l.Busiest = max(l.Busiest, n)
	}
	l.PerSecond = float64(len(fetches)) / window.Seconds()
	l.ErrRate = float64(l.Errors) / float64(len(fetches))
	if len(took) > 0 {
		slices.Sort(took)
		l.P50, l.P99, l.Slowest = Percentile(took, 50), Percentile(took, 99), took[len(took)-1]
	}
	return l
}

// Percentile is the nearest-rank p-th percentile of sorted (not empty).
func Percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// String is the load as a table cell.
func (l Load) String() string {
	s := fmt.Sprintf("%d fetches in %s: %.1f/s (busiest second %d); p50 %s, p99 %s, slowest %s; %d errors",
		l.Fetches, l.Window.Round(time.Second), l.PerSecond, l.Busiest, ms(l.P50), ms(l.P99), ms(l.Slowest), l.Errors)
	if l.Errors > 0 {
		s += fmt.Sprintf(" (%.2f %%, first: %s)", 100*l.ErrRate, l.FirstError)
	}
	return s
}

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
