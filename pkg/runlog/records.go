package runlog

import (
	"time"

	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/commitsig"
)

// Record types, one per line.
const (
	TypeIntent = "intent" // the plan, before the first change
	TypeStep   = "step"   // a step begins
	TypeAction = "action" // one action landed (or failed)
	TypeEnd    = "end"    // the run closed
)

// Results of a run (TypeEnd) and of an action (TypeAction).
const (
	ResultOK          = "ok"
	ResultFailed      = "failed"
	ResultInterrupted = "interrupted"
	ResultNoChanges   = "no-changes"
	ResultRefused     = "refused"
	// ResultRolledBack closes a rollback run that restored a generation
	// and passed the health gate; the run it rolled back ended "failed".
	ResultRolledBack = "rolled-back"
	// ResultUndone marks an action that had landed and that its failed run
	// put back (a file write swapped in before a failure in steps 2 to 4):
	// it no longer counts as landed.
	ResultUndone = "undone"
)

// Action is one planned host change as the journal knows it: what and
// where, never content.
type Action struct {
	Index  int    `json:"i"`
	Step   int    `json:"step"`
	Op     string `json:"op"`
	Target string `json:"target"`
	Unit   string `json:"unit,omitempty"`
	// Digest is the sha256 of the content an action writes (unit files),
	// so a resume can tell whether the unit it finds is the one this run
	// wrote.
	Digest string `json:"digest,omitempty"`
	// Carried marks an action planned again because an earlier run left it
	// unfinished.
	Carried bool `json:"carried,omitempty"`
	// NoBackup marks a volume's delete whose marker said Backup=false: a
	// run resuming it deletes the volume without an export, as planned.
	NoBackup bool `json:"noBackup,omitempty"`
	// Backup is the backup a volume's import brings back (its file name;
	// Digest its sha256 when known): a run resuming it imports that one.
	Backup string `json:"backup,omitempty"`
}

// ImageUpdate is one image an update run pulls again: the digests the
// containers ran (From) and the one the tag names now (To), and the
// services it restarts.
type ImageUpdate struct {
	Image    string   `json:"image"`
	From     []string `json:"from,omitempty"`
	To       string   `json:"to"`
	Restarts []string `json:"restarts,omitempty"`
}

// Record is one line of the journal. Which fields are set depends on Type.
type Record struct {
	Type string    `json:"type"`
	Run  string    `json:"run"`
	Time time.Time `json:"time"`

	// intent
	PID    int    `json:"pid,omitempty"`
	Source string `json:"source,omitempty"`
	// Signer is who signed the commit the input came from, when a
	// signature was checked (webhookd's verify.allowedSigners).
	Signer      *commitsig.Signer `json:"signer,omitempty"`
	InputDigest string            `json:"inputDigest,omitempty"`
	PlanDigest  string            `json:"planDigest,omitempty"`
	Resumes     string            `json:"resumes,omitempty"` // the run this one carries actions of
	// Rollback names the run whose generation a rollback run restores,
	// RollbackOf the failed run it rolls back ("" for syslet rollback).
	Rollback   string   `json:"rollback,omitempty"`
	RollbackOf string   `json:"rollbackOf,omitempty"`
	Actions    []Action `json:"actions,omitempty"`
	// Updates are the images a `syslet update` run pulls again because
	// their tag moved: what syslet history shows of image changes, and
	// how the next update knows a digest that failed the health gate.
	Updates []ImageUpdate `json:"updates,omitempty"`

	// step, action
	Step int `json:"step,omitempty"`
	// action
	Index  *int   `json:"i,omitempty"`
	Op     string `json:"op,omitempty"`
	Target string `json:"target,omitempty"`
	// Error is an action's failure or, on an end line, why the run failed
	// (a unit that did not pass the health gate).
	Error  string `json:"error,omitempty"`
	Millis int64  `json:"ms,omitempty"`
	// Backup is the file, size and sha256 of the export taken of a volume
	// before the action deleted it, or of the backup the action imported
	// into a volume.
	Backup *backup.Entry `json:"backup,omitempty"`

	// action, end
	Result string `json:"result,omitempty"`
	// end
	Applied    int `json:"applied,omitempty"`
	Failed     int `json:"failed,omitempty"`
	NotReached int `json:"notReached,omitempty"`
	// GateFailed counts the units that failed the health gate (a run whose
	// every action landed can still have failed).
	GateFailed int `json:"gateFailed,omitempty"`
	// PutBack: the run failed before step 5 and put back everything it
	// had swapped in and stopped (podman secrets aside, which stay).
	PutBack bool `json:"putBack,omitempty"`
	// Restored are the backups the run brought back into volumes: a
	// restore's, or a rollback's into the volumes the run it rolled back
	// had deleted or recreated.
	Restored []backup.Entry `json:"restored,omitempty"`
}
