package queue

import (
	"slices"
	"sync"
)

// push is one request to deploy a commit: a forge's push, a poll that
// found the branch moved, a registry's push of an image, a reconcile.
type push struct {
	commit  string
	trigger string
	force   bool // a reconcile: replace hand edits
	// update are the registry references whose push this deploy updates
	// (the daemon's POST /registry); a git push has none.
	update []string
	// resumed: the deploy a kill cut short, deployed again at the start
	// even outside the windows (it began inside one).
	resumed bool
}

// maxPending bounds the pushes remembered between deploys; past it the
// oldest is dropped (the newest one is what gets deployed anyway).
const maxPending = 64

// pushQueue holds the pushes that wait for the repository's next attempt,
// which takes them all at once and deploys the newest (coalescing). Its
// lock guards the queue alone and is never held across anything else.
type pushQueue struct {
	mu      sync.Mutex
	pending []push
	// taken: an attempt holds a batch and has not finished it; a push
	// now waits for the follow-up attempt.
	taken bool
}

// add queues p; it reports whether an attempt is running (p then waits
// for the follow-up attempt).
func (q *pushQueue) add(p push) (busy bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, o := range q.pending {
		if o.commit == p.commit {
			// The same commit again: one deploy, which still updates what
			// the dropped one was to.
			p.update = mergeUpdates(o.update, p.update)
			q.pending = slices.Delete(q.pending, i, i+1)
			break
		}
	}
	if len(q.pending) == maxPending {
		q.pending = q.pending[1:]
	}
	q.pending = append(q.pending, p)
	return q.taken
}

// take hands every queued push to a new attempt (nil when none waits);
// outside the repository's windows (!open) only a resumed deploy, the
// others staying queued.
func (q *pushQueue) take(open bool) []push {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch, rest []push
	for _, p := range q.pending {
		if open || p.resumed {
			batch = append(batch, p)
		} else {
			rest = append(rest, p)
		}
	}
	if len(batch) == 0 {
		return nil
	}
	q.pending, q.taken = rest, true
	return batch
}

// done: the attempt that took the last batch finished.
func (q *pushQueue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.taken = false
}

// waiting is the newest queued commit and how many pushes wait.
func (q *pushQueue) waiting() (newest string, n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return "", 0
	}
	return q.pending[len(q.pending)-1].commit, len(q.pending)
}

// mergeUpdates is a and b's references, each once.
func mergeUpdates(a, b []string) []string {
	out := slices.Clone(a)
	for _, r := range b {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
