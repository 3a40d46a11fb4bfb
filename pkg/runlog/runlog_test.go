package runlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunRoundTrip(t *testing.T) {
	root := t.TempDir()
	j := Open(root)
	r, err := j.Begin(Record{Source: "stdin", PlanDigest: "abc", Actions: []Action{
		{Index: 0, Step: 4, Op: "write-unit", Target: "/etc/containers/systemd/web.container", Digest: "d1"},
		{Index: 1, Step: 7, Op: "daemon-reload", Target: "systemd"},
		{Index: 2, Step: 9, Op: "start", Target: "web.service"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Step(4); err != nil {
		t.Fatal(err)
	}
	if err := r.Actions([]Landed{{Action: Action{Index: 0, Step: 4, Op: "write-unit"}, Result: ResultOK, Took: 3 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	r.Close() // killed: no end line

	last, err := j.Last()
	if err != nil || last == nil {
		t.Fatalf("Last: %v %v", last, err)
	}
	if last.Result() != "unfinished" || last.ID() != r.ID {
		t.Fatalf("last run %s is %s, want %s unfinished", last.ID(), last.Result(), r.ID)
	}
	un := last.Unfinished()
	if len(un) != 2 || un[0].Op != "daemon-reload" || un[1].Op != "start" {
		t.Fatalf("unfinished = %+v, want daemon-reload and start", un)
	}

	for _, p := range []string{filepath.Dir(j.Path()), j.Path()} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %o, want %o", p, fi.Mode().Perm(), want)
		}
	}
}

func TestTornLastLineIsTolerated(t *testing.T) {
	root := t.TempDir()
	j := Open(root)
	r, err := j.Begin(Record{Source: "a", Actions: []Action{{Index: 0, Step: 9, Op: "start", Target: "x.service"}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	// A crash in the middle of writing a line.
	f, err := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"action","run":"` + r.ID + `","i":0,"result":"o`)
	f.Close()
	last, err := j.Last()
	if err != nil {
		t.Fatal(err)
	}
	if last.Done(0) {
		t.Fatal("a torn action line must not count as landed")
	}
	// The next run starts on a line of its own and both runs read back.
	r2, err := j.Begin(Record{Source: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.End(Record{Result: ResultNoChanges}); err != nil {
		t.Fatal(err)
	}
	runs, err := j.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].Result() != ResultNoChanges || runs[0].Result() != "unfinished" {
		t.Fatalf("runs after a torn line: %d, %v", len(runs), runs)
	}
}

func TestRotation(t *testing.T) {
	root := t.TempDir()
	j := Open(root)
	j.MaxSize = 2000
	var ids []string
	for range 30 {
		r, err := j.Begin(Record{Source: strings.Repeat("s", 100)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		if err := r.End(Record{Result: ResultOK}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 2*j.MaxSize {
		t.Errorf("journal grew to %d bytes with MaxSize %d", fi.Size(), j.MaxSize)
	}
	if _, err := os.Stat(j.Path() + ".2"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("only one older generation is kept")
	}
	runs, err := j.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) == 0 || runs[len(runs)-1].ID() != ids[len(ids)-1] {
		t.Fatalf("the newest run must survive rotation")
	}
}

func TestRecentReadsTheTail(t *testing.T) {
	root := t.TempDir()
	j := Open(root)
	var last string
	for i := range 400 {
		id, err := j.Record(Record{Source: "s", Actions: []Action{{Index: 0, Op: "start", Target: strings.Repeat("x", 1000)}}}, Record{Result: ResultNoChanges})
		if err != nil {
			t.Fatal(err)
		}
		if i == 399 {
			last = id
		}
	}
	all, err := j.Runs()
	if err != nil {
		t.Fatal(err)
	}
	recent, err := j.Recent()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 400 || len(recent) == 0 || len(recent) >= len(all) {
		t.Fatalf("Runs %d, Recent %d: Recent should read only the tail", len(all), len(recent))
	}
	if recent[len(recent)-1].ID() != last || recent[len(recent)-1].Result() != ResultNoChanges {
		t.Fatalf("Recent's last run %s, want %s", recent[len(recent)-1].ID(), last)
	}
}

// Begin reserves room for the run's records past the file's end (where
// the filesystem can preallocate), End gives back what was not used, and
// the reservation never shows in what is read back.
func TestBeginReservesRoomEndGivesItBack(t *testing.T) {
	root := t.TempDir()
	j := Open(root)
	var acts []Action
	for i := range 50 {
		acts = append(acts, Action{Index: i, Step: 3, Op: "write-file", Target: "/etc/containers/config/web/f" + string(rune('a'+i%26))})
	}
	r, err := j.Begin(Record{Source: "stdin", Actions: acts})
	if err != nil {
		t.Fatal(err)
	}
	allocated := func() (size, alloc int64) {
		var st syscall.Stat_t
		if err := syscall.Stat(j.Path(), &st); err != nil {
			t.Fatal(err)
		}
		return st.Size, st.Blocks * 512
	}
	size, alloc := allocated()
	t.Logf("after Begin: %d bytes, %d allocated (reserved: %v)", size, alloc, r.reserved)
	if r.reserved && alloc < size+50*reservePerAction {
		t.Errorf("reserved, but only %d bytes are allocated for a %d-byte file", alloc, size)
	}
	for i := range 50 {
		if err := r.Actions([]Landed{{Action: acts[i], Result: ResultOK, Took: time.Millisecond}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.End(Record{Result: ResultOK}); err != nil {
		t.Fatal(err)
	}
	size, alloc = allocated()
	if alloc > size+8192 {
		t.Errorf("after End: %d bytes allocated for a %d-byte file: the reservation was not given back", alloc, size)
	}
	last, err := j.Last()
	if err != nil || last.Result() != ResultOK || len(last.Actions) != 50 {
		t.Fatalf("read back: %+v %v", last, err)
	}
}
