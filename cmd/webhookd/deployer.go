package main

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/queue"
)

// deployer adapts pkg/app/deploy to queue.Deployer, what webhookd deploys through: one unattended apply of
// a checked-out spec directory, under the host's apply lock.
type deployer struct {
	log         zerolog.Logger
	lockTimeout time.Duration
	rollback    deploy.RollbackPolicy
	soak        time.Duration
}

func (d deployer) Deploy(ctx context.Context, req queue.DeployRequest) (queue.DeployReport, error) {
	log := d.log.With().Str("repo", req.Repo).Str("commit", req.Commit).Logger()
	out, err := deploy.Run(ctx, deploy.Request{
		Path:   req.Dir,
		Source: req.Source,
		Signer: req.Signer,
		// The run is logged as structured lines (its plan's units, effects
		// and reasons, the gate's verdict); per-action lines go to the
		// journal as structured entries (pkg/app/deploy detects it).
		View:        view.NewLog(log, os.Stderr),
		LockTimeout: d.lockTimeout,
		Rollback:    d.rollback,
		Soak:        d.soak,
		Force:       req.Force,
		Started:     req.Started,
		// A registry's push notification: an update of the pushed tags.
		Update:     len(req.Update) > 0,
		UpdateOnly: req.Update,
		// No Confirm (unattended) and no Stop: SIGTERM must not cut an
		// apply short; webhookd waits for it instead.
	})
	out.Findings = inRepo(out.Findings, req)
	rep := queue.DeployReport{RunID: out.RunID, Summary: out.Summary, Verdict: out.Verdict, Findings: out.Findings}
	if rb := out.Rollback; rb != nil && out.Verdict == verdict.RolledBack {
		rep.RolledBackTo = rb.Generation
	}
	if out.Gate != nil {
		for _, f := range out.Gate.Failures {
			rep.Failing = append(rep.Failing, f.Subject()+": "+f.Reason)
		}
	}
	if out.Plan != nil {
		var b strings.Builder
		view.Plan(&b, out.Plan)
		rep.Plan = b.String()
		if ps := view.PlanSummary(out.Plan); ps != out.Summary {
			rep.Summary = ps + " " + out.Summary
		}
	}
	if ev, ok := out.Event(); ok {
		rep.Event = &ev
	}
	return rep, err
}

// inRepo names the files of the findings by their path in the repository,
// as the pusher knows them, instead of in webhookd's checkout (req.Dir); a
// finding of no file, or of a file outside the directory, keeps its name.
func inRepo(findings []report.Finding, req queue.DeployRequest) []report.Finding {
	out := slices.Clone(findings)
	for i, f := range out {
		rel, err := filepath.Rel(req.Dir, f.Source)
		if f.Source == "" || err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		out[i].Source = path.Join(req.SpecPath, filepath.ToSlash(rel))
	}
	return out
}

// Check plans the directory read-only, as `syslet --diff DIR` does: no
// lock is taken and nothing changes. The plan is not logged (a check runs
// every interval); its findings and warnings are, at debug level.
func (d deployer) Check(ctx context.Context, req queue.DeployRequest) (queue.CheckReport, error) {
	log := d.log.With().Str("repo", req.Repo).Str("commit", req.Commit).Str("check", "drift").Logger()
	out, err := deploy.Run(ctx, deploy.Request{Path: req.Dir, Source: req.Source, Diff: true, AskProbes: true, View: view.NewCheckLog(log)})
	var rep queue.CheckReport
	if out.Plan == nil {
		if err == nil {
			err = errors.New("the check made no plan")
		}
		return rep, err
	}
	if err != nil && out.Verdict == verdict.Failed {
		return rep, err // planned, but the probes could not be asked
	}
	rep.Busy = out.Busy
	rep.Units, rep.Probes = out.Drift(), out.Probes
	ev := out.DriftEvent(rep.Units)
	rep.Event = &ev
	return rep, nil
}
