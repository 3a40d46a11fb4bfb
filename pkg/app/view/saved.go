package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/plan"
)

// Saved is a saved plan as people are told of it: what it was made from
// and against (pkg/app/deploy's SavedPlan says it).
type Saved struct {
	// File is the plan file as named on the command line ("-": stdin or
	// stdout).
	File                 string
	Made                 time.Time
	Host, Root, Syslet   string
	Source               string
	Specs, Sources       int
	InputDigest, Podman  string
	PlanDigest           string
	Actions              int
	Force, AllowRemovals bool
	// NoHost: made under --root, without systemd and podman.
	NoHost bool
	// What the fingerprint holds, and the journal's last run.
	Files, Units, Secrets, Images int
	LastRun                       string
}

func (s Saved) made() string {
	return fmt.Sprintf("made %s on %s", s.Made.UTC().Format(time.RFC3339), redact.Escape(s.Host))
}

// file names the plan file after "Saved plan": its path, or where it was
// read from.
func (s Saved) file() string {
	if s.File == "-" || s.File == "" {
		return "from stdin"
	}
	return redact.Escape(s.File)
}

// the names the plan file in a sentence.
func (s Saved) the() string {
	if s.File == "-" || s.File == "" {
		return "the plan from stdin"
	}
	return redact.Escape(s.File)
}

// options lists the options the plan was made with, as flags.
func (s Saved) options() string {
	var o []string
	if s.Force {
		o = append(o, "--force")
	}
	if s.AllowRemovals {
		o = append(o, "--allow-removals")
	}
	if len(o) == 0 {
		return "none"
	}
	return strings.Join(o, " ")
}

// SavedHeader writes what `syslet show` puts above the plan: where the
// saved plan comes from and the host state it holds.
func SavedHeader(w io.Writer, s Saved) {
	fmt.Fprintf(w, "Saved plan %s: %s by syslet %s\n", s.file(), s.made(), orDash(s.Syslet))
	fmt.Fprintf(w, "  input:      %s (digest %.12s)\n", redact.Escape(s.Source), s.InputDigest)
	fmt.Fprintf(w, "  checked:    against podman %s; options: %s\n", s.Podman, s.options())
	fmt.Fprintf(w, "  host state: %d file(s), %d unit(s), %d podman secret(s), %d image(s); the journal's last run: %s\n",
		s.Files, s.Units, s.Secrets, s.Images, orDash(s.LastRun))
	fmt.Fprintf(w, "  apply it:   syslet --plan FILE with the same input (it is refused if any of that changed)\n\n")
}

// SavedPlan writes a saved plan for `syslet show`: its header, then the
// plan as --diff printed it.
func SavedPlan(w io.Writer, s Saved, a Against, p *plan.Plan) {
	SavedHeader(w, s)
	PlanWithHeader(w, a, p)
}

// SavedWritten says where --diff --out saved the plan and how to apply it.
func SavedWritten(w io.Writer, s Saved) {
	where := "to stdout"
	if s.File != "-" {
		where = "to " + redact.Escape(s.File) + " (0600)"
	}
	fmt.Fprintf(w, "\nSaved the plan %s: %d action(s), digest %.12s, with the host state it was made from. "+
		"`syslet --plan FILE` and the same input apply exactly it, or refuse if the host or the input changed.\n", where, s.Actions, s.PlanDigest)
}

// SavedHolds says that a saved plan still holds: the host and the input
// are as they were, and the plan made now is the saved one.
func SavedHolds(w io.Writer, s Saved, diff bool) {
	what := "applying exactly its"
	if diff {
		what = "`syslet --plan` would apply exactly its"
	}
	fmt.Fprintf(w, "Saved plan %s (%s, digest %.12s) still holds: the host and the input are as they were; %s %d action(s).\n\n",
		s.file(), s.made(), s.PlanDigest, what, s.Actions)
}

// SavedStale refuses a saved plan that no longer holds, naming every
// change since it was made.
func SavedStale(w io.Writer, s Saved, changes []string) {
	fmt.Fprintf(w, "Saved plan is stale: %s (%s, digest %.12s) no longer holds; nothing was changed. Since it was made:\n", s.the(), s.made(), s.PlanDigest)
	for _, c := range changes {
		fmt.Fprintf(w, "  - %s\n", redact.Escape(c))
	}
	fmt.Fprintln(w, "Make a new plan (syslet --diff --out FILE), review it, and apply that one.")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
