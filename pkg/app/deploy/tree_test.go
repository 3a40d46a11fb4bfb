package deploy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
)

// WriteTree writes what a host would get, and names each path; a symlink
// in the way fails before the first write.
func TestWriteTree(t *testing.T) {
	set := load.Bytes("stack.json", []byte(stack))
	if set.Report.HasErrors() {
		t.Fatal(set.Report.String())
	}
	dir := t.TempDir()
	var w bytes.Buffer
	if err := WriteTree(dir, set.Out, &w); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{layout.UnitPath("web.container"), layout.UnitPath("data.volume"), "/etc/containers/config/web/etc/web.conf", "/etc/containers/config/web/etc/web.d/x.conf"} {
		if !existsUnder(dir, p) {
			t.Errorf("%s not written", p)
		}
	}
	for _, want := range []string{layout.UnitPath("web.container") + "\n", "/etc/containers/config/web/etc/web.conf\n", "/etc/containers/config/web/etc/web.d/ (1 files)\n"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, w.String())
		}
	}

	linked := t.TempDir()
	if err := os.MkdirAll(filepath.Join(linked, "etc/containers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(linked, "etc/containers/systemd")); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	err := WriteTree(linked, set.Out, &w)
	if !errors.Is(err, fsroot.ErrSymlink) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("err = %v, want a symlink refusal", err)
	}
	if w.Len() != 0 || existsUnder(linked, "/etc/containers/config") {
		t.Errorf("written through or beside a symlink: %q", w.String())
	}
}
