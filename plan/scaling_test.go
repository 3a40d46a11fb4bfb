package plan_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/syslet/syslet/pkg/runlog"
)

func specContainer(name, container string) string {
	return `{"apiVersion":"v1","type":"container","name":"` + name + `","unit":{"Container":{` + container + `}}}` + "\n"
}

// TestJournalReadIsBounded: a journal file far past its bounds (a run at
// its head, then a sparse gigabyte of zeros: one endless line) is read
// only at its tail, and the endless line is skipped without being held.
// Both are shown without a clock: the run at the head is not found, and
// the reading allocates far less than the line it skipped.
func TestJournalReadIsBounded(t *testing.T) {
	root := t.TempDir()
	j := runlog.Open(root)
	if _, err := j.Record(runlog.Record{Source: "head"}, runlog.Record{Result: runlog.ResultNoChanges}); err != nil {
		t.Fatal(err)
	}
	must(t, os.Truncate(j.Path(), 1<<30))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runs, err := j.Runs()
	runtime.ReadMemStats(&after)
	if err != nil || len(runs) != 0 {
		t.Fatalf("Runs = %v, %v; want none: the run at the head lies a gigabyte before the tail that is read", runs, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > runlog.MaxLine/4 {
		t.Errorf("reading the journal allocated %d MiB; the line of zeros must be skipped, not held", alloc>>20)
	}
}
