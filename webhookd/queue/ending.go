package queue

import (
	"encoding/json"
	"time"

	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/verdict"
)

// How a deploy attempt ended. An attempt that ran syslet ended as its run
// did: with the run's verdict (pkg/verdict), whose table also says what
// /status and the metrics call it. An attempt that stopped before syslet
// ran, or that had no reason to run it, ended for one of webhookd's own
// reasons below, each named once and set where the attempt stopped.
// Everything webhookd says of an attempt (/status, the status page, the
// notification, the forge's commit status, the metrics, the log) is
// derived from the one or the other, never from the words a run printed.

// Reason is an ending of webhookd's own: how an attempt that did not end
// with a run's verdict ended.
type Reason string

// webhookd's own endings.
const (
	// Skipped: the commit is older than the one already applied (a late,
	// reordered or replayed push), so deploying it would move the host
	// backwards.
	Skipped Reason = "skipped"
	// FetchFailed: the branch could not be fetched, or no pushed commit
	// of the batch is on it.
	FetchFailed Reason = "fetch-failed"
	// SignatureRefused: the commit is not signed by a key the
	// repository's verify.allowedSigners or verify.keyring lists, or an
	// object of it is unsafe to read; refused before checkout.
	// Attempt.Refusal says why.
	SignatureRefused Reason = "signature-refused"
	// CheckoutFailed: the commit could not be checked out, or has no spec
	// directory (repos[].path) inside it.
	CheckoutFailed Reason = "checkout-failed"
)

// Results of a deploy attempt, as /status and the deploys metric show them:
// those of a run are its verdict's (pkg/verdict).
const (
	ResultSuccess = verdict.DeploySuccess
	ResultFailed  = verdict.DeployFailed
	// ResultSkipped: the attempt ended Skipped.
	ResultSkipped = "skipped"
	// ResultRolledBack: the commit was applied, a container failed the
	// health gate, and the host runs its last good generation again. The
	// commit is not retried until the branch moves.
	ResultRolledBack = verdict.DeployRolledBack
)

// Results lists every result, for the metrics' series.
var Results = []string{ResultSuccess, ResultFailed, ResultSkipped, ResultRolledBack}

// Stages a deploy attempt can fail in.
const (
	StageFetch    = "fetch"
	StageCheckout = "checkout"
	// StageSignature: the commit is not signed by a key the repository's
	// verify.allowedSigners or verify.keyring lists; it was refused before checkout.
	StageSignature = "signature"
	StageApply     = verdict.StageApply
	// StageGate: the apply landed but a started container failed the
	// health gate.
	StageGate = verdict.StageGate
)

// reasons says what /status and the metrics call each of webhookd's own
// endings; a failure has a stage.
var reasons = map[Reason]struct{ result, stage string }{
	Skipped:          {ResultSkipped, ""},
	FetchFailed:      {ResultFailed, StageFetch},
	SignatureRefused: {ResultFailed, StageSignature},
	CheckoutFailed:   {ResultFailed, StageCheckout},
}

// end records how the attempt ended: as its run's verdict v, or for
// webhookd's own reason r (one of the two is zero), and why (err). A
// signature refusal is the signature check's wherever it was found (a
// hostile object is screened while the branch is walked, before the
// check itself runs), so it ends the attempt SignatureRefused.
func (a *Attempt) end(v verdict.Verdict, r Reason, err error) {
	a.Verdict, a.Reason = v, r
	if err == nil {
		return
	}
	a.Error = err.Error()
	if a.Refusal = string(commitsig.ReasonOf(err)); a.Refusal != "" {
		a.Verdict, a.Reason = 0, SignatureRefused
	}
}

// ended reports whether the attempt has its ending.
func (a *Attempt) ended() bool { return a.Verdict != 0 || a.Reason != "" }

// named is the attempt's ending as /status names it: its result, and the
// stage it failed in ("" unless it failed).
func (a *Attempt) named() (result, stage string) {
	if a.Verdict != 0 {
		return a.Verdict.Deploy()
	}
	n := reasons[a.Reason]
	return n.result, n.stage
}

// Result is how the attempt ended, as /status and the metrics say it:
// success, failed, skipped or rolled-back.
func (a *Attempt) Result() string {
	r, _ := a.named()
	return r
}

// Stage is where the attempt failed ("" unless it did).
func (a *Attempt) Stage() string {
	_, s := a.named()
	return s
}

// Failed reports whether the attempt failed to deploy its commit (a
// rollback included): every failure has a stage.
func (a *Attempt) Failed() bool { return a.Stage() != "" }

// Deployed reports whether the attempt's commit is what the host runs now.
func (a *Attempt) Deployed() bool { return a.Result() == ResultSuccess }

// Ended is when the attempt ended.
func (a *Attempt) Ended() time.Time {
	return a.Started.Add(time.Duration(a.Duration * float64(time.Second)))
}

// attemptFields is Attempt without its JSON methods.
type attemptFields Attempt

// MarshalJSON writes the attempt with the result and stage its ending
// comes to, as /status has always shown them.
func (a Attempt) MarshalJSON() ([]byte, error) {
	result, stage := a.named()
	return json.Marshal(struct {
		attemptFields
		Result string `json:"result"`
		Stage  string `json:"stage,omitempty"`
	}{attemptFields(a), result, stage})
}

// UnmarshalJSON reads an attempt back from the status file. A file written
// before attempts kept their ending holds only the result and stage; the
// ending is taken from those (a success with a run as applied, one without
// as no changes, a failure in the apply as failed), so a restart after an
// upgrade still knows which attempts failed.
func (a *Attempt) UnmarshalJSON(b []byte) error {
	var w struct {
		attemptFields
		// Read as text: a verdict this version does not know (a file a
		// later version wrote) falls back to the result, and never
		// makes the whole file, the applied commit with it, unreadable.
		Verdict string `json:"verdict"`
		Result  string `json:"result"`
		Stage   string `json:"stage"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*a = Attempt(w.attemptFields)
	a.Verdict, _ = verdict.Parse(w.Verdict)
	if _, known := reasons[a.Reason]; !known {
		a.Reason = ""
	}
	if !a.ended() {
		a.Verdict, a.Reason = endingOf(w.Result, w.Stage, a.RunID)
	}
	return nil
}

// endingOf is the ending an attempt recorded only as result and stage
// comes to.
func endingOf(result, stage, run string) (verdict.Verdict, Reason) {
	for r, n := range reasons {
		if n.result == result && n.stage == stage {
			return 0, r
		}
	}
	switch {
	case result == ResultRolledBack:
		return verdict.RolledBack, ""
	case result == ResultFailed && stage == StageGate:
		return verdict.GateFailed, ""
	case result == ResultFailed:
		return verdict.Failed, ""
	case result == ResultSuccess && run == "":
		return verdict.NoChanges, ""
	case result == ResultSuccess:
		return verdict.Applied, ""
	}
	return 0, ""
}
