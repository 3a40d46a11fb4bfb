package deploy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// A saved plan is what was reviewed, kept so that exactly it runs: `syslet
// --diff --out FILE` writes the plan with the digest of its input and a
// fingerprint of every piece of host state it was derived from; `syslet
// --plan FILE` reads the host again and applies the plan only when none of
// that changed and the plan it makes now is the saved one, digest for
// digest (terraform's plan -out and apply PLANFILE, for a host).
//
// The file holds no secret value and no content of any file: the plan's
// JSON form already leaves out contents (actions carry digests, diffs of
// files others may not read are described, never shown), the fingerprint
// is digests, modes, states, names and labels, and the specs themselves
// are not in it (a config file's content may be 0600). Applying a saved
// plan therefore takes the same input again, and checks its digest.

// SavedFormat is the saved plan format this syslet writes and reads.
const SavedFormat = 1

// maxSaved bounds a saved plan read from a file or stdin.
const maxSaved = 256 << 20

// SavedPlan is one saved plan file.
type SavedPlan struct {
	Format int `json:"format"`
	// Syslet is the version of the syslet that made the plan.
	Syslet string    `json:"syslet,omitempty"`
	Made   time.Time `json:"made"`
	// Host is the host name of the machine the plan was made on, Root the
	// tree it manages ("/" for the host itself).
	Host string `json:"host"`
	Root string `json:"root"`
	// Source, Specs and Sources describe the input as the plan's header
	// does; InputDigest is its digest (load.Set.Digest).
	Source      string `json:"source"`
	Specs       int    `json:"specs"`
	Sources     int    `json:"sources"`
	InputDigest string `json:"inputDigest"`
	// Podman is the podman release the units were checked against.
	Podman  string       `json:"podman"`
	Options SavedOptions `json:"options"`
	// Plan, PlanDigest and Summary are what `syslet --diff --output json`
	// prints under the same names.
	Plan       *plan.Plan `json:"plan"`
	PlanDigest string     `json:"planDigest"`
	Summary    string     `json:"summary"`
	// State is the host state the plan was derived from.
	State SavedState `json:"state"`
	// Digest is the sha256 of the file's JSON encoding with this field
	// empty: a file edited after syslet wrote it does not match it.
	Digest string `json:"digest"`
}

// SavedOptions are the options that shaped the plan; applying it uses
// them again (they are not given anew).
type SavedOptions struct {
	Force         bool `json:"force,omitempty"`
	AllowRemovals bool `json:"allowRemovals,omitempty"`
}

// SavedState is the host state a saved plan was derived from: the run
// journal's last run (another apply since changes it) and the fingerprint
// of what Observe read.
type SavedState struct {
	LastRun *RunStamp `json:"lastRun"`
	plan.Fingerprint
}

// RunStamp is one run of the journal, by id and result.
type RunStamp struct {
	Run    string `json:"run"`
	Result string `json:"result"`
}

func (s *RunStamp) String() string {
	if s == nil {
		return "none"
	}
	return s.Run + " (" + s.Result + ")"
}

// Errors of saved plans: a file that is not a saved plan syslet wrote (or
// that was edited since), and a plan that no longer holds.
var (
	ErrSavedPlan = errors.New("not a valid saved plan")
	ErrStale     = errors.New("the saved plan is stale")
)

// OpenSaved reads the saved plan at path; "-" reads it from stdin, as the
// first JSON value there, and returns the rest of stdin (the specs of
// `syslet --plan - --stdin`). For a file, rest is stdin as it was.
func OpenSaved(path string, stdin io.Reader) (s *SavedPlan, rest io.Reader, err error) {
	if path == "-" {
		if stdin == nil {
			stdin = strings.NewReader("")
		}
		return ReadSaved(stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the saved plan: %w", err)
	}
	defer f.Close()
	s, _, err = ReadSaved(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, stdin, nil
}

// ReadSaved decodes one saved plan from the start of r and checks that it
// is whole and unedited: its format, its plan digest against its actions,
// its digest against its content. rest is what r holds after it.
func ReadSaved(r io.Reader) (*SavedPlan, io.Reader, error) {
	lr := &io.LimitedReader{R: r, N: maxSaved}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	var s SavedPlan
	if err := dec.Decode(&s); err != nil {
		if lr.N <= 0 {
			return nil, nil, fmt.Errorf("%w: larger than %d MiB", ErrSavedPlan, maxSaved>>20)
		}
		return nil, nil, fmt.Errorf("%w: %w", ErrSavedPlan, err)
	}
	if err := s.verify(); err != nil {
		return nil, nil, err
	}
	// The plan ends with the newline Encode writes; what follows it is
	// the rest, byte for byte (its digest is checked).
	rest := bufio.NewReader(io.MultiReader(dec.Buffered(), r))
	if b, err := rest.Peek(1); err == nil && b[0] == '\n' {
		_, _ = rest.Discard(1)
	}
	return &s, rest, nil
}

// verify checks what ReadSaved promises.
func (s *SavedPlan) verify() error {
	switch {
	case s.Format != SavedFormat:
		return fmt.Errorf("%w: format %d; this syslet reads format %d", ErrSavedPlan, s.Format, SavedFormat)
	case s.Plan == nil:
		return fmt.Errorf("%w: it holds no plan", ErrSavedPlan)
	}
	if got := s.Plan.Digest(); got != s.PlanDigest {
		return fmt.Errorf("%w: its actions do not match its plan digest (%.12s in the file, %.12s of the actions it lists): it was edited after syslet wrote it; make a new plan",
			ErrSavedPlan, s.PlanDigest, got)
	}
	if got := s.sum(); got != s.Digest {
		return fmt.Errorf("%w: its content does not match its digest (%.12s in the file, %.12s of its content): it was edited after syslet wrote it; make a new plan",
			ErrSavedPlan, strings.TrimPrefix(s.Digest, "sha256:"), strings.TrimPrefix(got, "sha256:"))
	}
	return nil
}

// sum is the file's digest: of its compact JSON with Digest empty. A file
// decoded and encoded again gives the same bytes (Go encodes struct fields
// in order and map keys sorted; unknown fields are refused on reading),
// so the digest survives reformatting but not a change.
func (s *SavedPlan) sum() string {
	c := *s
	c.Digest = ""
	b, err := json.Marshal(&c)
	if err != nil {
		panic(fmt.Sprintf("encoding a saved plan: %v", err)) // plain data: cannot fail
	}
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Encode writes the saved plan as indented JSON.
func (s *SavedPlan) Encode(w io.Writer) error { return view.JSON(w, s) }

// WriteFile writes the saved plan to path, mode 0600, through a temporary
// file in the same directory: a crash leaves the old file or the new one.
func (s *SavedPlan) WriteFile(path string) error {
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		return err
	}
	if err := bounded.WriteState(path, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("writing the saved plan %s: %w", path, err)
	}
	return nil
}

// View is what people are told of the saved plan (pkg/app/view draws it).
func (s *SavedPlan) View(file string) view.Saved {
	v := view.Saved{File: file, Made: s.Made, Host: s.Host, Root: s.Root, Syslet: s.Syslet, Source: s.Source,
		Specs: s.Specs, Sources: s.Sources, InputDigest: s.InputDigest, Podman: s.Podman, PlanDigest: s.PlanDigest,
		Force: s.Options.Force, AllowRemovals: s.Options.AllowRemovals, NoHost: !s.State.UnitsKnown,
		Files: len(s.State.Files), Units: len(s.State.Units), Secrets: len(s.State.Secrets), Images: len(s.State.Images)}
	if s.Plan != nil {
		v.Actions = len(s.Plan.Actions)
	}
	if s.State.LastRun != nil {
		v.LastRun = s.State.LastRun.String()
	}
	return v
}

// Against is the header a saved plan is drawn with, as --diff drew it.
func (s *SavedPlan) Against() view.Against {
	return view.Against{Specs: s.Specs, Sources: s.Sources, Root: s.Root, NoHost: !s.State.UnitsKnown}
}

// savedFile names the saved plan of a request for people.
func (req *Request) savedFile() string {
	if req.SavedFile != "" {
		return req.SavedFile
	}
	return "the saved plan"
}

// useSaved takes the options that shaped a saved plan into the request
// that applies it.
func (req *Request) useSaved() {
	if req.Saved != nil {
		req.Force, req.AllowRemovals = req.Saved.Options.Force, req.Saved.Options.AllowRemovals
	}
}

// observed keeps, for a run that saves its plan or applies a saved one,
// the host state the plan is derived from: what Observe read and the
// journal's last run. Other runs pay nothing for it.
func (r *runner) observed(obs *plan.Observed, runs []*runlog.RunInfo) {
	if r.req.SavePlan == "" && r.req.Saved == nil {
		return
	}
	st := &SavedState{Fingerprint: obs.Fingerprint()}
	if last := lastChange(runs); last != nil {
		st.LastRun = &RunStamp{Run: last.ID(), Result: last.Result()}
	}
	r.state, r.runs = st, runs
}

// quietSince reports whether every run of the journal after the one stamp
// names changed nothing on the host: each ended with no changes (an apply
// that found the host as its specs say) or was refused. A saved plan then
// still holds, as far as the journal goes: the host state is checked item
// by item anyway, and the plan made again must have the saved digest. It
// is false when that run is not among the recent runs read, or no longer
// reads as it did (a run in progress that ended since).
func quietSince(runs []*runlog.RunInfo, stamp *RunStamp) bool {
	from := 0
	if stamp != nil {
		from = slices.IndexFunc(runs, func(ri *runlog.RunInfo) bool { return ri.ID() == stamp.Run }) + 1
		if from == 0 || runs[from-1].Result() != stamp.Result {
			return false
		}
	}
	for _, ri := range runs[from:] {
		if res := ri.Result(); res != runlog.ResultNoChanges && res != runlog.ResultRefused {
			return false
		}
	}
	return true
}

// save writes the plan of a --diff as a saved plan, when asked to.
func (r *runner) save(l *load.Set, p *plan.Plan) error {
	req := r.req
	if req.SavePlan == "" || !req.Diff {
		return nil
	}
	if who, busy, err := held(req.Root); err != nil {
		return fmt.Errorf("%w; no plan was saved", err)
	} else if busy {
		return fmt.Errorf("an apply is in progress (%s): a plan saved now would be stale as soon as it ends; no plan was saved", who)
	}
	if r.state == nil {
		return errors.New("internal error: the host state of the plan was not kept; no plan was saved")
	}
	s := &SavedPlan{Format: SavedFormat, Syslet: req.Version, Made: time.Now().UTC().Truncate(time.Second), Host: hostname(), Root: req.Root,
		Source: req.Source, Specs: l.Count(), Sources: len(l.Sources), InputDigest: l.Digest(), Podman: r.release.String(),
		Options: SavedOptions{Force: req.Force, AllowRemovals: req.AllowRemovals},
		Plan:    p, PlanDigest: p.Digest(), Summary: view.PlanSummary(p), State: *r.state}
	s.Digest = s.sum()
	if req.SavePlan == "-" {
		if err := s.Encode(req.Stdout); err != nil {
			return fmt.Errorf("writing the saved plan: %w", err)
		}
	} else if err := s.WriteFile(req.SavePlan); err != nil {
		return err
	}
	r.out.SavedPlan = s.PlanDigest
	view.SavedWritten(r.human, s.View(req.SavePlan))
	return nil
}

// checkSaved is the check before a saved plan runs: the host, the input
// and the plan made from them now against what the saved plan was made
// from. Any difference refuses the run before anything changes, naming
// each; with Diff, it only says whether the plan still holds.
func (r *runner) checkSaved(runID string, l *load.Set, p *plan.Plan, rs *restore) error {
	req, s := r.req, r.req.Saved
	if s == nil || rs != nil {
		return nil
	}
	if r.state == nil {
		return errors.New("internal error: the host state was not read for the saved plan's check; nothing was changed")
	}
	changes := staleness(s, r.state, quietSince(r.runs, s.State.LastRun), hostname(), req.Root, l.Digest(), r.release.String())
	if len(changes) == 0 && p.Digest() != s.PlanDigest {
		// Nothing it was derived from changed, yet the plan differs: this
		// syslet plans otherwise (another version, another option).
		changes = append(changes, fmt.Sprintf("the plan syslet makes now differs from the saved one (digest %.12s, saved %.12s), though the host and the input are as they were (saved by syslet %s, this is %s)",
			p.Digest(), s.PlanDigest, orUnknown(s.Syslet), orUnknown(req.Version)))
	}
	v := s.View(req.savedFile())
	if len(changes) > 0 {
		r.out.Stale = changes
		view.SavedStale(req.Stderr, v, changes)
		if !req.Diff {
			intent := r.intent(runID, l, p, nil)
			end := runlog.Record{Result: runlog.ResultRefused, Error: "saved plan is stale: " + strings.Join(changes, "; ")}
			if _, err := r.jr.Record(intent, end); err != nil {
				fmt.Fprintln(req.Stderr, "syslet: warning:", err)
			}
		}
		return fmt.Errorf("%w: %d change(s) since it was made; nothing was changed (make a new plan and review it)", ErrStale, len(changes))
	}
	r.out.SavedPlan = s.PlanDigest
	view.SavedHolds(r.human, v, req.Diff)
	return nil
}

// staleness lists what differs between what the saved plan was made from
// and now: the host it was made on, the input, the podman release, the
// journal's last run (unless every run since changed nothing: quiet), then
// the host's state item by item.
func staleness(s *SavedPlan, now *SavedState, quiet bool, host, root, input, podman string) []string {
	var out []string
	if s.Host != host {
		out = append(out, fmt.Sprintf("the host: the plan was made on %q, this is %q", s.Host, host))
	}
	if s.Root != root {
		out = append(out, fmt.Sprintf("the managed root: the plan was made for %s, this run manages %s", s.Root, root))
	}
	sameInput := s.InputDigest == input
	if !sameInput {
		out = append(out, fmt.Sprintf("the input: its digest is %.12s, the plan was made from input %.12s (%s): give the same specs", input, s.InputDigest, s.Source))
	}
	if s.Podman != podman {
		out = append(out, fmt.Sprintf("podman: the units were checked against podman %s, now against %s", s.Podman, podman))
	}
	if !quiet && ((s.State.LastRun == nil) != (now.LastRun == nil) || s.State.LastRun != nil && *s.State.LastRun != *now.LastRun) {
		out = append(out, fmt.Sprintf("another run since the plan was made: the journal's last run is %s, it was %s", now.LastRun, s.State.LastRun))
	}
	return append(out, s.State.Changes(now.Fingerprint, sameInput)...)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
