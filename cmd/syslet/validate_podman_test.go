package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidatePodmanFlag: --podman picks the release keys are gated by;
// the default is the oldest supported, 5.4.
func TestValidatePodmanFlag(t *testing.T) {
	dir := t.TempDir()
	spec := `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"docker.io/library/nginx:1.27","ReloadSignal":"SIGHUP","HttpProxy":"false"}}}`
	if err := os.WriteFile(filepath.Join(dir, "web.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitInvalid, "[0].unit.Container.ReloadSignal: [Container] ReloadSignal needs podman 5.5 or later; these specs are checked against podman 5.4"},
		{[]string{"--podman", "5.5.2"}, exitInvalid, "[0].unit.Container.HttpProxy: [Container] HttpProxy needs podman 5.7 or later; these specs are checked against podman 5.5: if the host runs podman 5.7 or later, say so with --podman (syslet validate --podman 5.7)\n1 error(s)"},
		{[]string{"--podman", "v5.7"}, exitOK, "1 spec(s) from 1 source(s) are valid"},
		{[]string{"--podman", "5.3"}, exitUsage, "syslet supports podman 5.4 and later"},
		{[]string{"--podman", "five"}, exitUsage, `podman version "five": want MAJOR.MINOR`},
		{[]string{"--podman", "5.x"}, exitUsage, `"x" is not a number`},
	} {
		code, out, errOut := runCLI(t, append(append([]string{"validate"}, tc.args...), dir)...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("validate %v: exit %d, want %d with %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}

// TestValidateJSONNamesPodman: CI can tell which release a verdict is for.
func TestValidateJSONNamesPodman(t *testing.T) {
	code, out, _ := runCLI(t, "validate", "--output", "json", "--podman", "5.6.1", filepath.Join("..", "..", "examples"))
	if code != exitOK || !strings.Contains(out, `"podman": "5.6"`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestApplyPodmanFlagOnlyWithRoot: on a host syslet asks the host's podman;
// --podman is for hostless runs.
func TestApplyPodmanFlagOnlyWithRoot(t *testing.T) {
	if _, err := parseApply([]string{"--diff", "--podman", "5.5", "x"}, io.Discard); err == nil || !strings.Contains(err.Error(), "only applies with --root") {
		t.Errorf("--podman without --root: %v", err)
	}
	o, err := parseApply([]string{"--diff", "--root", t.TempDir(), "--podman", "5.8.2", "x"}, io.Discard)
	if err != nil || o.req.Podman.String() != "5.8" {
		t.Errorf("--podman with --root: %+v, %v", o.req.Podman, err)
	}
}
