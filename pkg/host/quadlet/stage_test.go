package quadlet

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	s := Stager{Generator: generator(t)}
	good := map[string][]byte{
		"web.container": []byte("[Container]\nImage=busybox\nContainerName=web\nVolume=data.volume:/d\n[X-Syslet]\nRemovalAllowed=true\n"),
		"data.volume":   []byte("[Volume]\nVolumeName=data\n"),
	}
	warns, err := s.Check(context.Background(), good, nil, []string{"web.container"})
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
	s := Stager{Generator: generator(t)}
	hand := []byte("[Container]\nImage=localhost/x:1\nVolume=data.volume:/d\nBogus=1\n")
	web := []byte("[Container]\nImage=localhost/web:1\nContainerName=web\n")
	// hand.container was already broken: writing web.container goes ahead.
	before := map[string][]byte{"hand.container": hand}
	future := map[string][]byte{"hand.container": hand, "web.container": web}
	warns, err := s.Check(context.Background(), future, before, []string{"web.container"})
	if err != nil {
		t.Fatalf("a unit that was broken before must not block this apply: %v", err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "hand.container") {
		t.Errorf("want one warning about hand.container, got %q", warns)
	}
	// A unit this apply breaks (here by removing the volume it uses) blocks.
	fine := []byte("[Container]\nImage=localhost/x:1\nVolume=data.volume:/d\n")
	before = map[string][]byte{"hand.container": fine, "data.volume": []byte("[Volume]\n")}
	future = map[string][]byte{"hand.container": fine, "web.container": web}
	if _, err := s.Check(context.Background(), future, before, []string{"web.container"}); err == nil || !strings.Contains(err.Error(), "data.volume") {
		t.Errorf("breaking a unit that worked before must block: %v", err)
	}
}
