package stage

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// generator builds podman's real quadlet generator (the pinned module
// tool) once per test binary.
func generator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quadlet")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/containers/podman/v5/cmd/quadlet")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-tags=remote,containers_image_openpgp,exclude_graphdriver_btrfs,btrfs_noversion")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building quadlet: %v\n%s", err, out)
	}
	return bin
}

func TestCheck(t *testing.T) {
	s := Stager{Generator: generator(t), Dir: t.TempDir()}
	good := map[string][]byte{
		"web.container": []byte("[Container]\nImage=busybox\nContainerName=web\nVolume=data.volume:/d\n[X-Syslet]\nRemovalAllowed=true\n"),
		"data.volume":   []byte("[Volume]\nVolumeName=data\n"),
	}
	res, err := s.Check(context.Background(), good, nil, []string{"web.container"})
	warns := res.Warnings
	if err != nil {
		t.Fatalf("good units rejected: %v", err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "short-name") {
		t.Errorf("want the short-name warning, got %q", warns)
	}
	bad := map[string][]byte{
		"web.container": []byte("[Container]\nImage=busybox\nBogus=1\n"),
	}
	_, err = s.Check(context.Background(), bad, nil, []string{"web.container"})
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("bad unit: got %v, want *Error", err)
	}
	if !strings.Contains(err.Error(), "Bogus") || !strings.Contains(err.Error(), "web.container") || strings.Contains(err.Error(), os.TempDir()+"/syslet-stage") {
		t.Errorf("message should name the key and the file, not the scratch dir: %v", err)
	}
	missing := map[string][]byte{"web.container": []byte("[Container]\nImage=busybox\nVolume=nope.volume:/d\n")}
	if _, err := s.Check(context.Background(), missing, nil, nil); err == nil || !strings.Contains(err.Error(), "nope.volume") {
		t.Errorf("missing reference: got %v", err)
	}
}

func TestBrokenUnitOfSomeoneElse(t *testing.T) {
	s := Stager{Generator: generator(t), Dir: t.TempDir()}
	// hand.container, broken before and joining web's network namespace,
	// is converted again with web: it was already broken, so writing
	// web.container goes ahead, with a warning.
	hand := []byte("[Container]\nImage=localhost/x:1\nNetwork=web.container\nVolume=data.volume:/d\nBogus=1\n")
	web := []byte("[Container]\nImage=localhost/web:1\nContainerName=web\n")
	before := map[string][]byte{"hand.container": hand}
	future := map[string][]byte{"hand.container": hand, "web.container": web}
	res, err := s.Check(context.Background(), future, before, []string{"web.container"})
	warns := res.Warnings
	if err != nil {
		t.Fatalf("a unit that was broken before must not block this apply: %v", err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "hand.container") {
		t.Errorf("want one warning about hand.container, got %q", warns)
	}
	// A broken unit that has nothing to do with what this apply writes is
	// not converted at all: not syslet's to judge.
	other := []byte("[Container]\nImage=localhost/x:1\nBogus=1\n")
	before = map[string][]byte{"other.container": other}
	future = map[string][]byte{"other.container": other, "web.container": web}
	if res, err := s.Check(context.Background(), future, before, []string{"web.container"}); err != nil || len(res.Warnings) != 0 {
		t.Errorf("an unrelated broken unit: got %q, %v; want nothing", res.Warnings, err)
	}
	// A unit this apply breaks (here by removing the volume it uses) blocks.
	fine := []byte("[Container]\nImage=localhost/x:1\nVolume=data.volume:/d\n")
	before = map[string][]byte{"hand.container": fine, "data.volume": []byte("[Volume]\n")}
	future = map[string][]byte{"hand.container": fine, "web.container": web}
	if _, err := s.Check(context.Background(), future, before, []string{"web.container"}); err == nil || !strings.Contains(err.Error(), "data.volume") {
		t.Errorf("breaking a unit that worked before must block: %v", err)
	}
}

// The generator sees the units written, those whose conversion they can
// change (referring to them, or to a unit removed), and what all of these
// refer to; nothing else of a big set.
func TestScope(t *testing.T) {
	future := map[string][]byte{
		"a.container": []byte("[Container]\nImage=x\nNetwork=n.network\nVolume=v.volume:/v\n"),
		"b.container": []byte("[Container]\nImage=x\nNetwork=a.container\n"),
		"c.container": []byte("[Container]\nImage=x\nNetwork=n.network\n"),
		"d.container": []byte("[Container]\nImage=app.build\n[Unit]\nRequires=gone.container\n"),
		"n.network":   []byte("[Network]\n"),
		"v.volume":    []byte("[Volume]\n"),
		"app.build":   []byte("[Build]\nImageTag=localhost/app\n"),
		"lone.volume": []byte("[Volume]\n"),
		"e.container": []byte("[Container]\nImage=x\nEnvironment=NOTE=see-a.container.txt\n"),
	}
	before := map[string][]byte{"gone.container": []byte("[Container]\nImage=x\n")}
	names := scope(future, before, []string{"a.container"})
	got := slices.Sorted(maps.Keys(within(future, names)))
	// a: written; b: refers to a; d: refers to a removed unit; then what
	// they refer to: n, v, app.build.
	want := []string{"a.container", "app.build", "b.container", "d.container", "n.network", "v.volume"}
	if !slices.Equal(got, want) {
		t.Errorf("generated %v, want %v", got, want)
	}
	if all := within(future, scope(future, nil, nil)); len(all) != len(future) {
		t.Errorf("nothing to verify: %d of %d units generated, want all", len(all), len(future))
	}
}

// TestKeptStage: a failed staging keeps its directory (0700, with the
// staged units and what the generator made of them) and says where; a
// passing one removes it, unless Keep; of the kept ones the newest
// KeepLast stay, and one a killed run left (no note) goes after a day.
func TestKeptStage(t *testing.T) {
	dir := t.TempDir()
	s := Stager{Generator: generator(t), Dir: dir}
	good := map[string][]byte{"web.container": []byte("[Container]\nImage=localhost/web:1\nContainerName=web\n")}
	bad := map[string][]byte{"web.container": []byte("[Container]\nImage=localhost/web:1\nBogus=1\n")}

	res, err := s.Check(context.Background(), good, nil, []string{"web.container"})
	if err != nil || res.Kept != "" {
		t.Fatalf("passing: kept %q, %v", res.Kept, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a passing staging left %v", ents)
	}

	res, err = s.Check(context.Background(), bad, nil, []string{"web.container"})
	if err == nil || res.Kept == "" || filepath.Dir(res.Kept) != dir || !strings.HasPrefix(filepath.Base(res.Kept), Prefix) {
		t.Fatalf("failing: kept %q, %v", res.Kept, err)
	}
	fi, err := os.Stat(res.Kept)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("kept directory: %v %v, want mode 0700", fi, err)
	}
	if data, err := os.ReadFile(filepath.Join(res.Kept, "units", "web.container")); err != nil || !strings.Contains(string(data), "Bogus=1") {
		t.Errorf("the staged unit is not kept: %q %v", data, err)
	}
	if note, err := os.ReadFile(filepath.Join(res.Kept, KeptNote)); err != nil || !strings.Contains(string(note), "QUADLET_UNIT_DIRS="+res.Kept+"/units") {
		t.Errorf("note: %q %v", note, err)
	}

	s.Keep = true
	res, err = s.Check(context.Background(), good, nil, []string{"web.container"})
	if err != nil || res.Kept == "" {
		t.Fatalf("--keep-stage: kept %q, %v", res.Kept, err)
	}
	if _, err := os.Stat(filepath.Join(res.Kept, "generated", "web.service")); err != nil {
		t.Errorf("the generated service is not kept: %v", err)
	}

	// A run killed while staging left these: an old one goes, a young
	// one may be another run's, in progress, and stays.
	old, young := filepath.Join(dir, Prefix+"killed"), filepath.Join(dir, Prefix+"running")
	must(t, os.Mkdir(old, 0o700))
	must(t, os.Mkdir(young, 0o700))
	must(t, os.Chtimes(old, time.Now().Add(-25*time.Hour), time.Now().Add(-25*time.Hour)))
	for range KeepLast + 2 {
		if res, _ = s.Check(context.Background(), bad, nil, []string{"web.container"}); res.Kept == "" {
			t.Fatal("not kept")
		}
	}
	var kept []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), KeptNote)); err == nil {
			kept = append(kept, e.Name())
		}
	}
	if len(kept) != KeepLast {
		t.Errorf("%d kept directories left, want the newest %d: %v", len(kept), KeepLast, kept)
	}
	if _, err := os.Stat(res.Kept); err != nil {
		t.Errorf("the newest kept directory was removed: %v", err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Errorf("a day-old staging directory without the note is left")
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young staging directory without the note was removed: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTemplatesAndDropIns: a template written alone is verified through
// its instances, and a drop-in that breaks a unit breaks its staging
// (the generator sees each unit with the drop-ins that apply to it, and
// the scope follows a drop-in's references).
func TestTemplatesAndDropIns(t *testing.T) {
	s := Stager{Generator: generator(t), Dir: t.TempDir()}
	tmpl := []byte("[Container]\nImage=docker.io/library/busybox:1.37\nContainerName=w-%i\n[X-Syslet]\nInstance=1\n")
	future := map[string][]byte{
		"w@.container":  tmpl,
		"w@1.container": tmpl,
		"net.network":   []byte("[Network]\nNetworkName=net\n"),
	}
	if _, err := s.Check(context.Background(), future, nil, []string{"w@.container"}); err != nil {
		t.Fatalf("a template and its instance: %v", err)
	}
	if got := withInstances([]string{"w@.container"}, future); !slices.Equal(got, []string{"w@.container", "w@1.container"}) {
		t.Errorf("verified: %q", got)
	}
	broken := maps.Clone(future)
	broken["w@1.container.d/10-bad.conf"] = []byte("[Container]\nBogus=1\n")
	_, err := s.Check(context.Background(), broken, future, []string{"w@.container"})
	if err == nil || !strings.Contains(err.Error(), "Bogus") {
		t.Errorf("a drop-in with an unknown key: got %v", err)
	}
	// A drop-in names a network: both are staged with the unit.
	within := within(map[string][]byte{
		"w@1.container":             tmpl,
		"w@1.container.d/net.conf":  []byte("[Container]\nNetwork=net.network\n"),
		"net.network":               []byte("[Network]\n"),
		"other.container":           tmpl,
		"container.d/10-every.conf": []byte("[Container]\nLabel=a=b\n"),
	}, map[string]bool{"w@1.container": true})
	if got := slices.Sorted(maps.Keys(within)); !slices.Equal(got, []string{"container.d/10-every.conf", "net.network", "w@1.container", "w@1.container.d/net.conf"}) {
		t.Errorf("staged with w@1.container: %q", got)
	}
}
