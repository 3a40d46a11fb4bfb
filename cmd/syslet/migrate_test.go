package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// earlierDir is a host as the earlier syslet left it (root/) and the specs
// it was deployed from (specs/); see its README.md.
const earlierDir = "testdata/earlier"

// TestMigrateEarlierHost is the migration acceptance: planning the specs
// an earlier-syslet host was deployed from recreates nothing, deletes
// nothing, and restarts only the container whose config mounts move.
func TestMigrateEarlierHost(t *testing.T) {
	root := earlierRoot(t)
	before := snapshot(t, root)
	code, stdout, stderr := runCLI(t, "--diff", "--root", root, "--output", "json", filepath.Join(earlierDir, "specs"))
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Fatalf("--diff changed the root:\n%s", strings.Join(d, "\n"))
	}
	var doc struct {
		Plan planJSON `json:"plan"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, stdout)
	}
	p := doc.Plan
	if len(p.Units) == 0 {
		t.Fatalf("no units in the plan:\n%s", stdout)
	}
	if len(p.Refusals) > 0 {
		t.Errorf("refusals: %v", p.Refusals)
	}
	for _, a := range p.Actions {
		switch a.Op {
		case "delete-volume", "delete-network", "delete-image", "remove-unit":
			t.Errorf("planned %s %s", a.Op, a.Target)
		case "stop", "start", "reload":
			if a.Target != "legacy-web.service" {
				t.Errorf("planned %s %s: only legacy-web's mounts move", a.Op, a.Target)
			}
		}
	}
	effects := map[string]string{}
	for _, u := range p.Units {
		effects[u.FileName] = u.Effect
		switch u.Effect {
		case "no-op", "metadata-only":
		case "restart":
			if u.FileName != "legacy-web.container" {
				t.Errorf("%s restarts: %q", u.FileName, u.Reasons)
			}
			if !slices.ContainsFunc(u.Reasons, func(r string) bool { return strings.HasPrefix(r, "config file mount /etc/web/web.conf moves from ") }) {
				t.Errorf("restart reasons %q do not say the config file mount moves", u.Reasons)
			}
		default:
			t.Errorf("%s: %s %q", u.FileName, u.Effect, u.Reasons)
		}
	}
	if effects["legacy-web.container"] != "restart" || len(effects) != 6 {
		t.Errorf("effects %v", effects)
	}
	// The fixture is what the earlier syslet wrote: every line sorted.
	data, err := os.ReadFile(filepath.Join(root, "etc/containers/systemd/legacy-db.container"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "[Container]\nContainerName=legacy-db\n") {
		t.Errorf("fixture is not in the earlier syslet's sorted form:\n%s", data)
	}
}

// TestValidateEarlierDocs: every spec form the earlier syslet's
// documentation shows validates (warnings allowed, never an error), and
// renders with the meaning it had there; --strict refuses what warns.
func TestValidateEarlierDocs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(earlierDir, "docs", "*.json"))
	if err != nil || len(files) < 5 {
		t.Fatalf("docs specs: %v %v", files, err)
	}
	for _, f := range files {
		code, out, stderr := runCLI(t, "validate", f)
		if code != exitOK || stderr != "" || !strings.HasSuffix(out, "are valid\n") {
			t.Errorf("%s: exit %d\n%s%s", f, code, out, stderr)
		}
		warns := strings.Count(out, "warning: ")
		scode, _, _ := runCLI(t, "validate", "--strict", f)
		if (warns > 0) != (scode == exitInvalid) {
			t.Errorf("%s: %d warning(s), but --strict exits %d", f, warns, scode)
		}
	}
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "render", filepath.Join(earlierDir, "docs", "02-cue-export.json"), "--out", out); code != exitOK {
		t.Fatalf("render: exit %d\n%s", code, stderr)
	}
	for file, want := range map[string][]string{
		"worker.container": {"ContainerName=worker\n", "Environment=\"OPTS=--fast --quiet\"\n", "Environment=MODE=batch\n"},
		"cache.volume":     {"VolumeName=cache\n"},
		"backend.network":  {"NetworkName=backend\n"},
	} {
		data, err := os.ReadFile(filepath.Join(out, "etc/containers/systemd", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %q:\n%s", file, w, data)
			}
		}
	}
}

// planJSON is the part of `--diff --output json` these tests read.
type planJSON struct {
	Units []struct {
		FileName string   `json:"fileName"`
		Effect   string   `json:"effect"`
		Reasons  []string `json:"reasons"`
	} `json:"units"`
	Actions []struct {
		Op     string `json:"op"`
		Target string `json:"target"`
	} `json:"actions"`
	Refusals []any `json:"refusals"`
}

// earlierRoot copies the fixture host into a scratch directory with the
// modes the earlier syslet wrote (0644 files, 0755 directories; git does
// not keep modes, and a checkout under umask 002 would make every file look
// changed).
func earlierRoot(t *testing.T) string {
	t.Helper()
	src, dst := filepath.Join(earlierDir, "root"), t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
