package backup

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSaveIsAtomicPrivateAndDigested(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "backups")}
	e, err := s.Save("20261204T140000Z-aaaaaa", "db", func(w io.Writer) error {
		_, err := io.WriteString(w, "tar bytes")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x", sha256.Sum256([]byte("tar bytes"))); e.SHA256 != want || e.Size != 9 {
		t.Errorf("entry = %+v, want size 9 and sha256 %s", e, want)
	}
	fi, err := os.Stat(filepath.Join(s.Dir, e.File))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v %v", fi.Mode(), err)
	}
	di, _ := os.Stat(s.Dir)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", di.Mode().Perm())
	}
	l, refused, err := s.List("db")
	if err != nil || len(l) != 1 || l[0].Volume != "db" || l[0].Run != "20261204T140000Z-aaaaaa" || len(refused) != 0 {
		t.Errorf("List = %+v %v %v", l, refused, err)
	}
}

func TestAFailedExportLeavesNothing(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	_, err := s.Save("r1", "db", func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return errors.New("socket closed")
	})
	if err == nil || !strings.Contains(err.Error(), "volume db") {
		t.Fatalf("err = %v", err)
	}
	if des, _ := os.ReadDir(s.Dir); len(des) != 0 {
		t.Errorf("left %v", des)
	}
}

func TestAKilledSaveIsSweptByTheNext(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	os.WriteFile(filepath.Join(s.Dir, tmpPrefix+Name("r1", "db")), []byte("half"), 0o600)
	if _, err := s.Save("r1", "db", func(w io.Writer) error { _, err := io.WriteString(w, "all"); return err }); err != nil {
		t.Fatal(err)
	}
	des, _ := os.ReadDir(s.Dir)
	if len(des) != 1 || des[0].Name() != Name("r1", "db") {
		t.Errorf("directory holds %v", des)
	}
}

func TestPlantedFilesAreRefused(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, nil, 0o600)
	os.Symlink(target, filepath.Join(s.Dir, Name("r1", "db")))
	if err := syscall.Mkfifo(filepath.Join(s.Dir, Name("r2", "db")), 0o600); err != nil {
		t.Fatal(err)
	}
	nop := func(w io.Writer) error { return nil }
	if _, err := s.Save("r1", "db", nop); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Save over a symlink: %v", err)
	}
	if _, err := s.Save("r2", "db", nop); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Save over a FIFO: %v", err)
	}
	if _, _, err := s.Open(Name("r1", "db")); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Open of a symlink: %v", err)
	}
	if _, _, err := s.Open(Name("r2", "db")); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Open of a FIFO: %v", err)
	}
	if _, _, err := s.Open("../x_db.tar"); err == nil {
		t.Error("Open outside the directory was not refused")
	}
	l, refused, err := s.List("")
	if err != nil || len(l) != 0 || len(refused) != 2 {
		t.Errorf("List = %v, refused %v, %v", l, refused, err)
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Error("the symlink's target was written")
	}

	link := filepath.Join(t.TempDir(), "backups")
	os.Symlink(t.TempDir(), link)
	if _, err := (Store{Dir: link}).Free(); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlinked directory: %v", err)
	}
}

func TestPruneKeepsTheNewest(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for _, r := range []string{"r1", "r2", "r3"} {
		s.Save(r, "db", func(w io.Writer) error { return nil })
	}
	s.Save("r1", "cache", func(w io.Writer) error { return nil })
	gone, err := s.Prune("db", 2)
	if err != nil || len(gone) != 1 || gone[0] != Name("r1", "db") {
		t.Errorf("Prune = %v %v", gone, err)
	}
	if l, _, _ := s.List(""); len(l) != 3 {
		t.Errorf("left %v", l)
	}
	// A backup a run imports is spared.
	s.Save("r4", "db", func(w io.Writer) error { return nil })
	if gone, _ := s.Prune("db", 1, Name("r2", "db")); len(gone) != 1 || gone[0] != Name("r3", "db") {
		t.Errorf("Prune sparing r2's = %v", gone)
	}
}

func TestPruneTotalDropsTheOldestOfOtherRuns(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	save := func(run, vol string, n int) {
		if _, err := s.Save(run, vol, func(w io.Writer) error { _, err := w.Write(make([]byte, n)); return err }); err != nil {
			t.Fatal(err)
		}
	}
	save("r1", "db", 400)
	save("r2", "cache", 400)
	save("r3", "db", 300)
	save("r3", "cache", 300)
	// 1400 bytes in all; under 800 only r3's two stay, even past the bound
	// were they bigger: the run saving now keeps its own.
	gone, err := s.PruneTotal(800, "r3")
	if err != nil || len(gone) != 2 || gone[0] != Name("r1", "db") || gone[1] != Name("r2", "cache") {
		t.Errorf("PruneTotal = %v %v", gone, err)
	}
	if gone, _ := s.PruneTotal(100, "r3"); len(gone) != 0 {
		t.Errorf("the saving run's backups were removed: %v", gone)
	}
	if gone, _ := s.PruneTotal(0, "r9"); len(gone) != 0 {
		t.Errorf("no bound removed %v", gone)
	}
	save("r4", "db", 900)
	if gone, _ := s.PruneTotal(100, "r4", Name("r3", "db")); len(gone) != 1 || gone[0] != Name("r3", "cache") {
		t.Errorf("PruneTotal sparing r3's db = %v", gone)
	}
}
