package systemd

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// LastLog returns the unit's last n journal lines, oldest first, in
// journalctl's short-iso format. It is meant for explaining a unit that did
// not come up, so it returns no lines (and no error) when the journal holds
// none for the unit.
func (m *Manager) LastLog(ctx context.Context, name string, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	// -q drops journalctl's "-- No entries --" and boot markers, which are not
	// log lines of the unit.
	cmd := exec.CommandContext(ctx, m.journalctl, "-u", name, "-n", strconv.Itoa(n), "--no-pager", "-o", "short-iso", "-q")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reading journal of unit %q: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	out := strings.TrimRight(stdout.String(), "\n")
	if out == "" {
		return nil, nil
	}
	return strings.Split(out, "\n"), nil
}
