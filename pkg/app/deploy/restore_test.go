package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
)

// volumeHost is a host running stack whose volume data holds "new data",
// with a backup r0_data.tar of "old data".
func volumeHost(t *testing.T) *fakeHost {
	t.Helper()
	h := newHost(t)
	h.volumes = map[string]string{}
	h.apply(t, writeSpecs(t, stack))
	h.volumes["data"] = "new data"
	if _, err := backup.For(h.root).Save("r0", "data", func(w io.Writer) error { _, err := io.WriteString(w, "old data"); return err }); err != nil {
		t.Fatal(err)
	}
	h.reset()
	return h
}

func (h *fakeHost) restore(t *testing.T, stop <-chan struct{}) (*Restored, error) {
	t.Helper()
	return Restore(context.Background(), RestoreRequest{Root: h.root, Volume: "data", Host: h.live, LockTimeout: 5 * time.Second,
		StopTimeout: 5 * time.Second, StartTimeout: 5 * time.Second, Stop: stop, View: view.NewHuman(io.Discard, io.Discard)})
}

// A restore is a run of the executor's: web and the volume's service stop,
// what the volume holds is kept, the volume is created again through its
// service, the backup imported, web started again; the journal has it
// action by action, with its time and the backup it brought back.
func TestRestoreRunsThroughTheExecutor(t *testing.T) {
	h := volumeHost(t)
	out, err := h.restore(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"stop web.service", "stop data-volume.service", "rmvol data", "start data-volume.service", "import data", "start web.service"}
	if got := h.Calls(); !slicesEqual(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	if h.volumes["data"] != "old data" {
		t.Errorf("volume data holds %q", h.volumes["data"])
	}
	if out.Kept == nil || out.From.File != "r0_data.tar" || out.From.Size != 8 || out.From.SHA256 == "" ||
		!slicesEqual(out.Stopped, []string{"web.service"}) || !slicesEqual(out.Started, []string{"web.service"}) {
		t.Errorf("restored %+v", out)
	}
	last := h.last(t)
	if last.Result() != runlog.ResultOK || len(last.Intent.Actions) != len(want) || last.End.Applied != len(want) ||
		len(last.End.Restored) != 1 || last.End.Restored[0].SHA256 != out.From.SHA256 || !strings.HasPrefix(last.Intent.Source, "restore volume data from r0_data.tar") {
		t.Errorf("journal: %+v %+v", last.Intent, last.End)
	}
	if s := view.Summarize(last); s.Actions != len(want) || s.Duration == nil {
		t.Errorf("history: %+v", s)
	}
	// Its document opens with its verdict, as a run's does, and says what
	// became of each action.
	doc, err := json.Marshal(out)
	if err != nil || !strings.HasPrefix(string(doc), `{"verdict":"applied","exit":0,"run":"`) {
		t.Fatalf("document %s %v", doc, err)
	}
	var back Restored
	if err := json.Unmarshal(doc, &back); err != nil || back.Verdict != verdict.Applied || len(back.Result.Applied) != len(want) {
		t.Errorf("read back: %+v %v", back, err)
	}
}

// A restore stopped once the volume is created again (or whose import
// fails) is finished by the next plain run: the import, then web's start.
func TestAnUnfinishedRestoreIsFinishedByTheNextRun(t *testing.T) {
	for _, how := range []string{"stopped", "import failed"} {
		t.Run(how, func(t *testing.T) {
			h := volumeHost(t)
			stop := make(chan struct{})
			if how == "stopped" {
				h.before = func(c string) {
					if c == "start data-volume.service" {
						close(stop)
					}
				}
			} else {
				h.fail["import data"] = errors.New("disk full")
			}
			if _, err := h.restore(t, stop); err == nil {
				t.Fatal("the restore ended well")
			}
			h.before = nil
			delete(h.fail, "import data")
			if h.active["web.service"] {
				t.Fatal("web runs on the half-restored volume")
			}
			h.reset()
			r := h.apply(t, writeSpecs(t, stack))
			if r.out.Plan.Resume == nil || !contains(h.Calls(), "import data") || h.volumes["data"] != "old data" || !h.active["web.service"] {
				t.Errorf("the next run: calls %q, volume %q\n%s", h.Calls(), h.volumes["data"], r.stdout)
			}
			if last := h.last(t); len(last.End.Restored) != 1 || last.End.Restored[0].File != "r0_data.tar" {
				t.Errorf("the resuming run's journal end: %+v", last.End)
			}
		})
	}
}

// The rollback after a failed gate fills the volume the failed run
// recreated from the backup it took, through the same actions.
func TestRollbackFillsTheRecreatedVolume(t *testing.T) {
	h := newHost(t)
	h.volumes = map[string]string{}
	h.apply(t, writeSpecs(t, good))
	h.volumes["data"] = "the data"
	h.crashOn["web.service"] = "web:2"
	changed := strings.Replace(bad, `"name":"data","reclaimPolicy":"Delete","unit":{}`, `"name":"data","reclaimPolicy":"Delete","unit":{"Volume":{"Label":"tier=new"}}`, 1)
	req := h.request(writeSpecs(t, changed))
	req.Soak = 300 * time.Millisecond
	r := h.run(t, req)
	if r.out.Verdict != verdict.RolledBack {
		t.Fatalf("verdict %v: %v\n%s", r.out.Verdict, r.err, r.stdout)
	}
	if h.volumes["data"] != "the data" {
		t.Errorf("volume data holds %q after the rollback", h.volumes["data"])
	}
	rb := r.out.Rollback
	if len(rb.Restored) != 1 || !strings.Contains(rb.Restored[0], "volume data from backup ") || len(rb.NotRestored) != 1 {
		t.Errorf("rollback report: restored %q, not restored %q", rb.Restored, rb.NotRestored)
	}
	calls := h.Calls("import", "start web.service")
	if len(calls) < 2 || calls[len(calls)-2] != "import data" || calls[len(calls)-1] != "start web.service" {
		t.Errorf("the import does not come before web's last start: %q", calls)
	}
	if last := h.last(t); last.Result() != runlog.ResultRolledBack || len(last.End.Restored) != 1 {
		t.Errorf("the rollback's journal: %s %+v", last.Result(), last.End)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// A restore whose import failed and whose backup is gone since is not
// finished with another: the next run says so, and starts web on what
// the volume holds.
func TestAFillWhoseBackupIsGoneIsNotCarried(t *testing.T) {
	h := volumeHost(t)
	h.fail["import data"] = errors.New("bad tar")
	if _, err := h.restore(t, nil); err == nil {
		t.Fatal("the restore ended well")
	}
	delete(h.fail, "import data")
	if err := os.Remove(filepath.Join(backup.For(h.root).Dir, "r0_data.tar")); err != nil {
		t.Fatal(err)
	}
	h.reset()
	r := h.apply(t, writeSpecs(t, stack))
	if contains(h.Calls(), "import data") || !h.active["web.service"] || !strings.Contains(r.stdout, "meant to fill it from backup r0_data.tar, which is gone") {
		t.Errorf("calls %q\n%s", h.Calls(), r.stdout)
	}
}
