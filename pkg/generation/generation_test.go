package generation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var clock = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func gen(run string, input string) Generation {
	clock = clock.Add(time.Millisecond)
	return Generation{Run: run, Time: clock, InputDigest: "d-" + run, Input: []byte(input),
		Images: map[string]Image{"web.container": {ID: "id-" + run, Name: "localhost:5000/web:v1"}}}
}

// TestRecordAndList: generations come back oldest first, with their
// input, in 0600 files of a 0700 directory.
func TestRecordAndList(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	for _, r := range []string{"20261201T100000Z-aaaaaa", "20261201T110000Z-bbbbbb"} {
		if err := s.Record(gen(r, `{"name":"`+r+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	gens, err := s.List()
	if err != nil || len(gens) != 2 || gens[0].Run != "20261201T100000Z-aaaaaa" || !strings.Contains(string(gens[1].Input), "bbbbbb") {
		t.Fatalf("List = %v, %v", gens, err)
	}
	if g, _ := s.Latest(); g.Run != "20261201T110000Z-bbbbbb" || g.Images["web.container"].ID != "id-20261201T110000Z-bbbbbb" {
		t.Errorf("Latest = %+v", g)
	}
	if g, err := s.Find("20261201T10"); err != nil || g.Run != "20261201T100000Z-aaaaaa" {
		t.Errorf("Find by prefix = %v, %v", g, err)
	}
	if _, err := s.Find("20261201T1"); err == nil {
		t.Errorf("an ambiguous prefix was accepted")
	}
	dir := filepath.Join(root, "var/lib/syslet/generations")
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %o", fi.Mode().Perm())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*-20261201T100000Z-aaaaaa.json"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %o", fi.Mode().Perm())
	}
	if ids := ImageIDs(gens); !ids["id-20261201T100000Z-aaaaaa"] || len(ids) != 2 {
		t.Errorf("ImageIDs = %v", ids)
	}
}

// TestBounds: the store keeps the last Keep generations and at most
// MaxBytes, the newest always.
func TestBounds(t *testing.T) {
	s := Open(t.TempDir())
	s.Keep = 3
	for i := range 6 {
		if err := s.Record(gen("20261201T10000"+string(rune('0'+i))+"Z-aaaaaa", "x")); err != nil {
			t.Fatal(err)
		}
	}
	gens, _ := s.List()
	if len(gens) != 3 || gens[0].Run != "20261201T100003Z-aaaaaa" {
		t.Fatalf("kept %d, first %s", len(gens), gens[0].Run)
	}
	s.MaxBytes = 10 // smaller than one file
	if err := s.Record(gen("20261201T100009Z-aaaaaa", strings.Repeat("y", 100))); err != nil {
		t.Fatal(err)
	}
	if gens, _ := s.List(); len(gens) != 1 || gens[0].Run != "20261201T100009Z-aaaaaa" {
		t.Fatalf("over MaxBytes: kept %v", gens)
	}
}

// TestHostileFiles: links, FIFOs, junk and files naming another run are
// skipped, never followed or blocked on.
func TestHostileFiles(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	if err := s.Record(gen("20261201T100000Z-aaaaaa", "x")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "var/lib/syslet/generations")
	secret := filepath.Join(root, "secret")
	os.WriteFile(secret, []byte(`{"run":"20261201T120000Z-cccccc"}`), 0o600)
	os.Symlink(secret, filepath.Join(dir, "00000000000000000001-20261201T120000Z-cccccc.json"))
	os.WriteFile(filepath.Join(dir, "00000000000000000002-20261201T130000Z-dddddd.json"), []byte(`{"run":"20261201T100000Z-aaaaaa"}`), 0o600)
	os.WriteFile(filepath.Join(dir, "00000000000000000003-20261201T140000Z-eeeeee.json"), []byte(`not json`), 0o600)
	if err := mkfifo(filepath.Join(dir, "00000000000000000004-20261201T150000Z-ffffff.json")); err != nil {
		t.Fatal(err)
	}
	gens, err := s.List()
	if err != nil || len(gens) != 1 || gens[0].Run != "20261201T100000Z-aaaaaa" {
		t.Fatalf("List = %v, %v", gens, err)
	}
	if err := s.Record(Generation{Run: "../../etc/passwd"}); err == nil {
		t.Errorf("a run id with a path was accepted")
	}
}

// TestLatestSkipsATornNewest: Latest reads from the newest down, and a
// newest file that does not decode (torn by a crash, edited by hand) gives
// way to the one before it, as List skips it.
func TestLatestSkipsATornNewest(t *testing.T) {
	root := t.TempDir()
	s := Open(root)
	for _, r := range []string{"20261201T100000Z-aaaaaa", "20261201T110000Z-bbbbbb"} {
		if err := s.Record(gen(r, "x")); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "var/lib/syslet/generations", "*-20261201T110000Z-bbbbbb.json"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if err := os.WriteFile(files[0], []byte(`{"run":"20261201T110000Z-bb`), 0o600); err != nil {
		t.Fatal(err)
	}
	if g, err := s.Latest(); err != nil || g == nil || g.Run != "20261201T100000Z-aaaaaa" {
		t.Errorf("Latest = %+v, %v", g, err)
	}
	if g, err := Open(t.TempDir()).Latest(); g != nil || err != nil {
		t.Errorf("Latest of an empty store = %+v, %v", g, err)
	}
}
