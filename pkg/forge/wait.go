package forge

import (
	"context"
	"errors"
	"time"
)

// Reader reads a commit's statuses: the latest of each context. Client
// reads them from a forge.
type Reader interface {
	Statuses(ctx context.Context, commit string) (map[string]Status, error)
}

// Outcome is how waiting on a commit's statuses ended.
type Outcome int

const (
	// Succeeded: every named context is success.
	Succeeded Outcome = iota + 1
	// Failed: a named context is in a final state other than success.
	Failed
	// StillPending: the wait ran out (its context ended) with a named
	// context still pending or not there at all.
	StillPending
)

// Watch is how Wait polls and what it tells on the way.
type Watch struct {
	// Every is the time between two reads.
	Every time.Duration
	// Changed hears each named context's status when it is first seen
	// and whenever its state or description changes.
	Changed func(Status)
	// Retrying hears a read that failed and will be tried again.
	Retrying func(error)
}

// Result is what Wait found.
type Result struct {
	Outcome Outcome
	// Last holds the named contexts' statuses at the last read; a context
	// the forge has no status for is absent.
	Last map[string]Status
	// Failed is the named context found failed (the first of them in the
	// order given).
	Failed string
	// Err is the last read's error, when the wait ran out while the forge
	// did not answer.
	Err error
}

// Wait reads commit's statuses until every context in contexts is
// success, or one of them has failed (it does not wait for the others),
// or ctx ends. A read the forge refuses for good (a bad token, no such
// repository or commit) is returned as the error; one that may pass (no
// answer, a 5xx, rate limiting) is tried again at the next poll.
func Wait(ctx context.Context, r Reader, commit string, contexts []string, w Watch) (Result, error) {
	if len(contexts) == 0 {
		return Result{}, errors.New("no status context to wait for")
	}
	seen := map[string]Status{}
	res := Result{Last: map[string]Status{}}
	for {
		all, err := r.Statuses(ctx, commit)
		switch {
		case err != nil && ctx.Err() != nil:
			res.Outcome = StillPending
			return res, nil
		case err != nil && !Temporary(err):
			return res, err
		case err != nil:
			res.Err = err
			if w.Retrying != nil {
				w.Retrying(err)
			}
		default:
			res.Err = nil
			res.Last = map[string]Status{}
			done := true
			for _, name := range contexts {
				s, ok := all[name]
				if !ok {
					done = false
					continue
				}
				res.Last[name] = s
				if old, ok := seen[name]; (!ok || old.State != s.State || old.Word != s.Word || old.Description != s.Description) && w.Changed != nil {
					w.Changed(s)
				}
				seen[name] = s
				switch s.State {
				case Failure:
					if res.Failed == "" {
						res.Failed = name
					}
				case Pending:
					done = false
				}
			}
			if res.Failed != "" {
				res.Outcome = Failed
				return res, nil
			}
			if done {
				res.Outcome = Succeeded
				return res, nil
			}
		}
		t := time.NewTimer(w.Every)
		select {
		case <-ctx.Done():
			t.Stop()
			res.Outcome = StillPending
			return res, nil
		case <-t.C:
		}
	}
}
