package push

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Strategy is how a rollout goes through its targets: in batches, each
// started only while the failures so far stay within a budget, with a
// pause and a second look at each batch before the next one starts.
type Strategy struct {
	// Batches are the successive batch sizes, the last one repeating;
	// none puts every target in one batch.
	Batches []Size
	// MaxFailed, when set, is how many hosts may fail (fail, roll back,
	// refuse a stale plan, be unreachable…) before no further host is
	// started; nil sets no limit.
	MaxFailed *Size
	// Pause is the wait after each batch but the last. After it the
	// batch's hosts are looked at again, read-only, with StatusCommand
	// and DiffCommand (see Check); a host that fell over counts as failed.
	Pause time.Duration
	// StatusCommand prints a host's service health as JSON (host.Health
	// Report); it is run right after the host's command and again after
	// the pause. DiffCommand plans the same stream again with
	// --detailed-exitcode: after the pause it must exit 0 (nothing to
	// change, no unit edited by hand), not 3.
	StatusCommand, DiffCommand string
}

// Report is what a rollout did.
type Report struct {
	// Results has one entry per job, in job order.
	Results []Result
	// Batches is the number of batches the targets were split into.
	Batches int
	// Stop says why hosts were left unreached; nil when every host had
	// its turn.
	Stop *Stop
	// LastEnded is when the last host's work (its command, or the check
	// after a pause) ended.
	LastEnded time.Time
}

// Stop is why a rollout ended before its last batch, or its last host.
type Stop struct {
	// Batch is the batch it stopped in (or, after a pause, after).
	Batch int
	// Interrupted: a signal stopped it (during a batch or a pause).
	Interrupted bool
	// AfterPause: it stopped at the end of the pause after Batch.
	AfterPause bool
	// Host is the host whose failure went over the budget, Outcome its
	// outcome and Why the host's own reason (its syslet's verdict, the
	// error, or what the check after the pause found).
	Host    string
	Outcome Ending
	Why     string
	// Failed is how many hosts had failed then, Allowed the budget.
	Failed, Allowed int
}

// String is the stop as the text says it: the host's reason is its line
// in the table, above the stop's, so it is not said again (Message has it).
func (s *Stop) String() string { return s.sentence("") }

// Message is the stop in one sentence with the host's reason, for the
// JSON document.
func (s *Stop) Message() string { return s.sentence(s.Why) }

func (s *Stop) sentence(why string) string {
	if s.Interrupted {
		if s.AfterPause {
			return fmt.Sprintf("interrupted during the pause after batch %d", s.Batch)
		}
		return fmt.Sprintf("interrupted during batch %d", s.Batch)
	}
	when := fmt.Sprintf("in batch %d", s.Batch)
	if s.AfterPause {
		when = fmt.Sprintf("after the pause that followed batch %d", s.Batch)
	}
	if why != "" {
		when += " (" + why + ")"
	}
	return fmt.Sprintf("%s %s %s; %d host(s) failed, more than the %d allowed", s.Host, s.Outcome, when, s.Failed, s.Allowed)
}

// errStopped is the cause given to hosts a stopped rollout never reached.
var errStopped = errors.New("the rollout stopped before this host's turn")

// Rollout deploys the jobs batch by batch, in job order. Within a batch at
// most o.Parallel hosts run at once. Once more hosts than s.MaxFailed
// allows have failed, no further host is started, in this batch or a
// later one: they are NotReached, and no connection is ever opened to
// them. Cancelling ctx (an interrupt) does the same; hosts already started
// run to the end (see Options.Abort).
func Rollout(ctx context.Context, jobs []Job, o Options, s Strategy) Report {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	sizes := Batches(len(jobs), s.Batches)
	r := &rollout{jobs: jobs, o: o, s: s, allowed: -1,
		rep: Report{Results: make([]Result, len(jobs)), Batches: len(sizes)}}
	if s.MaxFailed != nil {
		r.allowed = s.MaxFailed.Of(len(jobs))
	}
	for _, j := range jobs {
		r.width = max(r.width, len(j.Target.Arg))
	}
	first := 0
	for b, n := range sizes {
		batch, idx := b+1, indexes(first, n)
		first += n
		if r.rep.Stop != nil {
			r.notReached(idx, batch, r.stopCause())
			continue
		}
		if len(sizes) > 1 {
			r.logf("batch %d of %d: %s", batch, len(sizes), r.names(idx))
		}
		probe := ""
		if s.Pause > 0 && batch < len(sizes) {
			probe = s.StatusCommand
		}
		r.runBatch(ctx, batch, idx, probe)
		if r.rep.Stop == nil && ctx.Err() != nil {
			r.rep.Stop = &Stop{Batch: batch, Interrupted: true}
		}
		if r.rep.Stop != nil || batch == len(sizes) || s.Pause <= 0 {
			continue
		}
		r.logf("batch %d done; pausing %s before looking at %s again (Ctrl-C stops the rollout here)", batch, s.Pause, r.names(idx))
		select {
		case <-time.After(s.Pause):
		case <-ctx.Done():
			r.rep.Stop = &Stop{Batch: batch, Interrupted: true, AfterPause: true}
			continue
		}
		r.checkBatch(batch, idx)
	}
	if st := r.rep.Stop; st != nil {
		r.logf("rollout stopped: %s", st)
	}
	return r.rep
}

// rollout is one Rollout in progress.
type rollout struct {
	jobs    []Job
	o       Options
	s       Strategy
	width   int
	allowed int // -1: no limit

	mu     sync.Mutex // guards rep and failed while hosts run
	rep    Report
	failed int
	outMu  sync.Mutex // one line of output at a time
}

func indexes(first, n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = first + i
	}
	return idx
}

func (r *rollout) names(idx []int) string {
	var names []string
	for _, i := range idx {
		names = append(names, r.jobs[i].Target.Arg)
	}
	if len(names) > 10 {
		return fmt.Sprintf("%s … %s (%d hosts)", strings.Join(names[:3], ", "), names[len(names)-1], len(names))
	}
	return strings.Join(names, ", ")
}

func (r *rollout) logf(format string, args ...any) {
	if r.o.Log == nil {
		return
	}
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(r.o.Log, "syslet push: "+format+"\n", args...)
}

// runBatch runs the batch's hosts, at most o.Parallel at once, and stops
// starting them once the rollout stops or ctx is cancelled.
func (r *rollout) runBatch(ctx context.Context, batch int, idx []int, probe string) {
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, r.o.Parallel)
	var wg sync.WaitGroup
	for k, i := range idx {
		select {
		case sem <- struct{}{}:
		case <-bctx.Done():
		}
		if bctx.Err() != nil {
			r.notReached(idx[k:], batch, context.Cause(bctx))
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			prefix := fmt.Sprintf("%-*s | ", r.width, r.jobs[i].Target.Arg)
			res := runOne(r.jobs[i], r.o, &r.outMu, prefix, probe)
			res.Batch = batch
			if r.record(i, res, false) {
				cancel(errStopped)
			}
		}()
	}
	wg.Wait()
}

// record keeps a host's result and counts it; it reports whether that
// failure went over the budget and stopped the rollout.
func (r *rollout) record(i int, res Result, afterPause bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Results[i] = res
	if end := res.Started.Add(res.Duration); end.After(r.rep.LastEnded) {
		r.rep.LastEnded = end
	}
	if res.OK() {
		return false
	}
	r.failed++
	if r.allowed < 0 || r.failed <= r.allowed || r.rep.Stop != nil {
		return false
	}
	r.rep.Stop = &Stop{Batch: res.Batch, AfterPause: afterPause, Host: res.Target.Arg, Outcome: res.Ending, Why: res.Reason(),
		Failed: r.failed, Allowed: r.allowed}
	return true
}

func (r *rollout) stopCause() error {
	if st := r.rep.Stop; st != nil && st.Interrupted {
		return errors.New("interrupted before this host's turn")
	}
	return errStopped
}

func (r *rollout) notReached(idx []int, batch int, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, i := range idx {
		r.rep.Results[i] = Result{Target: r.jobs[i].Target, Ending: Ending{Own: NotReached}, ExitCode: -1, Err: cause, Batch: batch}
	}
}

// checkBatch looks again at the batch's hosts that succeeded, at most
// o.Parallel at once, and counts those that fell over as failed, in job
// order.
func (r *rollout) checkBatch(batch int, idx []int) {
	checks := make([]*Check, len(r.jobs))
	sem := make(chan struct{}, r.o.Parallel)
	var wg sync.WaitGroup
	for _, i := range idx {
		if !r.rep.Results[i].OK() {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			checks[i] = checkHost(r.jobs[i], r.o, r.s, r.rep.Results[i].baseline)
		}()
	}
	wg.Wait()
	var fell []string
	for _, i := range idx {
		c := checks[i]
		if c == nil {
			continue
		}
		res := r.rep.Results[i]
		res.Check = c
		if end := c.Started.Add(c.Took); end.After(r.rep.LastEnded) {
			r.rep.LastEnded = end
		}
		if len(c.Problems) > 0 {
			res.Fail(fmt.Errorf("after the %s pause: %s", r.s.Pause, strings.Join(c.Problems, "; ")))
			fell = append(fell, res.Target.Arg)
		}
		r.record(i, res, true)
	}
	if len(fell) == 0 {
		r.logf("after the pause: %s still up, unrestarted and unchanged", r.names(idx))
	} else {
		r.logf("after the pause: %s fell over", strings.Join(fell, ", "))
	}
}
