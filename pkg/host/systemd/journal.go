package systemd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
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

// startingMessage is the MESSAGE_ID of PID 1's "Starting UNIT..." line,
// written as a start job begins (SD_MESSAGE_UNIT_STARTING).
const startingMessage = "7d4958e842da4a758f6c1cdc7b36dcc5"

// startsLogged reads from the journal when PID 1 last logged beginning to
// start each of names (no entry: not in the result): newest first, a
// bounded number of entries.
func (m *Manager) startsLogged(ctx context.Context, names []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(names) == 0 {
		return out, nil
	}
	args := []string{"-o", "json", "--output-fields=UNIT", "-r", "-n", "1000", "--no-pager", "-q", "_PID=1", "MESSAGE_ID=" + startingMessage}
	for _, n := range names {
		args = append(args, "UNIT="+n)
	}
	cmd := exec.CommandContext(ctx, m.journalctl, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reading when systemd last started %q from the journal: %w: %s", names, err, strings.TrimSpace(stderr.String()))
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		var e struct {
			Unit string `json:"UNIT"`
			At   string `json:"__REALTIME_TIMESTAMP"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Unit == "" {
			continue
		}
		us, err := strconv.ParseInt(e.At, 10, 64)
		if err != nil {
			continue
		}
		if t := time.UnixMicro(us); t.After(out[e.Unit]) {
			out[e.Unit] = t
		}
	}
	return out, nil
}
