package executor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	return backup.Entry{File: "run_" + volume + ".tar", Volume: volume, Size: int64(b.Len()), SHA256: "abc"}, nil
}

// recorded keeps what the journal would hear.
type recorded struct{ landed []executor.Landed }

func (r *recorded) StepBegins(plan.Step) error { return nil }
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
	if b == nil || b.File != "run_data.tar" || b.SHA256 != "abc" {
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
