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
		if u.Replacement == nil {
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
