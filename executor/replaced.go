package executor

import (
	"time"

	"github.com/syslet/syslet/plan"
)

// Replaced is what became of one container the plan replaced (its
// UnitChange.Replacement): how, and how long it took. For a socket-held
// container Took is its restart job, from its queueing to the new
// container up, the old one stopped before it, while its socket stayed
// open; for a stop-start Took is how long its service was down: from its
// stop in step 2 being queued to its start in step 9 done, its port
// refusing connections all that while.
type Replaced struct {
	Unit    string `json:"unit"`
	Service string `json:"service"`
	plan.Replacement
	// Done says the replacement landed: the new container is up (as far
	// as its start job tells; the health gate judges it after).
	Done bool          `json:"done"`
	Took time.Duration `json:"took"`
	// StartFirst is what became of a start-first replacement's steps;
	// nil for the other strategies.
	StartFirst *StartFirst `json:"startFirst,omitempty"`
}

// StartFirst is how a start-first replacement went: how long the new slot
// took from its start to ready, whether the proxy switched to it, and how
// long the old slot took to drain. A new slot that was never ready was
// stopped before any switch (Discarded): it never took a request.
type StartFirst struct {
	Old       string        `json:"old,omitempty"` // the old slot's service
	Ready     time.Duration `json:"ready"`
	Switched  bool          `json:"switched"`
	Drained   time.Duration `json:"drained,omitempty"`
	Discarded bool          `json:"discarded,omitempty"`
}

// landing is when an action landed and how long it took, for the
// replacements (Result.Replaced).
type landing struct {
	at   time.Time
	took time.Duration
	ok   bool
}

// replaced lists what became of each container the plan replaced, in
// plan order, from when their actions landed.
func (e *run) replaced() []Replaced {
	type ends struct{ stop, up int }
	byService := map[string]*ends{}
	for _, u := range e.p.Units {
		if u.Replacement != nil {
			byService[u.Service] = &ends{stop: -1, up: -1}
		}
	}
	if len(byService) == 0 {
		return nil
	}
	for i, a := range e.p.Actions {
		x := byService[a.Target]
		switch {
		case x == nil:
		case a.Op == plan.OpStop:
			x.stop = i
		case a.Op == plan.OpStart || a.Op == plan.OpRestart:
			x.up = i
		}
	}
	var out []Replaced
	for _, u := range e.p.Units {
		if u.Replacement == nil || u.Effect == plan.EffectRetire {
			// A retired slot is told with the slot that replaces it.
			continue
		}
		if u.Replacement.Strategy == plan.StrategyStartFirst {
			out = append(out, e.startFirst(u))
			continue
		}
		r := Replaced{Unit: u.FileName, Service: u.Service, Replacement: *u.Replacement}
		x := byService[u.Service]
		if x.up >= 0 && e.reached[x.up] && e.landed[x.up].ok {
			r.Done = true
			end := e.landed[x.up].at
			begin := end.Add(-e.landed[x.up].took)
			if x.stop >= 0 && e.reached[x.stop] {
				begin = e.landed[x.stop].at.Add(-e.landed[x.stop].took)
			}
			r.Took = end.Sub(begin)
		}
		out = append(out, r)
	}
	return out
}

// startFirst is what became of the start-first replacement of u (the new
// slot's unit), from when its start and its switch's ops landed.
func (e *run) startFirst(u plan.UnitChange) Replaced {
	r := Replaced{Unit: u.FileName, Service: u.Service, Replacement: *u.Replacement, StartFirst: &StartFirst{}}
	sf := r.StartFirst
	var begin time.Time
	for i, a := range e.p.Actions {
		if !e.reached[i] {
			continue
		}
		l := e.landed[i]
		sw := a.Data().Switch
		switch {
		case a.Op == plan.OpStart && a.Target == u.Service:
			begin = l.at.Add(-l.took)
		case sw == nil || sw.NewService != u.Service:
		case a.Op == plan.OpAwaitReady:
			sf.Old = sw.OldService
			if !begin.IsZero() {
				sf.Ready = l.at.Sub(begin)
			}
			sf.Discarded = !l.ok
		case a.Op == plan.OpSwitch:
			sf.Switched = l.ok
			r.Done = l.ok
			if !begin.IsZero() {
				r.Took = l.at.Sub(begin)
			}
		case a.Op == plan.OpDrain && l.ok:
			sf.Drained = l.took
		}
	}
	return r
}
