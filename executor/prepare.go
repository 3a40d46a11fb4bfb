package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
)

// Preparing and the undo. Before step 2 stops anything, every file write
// of the plan is prepared: its bytes written next to the target and
// fsynced (Files.PrepareFile, PrepareDir, PrepareLink). A write that
// cannot be prepared — a full disk, a read-only tree — ends the run there,
// with everything prepared removed again: nothing was stopped or replaced.
// Steps 3 and 4 then only swap (rename) what was prepared into place.
// When the run fails before step 5 — a stop that does not finish, a swap
// or secret that fails, the journal that cannot be written — it puts back
// the files it swapped in and starts again what step 2 stopped, so the
// host keeps serving what it served; from step 5 on the writes are
// settled (what they replaced let go) and a failure leaves the host as it
// is, for the next run (and the health gate's rollback) to finish.

// prepare prepares every file write of the plan, up to writeWorkers at
// once. When any cannot be prepared, everything prepared is removed again,
// the writes that failed land (journalled, reported as failed), and
// prepare returns the first failure, which ends the run.
func (e *run) prepare() error {
	var writes []int
	for i, a := range e.p.Actions {
		if fileWrites[a.Op] {
			writes = append(writes, i)
		}
	}
	var failed []Landed
	e.prepared, failed = e.prepareAll(writes)
	if len(failed) == 0 {
		return nil
	}
	u := &Undo{}
	e.discard(u, nil)
	e.res.Undo = u
	slices.SortFunc(failed, byIndex)
	jerr := e.land(failed...)
	for _, l := range failed {
		e.result(l.Index, l.Err, nil)
	}
	if jerr != nil {
		return jerr
	}
	return failed[0].Err
}

// prepareAll prepares the file writes at idx side by side and starts no
// more once one has failed. It returns what it prepared, by action index,
// and the writes that failed.
func (e *run) prepareAll(idx []int) (map[int]Prepared, []Landed) {
	var (
		mu       sync.Mutex
		prepared = make(map[int]Prepared, len(idx))
		failed   []Landed
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, writeWorkers)
	for _, i := range idx {
		mu.Lock()
		quit := len(failed) > 0
		mu.Unlock()
		if quit {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t0 := time.Now()
			s, err := e.prepareOne(e.p.Actions[i])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, Landed{Index: i, Action: e.p.Actions[i], Err: err, Took: time.Since(t0)})
				return
			}
			prepared[i] = s
		})
	}
	wg.Wait()
	return prepared, failed
}

// discard removes every prepared write not swapped in, counting them in
// u, and forgets all preparations.
func (e *run) discard(u *Undo, swapped map[int]bool) {
	for i, s := range e.prepared {
		if swapped[i] {
			continue
		}
		if err := s.Undo(); err != nil {
			u.Errors = append(u.Errors, err.Error())
		}
		u.Discarded++
	}
	e.prepared = map[int]Prepared{}
}

// prepareOne prepares one file write.
func (e *run) prepareOne(a plan.Action) (Prepared, error) {
	d := a.Data()
	switch a.Op {
	case plan.OpWriteFile, plan.OpWriteUnit:
		return e.h.Files.PrepareFile(a.Target, d.Content, d.Mode)
	case plan.OpWriteDir:
		return e.h.Files.PrepareDir(a.Target, d.Files)
	case plan.OpLinkUnit:
		return e.h.Files.PrepareLink(a.Target, d.Link)
	}
	return nil, fmt.Errorf("%s is not a file write", a.Op)
}

// swap puts the preparation of action i in place.
func (e *run) swap(i int) error {
	s := e.prepared[i]
	if s == nil {
		a := e.p.Actions[i]
		return fmt.Errorf("%s %s was not prepared", a.Op, a.Target)
	}
	e.mu.Lock()
	e.swapped = append(e.swapped, i)
	e.mu.Unlock()
	return s.Swap()
}

// settle lets go of what the swaps replaced (and removes anything
// prepared but never swapped): the run is past the point where it would
// put the host back. Failing to remove a backup only leaves a leftover for
// the next apply to remove.
func (e *run) settle() {
	if e.settled {
		return
	}
	e.settled = true
	for i, s := range e.prepared {
		if err := s.Settle(); err != nil {
			e.log.Warn().Err(err).Int("action", i).Msg("leaving a temporary file for the next apply to remove")
		}
	}
	e.prepared = map[int]Prepared{}
}

// finish settles the prepared writes when the run ends: a run that failed
// before step 5 (not one interrupted on purpose, which the next run
// resumes) is undone; any other settles them.
func (e *run) finish(ctx context.Context, stopErr error) {
	if stopErr == nil || errors.Is(stopErr, ErrInterrupted) || e.settled {
		e.settle()
		return
	}
	e.undo(ctx)
	e.settled = true
}

// undo puts back the files the run swapped in, removes what it prepared
// and did not swap, and starts again the services step 2 stopped that
// were running before the run.
func (e *run) undo(ctx context.Context) {
	u := e.res.Undo
	if u == nil {
		u = &Undo{}
	}
	swapped := e.putBack(u)
	e.discard(u, swapped)
	e.startAgain(ctx, u)
	for _, a := range e.res.Applied {
		if a.Op == plan.OpCreateSecret {
			u.Kept = append(u.Kept, a.Target)
		}
	}
	if u.Discarded > 0 || len(u.Files) > 0 || len(u.Started) > 0 || len(u.Errors) > 0 || len(u.Kept) > 0 {
		e.res.Undo = u
	}
}

// putBack undoes the swaps, last first: what was put back is no longer
// applied but listed in u.Files, and the journal hears it. It returns
// the indexes whose Swap had been called.
func (e *run) putBack(u *Undo) map[int]bool {
	swapped := map[int]bool{}
	var put []Landed
	for k := len(e.swapped) - 1; k >= 0; k-- {
		i := e.swapped[k]
		swapped[i] = true
		if err := e.prepared[i].Undo(); err != nil {
			u.Errors = append(u.Errors, err.Error())
			continue
		}
		a := e.p.Actions[i]
		if applied := slices.IndexFunc(e.res.Applied, func(b plan.Action) bool { return b.Op == a.Op && b.Target == a.Target }); applied >= 0 {
			e.res.Applied = slices.Delete(e.res.Applied, applied, applied+1)
			u.Files = append(u.Files, a)
			put = append(put, Landed{Index: i, Action: a})
		}
	}
	if e.opts.Recorder != nil && len(put) > 0 {
		if err := e.opts.Recorder.ActionsUndone(put); err != nil {
			u.Errors = append(u.Errors, fmt.Sprintf("journalling what was put back: %v", err))
		}
	}
	for _, l := range put {
		e.log.Warn().Int("step", int(l.Action.Step)).Str("op", string(l.Action.Op)).Str("target", l.Action.Target).Msg("put back")
	}
	return swapped
}

// startAgain starts the services the run stopped that were running
// before it, as one batch.
func (e *run) startAgain(ctx context.Context, u *Undo) {
	names := e.stoppedRunning()
	if len(names) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	e.h.Systemd.Jobs(cctx, host.JobStart, names, func(k int, err error) {
		if err != nil {
			u.Errors = append(u.Errors, fmt.Sprintf("starting %s again: %v", names[k], err))
			e.log.Error().Err(err).Str("target", names[k]).Msg("not started again")
			return
		}
		u.Started = append(u.Started, names[k])
		e.log.Warn().Str("target", names[k]).Msg("started again")
	})
	slices.Sort(u.Started)
}

// stoppedRunning lists the services the run's stops reached (landed or
// failed) that were running before the run, in plan order.
func (e *run) stoppedRunning() []string {
	before := map[string]string{}
	for _, u := range e.p.Units {
		before[u.Service] = u.Before
	}
	var names []string
	for i, a := range e.p.Actions {
		if a.Op != plan.OpStop || !e.reached[i] || slices.Contains(names, a.Target) {
			continue
		}
		switch before[a.Target] {
		case "active", "reloading", "activating":
			names = append(names, a.Target)
		}
	}
	return names
}
