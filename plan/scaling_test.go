package plan_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/runlog"
)

func specContainer(name, container string) string {
	return `{"apiVersion":"v1","type":"container","name":"` + name + `","unit":{"Container":{` + container + `}}}` + "\n"
}

// TestJournalReadIsBounded: a journal file far past its bounds (a sparse
// file of zeros, one endless line) is read in a bounded time and memory:
// only its tail, the line skipped without being held.
func TestJournalReadIsBounded(t *testing.T) {
	root := t.TempDir()
	j := runlog.Open(root)
	must(t, os.MkdirAll(filepath.Dir(j.Path()), 0o700))
	f, err := os.Create(j.Path())
	must(t, err)
	must(t, f.Truncate(1<<30))
	f.Close()
	t0 := time.Now()
	runs, err := j.Runs()
	if err != nil || len(runs) != 0 {
		t.Fatalf("Runs = %v, %v", runs, err)
	}
	if took := time.Since(t0); took > 3*time.Second {
		t.Errorf("reading a 1 GiB journal took %s", took)
	}
}
