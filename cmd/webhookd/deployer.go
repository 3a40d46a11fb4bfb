package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/webhookd"
)

// deployer adapts pkg/app/deploy to webhookd.Deployer: one unattended apply of
// a checked-out spec directory, under the host's apply lock.
type deployer struct {
	log         zerolog.Logger
	lockTimeout time.Duration
	rollback    deploy.RollbackPolicy
	soak        time.Duration
}

func (d deployer) Deploy(ctx context.Context, req webhookd.DeployRequest) (webhookd.DeployReport, error) {
	plan := &lineLog{log: d.log.With().Str("repo", req.Repo).Str("commit", req.Commit).Logger()}
	defer plan.Flush()
	out, err := deploy.Run(ctx, deploy.Request{
		Path:   req.Dir,
		Source: req.Source,
		// The plan and summary text become log lines; per-action lines go to
		// the journal as structured entries (pkg/app/deploy detects it).
		Stdout:      plan,
		Stderr:      os.Stderr,
		LockTimeout: d.lockTimeout,
		Rollback:    d.rollback,
		Soak:        d.soak,
		Force:       req.Force,
		Started:     req.Started,
		// No Confirm (unattended) and no Stop: SIGTERM must not cut an
		// apply short; webhookd waits for it instead.
	})
	var rep webhookd.DeployReport
	if out != nil {
		rep.RunID = out.RunID
		rep.Summary = out.Summary
		if rb := out.Rollback; rb != nil && rb.Passed {
			rep.RolledBack, rep.RolledBackTo = true, rb.Generation
		}
		if out.Gate != nil {
			for _, f := range out.Gate.Failures {
				rep.Failing = append(rep.Failing, f.Subject()+": "+f.Reason)
			}
		}
		if out.Plan != nil {
			if ps := view.PlanSummary(out.Plan); ps != out.Summary {
				rep.Summary = ps + " " + out.Summary
			}
		}
		if ev, ok := out.Event(err); ok {
			rep.Event = &ev
		}
	}
	return rep, err
}

// Check plans the directory read-only, as `syslet --diff DIR` does: no
// lock is taken and nothing changes. The plan is not logged (a check runs
// every interval); its findings and warnings are, at debug level.
func (d deployer) Check(ctx context.Context, req webhookd.DeployRequest) (webhookd.CheckReport, error) {
	dbg := &lineLog{log: d.log.With().Str("repo", req.Repo).Str("commit", req.Commit).Str("check", "drift").Logger(), debug: true}
	defer dbg.Flush()
	out, err := deploy.Run(ctx, deploy.Request{Path: req.Dir, Source: req.Source, Diff: true, Stdout: io.Discard, Stderr: dbg})
	var rep webhookd.CheckReport
	if out == nil || out.Plan == nil {
		if err == nil {
			err = errors.New("the check made no plan")
		}
		return rep, err
	}
	rep.Busy = out.Busy
	rep.Units = deploy.DriftUnits(out.Plan)
	ev := out.DriftEvent(rep.Units)
	rep.Event = &ev
	return rep, nil
}

// lineLog logs each line written to it (at info level, or debug).
type lineLog struct {
	log   zerolog.Logger
	debug bool
	mu    sync.Mutex
	buf   bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line) // incomplete: keep for the next write
			return len(p), nil
		}
		l.emit(line)
	}
}

func (l *lineLog) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.emit(l.buf.String())
	l.buf.Reset()
}

func (l *lineLog) emit(line string) {
	if line = strings.TrimRight(line, "\r\n"); strings.TrimSpace(line) != "" {
		if l.debug {
			l.log.Debug().Msg(line)
			return
		}
		l.log.Info().Msg(line)
	}
}
