package deploy

import (
	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// recorder writes the executor's progress into the run journal.
type recorder struct{ run *runlog.Run }

func (r recorder) StepBegins(s plan.Step) error { return r.run.Step(int(s)) }

// ActionsLanded journals landed actions with one fsync.
func (r recorder) ActionsLanded(ls []executor.Landed) error {
	out := make([]runlog.Landed, len(ls))
	for k, l := range ls {
		res, msg := runlog.ResultOK, ""
		if l.Err != nil {
			res, msg = runlog.ResultFailed, l.Err.Error()
		}
		out[k] = runlog.Landed{Action: journalAction(l.Index, l.Action), Result: res, Error: msg, Took: l.Took, Backup: l.Backup}
	}
	return r.run.Actions(out)
}

// ActionsUndone journals the file writes a failed run put back.
func (r recorder) ActionsUndone(ls []executor.Landed) error {
	out := make([]runlog.Landed, len(ls))
	for k, l := range ls {
		out[k] = runlog.Landed{Action: journalAction(l.Index, l.Action), Result: runlog.ResultUndone}
	}
	return r.run.Actions(out)
}

func journalAction(i int, a plan.Action) runlog.Action {
	d := a.Data()
	return runlog.Action{Index: i, Step: int(a.Step), Op: string(a.Op), Target: a.Target, Unit: a.Unit, Digest: d.Digest, Carried: a.Carried, NoBackup: d.NoBackup, Backup: d.Backup}
}

func journalActions(p *plan.Plan) []runlog.Action {
	out := make([]runlog.Action, len(p.Actions))
	for i, a := range p.Actions {
		out[i] = journalAction(i, a)
	}
	return out
}

// unfinished turns the journal's last run that may have changed the host
// into what the planner carries forward: nothing when it ended well or
// changed nothing. Refused runs changed nothing and are looked past, so a
// refusal between an interrupted run and the next never loses what the
// interrupted run left undone.
func unfinished(runs []*runlog.RunInfo) *plan.Unfinished {
	last := lastChange(runs)
	if last == nil || !last.LeftWorkUndone() {
		return nil
	}
	u := &plan.Unfinished{Run: last.ID(), Started: last.Intent.Time, PutBack: last.End != nil && last.End.PutBack}
	for _, a := range last.Unfinished() {
		pa := plan.Action{Step: plan.Step(a.Step), Op: plan.Op(a.Op), Target: a.Target, Unit: a.Unit}
		if pa.Op == plan.OpImportVolume && a.Backup == "" {
			a.Backup, a.Digest = exported(last, a.Target)
		}
		if a.Digest != "" || a.NoBackup || a.Backup != "" {
			pa.Payload = &plan.Payload{Digest: a.Digest, NoBackup: a.NoBackup, Backup: a.Backup}
		}
		u.Actions = append(u.Actions, pa)
	}
	if len(u.Actions) == 0 {
		return nil
	}
	return u
}

// exported is the backup, and its sha256, that run took of volume before
// it deleted it ("" when it took none): what an import carrying the
// volume's data over (plan's carry.go) brings in, once that run is over.
func exported(run *runlog.RunInfo, volume string) (file, digest string) {
	for _, a := range run.Actions {
		if plan.Op(a.Op) == plan.OpDeleteVolume && a.Target == volume && a.Result == runlog.ResultOK && a.Backup != nil {
			file, digest = a.Backup.File, a.Backup.SHA256
		}
	}
	return file, digest
}

// writtenByUnfinished collects, from runs that did not end well, the
// content digests of the files they were writing. A run stopped between
// writing config files (step 3) and the unit files that record their
// digests (step 4) leaves files whose content no marker records yet; the
// plan must not take syslet's own half-finished work for a hand edit.
func writtenByUnfinished(runs []*runlog.RunInfo) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, r := range runs {
		if !r.LeftWorkUndone() {
			continue
		}
		for _, a := range r.Intent.Actions {
			if plan.Op(a.Op) != plan.OpWriteFile || a.Digest == "" {
				continue
			}
			if out[a.Target] == nil {
				out[a.Target] = map[string]bool{}
			}
			out[a.Target][a.Digest] = true
		}
	}
	return out
}

// lastChange is the journal's last run that may have changed the host:
// refused runs changed nothing and are looked past.
func lastChange(runs []*runlog.RunInfo) *runlog.RunInfo {
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Result() != runlog.ResultRefused {
			return runs[i]
		}
	}
	return nil
}
