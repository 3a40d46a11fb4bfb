package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Retry bounds the delivery of one job.
type Retry struct {
	Attempts int           // tries in all (at least 1)
	Timeout  time.Duration // bound on one try
	Backoff  time.Duration // wait before the second try; doubled before each later one
}

// Defaults of a target's retry policy.
var DefaultRetry = Retry{Attempts: 3, Timeout: 5 * time.Second, Backoff: time.Second}

// QueueSize is how many jobs wait for one target at most; past it a new
// job is dropped (and reported so): a target that is down must not make
// its caller hold on to ever more events.
const QueueSize = 100

// Outcomes of a job, as Result.Outcome and the metrics' "result" label
// say them.
const (
	OutcomeSent    = "sent"
	OutcomeFailed  = "failed"  // every attempt failed, or one failed for good (HTTP 4xx, SMTP 5xx)
	OutcomeDropped = "dropped" // never tried: the queue was full, or closed before its turn
)

// Job is one delivery: Do is tried until it returns nil, a permanent
// error, or the attempts are spent.
type Job struct {
	Event string // what it delivers, for the Result
	Do    func(ctx context.Context) error
}

// Result is what came of one job.
type Result struct {
	Target   string
	Event    string
	Outcome  string
	Attempts int
	Took     time.Duration
	Err      error // the last attempt's error; nil when sent
}

// permanent marks an error that retrying cannot fix.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// Permanent marks err as one that retrying cannot fix (a refused request).
func Permanent(err error) error { return permanent{err} }

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Queue delivers jobs for one target in the order they were posted, one
// at a time, on its own goroutine: posting never blocks, and a target
// that hangs or is down delays only its own later jobs.
type Queue struct {
	name  string
	retry Retry
	done  func(Result)

	mu     sync.Mutex
	closed bool
	ch     chan Job

	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc
	over   chan struct{} // closed when the worker has finished
}

// NewQueue starts a target's queue; done (if not nil) hears every
// job's result, on the queue's goroutine.
func NewQueue(name string, r Retry, done func(Result)) *Queue {
	if r.Attempts < 1 {
		r.Attempts = 1
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultRetry.Timeout
	}
	if done == nil {
		done = func(Result) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &Queue{name: name, retry: r, done: done, ch: make(chan Job, QueueSize), ctx: ctx, cancel: cancel, over: make(chan struct{})}
	go q.work()
	return q
}

// Post queues j; it never blocks. A full or closed queue drops it.
func (q *Queue) Post(j Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		select {
		case q.ch <- j:
			return
		default:
		}
	}
	q.done(Result{Target: q.name, Event: j.Event, Outcome: OutcomeDropped, Err: errors.New("the queue is full or closed")})
}

// Close takes no more jobs and waits, until ctx is done, for the queued
// ones to be delivered; then it abandons the one in progress and drops
// the rest (each reported). It returns ctx's error when it gave up.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
	q.mu.Unlock()
	select {
	case <-q.over:
		return nil
	case <-ctx.Done():
	}
	q.cancel()
	<-q.over
	return ctx.Err()
}

func (q *Queue) work() {
	defer close(q.over)
	for j := range q.ch {
		if q.ctx.Err() != nil {
			q.done(Result{Target: q.name, Event: j.Event, Outcome: OutcomeDropped, Err: errors.New("not sent before the program ended")})
			continue
		}
		q.done(q.deliver(j))
	}
}

func (q *Queue) deliver(j Job) Result {
	start := time.Now()
	res := Result{Target: q.name, Event: j.Event}
	wait := q.retry.Backoff
	for res.Attempts < q.retry.Attempts {
		res.Attempts++
		actx, cancel := context.WithTimeout(q.ctx, q.retry.Timeout)
		err := j.Do(actx)
		timedOut := actx.Err() == context.DeadlineExceeded
		cancel()
		if err == nil {
			res.Outcome, res.Err, res.Took = OutcomeSent, nil, time.Since(start)
			return res
		}
		if timedOut {
			err = fmt.Errorf("no answer within %s: %w", q.retry.Timeout, err)
		}
		res.Err = err
		if IsPermanent(err) || q.ctx.Err() != nil || res.Attempts == q.retry.Attempts {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-q.ctx.Done():
		}
		t.Stop()
		wait *= 2
	}
	res.Outcome, res.Took = OutcomeFailed, time.Since(start)
	return res
}
