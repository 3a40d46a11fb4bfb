package deploy

import (
	"context"
	"fmt"
	"strings"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/secrets"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// runner is one run under the apply lock: its request, the view it is
// shown through, the host, the journal, the kept generations, and the
// verdict of podman's converter check on its input. Every field is set
// once, when the run begins; a pass returns what it found.
type runner struct {
	req     *Request
	view    view.Operation
	h       *hostConn
	jr      *runlog.Journal
	gens    *generation.Store
	verdict func() checked
}

// passResult is what one pass came to: its plan, what the executor and
// the health gate made of it, and its verdict.
type passResult struct {
	kind passKind
	// runID is set once the pass is journalled (a --diff has none).
	runID    string
	findings []report.Finding // the converter check's, once it was awaited
	plan     *plan.Plan
	summary  string
	stageDir string
	// saved is the digest of the saved plan the pass wrote or checked,
	// savedDoc the plan itself for `--out -`, stale what made it stale.
	saved    string
	savedDoc []byte
	stale    []string
	result   *executor.Result
	gate     *gate.Report
	// notFilled names, for a gateRollback, the volumes its plan could not
	// fill again from their backups.
	notFilled []string
	verdict   verdict.Verdict
}

// end gives the pass its verdict.
func (p passResult) end(v verdict.Verdict, err error) (passResult, error) {
	p.verdict = v
	return p, err
}

// gateFailed reports whether the pass got as far as the health gate and a
// container failed it: the one failure a rollback answers.
func (p passResult) gateFailed() bool { return p.verdict == verdict.GateFailed }

// outcome puts what the pass found into the run's Outcome.
func (p passResult) outcome(out *view.Outcome) *view.Outcome {
	if p.findings != nil {
		out.Findings = p.findings
	}
	if p.plan != nil {
		out.Plan, out.Digest = p.plan, p.plan.Digest()
	}
	if p.summary != "" {
		out.Summary = p.summary
	}
	if p.kind.owns() {
		out.Gate = p.gate
	}
	out.RunID, out.Result, out.StageDir = p.runID, p.result, p.stageDir
	out.SavedPlan, out.SavedDocument, out.Stale = p.saved, p.savedDoc, p.stale
	return out
}

// pass plans and applies one input — the run's own, or the generation a
// rollback restores — and holds what it started to the health gate. The
// secret values it decrypts stay in it: they are wiped when it returns.
func (r *runner) pass(ctx context.Context, in passInput) (passResult, error) {
	res := passResult{kind: in.kind}
	opened, err := openSecrets(r.req, r.view, in.set.Out)
	if err != nil {
		return res.end(failed(err), err)
	}
	defer opened.Wipe() // zero every decrypted value once the pass is over
	pl, c, err := r.planPass(ctx, in)
	res.findings = c.findings
	if err != nil {
		if c.err != nil {
			res.summary = c.summary
			return res.end(c.ending, err)
		}
		return res.end(failed(err), err)
	}
	p := pl.plan
	res.plan, res.summary, res.notFilled = p, view.PlanSummary(p), pl.notFilled
	if in.kind == handRollback {
		// A rollback by hand has no report of its own to name them in.
		for _, n := range pl.notFilled {
			r.view.Warning("not restored: " + n)
		}
	}
	vt, v, err := r.vet(ctx, in, pl, c, opened)
	res.stageDir, res.saved, res.savedDoc, res.stale = vt.stageDir, vt.saved, vt.savedDoc, vt.stale
	if err != nil {
		return res.end(v, err)
	}
	if r.req.Diff {
		if n := len(p.Leftovers); n > 0 {
			r.view.Leftovers(n)
		}
		return res.end(verdict.Planned, nil)
	}
	if r.req.Confirm != nil && !p.Empty() && in.kind.asks() && !r.req.Confirm() {
		return res.end(verdict.Declined, ErrDeclined)
	}
	r.h.sweep(p.Leftovers, r.view)
	res.runID = in.runID
	if p.Empty() && len(pl.pendingGate) > 0 && in.kind == inputPass && r.h.live != nil {
		return r.judgeEarlier(ctx, in, res, pl.pendingGate, opened)
	}
	if p.Empty() {
		return r.unchanged(ctx, in, res)
	}
	return r.apply(ctx, in, res, pl, opened)
}

// vetted is what vet found: where staging was kept, and the saved plan
// written (--out) or checked (--plan).
type vetted struct {
	stageDir string
	saved    string // the saved plan's digest
	savedDoc []byte // the saved plan itself, for --out -
	stale    []string
}

// vet is what a plan goes through before it is applied, or shown as the
// answer of a --diff: a saved plan's check, staging, the plan shown, its
// refusals, and (--out) saving it. A verdict and an error say where it
// stopped.
func (r *runner) vet(ctx context.Context, in passInput, pl planned, c checked, opened *secrets.Opened) (vetted, verdict.Verdict, error) {
	var vt vetted
	p := pl.plan
	if in.kind.checksSaved() && r.req.Saved != nil {
		var err error
		if vt.saved, vt.stale, err = r.checkSaved(in, pl, c.release); err != nil {
			return vt, verdict.Refused, err
		}
	}
	kept, err := r.h.stage(ctx, p, pl.observed, in.set.Out, r.view)
	vt.stageDir = kept
	if err != nil {
		r.view.Plan(r.against(in), p)
		r.view.StagingFailed(err)
		r.stageKept(kept)
		if !r.req.Diff {
			r.record(in, p, verdict.Refused)
		}
		return vt, verdict.Refused, fmt.Errorf("%w: %w", ErrStaging, err)
	}
	if in.kind.rollback() {
		r.view.RollingBack(in.gen.Run, in.of)
	}
	r.view.Plan(r.against(in), p)
	r.stageKept(kept)
	if r.req.Diff && r.req.ShowSecrets {
		r.view.SecretValues(secretValues(p, opened))
	}
	if !p.Appliable() {
		if !r.req.Diff {
			r.record(in, p, verdict.Refused)
		}
		return vt, verdict.Refused, refused(p.Refusals)
	}
	if r.req.SavePlan != "" && r.req.Diff {
		if vt.saved, vt.savedDoc, err = r.save(in, pl, c.release); err != nil {
			return vt, verdict.Failed, err
		}
	}
	return vt, 0, nil
}

// against is what a pass's plan was made against, for its header.
func (r *runner) against(in passInput) view.Against {
	return view.Against{Specs: in.set.Count(), Sources: len(in.set.Sources), Root: r.req.Root, NoHost: r.req.hostless(), Stored: in.stored}
}

// stageKept says where the staging directory was kept, if it was.
func (r *runner) stageKept(dir string) {
	if dir != "" {
		r.view.StageKept(dir, stageNote)
	}
}

// stored is what a later plain `syslet` applies after this pass: the
// stream from stdin, or the generation a rollback returns to (so a plain
// run after a killed rollback finishes it, never the failed input again).
func (r *runner) stored(in passInput) []byte {
	switch {
	case in.kind.rollback():
		return in.gen.Input
	case r.req.Path == "-":
		return in.set.Stream()
	}
	return nil
}

// unchanged ends a pass whose plan changes nothing: the input is stored
// and the run journalled, and a host without a generation gets its first.
func (r *runner) unchanged(ctx context.Context, in passInput, res passResult) (passResult, error) {
	if stored := r.stored(in); stored != nil {
		if err := storeStdin(r.req.Root, stored); err != nil {
			return res.end(failed(err), err)
		}
	}
	v := verdict.NoChanges
	switch in.kind {
	case handRollback:
		v = verdict.AlreadyRestored
	case gateRollback:
		v = verdict.RolledBack
	}
	r.record(in, res.plan, v)
	if in.kind.owns() {
		r.remember(ctx, in, res.plan, false)
	}
	return res.end(v, nil)
}

// record writes a pass that executed nothing into the journal: its intent
// and its end, in one write.
func (r *runner) record(in passInput, p *plan.Plan, v verdict.Verdict) {
	if _, err := r.jr.Record(r.intent(in, p), runlog.Record{Result: v.Journal()}); err != nil {
		r.view.Warning(err.Error())
	}
}

// intent is the journal's first record of a pass: what it plans to do.
func (r *runner) intent(in passInput, p *plan.Plan) runlog.Record {
	rec := runlog.Record{Run: in.runID, PID: pid(), Source: in.source, Signer: in.signer, InputDigest: in.set.Digest(),
		PlanDigest: p.Digest(), Actions: journalActions(p)}
	for _, u := range p.Updates {
		rec.Updates = append(rec.Updates, runlog.ImageUpdate{Image: u.Image, From: u.From, To: u.To, Restarts: u.Restarts})
	}
	if p.Resume != nil {
		rec.Resumes = p.Resume.Run
	}
	if in.kind.rollback() {
		rec.Rollback, rec.RollbackOf = in.gen.Run, in.of
	}
	return rec
}

// shownRefusals is how many refusals the run's last word repeats; the
// plan above lists them all.
const shownRefusals = 3

// refused is the error of a plan with refusals: each refusal's unit and
// message, which names what to do about it (--allow-removals, remove the
// file that is not syslet's), so that the run's last line says why
// nothing was changed and the way out, not only how many reasons there
// are 45 lines up.
func refused(rs []plan.Refusal) error {
	var b strings.Builder
	for i, r := range rs {
		if i == shownRefusals {
			fmt.Fprintf(&b, "\n(and %d more, listed in the plan above)", len(rs)-shownRefusals)
			break
		}
		fmt.Fprintf(&b, "\n%s: %s", r.Unit, r.Message)
	}
	return fmt.Errorf("%w, so nothing was changed:%s", plan.ErrRefused, b.String())
}
