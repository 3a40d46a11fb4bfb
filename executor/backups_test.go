package executor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
)

// shelf is a backup store in memory.
type shelf struct {
	free  int64
	saved map[string]string
}

func (s *shelf) Free() (int64, error) { return s.free, nil }
func (s *shelf) Save(volume string, export func(io.Writer) error) (backup.Entry, error) {
	var b strings.Builder
	if err := export(&b); err != nil {
		return backup.Entry{}, fmt.Errorf("backup of volume %s: %w", volume, err)
	}
	if s.saved == nil {
		s.saved = map[string]string{}
	}
	s.saved[volume] = b.String()
	return backup.Entry{File: "run_" + volume + ".tar", Volume: volume, Size: int64(b.Len()), SHA256: sha(b.String())}, nil
}

func (s *shelf) Open(file string) (io.ReadCloser, backup.Entry, error) {
	vol := strings.TrimSuffix(strings.TrimPrefix(file, "run_"), ".tar")
	b, ok := s.saved[vol]
	if !ok {
		return nil, backup.Entry{}, fmt.Errorf("opening backup: %s: %w", file, fs.ErrNotExist)
	}
	return io.NopCloser(strings.NewReader(b)), backup.Entry{File: file, Volume: vol, Size: int64(len(b))}, nil
}

// recorded keeps what the journal would hear.
type recorded struct {
	landed []executor.Landed
	steps  []string
}

func (r *recorded) StepBegins(s plan.Step) error {
	r.steps = append(r.steps, fmt.Sprint(int(s)))
	return nil
}
func (r *recorded) ActionsLanded(ls []executor.Landed) error {
	r.landed = append(r.landed, ls...)
	return nil
}
func (r *recorded) ActionsUndone([]executor.Landed) error { return nil }

func applyWith(p *plan.Plan, f *fake, s *shelf, r *recorded) (*executor.Result, error) {
	h := executor.Host{Files: f, Systemd: f, Podman: f, Backups: s}
	return executor.Apply(context.Background(), p, h, executor.Options{Log: zerolog.Nop(), Recorder: r})
}

func TestAVolumeIsExportedBeforeItIsDeleted(t *testing.T) {
	p := mk("stop db.service", "delete-volume data", "delete-volume gone", "start db.service")
	f := &fake{sizes: map[string]int64{"data": 10}}
	s := &shelf{free: 1 << 30}
	r := &recorded{}
	res, err := applyWith(p, f, s, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Backups) != 2 || res.Backups[0].Volume != "data" {
		t.Errorf("result's backups %+v", res.Backups)
	}
	if s.saved["data"] != "tar of data" {
		t.Errorf("saved %q", s.saved)
	}
	i, j := slices.Index(f.calls, "export data"), slices.Index(f.calls, "rmvol data")
	if i < 0 || j < i || f.calls[0] != "df" {
		t.Errorf("calls %q: want df first, and the export before the delete", f.calls)
	}
	var b *backup.Entry
	for _, l := range r.landed {
		if l.Action.Target == "data" {
			b = l.Backup
		}
	}
	if b == nil || b.File != "run_data.tar" || b.SHA256 != sha("tar of data") {
		t.Errorf("journalled backup %+v", b)
	}
}

func TestAVolumeWithoutBackupIsNotExported(t *testing.T) {
	p := mk("delete-volume cache")
	p.Actions[0].Payload = &plan.Payload{NoBackup: true}
	f := &fake{sizes: map[string]int64{"cache": 1 << 40}}
	if _, err := applyWith(p, f, &shelf{free: 0}, &recorded{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, []string{"rmvol cache"}) {
		t.Errorf("calls %q", f.calls)
	}
}

func TestNoRoomChangesNothing(t *testing.T) {
	p := mk("pull-image img", "stop db.service", "write-unit /u/db", "delete-volume data", "start db.service")
	f := &fake{sizes: map[string]int64{"data": 50 << 20}}
	res, err := applyWith(p, f, &shelf{free: 8 << 20}, &recorded{})
	if !errors.Is(err, executor.ErrNoRoom) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"volume data", "50.0 MiB", "8.0 MiB (8388608 bytes) free"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !slices.Equal(f.calls, []string{"df"}) || len(f.preparing) != 0 || len(res.NotReached) != 5 {
		t.Errorf("calls %q, preparing %q, not reached %d", f.calls, f.preparing, len(res.NotReached))
	}
}

func TestAFailedExportKeepsTheVolume(t *testing.T) {
	p := mk("delete-volume data", "start db.service")
	f := &fake{sizes: map[string]int64{"data": 1}, fail: map[string]error{"export data": errors.New("socket closed")}}
	res, err := applyWith(p, f, &shelf{free: 1 << 30}, &recorded{})
	if !errors.Is(err, executor.ErrFailed) || !strings.Contains(err.Error(), "volume data is kept") {
		t.Fatalf("err = %v", err)
	}
	if slices.Contains(f.calls, "rmvol data") || len(res.NotReached) != 1 {
		t.Errorf("calls %q, not reached %v", f.calls, res.NotReached)
	}
}

func TestAVolumeAlreadyGoneNeedsNoBackup(t *testing.T) {
	p := mk("delete-volume data")
	f := &fake{sizes: map[string]int64{}, fail: map[string]error{"export data": fmt.Errorf("volume data: %w", host.ErrNotFound)}}
	if _, err := applyWith(p, f, &shelf{free: 0}, &recorded{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.calls, "rmvol data") {
		t.Errorf("calls %q", f.calls)
	}
}

// fillPlan fills volume data from backup old_data.tar, whose sha256 the
// plan says is digest ("" : unknown), as plan.AddFill makes it.
func fillPlan(digest string) *plan.Plan {
	p := &plan.Plan{}
	p.AddFill(plan.Fill{Volume: "data", Backup: "run_old.tar", Digest: digest, Unit: "data.volume", Service: "data-volume.service",
		ServiceActive: true, Exists: true, Users: []string{"db.service", "idle.service"}, Running: []string{"db.service"}})
	return p
}

// A volume filled from a backup: its users and its service stop, what it
// holds is exported and it goes, its service's start creates it again,
// the backup is imported, and only then do its users start; step 9 begins
// once in the journal.
func TestAFillRunsInTheNineSteps(t *testing.T) {
	f := &fake{sizes: map[string]int64{"data": 3}}
	s := &shelf{free: 1 << 30, saved: map[string]string{"old": "the old tar"}}
	r := &recorded{}
	res, err := applyWith(fillPlan(""), f, s, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"df", "stop db.service", "stop idle.service", "stop data-volume.service", "export data", "rmvol data",
		"start data-volume.service", "import data < the old tar", "start db.service"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", f.calls, want)
	}
	if len(res.Restored) != 1 || res.Restored[0].File != "run_old.tar" || res.Restored[0].Size != 11 ||
		res.Restored[0].SHA256 != sha("the old tar") {
		t.Errorf("restored %+v", res.Restored)
	}
	if len(res.Backups) != 1 || res.Backups[0].Volume != "data" || s.saved["data"] != "tar of data" {
		t.Errorf("the volume's content was not kept first: %+v %q", res.Backups, s.saved)
	}
	var imported *backup.Entry
	for _, l := range r.landed {
		if l.Action.Op == plan.OpImportVolume {
			imported = l.Backup
		}
	}
	if imported == nil || imported.SHA256 != sha("the old tar") {
		t.Errorf("journalled import %+v", imported)
	}
	if n := strings.Count(strings.Join(r.steps, " "), "9"); n != 1 {
		t.Errorf("steps begun %v: step 9 %d times", r.steps, n)
	}
}

// A backup that is not the one the plan names fails its import: the run
// stops there, nothing that mounts the volume starts.
func TestAFillWithAChangedBackupStops(t *testing.T) {
	f := &fake{sizes: map[string]int64{"data": 3}}
	s := &shelf{free: 1 << 30, saved: map[string]string{"old": "a changed tar"}}
	res, err := applyWith(fillPlan(sha("the old tar")), f, s, &recorded{})
	if !errors.Is(err, executor.ErrFailed) || !strings.Contains(err.Error(), "the backup changed since") {
		t.Fatalf("err = %v", err)
	}
	if slices.Contains(f.calls, "start db.service") || len(res.Restored) != 0 || len(res.NotReached) != 1 || res.NotReached[0].Target != "db.service" {
		t.Errorf("calls %q, restored %+v, not reached %v", f.calls, res.Restored, res.NotReached)
	}
}

// A volume systemd has no unit of is created with podman's defaults.
func TestAFillWithoutAUnit(t *testing.T) {
	p := &plan.Plan{}
	p.AddFill(plan.Fill{Volume: "data", Backup: "run_old.tar"})
	f := &fake{}
	if _, err := applyWith(p, f, &shelf{free: 1 << 30, saved: map[string]string{"old": "x"}}, &recorded{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"mkvol data", "import data < x"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// carryPlan recreates volume data with its data carried over, as the plan
// makes it (plan's carry.go): the import names no backup.
func carryPlan() *plan.Plan {
	p := mk("stop db.service", "stop data-volume.service", "delete-volume data", "create-volume data", "import-volume data", "start db.service")
	p.Actions[3].Payload = &plan.Payload{Service: "data-volume.service"}
	return p
}

// A volume recreated with its data carried over gets the export this very
// run took of it, read back whole (its size and sha256 as taken), after
// its service created it again and before what mounts it starts.
func TestACarryOverImportsTheRunsOwnExport(t *testing.T) {
	f := &fake{sizes: map[string]int64{"data": 3}}
	s := &shelf{free: 1 << 30}
	res, err := applyWith(carryPlan(), f, s, &recorded{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"df", "stop db.service", "stop data-volume.service", "export data", "rmvol data",
		"start data-volume.service", "import data < tar of data", "start db.service"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", f.calls, want)
	}
	if len(res.Restored) != 1 || res.Restored[0].File != "run_data.tar" || res.Restored[0].SHA256 != sha("tar of data") {
		t.Errorf("restored %+v", res.Restored)
	}
}

// An export that changed between its taking and its import stops the run
// before anything mounts the volume; a volume that was gone has nothing
// to carry.
func TestACarryOverChecksTheExport(t *testing.T) {
	f := &fake{sizes: map[string]int64{"data": 3}}
	h := executor.Host{Files: f, Systemd: f, Podman: f, Backups: &tamperingShelf{shelf: shelf{free: 1 << 30}}}
	res, err := executor.Apply(context.Background(), carryPlan(), h, executor.Options{Log: zerolog.Nop(), Recorder: &recorded{}})
	if !errors.Is(err, executor.ErrFailed) || !strings.Contains(err.Error(), "not as it was taken") {
		t.Fatalf("err = %v", err)
	}
	if slices.Contains(f.calls, "start db.service") || len(res.NotReached) != 1 || res.NotReached[0].Target != "db.service" {
		t.Errorf("calls %q, not reached %v", f.calls, res.NotReached)
	}

	f = &fake{sizes: map[string]int64{}, fail: map[string]error{"export data": fmt.Errorf("volume data: %w", host.ErrNotFound)}}
	res, err = applyWith(carryPlan(), f, &shelf{free: 1 << 30}, &recorded{})
	if err != nil || len(res.Restored) != 0 || slices.ContainsFunc(f.calls, func(c string) bool { return strings.HasPrefix(c, "import") }) {
		t.Errorf("a gone volume: err %v, restored %+v, calls %q", err, res.Restored, f.calls)
	}
}

// tamperingShelf gives back a backup that is not what it saved.
type tamperingShelf struct{ shelf }

func (s *tamperingShelf) Open(file string) (io.ReadCloser, backup.Entry, error) {
	r, b, err := s.shelf.Open(file)
	if err != nil {
		return nil, b, err
	}
	r.Close()
	return io.NopCloser(strings.NewReader("something else")), b, nil
}
