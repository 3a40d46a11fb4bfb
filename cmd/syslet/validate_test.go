package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/redact"

	"github.com/syslet/syslet/pkg/app/view"
)

var update = flag.Bool("update", false, "rewrite golden files (testdata/invalid/want.txt, testdata/golden/) from the current output")

// invalidDir holds one invalid spec stream per file; each must give exactly
// one finding. want.txt is the text `syslet validate` prints for the whole
// directory, with sources relative to the directory.
const invalidDir = "testdata/invalid"

// wantRule is the rule each file of invalidDir is there to trigger. A new
// file needs an entry here, and a new rule in pkg/spec/rules.go needs a
// file (TestInvalidCoversRules).
var wantRule = map[string]string{
	"01-json-syntax.json":                 "json-syntax",
	"02-spec-not-object.json":             "spec-not-object",
	"03-duplicate-key.json":               "duplicate-key",
	"04-unknown-field.json":               "unknown-field",
	"05-unknown-field-config-file.json":   "unknown-field",
	"06-field-type.json":                  "field-type",
	"07-required-api-version.json":        "required",
	"08-required-type.json":               "required",
	"09-required-name.json":               "required",
	"10-required-containerfile.json":      "required",
	"11-required-ciphertext.json":         "required",
	"12-api-version.json":                 "api-version",
	"13-type.json":                        "type",
	"14-name-chars.json":                  "name",
	"15-name-too-long.json":               "name",
	"16-name-dotdot.json":                 "name",
	"17-name-leading-dot.json":            "name",
	"18-duplicate-name.json":              "duplicate-name",
	"19-service-name-conflict.json":       "service-name-conflict",
	"20-control-newline.json":             "control-character",
	"21-control-nul-key.json":             "control-character",
	"22-control-tab-section.json":         "control-character",
	"23-line-continuation.json":           "line-continuation",
	"24-unknown-section.json":             "unknown-section",
	"25-reserved-section.json":            "reserved-section",
	"26-invalid-key.json":                 "invalid-key",
	"27-unknown-key.json":                 "unknown-key",
	"28-map-not-allowed.json":             "map-not-allowed",
	"29-map-key.json":                     "map-key",
	"30-forced-container-name.json":       "forced-key",
	"31-forced-service-name.json":         "service-name",
	"32-forced-build-file.json":           "forced-key",
	"33-invalid-desired-state.json":       "invalid-value",
	"34-invalid-reclaim-policy.json":      "invalid-value",
	"35-mode-not-octal.json":              "mode",
	"36-mode-too-big.json":                "mode",
	"37-mount-path-relative.json":         "mount-path",
	"38-mount-path-dotdot.json":           "mount-path",
	"39-mount-path-not-clean.json":        "mount-path",
	"40-mount-path-colon.json":            "mount-path",
	"41-mount-path-root.json":             "mount-path",
	"42-duplicate-mount-path.json":        "duplicate-mount-path",
	"43-nested-mount-path.json":           "nested-mount-path",
	"44-config-file-name-slash.json":      "config-file-name",
	"45-config-file-name-data.json":       "config-file-name",
	"46-duplicate-file-name.json":         "duplicate-file-name",
	"47-exec-reload-required.json":        "exec-reload-required",
	"48-oneshot-restart.json":             "desired-state-conflict",
	"49-running-type-oneshot.json":        "desired-state-conflict",
	"50-image-required.json":              "image-required",
	"51-image-tag-prefix.json":            "image-tag",
	"52-image-tag-missing.json":           "image-tag",
	"53-context-file-absolute.json":       "context-file",
	"54-context-file-dotdot.json":         "context-file",
	"55-context-file-containerfile.json":  "context-file",
	"56-context-file-duplicate.json":      "context-file",
	"57-secret-not-map.json":              "secret-format",
	"58-secret-no-sops.json":              "secret-format",
	"59-secret-key-uppercase.json":        "secret-key",
	"60-undefined-volume.json":            "undefined-reference",
	"61-undefined-network.json":           "undefined-reference",
	"62-undefined-build.json":             "undefined-reference",
	"63-unsupported-template-ref.json":    "unsupported-reference",
	"64-undefined-secret.json":            "undefined-secret",
	"65-duplicate-mount-destination.json": "duplicate-mount-destination",
	"66-duplicate-secret-name.json":       "duplicate-secret-name",
	"67-mixed-stream.json":                "duplicate-mount-destination",
	"68-control-in-name.json":             "control-character",
	"69-list-item-type.json":              "field-type",
	"70-empty-name.json":                  "required",
	"71-forced-volume-name.json":          "forced-key",
	"72-forced-network-service-name.json": "service-name",
	"73-reference-wrong-kind.json":        "undefined-reference",
	"74-secret-duplicate-key.json":        "secret-format",
	"75-oneshot-config-dirs.json":         "desired-state-conflict",
	"76-image-null.json":                  "field-type",
	"77-duplicate-secret-spec.json":       "duplicate-name",
	"78-context-file-under-another.json":  "context-file",
	"79-map-value-volume.json":            "map-value",
	"80-map-value-logopt.json":            "map-value",
	"81-number-value.json":                "field-type",
	"82-volume-without-unit.json":         "required",
	"83-capitalised-type.json":            "type",
	"84-key-needs-newer-podman.json":      "key-needs-newer-podman",
	"85-quadlet-conversion.json":          "quadlet-conversion",
	"87-secret-plaintext.json":            "secret-not-encrypted",
	"88-secret-no-recipients.json":        "secret-recipients",
	"89-secret-value-type.json":           "secret-value-type",
	"90-external-secret-ciphertext.json":  "secret-external",
	"91-external-secret-name.json":        "name",
	"92-external-secret-collision.json":   "duplicate-secret-name",
	"93-mount-path-trailing-slash.json":   "mount-path",
	"94-desired-state-case.json":          "invalid-value",
	"95-forced-oneshot-type.json":         "forced-key",
	"96-forced-restart.json":              "forced-key",
	"97-forced-wanted-by.json":            "forced-key",
	"98-map-value-ignored.json":           "map-value-ignored",
	"99-map-value-mask.json":              "map-value",
	"100-drop-in-name.json":               "drop-in",
	"101-instance-name.json":              "instance",
	"102-resource-name-conflict.json":     "resource-name-conflict",
	"103-image-reference.json":            "image-reference",
	"104-image-tag-uppercase.json":        "image-tag",
	"105-image-tag-too-long.json":         "image-tag",
	"106-image-tag-character.json":        "image-tag",
	"108-misspelled-field.json":           "misspelled-field",
	"109-auto-update.json":                "auto-update",
	"110-probe.json":                      "probe",
	"111-probe-port.json":                 "probe-port",
	"112-systemd-key-typo.json":           "unknown-key",
	"113-port.json":                       "port",
	"114-named-volume-typo.json":          "undefined-reference",
	"115-key-needs-newer-systemd.json":    "key-needs-newer-systemd",
	"116-socket.json":                     "socket",
	"120-proxy.json":                      "proxy",
	"121-proxy-port.json":                 "proxy-port",
	"86-build-arg.json":                   "key-needs-newer-podman",
}

// notFromSpecs are rules no file here can trigger: "source" is an
// unusable path (not a regular file), "input-size" and "empty-input" are
// about the input as a whole (guard_test.go covers them), "quadlet-warning"
// is a warning, which never makes a spec invalid, and
// "quadlet-disagreement" would be a syslet bug (pkg/load/quadletcheck's tests
// keep it from happening), and "removal-allowed-default" is the plan's,
// about the host (plan/migrate_test.go).
var notFromSpecs = []string{"source", "input-size", "empty-input", "quadlet-warning", "quadlet-disagreement", "removal-allowed-default"}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// relative makes output independent of where the checkout lives: sources
// are printed as the directory joined with the file name.
func relative(s string) string {
	return strings.ReplaceAll(s, filepath.ToSlash(invalidDir)+"/", "")
}

// specFiles lists the *.json files of invalidDir, as syslet reads them.
func specFiles(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(invalidDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range m {
		names = append(names, filepath.Base(p))
	}
	sort.Strings(names)
	if len(names) < 45 {
		t.Fatalf("%s holds %d spec files, want at least 45", invalidDir, len(names))
	}
	return names
}

// snapshot records every file under root (path, mode, size, mtime, content
// hash), or that root does not exist, so a test can show nothing changed.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				snap[p] = "absent"
				return nil
			}
			if errors.Is(err, fs.ErrPermission) {
				snap[p] = "unreadable"
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err == nil {
				v += fmt.Sprintf(" %x", sha256.Sum256(data))
			}
		}
		snap[p] = v
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return snap
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for p, v := range after {
		if before[p] != v {
			d = append(d, fmt.Sprintf("%s: %q -> %q", p, before[p], v))
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			d = append(d, p+": removed")
		}
	}
	sort.Strings(d)
	return d
}

// TestValidateInvalid is issue 2's acceptance: every invalid spec of the
// directory is reported, once, with its JSON path; the exit code is 2; and
// validate writes nothing.
func TestValidateInvalid(t *testing.T) {
	files := specFiles(t)

	// Everything validate could plausibly write to: the sources' tree, the
	// host paths an apply would write, and fresh HOME / TMPDIR / XDG dirs
	// that must stay empty. (Not the whole package dir: others may edit
	// its Go files while the test runs.)
	roots := []string{"testdata", "/etc/containers", "/etc/syslet"}
	before := map[string]map[string]string{}
	for _, r := range roots {
		before[r] = snapshot(t, r)
	}
	scratch := map[string]string{}
	for _, env := range []string{"HOME", "TMPDIR", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"} {
		dir := t.TempDir()
		t.Setenv(env, dir)
		scratch[env] = dir
	}

	// --strict: some files hold what the earlier syslet accepted (an
	// unknown field, a forced key set to another value), which is a
	// warning by default and an error for CI.
	code, out, errOut := runCLI(t, "validate", "--strict", invalidDir)
	jcode, jout, jerrOut := runCLI(t, "validate", "--strict", "--output", "json", invalidDir)

	for _, r := range roots {
		if d := diffSnapshots(before[r], snapshot(t, r)); len(d) > 0 {
			t.Errorf("validate changed files under %s:\n%s", r, strings.Join(d, "\n"))
		}
	}
	for env, dir := range scratch {
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("validate wrote into $%s: %v", env, ents)
		}
	}

	if code != exitInvalid || jcode != exitInvalid {
		t.Errorf("exit codes: text %d, json %d; want %d for both", code, jcode, exitInvalid)
	}
	if errOut != "" || jerrOut != "" {
		t.Errorf("unexpected stderr: %q %q", errOut, jerrOut)
	}

	got := relative(out)
	want := filepath.Join(invalidDir, "want.txt")
	if *update {
		if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if w, err := os.ReadFile(want); err != nil {
		t.Fatal(err)
	} else if string(w) != got {
		t.Errorf("output differs from %s (go test ./cmd/syslet -run TestValidateInvalid -update to accept):\n--- want\n%s--- got\n%s", want, w, got)
	}

	// Text: one finding line per file, then the count.
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	summary := fmt.Sprintf("%d error(s): the specs are invalid; nothing was changed", len(files))
	if lines[len(lines)-1] != summary {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], summary)
	}
	lines = lines[:len(lines)-1]
	seen := map[string]int{}
	for _, l := range lines {
		src, _, ok := strings.Cut(l, ": ")
		if !ok {
			t.Errorf("line without a source: %q", l)
		}
		seen[src]++
	}
	for _, f := range files {
		if seen[f] != 1 {
			t.Errorf("%s: %d findings, want exactly 1", f, seen[f])
		}
		delete(seen, f)
	}
	for src, n := range seen {
		t.Errorf("%d finding(s) for %q, which is not a spec file of %s", n, src, invalidDir)
	}

	// JSON: the same findings, machine-readable, with the intended rule.
	var res view.Validation
	if err := json.Unmarshal([]byte(jout), &res); err != nil {
		t.Fatalf("--output json does not parse: %v\n%s", err, jout)
	}
	if res.Valid || res.Sources != len(files) || res.Errors != len(files) || len(res.Findings) != len(files) {
		t.Errorf("json summary: valid=%v sources=%d errors=%d findings=%d; want false and %d of each",
			res.Valid, res.Sources, res.Errors, len(res.Findings), len(files))
	}
	pathRe := regexp.MustCompile(`^\[\d+\]`)
	for i, f := range res.Findings {
		src := filepath.Base(f.Source)
		if f.Source != filepath.Join(invalidDir, src) {
			t.Errorf("finding %d: source %q is not a file of %s", i, f.Source, invalidDir)
		}
		if r, ok := wantRule[src]; !ok {
			t.Errorf("%s: no entry in wantRule", src)
		} else if f.Rule != r {
			t.Errorf("%s: rule %q, want %q (%s: %s)", src, f.Rule, r, f.Path, f.Message)
		}
		// Only a stream that cannot be parsed has no path (its message
		// carries line and column instead).
		if f.Rule == "json-syntax" {
			if f.Path != "" || !strings.Contains(f.Message, "line ") {
				t.Errorf("%s: json-syntax finding should have no path and a line number: %+v", src, f)
			}
		} else if !pathRe.MatchString(f.Path) {
			t.Errorf("%s: path %q does not start with a spec index", src, f.Path)
		}
		if f.Message == "" || f.Severity != "error" {
			t.Errorf("%s: finding %+v lacks a message or is not an error", src, f)
		}
		// The text form is the JSON finding with every field escaped
		// (JSON keeps the exact value).
		shown := f
		shown.Source, shown.Path, shown.Message = redact.Escape(f.Source), redact.Escape(f.Path), redact.Escape(f.Message)
		if i < len(lines) && relative(shown.String()) != lines[i] {
			t.Errorf("json finding %d prints as %q, text output has %q", i, relative(shown.String()), lines[i])
		}
	}
	for f := range wantRule {
		if !slices.Contains(files, f) {
			t.Errorf("wantRule names %s, which is not in %s", f, invalidDir)
		}
	}
}

// TestInvalidCoversRules keeps testdata/invalid complete: every rule of
// pkg/spec/rules.go that a spec can trigger has a file triggering it.
func TestInvalidCoversRules(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "pkg", "spec", "rules.go"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, r := range wantRule {
		covered[r] = true
	}
	rules := regexp.MustCompile(`(?m)^\s*Rule\w+\s*=\s*"([a-z-]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(rules) < 40 {
		t.Fatalf("found %d rules in rules.go; has its layout changed?", len(rules))
	}
	for _, m := range rules {
		if !covered[m[1]] && !slices.Contains(notFromSpecs, m[1]) {
			t.Errorf("rule %q has no file in %s", m[1], invalidDir)
		}
	}
}

// TestValidateExamples: the shipped examples are valid.
func TestValidateExamples(t *testing.T) {
	code, out, errOut := runCLI(t, "validate", filepath.Join("..", "..", "examples"))
	if code != exitOK || errOut != "" || !strings.HasSuffix(out, "are valid\n") {
		t.Fatalf("validate examples: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "validate", "--output", "json", filepath.Join("..", "..", "examples"))
	var res view.Validation
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK || !res.Valid || res.Errors != 0 || res.Findings == nil {
		t.Fatalf("validate --output json examples: exit %d, %v\n%s", code, err, out)
	}
}

// TestValidateEachFileAlone: each file gives its one finding on its own
// too, so no finding depends on another file of the directory.
func TestValidateEachFileAlone(t *testing.T) {
	w, err := os.ReadFile(filepath.Join(invalidDir, "want.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range specFiles(t) {
		code, out, _ := runCLI(t, "validate", "--strict", filepath.Join(invalidDir, f))
		lines := strings.Split(strings.TrimSuffix(relative(out), "\n"), "\n")
		if code != exitInvalid || len(lines) != 2 || !strings.Contains(string(w), lines[0]+"\n") {
			t.Errorf("%s alone: exit %d\n%s", f, code, out)
		}
	}
}

// validate cannot know which host a secret is for: it says what it
// checked of each secret spec (its form, the age recipients it is
// encrypted for) and where the rest is checked, and the verdict stays the
// last line.
func TestValidateSaysWhatItCheckedOfSecrets(t *testing.T) {
	code, out, _ := runCLI(t, "validate", filepath.Join("..", "..", "examples"))
	if code != exitOK || !strings.Contains(out, "1 secret spec(s): checked as SOPS documents encrypted for age recipients; which host can open them is not checked here") ||
		!strings.Contains(out, "  shop: encrypted for age1") || !strings.HasSuffix(out, "are valid\n") {
		t.Errorf("validate examples: exit %d\n%s", code, out)
	}
}

// TestMissingPathIsInvalidInput: a PATH that does not exist is input that
// cannot be specs, exit 2 as the reference says, naming the path; status
// says the same.
func TestMissingPathIsInvalidInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "specs")
	for _, args := range [][]string{{"validate", missing}, {"status", missing}} {
		code, out, errOut := runCLI(t, args...)
		if code != exitInvalid || !strings.Contains(out+errOut, missing+": does not exist") {
			t.Errorf("syslet %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}
