package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/syslet/syslet/pkg/bounded"
)

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
	case ResultOK, ResultNoChanges, ResultRefused, ResultRolledBack:
		return false
	}
	return true
}

// Done reports whether the action with this index landed.
func (ri *RunInfo) Done(i int) bool { return ri.landed()[i] }

func (ri *RunInfo) landed() map[int]bool {
	done := make(map[int]bool, len(ri.Actions))
	for _, a := range ri.Actions {
		if a.Index == nil {
			continue
		}
		switch a.Result {
		case ResultOK:
			done[*a.Index] = true
		case ResultUndone:
			delete(done, *a.Index)
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

// The journal's bounds. A line holds one record; an intent carries the
// whole plan, so a host of a hundred thousand units makes lines of tens
// of megabytes, and no more: a longer line is not syslet's and is skipped
// like a torn one, without being held. Of each file at most the last
// MaxTail bytes are read: the file is rotated at DefaultMaxSize, so only
// a journal grown by hand (or a sparse file planted there) is longer.
const (
	MaxLine = 64 << 20
	MaxTail = 128 << 20
)

// fileKind is the run journal as a kind of file: a regular file, never
// read through a symlink or from a FIFO; its size is bounded by reading
// only its tail.
var fileKind = bounded.Kind{What: "the run journal"}

// Runs reads every run in the journal (the rotated generation first),
// oldest first. Lines that do not parse — a torn last line — are skipped.
// A journal file that is not a regular file (a symlink, a FIFO, a device)
// is an error naming it.
func (j *Journal) Runs() ([]*RunInfo, error) {
	c := collector{byID: map[string]*RunInfo{}}
	for _, p := range []string{j.Path() + ".1", j.Path()} {
		if err := c.read(p, MaxTail); err != nil {
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
	c := collector{byID: map[string]*RunInfo{}}
	if err := c.read(j.Path(), tailSize); err != nil {
		return nil, err
	}
	if len(c.runs) == 0 || c.whole {
		return j.Runs()
	}
	return c.runs, nil
}

type collector struct {
	runs []*RunInfo
	byID map[string]*RunInfo
	// whole says the last file read was read from its start.
	whole bool
}

// read adds the records of the last tail bytes of file p; a partial first
// line (when reading from an offset) does not parse and is skipped.
func (c *collector) read(p string, tail int64) error {
	f, fi, err := bounded.Open(p, fileKind)
	if errors.Is(err, fs.ErrNotExist) {
		c.whole = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the run journal: %w", err)
	}
	defer f.Close()
	c.whole = fi.Size() <= tail
	_, err = bounded.FileLines(f, fi.Size(), tail, MaxLine, func(line []byte) {
		var rec Record
		if json.Unmarshal(line, &rec) != nil || rec.Run == "" {
			return
		}
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
