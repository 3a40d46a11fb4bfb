package verdict

import (
	"fmt"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/runlog"
)

// Verdict is how one run (or one pass of it: the apply, a rollback) ended.
type Verdict uint8

// The verdicts. The zero value is no verdict: a run that has not ended.
const (
	_ Verdict = iota
	// Planned: a --diff made its plan (or found a saved plan still
	// holding); nothing was applied.
	Planned
	// NoChanges: an apply found the host as its specs say.
	NoChanges
	// Applied: an apply changed the host and what it started passed the
	// health gate.
	Applied
	// Judged: an apply with nothing to change held the containers of an
	// earlier run, whose changes all landed but were never judged, to the
	// health gate, and they passed.
	Judged
	// Restored: a rollback asked for by hand (syslet rollback) applied a
	// kept generation again and passed the health gate.
	Restored
	// AlreadyRestored: a rollback by hand found the host already as the
	// generation says.
	AlreadyRestored
	// Invalid: the specs are invalid; nothing was touched.
	Invalid
	// Refused: the plan was refused before anything changed (a guardrail,
	// a failed staging, a stale saved plan).
	Refused
	// Declined: the person at the prompt did not confirm the plan.
	Declined
	// Failed: the run could not finish (the host, the lock, an action).
	Failed
	// Interrupted: SIGINT or SIGTERM ended the run.
	Interrupted
	// GateFailed: a container the run started failed the health gate and
	// the host stays as the run left it (--rollback=never, or no
	// generation to return to).
	GateFailed
	// RolledBack: a container failed the health gate and the last good
	// generation was applied again and passed it.
	RolledBack
	// RollbackFailed: a container failed the health gate, and so did the
	// rollback (or it could not run): the host needs a person.
	RollbackFailed

	count // the number of verdicts, plus one; keep last
)

// Exit codes of syslet: documented (syslet --help, syslet(1)) and stable,
// since CI jobs, syslet push and webhookd branch on them. The codes of the
// command line itself (usage, internal error, pending changes) are
// cmd/syslet's.
const (
	ExitOK             = 0
	ExitError          = 1
	ExitInvalid        = 2
	ExitRolledBack     = 4
	ExitRollbackFailed = 5
	ExitInterrupted    = 130
)

// webhookd's results of a deploy attempt and the stages it fails in, for
// the attempts that ran syslet (webhookd adds its own for the others).
const (
	DeploySuccess    = "success"
	DeployFailed     = "failed"
	DeployRolledBack = "rolled-back"

	StageApply = "apply"
	StageGate  = "health-gate"
)

// ending is what one verdict is called by each consumer. An empty journal
// result means the run never reaches the journal with that verdict (it
// ends before the apply lock); an empty notification kind means there is
// nothing to tell.
type ending struct {
	// id is the verdict's machine name: what --output json, webhookd's
	// /status and syslet push's documents carry, stable across releases
	// (a person reads name, which may be reworded).
	id      string
	name    string
	exit    int
	journal string
	notify  notify.Kind
	deploy  string // webhookd's result
	stage   string // webhookd's stage, for a failure
}

// table is the one mapping. TestEveryVerdictHasEveryMapping holds it
// whole.
var table = [count]ending{
	Planned:         {"planned", "planned", ExitOK, "", "", DeploySuccess, ""},
	NoChanges:       {"no-changes", "no changes", ExitOK, runlog.ResultNoChanges, "", DeploySuccess, ""},
	Applied:         {"applied", "applied", ExitOK, runlog.ResultOK, notify.Succeeded, DeploySuccess, ""},
	Judged:          {"judged", "judged", ExitOK, runlog.ResultOK, "", DeploySuccess, ""},
	Restored:        {"restored", "restored", ExitOK, runlog.ResultRolledBack, notify.Succeeded, DeploySuccess, ""},
	AlreadyRestored: {"already-restored", "already restored", ExitOK, runlog.ResultRolledBack, "", DeploySuccess, ""},
	Invalid:         {"invalid", "invalid", ExitInvalid, "", notify.Failed, DeployFailed, StageApply},
	Refused:         {"refused", "refused", ExitError, runlog.ResultRefused, notify.Failed, DeployFailed, StageApply},
	Declined:        {"declined", "declined", ExitError, "", "", DeployFailed, StageApply},
	Failed:          {"failed", "failed", ExitError, runlog.ResultFailed, notify.Failed, DeployFailed, StageApply},
	Interrupted:     {"interrupted", "interrupted", ExitInterrupted, runlog.ResultInterrupted, notify.Failed, DeployFailed, StageApply},
	GateFailed:      {"gate-failed", "failed the health gate", ExitError, runlog.ResultFailed, notify.Failed, DeployFailed, StageGate},
	RolledBack:      {"rolled-back", "rolled back", ExitRolledBack, runlog.ResultRolledBack, notify.RolledBack, DeployRolledBack, StageGate},
	RollbackFailed:  {"rollback-failed", "rollback failed", ExitRollbackFailed, runlog.ResultFailed, notify.Failed, DeployFailed, StageGate},
}

func (v Verdict) ending() ending {
	if v == 0 || v >= count {
		panic(fmt.Sprintf("verdict: no verdict %d", v)) // a run that has not ended has no mapping
	}
	return table[v]
}

func (v Verdict) String() string {
	if v == 0 || v >= count {
		return fmt.Sprintf("verdict(%d)", v)
	}
	return table[v].name
}

// ID is the verdict's machine name ("rolled-back"): stable, for
// documents; String is for people.
func (v Verdict) ID() string { return v.ending().id }

// MarshalText writes the verdict's ID, so a Verdict in a JSON document
// reads as its machine name; the zero Verdict (no ending yet) as "".
func (v Verdict) MarshalText() ([]byte, error) {
	if v == 0 {
		return []byte{}, nil
	}
	if v >= count {
		return nil, fmt.Errorf("verdict: no verdict %d", v)
	}
	return []byte(table[v].id), nil
}

// UnmarshalText reads a verdict's ID back ("" is no verdict).
func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	*v = p
	return err
}

// Parse is the verdict whose ID is id ("" is the zero Verdict).
func Parse(id string) (Verdict, error) {
	if id == "" {
		return 0, nil
	}
	for k := Verdict(1); k < count; k++ {
		if table[k].id == id {
			return k, nil
		}
	}
	return 0, fmt.Errorf("verdict: unknown verdict %q", id)
}

// Exit is syslet's exit code for the verdict.
func (v Verdict) Exit() int { return v.ending().exit }

// Journal is the result the run journal records for a pass that ended
// so; "" when a run never reaches the journal with this verdict.
func (v Verdict) Journal() string { return v.ending().journal }

// Notify is the kind of notification the run sends; "" when it sends
// none.
func (v Verdict) Notify() notify.Kind { return v.ending().notify }

// Deploy is webhookd's result for a deploy attempt that ended so, and the
// stage it failed in ("" when it did not fail).
func (v Verdict) Deploy() (result, stage string) {
	e := v.ending()
	return e.deploy, e.stage
}

// Failed reports whether the verdict is a failure of any kind.
func (v Verdict) Failed() bool { return v.ending().stage != "" }
