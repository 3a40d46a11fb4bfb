package main

import (
	"bytes"
	"context"
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
				rep.Failing = append(rep.Failing, f.Service+": "+f.Reason)
			}
		}
		if out.Plan != nil {
			if ps := view.PlanSummary(out.Plan); ps != out.Summary {
				rep.Summary = ps + " " + out.Summary
			}
		}
	}
	return rep, err
}

// lineLog logs each line written to it.
type lineLog struct {
	log zerolog.Logger
	mu  sync.Mutex
	buf bytes.Buffer
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
		l.log.Info().Msg(line)
	}
}
