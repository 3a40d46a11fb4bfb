package queue

import (
	"context"
	"github.com/syslet/syslet/pkg/host"

	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
)

// Deployer applies the specs in a directory to this host, the way `syslet
// DIR` does: unattended, under the host's apply lock, recording Source as the
// run's source in the run journal.
//
// Check plans the same directory read-only (no lock, no change), as
// `syslet --diff DIR` does: what the host's drift check reports.
type Deployer interface {
	Deploy(ctx context.Context, req DeployRequest) (DeployReport, error)
	Check(ctx context.Context, req DeployRequest) (CheckReport, error)
}

// DeployRequest is one deploy of one commit.
type DeployRequest struct {
	Repo   string // configuration name of the repository
	Commit string // the commit checked out in Dir
	Dir    string // spec directory inside the checkout
	// SpecPath is Dir's path in the repository (repos[].path): the
	// findings of invalid specs name their files by it, as the pusher
	// knows them.
	SpecPath string
	Source   string // "git <repo>@<commit>", for the run journal
	// Signer signed Commit (nil when the repository checks no signature).
	Signer *commitsig.Signer
	// Force replaces hand edits (a reconcile after a drift check).
	Force bool
	// Update makes the deploy an update (`syslet update`) of these
	// registry references, pushed to their registry: the containers that
	// run them are pulled again and restarted when the tag moved.
	Update []string
	// Started hears the run's started event just before the host changes
	// (never for a deploy with nothing to do). It does not block.
	Started func(notify.Event)
}

// DeployReport is what a finished deploy tells /status.
type DeployReport struct {
	RunID   string // the run journal's id of this apply, if any
	Summary string // one line: what the plan changed
	// Verdict is how the run ended, and so how the attempt did
	// (ending.go); everything webhookd tells of it follows from it, not
	// from Summary or the event's words. When it is verdict.RolledBack, a started
	// container failed the health gate and the host was rolled back to the
	// generation of run RolledBackTo, and the commit is not applied.
	// Failing names each unit that failed the gate, and why.
	Verdict      verdict.Verdict
	RolledBackTo string
	Failing      []string
	// Event is the run's own notification (succeeded, failed,
	// rolled-back); nil when the run had nothing to tell.
	Event *notify.Event
	// Findings are what the check of the specs found, each file named by
	// its path in the repository; an Invalid verdict's errors say why.
	Findings []report.Finding
	// Plan is the run's plan as `syslet --diff` prints it (secrets shown
	// as (secret), private files' content hidden); the status page shows
	// it on the deploy's page. "" when no plan was made.
	Plan string
}

// CheckReport is what a drift check found.
type CheckReport struct {
	// Units differ from the applied commit's specs, by kind (edited by
	// hand, would change, would start, probe failing).
	Units []notify.DriftUnit
	// Probes are the readiness probes of the running containers, each
	// asked once, with its answer.
	Probes []host.Probed
	// Busy names another apply that held the lock: the plan then shows
	// what it has not done yet, not drift, and the check counts for
	// nothing.
	Busy string
	// Event is the drift notification for these units.
	Event *notify.Event
}
