// Package runlog is syslet's run journal: an append-only file of JSON lines
// under /var/lib/syslet that records, for every apply, its intent (the whole
// plan, the input's source and digest) before the first host change, one
// line per action as it lands, and a closing line. The next run reads the
// last run back to resume exactly what an interrupted run left unfinished,
// and `syslet history` reads it for people.
//
// Every line is written with a single write(2) and fsynced before the run
// goes on, so a crash loses at most the line being written; a torn last line
// is skipped on read. The file is rotated by size at the start of a run.
// Lines carry names, paths, ops and results only — never file contents or
// secret values.
//
// Files: records.go holds what a line is (the record types, results, Action
// and Record), which writer and reader share; writer.go appends a run
// (Journal, Begin, Record, Run's Step, Action, Actions, End and Close,
// NewRunID, rotation); reader.go reads runs back (RunInfo, Runs, Recent,
// Last, the tail collector and scan).
//
// Layer: runlog is a ground package. It must not import plan, render,
// executor or anything under pkg/app: pkg/app/deploy records into it and
// reads it back, so an import the other way would be a cycle, and the
// journal's lines must stay readable without the plan's types.
package runlog
