package notify

import (
	"context"
	"errors"
	"fmt"
)

// Notifier sends events to its targets, each through its own Queue: Send
// never blocks and never fails; what came of each delivery goes to the
// done function given to New.
type Notifier struct {
	targets []*Target
	queues  []*Queue
	done    func(Result)
}

// New starts a queue per target. done (may be nil) hears every result,
// from the queues' goroutines, so it must be safe for concurrent use.
func New(targets []*Target, done func(Result)) *Notifier {
	if done == nil {
		done = func(Result) {}
	}
	n := &Notifier{targets: targets, done: done}
	for _, t := range targets {
		n.queues = append(n.queues, NewQueue(t.name, t.retry, done))
	}
	return n
}

// Targets are the notifier's targets.
func (n *Notifier) Targets() []*Target {
	if n == nil {
		return nil
	}
	return n.targets
}

// Send queues ev for every target that wants its kind. The event's id,
// time and version are filled in here when empty, and its content bounded.
func (n *Notifier) Send(ev Event) {
	if n == nil {
		return
	}
	ev.normalize()
	for i, t := range n.targets {
		if !t.Wants(ev.Event) {
			continue
		}
		j, err := t.job(&ev)
		if err != nil {
			n.done(Result{Target: t.name, Event: string(ev.Event), Outcome: OutcomeFailed, Err: fmt.Errorf("formatting the event: %w", err)})
			continue
		}
		n.queues[i].Post(j)
	}
}

// Close delivers what is queued until ctx is done, then drops the rest
// (each drop reported). It returns ctx's error when something was left.
func (n *Notifier) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	errc := make(chan error, len(n.queues))
	for _, q := range n.queues {
		go func() { errc <- q.Close(ctx) }()
	}
	var errs []error
	for range n.queues {
		if err := <-errc; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// ErrNoTargets is what a test send says when nothing is configured.
var ErrNoTargets = errors.New("no notification targets are configured")
