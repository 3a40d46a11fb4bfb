package runlog

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/syslet/syslet/pkg/layout"
)

// DefaultMaxSize is the size past which the journal is rotated at the start
// of a run; one older generation is kept.
const DefaultMaxSize = 4 << 20

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
}

// Record is one line of the journal. Which fields are set depends on Type.
type Record struct {
	Type string    `json:"type"`
	Run  string    `json:"run"`
	Time time.Time `json:"time"`

	// intent
	PID         int      `json:"pid,omitempty"`
	Source      string   `json:"source,omitempty"`
	InputDigest string   `json:"inputDigest,omitempty"`
	PlanDigest  string   `json:"planDigest,omitempty"`
	Resumes     string   `json:"resumes,omitempty"` // the run this one carries actions of
	Actions     []Action `json:"actions,omitempty"`

	// step, action
	Step int `json:"step,omitempty"`
	// action
	Index  *int   `json:"i,omitempty"`
	Op     string `json:"op,omitempty"`
	Target string `json:"target,omitempty"`
	Error  string `json:"error,omitempty"`
	Millis int64  `json:"ms,omitempty"`

	// action, end
	Result string `json:"result,omitempty"`
	// end
	Applied    int `json:"applied,omitempty"`
	Failed     int `json:"failed,omitempty"`
	NotReached int `json:"notReached,omitempty"`
}

// Journal appends to the run journal under a root directory.
type Journal struct {
	path    string // the current file; the rotated one is path + ".1"
	MaxSize int64
	now     func() time.Time
}

// Open returns the journal under root ("/" on a host). Nothing is created
// until a run is started.
func Open(root string) *Journal {
	return &Journal{path: layout.Under(root, layout.Journal), MaxSize: DefaultMaxSize, now: time.Now}
}

// Path is the journal's current file.
func (j *Journal) Path() string { return j.path }

// NewRunID returns a sortable, unique run id: UTC time plus random bits.
func NewRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Run is one apply being recorded.
type Run struct {
	ID string
	f  *os.File
	j  *Journal
}

// Begin rotates the journal if it is too large, then writes and fsyncs the
// run's intent. The caller records each action with Action and closes the
// run with End.
func (j *Journal) Begin(intent Record) (*Run, error) {
	r, err := j.open(&intent)
	if err != nil {
		return nil, err
	}
	if err := r.write(intent); err != nil {
		r.f.Close()
		return nil, err
	}
	return r, nil
}

// open prepares the directory, rotates, opens the file for appending and
// stamps the intent.
func (j *Journal) open(intent *Record) (*Run, error) {
	if err := os.MkdirAll(filepath.Dir(j.path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the run journal directory: %w", err)
	}
	if err := os.Chmod(filepath.Dir(j.path), 0o700); err != nil {
		return nil, fmt.Errorf("securing the run journal directory: %w", err)
	}
	if fi, err := os.Stat(j.Path()); err == nil && j.MaxSize > 0 && fi.Size() > j.MaxSize {
		if err := os.Rename(j.Path(), j.Path()+".1"); err != nil {
			return nil, fmt.Errorf("rotating the run journal: %w", err)
		}
	}
	f, err := os.OpenFile(j.Path(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the run journal: %w", err)
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, err
	}
	if intent.Run == "" {
		intent.Run = NewRunID(j.now())
	}
	intent.Type = TypeIntent
	return &Run{ID: intent.Run, f: f, j: j}, nil
}

func (r *Run) write(recs ...Record) error {
	var b []byte
	for _, rec := range recs {
		rec.Run = r.ID
		if rec.Time.IsZero() {
			rec.Time = r.j.now().UTC()
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encoding a journal line: %w", err)
		}
		b = append(append(b, line...), '\n')
	}
	if _, err := r.f.Write(b); err != nil {
		return fmt.Errorf("writing the run journal: %w", err)
	}
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("syncing the run journal: %w", err)
	}
	return nil
}

// endLine terminates a torn last line left by a crash mid-write, so the
// next record starts on a line of its own.
func endLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return nil // opened write-only on some systems; the reader skips a glued line
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	return err
}

// Record writes a run that executed nothing — its intent and its end — in
// one write and one fsync.
func (j *Journal) Record(intent, end Record) (string, error) {
	r, err := j.open(&intent)
	if err != nil {
		return "", err
	}
	end.Type = TypeEnd
	err = r.write(intent, end)
	if cerr := r.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the run journal: %w", cerr)
	}
	return r.ID, err
}

// Step records that a step begins.
func (r *Run) Step(step int) error { return r.write(Record{Type: TypeStep, Step: step}) }

// Action records one action's result.
func (r *Run) Action(a Action, result, errMsg string, took time.Duration) error {
	i := a.Index
	return r.write(Record{Type: TypeAction, Index: &i, Step: a.Step, Op: a.Op, Target: a.Target,
		Result: result, Error: errMsg, Millis: took.Milliseconds()})
}

// Landed is one action's result, for Actions.
type Landed struct {
	Action Action
	Result string
	Error  string
	Took   time.Duration
}

// Actions records several actions' results, one line each, in one write
// and one fsync: the executor lands the file writes of a step together.
func (r *Run) Actions(ls []Landed) error {
	if len(ls) == 0 {
		return nil
	}
	recs := make([]Record, len(ls))
	for k, l := range ls {
		i := l.Action.Index
		recs[k] = Record{Type: TypeAction, Index: &i, Step: l.Action.Step, Op: l.Action.Op, Target: l.Action.Target,
			Result: l.Result, Error: l.Error, Millis: l.Took.Milliseconds()}
	}
	return r.write(recs...)
}

// End closes the run.
func (r *Run) End(rec Record) error {
	rec.Type = TypeEnd
	err := r.write(rec)
	if cerr := r.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the run journal: %w", cerr)
	}
	return err
}

// Close releases the file without closing the run (what a crash leaves).
func (r *Run) Close() error { return r.f.Close() }

// RunInfo is one run read back from the journal.
type RunInfo struct {
	Intent  Record   `json:"intent"`
	Steps   []Record `json:"steps,omitempty"`
	Actions []Record `json:"actions"`
	End     *Record  `json:"end,omitempty"` // nil: the run never closed
}

// ID is the run's id.
func (ri *RunInfo) ID() string { return ri.Intent.Run }

// Result is the run's closing result, or "unfinished".
func (ri *RunInfo) Result() string {
	if ri.End == nil {
		return "unfinished"
	}
	return ri.End.Result
}

// LeftWorkUndone reports whether the run may have changed the host without
// finishing: it never closed, was interrupted or failed. Runs that ended
// well, changed nothing or were refused before any change did not.
func (ri *RunInfo) LeftWorkUndone() bool {
	switch ri.Result() {
	case ResultOK, ResultNoChanges, ResultRefused:
		return false
	}
	return true
}

// Done reports whether the action with this index landed.
func (ri *RunInfo) Done(i int) bool { return ri.landed()[i] }

func (ri *RunInfo) landed() map[int]bool {
	done := make(map[int]bool, len(ri.Actions))
	for _, a := range ri.Actions {
		if a.Index != nil && a.Result == ResultOK {
			done[*a.Index] = true
		}
	}
	return done
}

// Unfinished lists the intent's actions that did not land.
func (ri *RunInfo) Unfinished() []Action {
	done := ri.landed()
	var out []Action
	for _, a := range ri.Intent.Actions {
		if !done[a.Index] {
			out = append(out, a)
		}
	}
	return out
}

// Runs reads every run in the journal (the rotated generation first),
// oldest first. Lines that do not parse — a torn last line — are skipped.
func (j *Journal) Runs() ([]*RunInfo, error) {
	c := collector{byID: map[string]*RunInfo{}}
	for _, p := range []string{j.Path() + ".1", j.Path()} {
		if err := c.read(p, 0); err != nil {
			return nil, err
		}
	}
	return c.runs, nil
}

// tailSize is how much of the journal's end Recent reads first: enough for
// the last several runs of a large host.
const tailSize = 256 << 10

// Recent reads the runs whose intent lies in the last part of the current
// journal file — what a run needs to resume its predecessor — without
// parsing the whole file. When that part holds no intent it reads
// everything, as Runs does.
func (j *Journal) Recent() ([]*RunInfo, error) {
	fi, err := os.Stat(j.Path())
	if err != nil || fi.Size() <= tailSize {
		return j.Runs()
	}
	c := collector{byID: map[string]*RunInfo{}}
	if err := c.read(j.Path(), fi.Size()-tailSize); err != nil {
		return nil, err
	}
	if len(c.runs) == 0 {
		return j.Runs()
	}
	return c.runs, nil
}

type collector struct {
	runs []*RunInfo
	byID map[string]*RunInfo
}

// read adds the records of file p from offset on; a partial first line
// (when reading from an offset) does not parse and is skipped.
func (c *collector) read(p string, offset int64) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the run journal: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("reading the run journal: %w", err)
	}
	err = scan(f, func(rec Record) {
		ri := c.byID[rec.Run]
		if rec.Type == TypeIntent {
			ri = &RunInfo{Intent: rec}
			c.byID[rec.Run] = ri
			c.runs = append(c.runs, ri)
			return
		}
		if ri == nil {
			return // its intent was rotated away, or lies before the offset
		}
		switch rec.Type {
		case TypeStep:
			ri.Steps = append(ri.Steps, rec)
		case TypeAction:
			ri.Actions = append(ri.Actions, rec)
		case TypeEnd:
			r := rec
			ri.End = &r
		}
	})
	if err != nil {
		return fmt.Errorf("reading the run journal %s: %w", p, err)
	}
	return nil
}

// Last returns the most recent run, or nil when there is none.
func (j *Journal) Last() (*RunInfo, error) {
	runs, err := j.Recent()
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return runs[len(runs)-1], nil
}

func scan(r io.Reader, fn func(Record)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var rec Record
			if json.Unmarshal(line, &rec) == nil && rec.Run != "" {
				fn(rec)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
