package view

import (
	"io"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/plan"
)

// Log draws a run as structured log lines, for a daemon (webhookd): one
// line per event with its facts as fields (units, effects, reasons,
// counts, the verdict), never a diff or a file's content. A log pipeline
// reads the fields; no one parses the text of the plan back.
type Log struct {
	log zerolog.Logger
	// level is the level of the run's story: info for a deploy, debug for
	// a drift check, which runs every interval and whose plan is not news
	// (plans false).
	level   zerolog.Level
	plans   bool
	actions io.Writer
}

var _ Operation = (*Log)(nil)

// NewLog logs a deploy on l; the per-action lines go to actions (the
// journal, when it is the daemon's stderr).
func NewLog(l zerolog.Logger, actions io.Writer) *Log {
	return &Log{log: l, level: zerolog.InfoLevel, plans: true, actions: actions}
}

// NewCheckLog logs a read-only check at debug level, without its plan.
func NewCheckLog(l zerolog.Logger) *Log {
	return &Log{log: l, level: zerolog.DebugLevel, actions: io.Discard}
}

// at is an event at lvl, or at the story's level when that is quieter
// than info (a check's: everything at debug).
func (v *Log) at(lvl zerolog.Level) *zerolog.Event {
	if v.level < zerolog.InfoLevel {
		return v.log.WithLevel(v.level)
	}
	return v.log.WithLevel(lvl)
}

func (v *Log) Findings(rep report.Report) {
	for _, f := range rep.Findings {
		lvl := zerolog.WarnLevel
		if f.Severity == report.Error {
			lvl = zerolog.ErrorLevel
		}
		v.at(lvl).Str("source", f.Source).Str("path", f.Path).Str("rule", f.Rule).Str("severity", string(f.Severity)).Msg(f.Message)
	}
}

func (v *Log) Warning(msg string) { v.at(zerolog.WarnLevel).Msg(msg) }
func (v *Log) Busy(holder string) {
	v.at(zerolog.InfoLevel).Str("holder", holder).Msg("an apply is in progress; the plan may not show what it has not done yet")
}
func (v *Log) Waiting(holder string) {
	v.at(zerolog.InfoLevel).Str("holder", holder).Msg("waiting for another apply to finish")
}

func (v *Log) Plan(a Against, p *plan.Plan) {
	if !v.plans {
		return
	}
	c := p.Count()
	v.at(zerolog.InfoLevel).Int("specs", a.Specs).Int("sources", a.Sources).Int("create", c.Create).Int("change", c.Change).
		Int("reload", c.Reload).Int("metadata", c.Metadata).Int("remove", c.Remove).Int("start", c.Start).Int("stop", c.Stop).
		Int("drift", c.Drift).Int("actions", len(p.Actions)).Str("digest", p.Digest()).Msg(PlanSummary(p))
	for _, u := range units(p, func(u *plan.UnitChange) bool {
		return u.Effect != plan.EffectNone && u.Effect != plan.EffectIgnore
	}) {
		v.at(zerolog.InfoLevel).Str("unit", u.FileName).Str("effect", string(u.Effect)).Strs("reasons", u.Reasons).Msg("planned")
	}
	for _, r := range p.Refusals {
		v.at(zerolog.ErrorLevel).Str("unit", r.Unit).Str("source", r.Source).Msg("refused: " + r.Message)
	}
}

func (v *Log) RollingBack(gen, of string) {
	v.at(zerolog.WarnLevel).Str("generation", gen).Str("of", of).Msg("rolling back")
}
func (v *Log) StagingWarning(msg string) { v.at(zerolog.WarnLevel).Msg("staging: " + msg) }
func (v *Log) StagingFailed(err error) {
	v.at(zerolog.ErrorLevel).Err(err).Msg("staging failed; nothing was changed")
}
func (v *Log) StageKept(dir, note string) {
	v.at(zerolog.InfoLevel).Str("dir", dir).Str("note", note).Msg("staging directory kept")
}
func (v *Log) SecretValues([]string) {}
func (v *Log) Leftovers(n int) {
	v.at(zerolog.InfoLevel).Int("files", n).Msg("temporary files of an interrupted run are left; the next apply removes them")
}
func (v *Log) Swept(n int) {
	v.at(zerolog.InfoLevel).Int("files", n).Msg("removed the temporary files of an interrupted run")
}
func (v *Log) SavedWritten(s Saved) {
	v.at(zerolog.InfoLevel).Str("file", s.File).Str("digest", s.PlanDigest).Msg("saved the plan")
}
func (v *Log) SavedHolds(s Saved, _ bool) {
	v.at(zerolog.InfoLevel).Str("file", s.File).Str("digest", s.PlanDigest).Msg("the saved plan still holds")
}
func (v *Log) SavedStale(s Saved, changes []string) {
	v.at(zerolog.ErrorLevel).Str("file", s.File).Strs("changes", changes).Msg("the saved plan is stale; nothing was changed")
}
func (v *Log) Applying(runID string) { v.at(zerolog.InfoLevel).Str("run", runID).Msg("applying") }
func (v *Log) Progress() io.Writer   { return nil }
func (v *Log) Actions() io.Writer    { return v.actions }

func (v *Log) Applied(runID string, res *executor.Result) {
	lvl := zerolog.InfoLevel
	if len(res.Failed) > 0 || res.Interrupted {
		lvl = zerolog.ErrorLevel
	}
	v.at(lvl).Str("run", runID).Int("applied", len(res.Applied)).Int("failed", len(res.Failed)).
		Int("notReached", len(res.NotReached)).Dur("took", res.Duration).Msg(ResultLine(res))
	if len(res.Down) > 0 {
		v.at(zerolog.WarnLevel).Str("run", runID).Strs("units", res.Down).Msg(executor.DownLine(res.Down))
	}
	for _, r := range res.Replaced {
		v.at(zerolog.InfoLevel).Str("run", runID).Str("unit", r.Service).Str("strategy", string(r.Strategy)).
			Bool("done", r.Done).Dur("took", r.Took).Msg(ReplacedLine(r))
	}
	for _, f := range res.Failed {
		v.at(zerolog.ErrorLevel).Str("run", runID).Int("step", int(f.Action.Step)).Str("op", string(f.Action.Op)).
			Str("target", f.Action.Target).Strs("log", f.Log).Msg(f.Error)
	}
	if res.Undo != nil {
		v.at(zerolog.WarnLevel).Str("run", runID).Strs("notPutBack", res.Undo.Errors).Msg(UndoLine(res.Undo))
	}
}

func (v *Log) JudgingEarlier() {
	v.at(zerolog.InfoLevel).Msg("the previous run's changes all landed but were never judged; judging its containers now")
}

func (v *Log) Gate(g *gate.Report) {
	if g == nil || len(g.Units) == 0 {
		return
	}
	switch {
	case g.Interrupted:
		v.at(zerolog.WarnLevel).Strs("units", g.Units).Dur("took", g.Took).Msg("health gate interrupted: the changes are applied but were not judged")
	case g.Passed():
		v.at(zerolog.InfoLevel).Strs("units", g.Units).Dur("soak", g.Soak).Dur("took", g.Took).Msg("health gate passed")
	default:
		for _, f := range g.Failures {
			v.at(zerolog.ErrorLevel).Str("unit", f.Subject()).Strs("log", f.Log).Msg("health gate failed: " + f.Reason)
		}
	}
}

func (v *Log) NoRollback(why NoRollbackReason) {
	msg := "not rolling back (--rollback=never): the host stays as the run left it"
	if why == NoGeneration {
		msg = "no earlier generation is kept, so there is nothing to roll back to: the host stays as the run left it"
	}
	v.at(zerolog.ErrorLevel).Msg(msg)
}

func (v *Log) RolledBack(r Rollback) {
	e := v.at(zerolog.WarnLevel)
	if r.Err != nil {
		e = v.at(zerolog.ErrorLevel).Err(r.Err).Bool("untouched", r.Untouched)
	}
	e.Str("failed", r.Failed).Str("run", r.Run).Str("generation", r.Generation).Str("why", r.Why).
		Strs("restored", r.Restored).Strs("notRestored", r.NotRestored).Msg(rollbackWord(r))
}

func (v *Log) Done(o *Outcome) {
	if o == nil || o.Verdict == 0 {
		return
	}
	lvl := zerolog.InfoLevel
	if o.Verdict.Failed() {
		lvl = zerolog.ErrorLevel
	}
	v.at(lvl).Str("run", o.RunID).Str("verdict", o.Verdict.String()).Dur("took", o.Took).Msg(o.Summary)
}

// rollbackWord is what a rollback after a failed gate came to, in a few
// words.
func rollbackWord(r Rollback) string {
	switch {
	case r.Err != nil && r.Untouched:
		return "rollback failed before it changed anything: the host is as the failed run left it"
	case r.Err != nil:
		return "rollback failed: the host needs a person"
	}
	return "rolled back: the last good generation runs again and passed the health gate"
}
