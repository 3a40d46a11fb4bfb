package notify

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/syslet/syslet/pkg/report"
)

// Kind is what happened.
type Kind string

// The events. A run that changes nothing sends none; a failure always
// sends one.
const (
	Started    Kind = "started"     // an apply (or a webhook deploy) begins changing the host
	Succeeded  Kind = "succeeded"   // it finished and its containers passed the health gate
	Failed     Kind = "failed"      // it failed (invalid specs, a refused plan, a failed action, a failed gate, a failed rollback)
	RolledBack Kind = "rolled-back" // a container failed the health gate and the last good generation runs again
	Drift      Kind = "drift"       // a check found units that differ from the applied specs, for the first time
	// Test is what `syslet notify-test` and `webhookd --notify-test` send;
	// every target gets it, whatever its events.
	Test Kind = "test"
)

// Kinds are the events a target may choose from.
var Kinds = []Kind{Started, Succeeded, Failed, RolledBack, Drift}

// Version is the version of the Event document; a change that is not an
// addition of a field gets a new one.
const Version = 1

// Event is the document every target is sent (as JSON by the webhook
// target; the chat, ntfy and mail targets write it as text).
type Event struct {
	Version int       `json:"version"`
	ID      string    `json:"id"` // unique per event; the same on every retry (X-Syslet-Delivery)
	Event   Kind      `json:"event"`
	Time    time.Time `json:"time"`
	Host    string    `json:"host"`
	Source  Source    `json:"source"`
	Run     string    `json:"run,omitempty"` // the run journal's id (syslet history RUN)
	// Summary is the plan's or the result's one line.
	Summary string `json:"summary,omitempty"`
	Plan    *Plan  `json:"plan,omitempty"`
	// DurationSeconds is how long the run took (for webhookd: the whole
	// attempt, fetch and checkout included).
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
	Error           string  `json:"error,omitempty"`
	// Stage is where a webhook deploy failed: fetch, checkout, apply,
	// health-gate.
	Stage string `json:"stage,omitempty"`
	// Failing are the units that failed (an action, the health gate), with
	// their last journal lines, secret values scrubbed.
	Failing  []Unit    `json:"failing,omitempty"`
	Rollback *Rollback `json:"rollback,omitempty"`
	// Drift lists the units a drift check found differing.
	Drift []DriftUnit `json:"drift,omitempty"`
	// Findings are why the specs are invalid: the first MaxFindings
	// errors, each naming its file, JSON path, rule and message;
	// FindingCount counts them all.
	Findings     []report.Finding `json:"findings,omitempty"`
	FindingCount int              `json:"findingCount,omitempty"`
}

// MaxFindings is how many of the specs' errors an event, webhookd's
// /status and its page carry: enough to fix the first ones, and a
// document of bounded size however broken the specs are.
const MaxFindings = 10

// Source is where the specs came from.
type Source struct {
	// Kind is git (a webhook deploy), stdin, path, stored
	// (/etc/syslet/config.json) or rollback.
	Kind string `json:"kind"`
	// Text is the source as the run journal records it.
	Text    string `json:"text"`
	Repo    string `json:"repo,omitempty"`    // webhookd's repository name
	Commit  string `json:"commit,omitempty"`  // the commit deployed
	Trigger string `json:"trigger,omitempty"` // "github push <delivery>", "poll", "drift check", "reconcile"
	// Signer is who signed the commit, when its signature was checked:
	// "principal (key type SHA256:fingerprint)".
	Signer string `json:"signer,omitempty"`
}

// Plan counts the plan's units by effect, and its actions.
type Plan struct {
	Create    int `json:"create"`
	Change    int `json:"change"`
	Reload    int `json:"reload"`
	Metadata  int `json:"metadata"`
	Remove    int `json:"remove"`
	Start     int `json:"start"`
	Stop      int `json:"stop"`
	Drift     int `json:"drift"`
	Unchanged int `json:"unchanged"`
	Actions   int `json:"actions"`
}

// Unit is one unit that failed. Unit is empty for a failure that names no
// unit (the health gate could not read the units' state at all).
type Unit struct {
	Unit   string   `json:"unit"`
	Reason string   `json:"reason"`
	Log    []string `json:"log,omitempty"`
}

// Rollback is what the rollback after a failed health gate did.
type Rollback struct {
	Run        string `json:"run"`        // the rollback's own run
	Generation string `json:"generation"` // the run whose generation it applied again
	Passed     bool   `json:"passed"`
	Error      string `json:"error,omitempty"`
}

// Drift kinds: how a unit differs from the applied specs.
const (
	DriftEdited = "drift"  // edited by hand since syslet wrote it; an apply leaves it (--force replaces it)
	DriftChange = "change" // an apply would change it (create, restart, reload, rewrite, remove, stop)
	DriftStart  = "start"  // unchanged, but not running: an apply would start it
	// DriftStaleImage: running, but on an older image than its tag names
	// on the host (pulled, not restarted); an apply leaves it, an update
	// restarts it.
	DriftStaleImage = "stale-image"
	// DriftProbe: running, but its readiness probe fails now (asked once,
	// from the host). No apply mends it: the service itself no longer
	// serves.
	DriftProbe = "probe"
)

// DriftUnit is one unit a drift check found differing.
type DriftUnit struct {
	Unit    string   `json:"unit"`
	Kind    string   `json:"kind"`   // DriftEdited, DriftChange, DriftStart or DriftProbe
	Effect  string   `json:"effect"` // the plan's effect (drift, restart, start, ...)
	Reasons []string `json:"reasons,omitempty"`
}

// What says in words how the unit differs, for a reader without the
// plan's reasons at hand (webhookd's page), with the plan's effect when it
// says more: "would change (restart)". An edited unit's effect is its kind
// again, and a unit not running would be started.
func (d DriftUnit) What() string {
	w, ok := driftWords[d.Kind]
	if !ok {
		w = d.Kind
	}
	if d.Effect != "" && d.Effect != d.Kind {
		w += " (" + d.Effect + ")"
	}
	return w
}

var driftWords = map[string]string{DriftEdited: "edited by hand", DriftChange: "would change", DriftStart: "not running", DriftProbe: "probe failing"}

// Bounds on what one event carries, so that a run with many failures
// still makes a message every target accepts.
const (
	maxUnits    = 20
	maxLogLines = 15
	maxLine     = 400
	maxText     = 2000
	maxDrift    = 100
)

// normalize fills the envelope and bounds the content.
func (ev *Event) normalize() {
	ev.Version = Version
	if ev.ID == "" {
		ev.ID = NewID()
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	ev.Summary = clip(ev.Summary, maxText)
	ev.Error = clip(ev.Error, maxText)
	if len(ev.Failing) > maxUnits {
		ev.Failing = ev.Failing[:maxUnits]
	}
	for i := range ev.Failing {
		u := &ev.Failing[i]
		u.Reason = clip(u.Reason, maxText)
		if len(u.Log) > maxLogLines {
			u.Log = u.Log[len(u.Log)-maxLogLines:]
		}
		for k := range u.Log {
			u.Log[k] = clip(u.Log[k], maxLine)
		}
	}
	if len(ev.Drift) > maxDrift {
		ev.Drift = ev.Drift[:maxDrift]
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut at a rune boundary.
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// NewID returns a fresh event id.
func NewID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return fmt.Sprintf("t%d", time.Now().UnixNano())
	}
	return hex.EncodeToString(b)
}

// ParseKind reads an event name as a target's events list holds it.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("%q is not an event (want started, succeeded, failed, rolled-back or drift)", s)
}
