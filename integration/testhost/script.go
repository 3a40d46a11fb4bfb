package testhost

// Finding testhost.sh and its cache, and running it: building the base
// image, sweeping what killed runs left.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Script returns the path of testhost.sh in this checkout. It is found by walking up from the
// working directory to go.mod; SYSLET_TESTHOST_SCRIPT overrides it.
func Script() (string, error) {
	if s := os.Getenv("SYSLET_TESTHOST_SCRIPT"); s != "" {
		return s, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "integration", "testhost", "testhost.sh"), nil
}

// ModuleRoot returns the directory holding go.mod, found by walking up from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testhost: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// CacheDir returns integration/.cache of this checkout (or TESTHOST_CACHE), where the harness keeps
// its base image, instances and build outputs.
func CacheDir() (string, error) {
	if c := os.Getenv("TESTHOST_CACHE"); c != "" {
		return filepath.Abs(c)
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "integration", ".cache"), nil
}

// script runs testhost.sh with args and extra environment; stderr goes to logw (if not nil) and is
// returned in the error on failure.
func runScript(logw io.Writer, env []string, args ...string) (string, error) {
	script, err := Script()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if logw != nil {
		cmd.Stderr = io.MultiWriter(&stderr, logw)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("testhost.sh %s: %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Build builds the base image if this process's recipe (Recipe) has none yet (about two minutes on a fresh
// machine; a no-op when cached). It fails, with the reason, where the test host cannot run: not
// root, host PID 1 is systemd, no cgroup2, missing tools that cannot be installed.
func Build() error {
	_, err := runScript(os.Stderr, nil, "build")
	return err
}

// Sweep stops the leftovers of earlier runs that were killed: instances whose owner process is gone,
// orphan cgroups, forwarders and run directories. Live instances of other test processes are kept.
func Sweep() error {
	_, err := runScript(os.Stderr, nil, "cleanup")
	return err
}
