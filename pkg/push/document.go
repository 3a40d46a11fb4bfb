package push

import (
	"time"
)

// Document is what `syslet push --output json` prints: one JSON document
// per run, after every host's turn.
type Document struct {
	// Command is what ran on each host.
	Command string `json:"command"`
	// Batches is the number of batches the targets were split into.
	Batches int           `json:"batches"`
	Hosts   []HostOutcome `json:"hosts"`
	// Stopped says why hosts were not reached; null when every host had
	// its turn.
	Stopped *StopOutcome `json:"stopped"`
	// Counts is the number of hosts of each outcome.
	Counts map[string]int `json:"counts"`
	// ExitCode is the code `syslet push` exits with.
	ExitCode int `json:"exitCode"`
}

// HostOutcome is one host of a Document.
type HostOutcome struct {
	Host    string `json:"host"`
	Address string `json:"address"`
	Batch   int    `json:"batch"`
	// Outcome is the ending's word: applied, unchanged, planned, ok,
	// failed, refused, unreachable, not reached, rolled back, rollback
	// failed, stale (ending.go).
	Outcome string `json:"outcome"`
	// Verdict is the verdict the host's syslet reported, by its machine
	// name (pkg/verdict); absent when it reported none.
	Verdict string `json:"verdict,omitempty"`
	// ExitCode is the remote command's exit status; null when it
	// reported none (not reached, unreachable, killed).
	ExitCode *int   `json:"exitCode"`
	Plan     string `json:"plan,omitempty"`
	// Run is the ID of the run the host's syslet made of the change,
	// RollbackRun that of the run that rolled it back.
	Run         string `json:"run,omitempty"`
	RollbackRun string `json:"rollbackRun,omitempty"`
	// Reason is why the host did not succeed: its syslet's own verdict,
	// the error, or what the check after the pause found.
	Reason string `json:"reason,omitempty"`
	// Started is when push began to connect to it; Seconds is the whole
	// of its turn, ConnectSeconds the connect, host key check and login.
	Started        *time.Time `json:"started,omitempty"`
	Seconds        float64    `json:"seconds"`
	ConnectSeconds float64    `json:"connectSeconds"`
	// Check is the look at the host after the pause that followed its
	// batch.
	Check *CheckOutcome `json:"check,omitempty"`
}

// CheckOutcome is a Check in a Document.
type CheckOutcome struct {
	Seconds  float64  `json:"seconds"`
	Problems []string `json:"problems"`
}

// StopOutcome is a Stop in a Document.
type StopOutcome struct {
	Batch       int    `json:"batch"`
	AfterPause  bool   `json:"afterPause"`
	Interrupted bool   `json:"interrupted"`
	Host        string `json:"host,omitempty"`
	Outcome     string `json:"outcome,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Failed      int    `json:"failed"`
	Allowed     int    `json:"allowed"`
	// Message says all of it in one sentence, as the table does.
	Message string `json:"message"`
}

// Document describes the rollout for --output json; the caller sets
// ExitCode.
func (rep Report) Document(command string) Document {
	d := Document{Command: command, Batches: rep.Batches, Hosts: []HostOutcome{}, Counts: map[string]int{}}
	for _, r := range rep.Results {
		h := HostOutcome{Host: r.Target.Arg, Address: r.Target.Addr(), Batch: r.Batch, Outcome: r.Ending.String(),
			Plan: r.Plan(), Reason: r.Reason(), Seconds: r.Duration.Seconds(), ConnectSeconds: r.Connect.Seconds()}
		if v := r.Ending.Verdict; v != 0 {
			h.Verdict = v.ID()
		}
		if r.ExitCode >= 0 {
			code := r.ExitCode
			h.ExitCode = &code
		}
		h.Run, h.RollbackRun = r.Runs()
		if !r.Started.IsZero() {
			t := r.Started.UTC()
			h.Started = &t
		}
		if c := r.Check; c != nil {
			h.Check = &CheckOutcome{Seconds: c.Took.Seconds(), Problems: append([]string{}, c.Problems...)}
		}
		d.Hosts = append(d.Hosts, h)
		d.Counts[h.Outcome]++
	}
	if st := rep.Stop; st != nil {
		d.Stopped = &StopOutcome{Batch: st.Batch, AfterPause: st.AfterPause, Interrupted: st.Interrupted, Host: st.Host,
			Reason: st.Why, Failed: st.Failed, Allowed: st.Allowed, Message: st.Message()}
		if !st.Interrupted {
			d.Stopped.Outcome = st.Outcome.String()
		}
	}
	return d
}
