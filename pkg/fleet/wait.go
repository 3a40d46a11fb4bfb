package fleet

import (
	"context"
	"errors"
	"time"
)

// State is what a host said of a commit.
type State int

const (
	// Pending: the host has said nothing final of the commit yet (or
	// nothing at all: it is missing).
	Pending State = iota
	// Success: the host runs the commit and it passed its health gate.
	Success
	// Failure: the host failed on the commit or rolled back from it.
	Failure
)

// Report is one host's word on a commit.
type Report struct {
	State State
	// Word is the source's own word: the forge's state, webhookd's last
	// result.
	Word string
	// Description is the forge's description of the status, if any.
	Description string
}

// Reader reads what each host says of commit, by host; a host that has
// said nothing is absent.
type Reader interface {
	Read(ctx context.Context, commit string) (map[string]Report, error)
}

// Watch is how Wait polls and what it tells on the way.
type Watch struct {
	Every time.Duration
	// Changed hears a host's report when it is first seen and whenever it
	// changes.
	Changed func(host string, r Report)
	// Retrying hears a read that failed and will be tried again.
	Retrying func(error)
}

// Result is what Wait found at its last read.
type Result struct {
	Verdict Verdict // Undecided: the wait ran out
	// Last holds the selected hosts' reports; a host that said nothing is
	// absent.
	Last map[string]Report
	// Succeeded, Failed and Waiting are the hosts by state, in the order
	// given (Waiting includes the hosts that said nothing).
	Succeeded, Failed, Waiting []string
	// Err is the last read's error, when the wait ran out while the
	// source did not answer.
	Err error
}

// Wait reads the hosts' reports on commit until need of them succeeded
// (Met), too many failed for need to be reachable (Unreachable, at once:
// it does not wait for the others), or ctx ends (Undecided). A read
// refused for good is returned as the error; one that may pass (no
// answer, a 5xx, rate limiting) is tried again at the next poll.
func Wait(ctx context.Context, r Reader, commit string, hosts []string, need int, w Watch) (Result, error) {
	if len(hosts) == 0 {
		return Result{}, errors.New("no host to wait for")
	}
	seen := map[string]Report{}
	var res Result
	for {
		all, err := r.Read(ctx, commit)
		switch {
		case err != nil && ctx.Err() != nil:
			return res, nil
		case err != nil && !temporary(err):
			return res, err
		case err != nil:
			res.Err = err
			if w.Retrying != nil {
				w.Retrying(err)
			}
		default:
			res = tally(all, hosts)
			for _, h := range hosts {
				rep, ok := res.Last[h]
				if old, was := seen[h]; ok && (!was || old != rep) && w.Changed != nil {
					w.Changed(h, rep)
				}
				if ok {
					seen[h] = rep
				}
			}
			if res.Verdict = Decide(need, len(hosts), len(res.Succeeded), len(res.Failed)); res.Verdict != Undecided {
				return res, nil
			}
		}
		t := time.NewTimer(w.Every)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, nil
		case <-t.C:
		}
	}
}

// tally sorts hosts by their report in all.
func tally(all map[string]Report, hosts []string) Result {
	res := Result{Last: map[string]Report{}}
	for _, h := range hosts {
		rep, ok := all[h]
		if ok {
			res.Last[h] = rep
		}
		switch {
		case ok && rep.State == Success:
			res.Succeeded = append(res.Succeeded, h)
		case ok && rep.State == Failure:
			res.Failed = append(res.Failed, h)
		default:
			res.Waiting = append(res.Waiting, h)
		}
	}
	return res
}

// temporary reports whether err is a read worth trying again: the
// source's error says so.
func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}
