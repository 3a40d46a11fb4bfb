package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
