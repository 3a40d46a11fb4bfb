package planfile

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
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/plan"
)

// Format is the saved plan format this syslet writes and reads.
const Format = 1

// maxSize bounds a saved plan read from a file or stdin.
const maxSize = 256 << 20

// File is one saved plan.
type File struct {
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
	Podman  string  `json:"podman"`
	Options Options `json:"options"`
	// Plan, PlanDigest and Summary are what `syslet --diff --output json`
	// prints under the same names.
	Plan       *plan.Plan `json:"plan"`
	PlanDigest string     `json:"planDigest"`
	Summary    string     `json:"summary"`
	// State is the host state the plan was derived from.
	State State `json:"state"`
	// Digest is the sha256 of the file's JSON encoding with this field
	// empty: a file edited after syslet wrote it does not match it.
	Digest string `json:"digest"`
}

// Options are the options that shaped the plan; applying it uses them
// again (they are not given anew).
type Options struct {
	Force         bool `json:"force,omitempty"`
	AllowRemovals bool `json:"allowRemovals,omitempty"`
}

// State is the host state a saved plan was derived from: the run journal's
// last run (another apply since changes it) and the fingerprint of what
// plan.Observe read.
type State struct {
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

// ErrInvalid: the input is not a saved plan syslet wrote, or it was edited
// since.
var ErrInvalid = errors.New("not a valid saved plan")

// Seal sets the file's digest over its content; call it last.
func (f *File) Seal() { f.Digest = f.sum() }

// Open reads the saved plan at path; "-" reads it from stdin, as the
// first JSON value there, and returns the rest of stdin (the specs of
// `syslet --plan - --stdin`). For a file, rest is stdin as it was.
func Open(path string, stdin io.Reader) (f *File, rest io.Reader, err error) {
	if path == "-" {
		if stdin == nil {
			stdin = strings.NewReader("")
		}
		return Read(stdin)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the saved plan: %w", err)
	}
	defer fh.Close()
	f, _, err = Read(fh)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, stdin, nil
}

// Read decodes one saved plan from the start of r and checks that it is
// whole and unedited: its format, its plan digest against its actions,
// its digest against its content. rest is what r holds after it.
func Read(r io.Reader) (*File, io.Reader, error) {
	lr := &io.LimitedReader{R: r, N: maxSize}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		if lr.N <= 0 {
			return nil, nil, fmt.Errorf("%w: larger than %d MiB", ErrInvalid, maxSize>>20)
		}
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := f.verify(); err != nil {
		return nil, nil, err
	}
	// The plan ends with the newline Encode writes; what follows it is
	// the rest, byte for byte (its digest is checked).
	rest := bufio.NewReader(io.MultiReader(dec.Buffered(), r))
	if b, err := rest.Peek(1); err == nil && b[0] == '\n' {
		_, _ = rest.Discard(1)
	}
	return &f, rest, nil
}

// verify checks what Read promises.
func (f *File) verify() error {
	switch {
	case f.Format != Format:
		return fmt.Errorf("%w: format %d; this syslet reads format %d", ErrInvalid, f.Format, Format)
	case f.Plan == nil:
		return fmt.Errorf("%w: it holds no plan", ErrInvalid)
	}
	if got := f.Plan.Digest(); got != f.PlanDigest {
		return fmt.Errorf("%w: its actions do not match its plan digest (%.12s in the file, %.12s of the actions it lists): it was edited after syslet wrote it; make a new plan",
			ErrInvalid, f.PlanDigest, got)
	}
	if got := f.sum(); got != f.Digest {
		return fmt.Errorf("%w: its content does not match its digest (%.12s in the file, %.12s of its content): it was edited after syslet wrote it; make a new plan",
			ErrInvalid, strings.TrimPrefix(f.Digest, "sha256:"), strings.TrimPrefix(got, "sha256:"))
	}
	return nil
}

// sum is the file's digest: of its compact JSON with Digest empty. A file
// decoded and encoded again gives the same bytes (Go encodes struct fields
// in order and map keys sorted; unknown fields are refused on reading),
// so the digest survives reformatting but not a change.
func (f *File) sum() string {
	c := *f
	c.Digest = ""
	b, err := json.Marshal(&c)
	if err != nil {
		panic(fmt.Sprintf("encoding a saved plan: %v", err)) // plain data: cannot fail
	}
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Encode writes the saved plan as indented JSON.
func (f *File) Encode(w io.Writer) error { return view.WriteJSON(w, f) }

// WriteFile writes the saved plan to path, mode 0600, through a temporary
// file in the same directory: a crash leaves the old file or the new one.
func (f *File) WriteFile(path string) error {
	var b bytes.Buffer
	if err := f.Encode(&b); err != nil {
		return err
	}
	if err := bounded.WriteState(path, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("writing the saved plan %s: %w", path, err)
	}
	return nil
}

// View is what people are told of the saved plan (pkg/app/view draws it).
func (f *File) View(file string) view.Saved {
	v := view.Saved{File: file, Made: f.Made, Host: f.Host, Root: f.Root, Syslet: f.Syslet, Source: f.Source,
		Specs: f.Specs, Sources: f.Sources, InputDigest: f.InputDigest, Podman: f.Podman, PlanDigest: f.PlanDigest,
		Force: f.Options.Force, AllowRemovals: f.Options.AllowRemovals, NoHost: !f.State.UnitsKnown,
		Files: len(f.State.Files), Units: len(f.State.Units), Secrets: len(f.State.Secrets), Images: len(f.State.Images)}
	if f.Plan != nil {
		v.Actions = len(f.Plan.Actions)
	}
	if f.State.LastRun != nil {
		v.LastRun = f.State.LastRun.String()
	}
	return v
}

// Against is the header a saved plan is drawn with, as --diff drew it.
func (f *File) Against() view.Against {
	return view.Against{Specs: f.Specs, Sources: f.Sources, Root: f.Root, NoHost: !f.State.UnitsKnown}
}
