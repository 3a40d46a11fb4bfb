package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/app/planfile"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// A saved plan is what was reviewed, kept so that exactly it runs: `syslet
// --diff --out FILE` writes the plan with the digest of its input and a
// fingerprint of every piece of host state it was derived from
// (pkg/app/planfile); `syslet --plan FILE` reads the host again and
// applies the plan only when none of that changed and the plan it makes
// now is the saved one, digest for digest (terraform's plan -out and apply
// PLANFILE, for a host). The file holds no specs: applying a saved plan
// takes the same input again, and checks its digest.

// ErrStale: the saved plan no longer holds.
var ErrStale = errors.New("the saved plan is stale")

// savedState is the host state a plan is derived from, as a saved plan
// keeps it: what Observe read and the journal's last run.
func savedState(obs *plan.Observed, runs []*runlog.RunInfo) *planfile.State {
	st := &planfile.State{Fingerprint: obs.Fingerprint()}
	if last := lastChange(runs); last != nil {
		st.LastRun = &planfile.RunStamp{Run: last.ID(), Result: last.Result()}
	}
	return st
}

// savedFile names the saved plan of a request for people.
func (req *Request) savedFile() string {
	if req.SavedFile != "" {
		return req.SavedFile
	}
	return "the saved plan"
}

// save writes the plan of a --diff as a saved plan: to the file named, or
// ("-") as the document it returns, for the caller to print. It returns
// the plan's digest.
func (r *runner) save(in passInput, pl planned, release unit.Podman) (digest string, doc []byte, err error) {
	req := r.req
	if who, busy, err := held(req.Root); err != nil {
		return "", nil, fmt.Errorf("%w; no plan was saved", err)
	} else if busy {
		return "", nil, fmt.Errorf("an apply is in progress (%s): a plan saved now would be stale as soon as it ends; no plan was saved", who)
	}
	p := pl.plan
	f := &planfile.File{Format: planfile.Format, Syslet: req.Version, Made: time.Now().UTC().Truncate(time.Second), Host: view.Hostname(), Root: req.Root,
		Source: in.source, Specs: in.set.Count(), Sources: len(in.set.Sources), InputDigest: in.set.Digest(), Podman: release.String(),
		Options: planfile.Options{Force: req.Force, AllowRemovals: req.AllowRemovals},
		Plan:    p, PlanDigest: p.Digest(), Summary: view.PlanSummary(p), State: *pl.state}
	f.Seal()
	if req.SavePlan == "-" {
		var b bytes.Buffer
		if err := f.Encode(&b); err != nil {
			return "", nil, fmt.Errorf("writing the saved plan: %w", err)
		}
		doc = b.Bytes()
	} else if err := f.WriteFile(req.SavePlan); err != nil {
		return "", nil, err
	}
	r.view.SavedWritten(f.View(req.SavePlan))
	return f.PlanDigest, doc, nil
}

// checkSaved is the check before a saved plan runs: the host, the input
// and the plan made from them now against what the saved plan was made
// from. Any difference refuses the run before anything changes, naming
// each; with Diff, it only says whether the plan still holds. It returns
// the saved plan's digest when it holds, what changed when it does not.
func (r *runner) checkSaved(in passInput, pl planned, release unit.Podman) (digest string, stale []string, err error) {
	req, f, p := r.req, r.req.Saved, pl.plan
	changes := f.Stale(planfile.Now{Host: view.Hostname(), Root: req.Root, InputDigest: in.set.Digest(), Podman: release.String(),
		State: *pl.state, Runs: pl.runs})
	if len(changes) == 0 && p.Digest() != f.PlanDigest {
		// Nothing it was derived from changed, yet the plan differs: this
		// syslet plans otherwise (another version, another option).
		changes = append(changes, fmt.Sprintf("the plan syslet makes now differs from the saved one (digest %.12s, saved %.12s), though the host and the input are as they were (saved by syslet %s, this is %s)",
			p.Digest(), f.PlanDigest, orUnknown(f.Syslet), orUnknown(req.Version)))
	}
	v := f.View(req.savedFile())
	if len(changes) > 0 {
		r.view.SavedStale(v, changes)
		if !req.Diff {
			intent := r.intent(in, p)
			end := runlog.Record{Result: verdict.Refused.Journal(), Error: "saved plan is stale: " + strings.Join(changes, "; ")}
			if _, err := r.jr.Record(intent, end); err != nil {
				r.view.Warning(err.Error())
			}
		}
		return "", changes, fmt.Errorf("%w: %d change(s) since it was made; nothing was changed (make a new plan and review it)", ErrStale, len(changes))
	}
	r.view.SavedHolds(v, req.Diff)
	return f.PlanDigest, nil, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
