package quadlet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// DefaultGenerator is where Debian and Fedora install podman's generator.
const DefaultGenerator = "/usr/libexec/podman/quadlet"

// Stager runs the generator and the verifier.
type Stager struct {
	Generator string // quadlet binary
	Verify    string // systemd-analyze binary; "" skips verification
}

// Error is a staging failure: the tool's own output, line by line.
type Error struct {
	Tool   string   // "quadlet" or "systemd-analyze verify"
	Output []string // the tool's messages, scratch paths removed
}

func (e *Error) Error() string {
	return e.Tool + " rejected the units:\n  " + strings.Join(e.Output, "\n  ")
}

// Check stages units (file name relative to the unit directory → content)
// and verifies the services generated for the names in verify (unit file
// names such as "web.container"). It returns *Error when a tool rejects
// the set, with messages naming the unit files, and the generator's
// warnings (such as short image names), which do not block.
func (s Stager) Check(ctx context.Context, units map[string][]byte, verify []string) (warnings []string, err error) {
	tmp, err := os.MkdirTemp("", "syslet-stage-")
	if err != nil {
		return nil, fmt.Errorf("staging: %w", err)
	}
	defer os.RemoveAll(tmp)
	src, gen := filepath.Join(tmp, "units"), filepath.Join(tmp, "generated")
	names := make([]string, 0, len(units))
	for n := range units {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(src, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("staging: %w", err)
		}
		if err := os.WriteFile(p, units[n], 0o644); err != nil {
			return nil, fmt.Errorf("staging: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, s.Generator, "-no-kmsg-log", gen)
	cmd.Env = append(os.Environ(), "QUADLET_UNIT_DIRS="+src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	runErr := cmd.Run()
	var problems []string
	for _, m := range clean(stderr.String(), tmp) {
		if strings.Contains(m, "Warning:") {
			warnings = append(warnings, m)
		} else {
			problems = append(problems, m)
		}
	}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return warnings, fmt.Errorf("running %s: %w", s.Generator, runErr)
		}
		return warnings, &Error{Tool: "quadlet", Output: problems}
	}
	if len(problems) > 0 {
		// Anything but a warning from the generator means a unit it could
		// not take as written, even when it exits 0.
		return warnings, &Error{Tool: "quadlet", Output: problems}
	}
	if s.Verify == "" || len(verify) == 0 {
		return warnings, nil
	}
	var services []string
	for _, n := range verify {
		svc := filepath.Join(gen, ServiceFile(n))
		if _, err := os.Stat(svc); err != nil {
			return warnings, &Error{Tool: "quadlet", Output: []string{fmt.Sprintf("%s: no service was generated", n)}}
		}
		services = append(services, svc)
	}
	args := append([]string{"verify", "--man=no"}, services...)
	vc := exec.CommandContext(ctx, s.Verify, args...)
	var vout bytes.Buffer
	vc.Stdout, vc.Stderr = &vout, &vout
	err = vc.Run()
	msgs := clean(vout.String(), tmp)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return warnings, fmt.Errorf("running %s: %w", s.Verify, err)
	}
	// verify exits 0 on unknown keys and bad values and only prints a
	// warning, so any output at all is a failure.
	if err != nil || len(msgs) > 0 {
		return warnings, &Error{Tool: "systemd-analyze verify", Output: msgs}
	}
	return warnings, nil
}

// clean drops empty lines and the generator's progress chatter, and strips
// the scratch directory from paths so messages name the unit files.
func clean(out, tmp string) []string {
	var msgs []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.Contains(l, "Loading source unit file") {
			continue
		}
		l = strings.ReplaceAll(l, filepath.Join(tmp, "units")+"/", "")
		l = strings.ReplaceAll(l, filepath.Join(tmp, "generated")+"/", "")
		if !slices.Contains(msgs, l) {
			msgs = append(msgs, l)
		}
	}
	return msgs
}

// ServiceFile is the service quadlet generates for a unit file name.
func ServiceFile(unitFile string) string {
	ext := filepath.Ext(unitFile)
	base := strings.TrimSuffix(unitFile, ext)
	switch ext {
	case ".container":
		return base + ".service"
	case ".volume", ".network", ".build", ".image", ".pod":
		return base + "-" + strings.TrimPrefix(ext, ".") + ".service"
	}
	return base + ".service"
}
