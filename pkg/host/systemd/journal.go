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

// LastLog returns the last lines a unit logged since a time (zero: ever;
// the second it falls in is included), oldest first, as
// "TIME IDENT[PID]: MESSAGE". It is meant for explaining a unit that did
// not come up, so it returns no lines (and no error) when the journal holds
// none for the unit.
//
// For a container's service, what says why it failed is the container's
// own output (podman's journald log driver marks it with CONTAINER_NAME);
// podman's and conmon's lines around it (IDs, "container create", "died")
// are noise that pushed it out of a short excerpt. Then the excerpt is the
// container's last n lines, followed by what systemd said after the last of
// them (how the process ended), at most logTail lines. A service with no
// container output gets its last n lines, whatever logged them.
func (m *Manager) LastLog(ctx context.Context, name string, since time.Time, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	// -q drops journalctl's "-- No entries --" and boot markers, which are not
	// log lines of the unit. Enough entries are read to find n lines of the
	// container among the noise of a few restarts.
	args := []string{"-u", name, "-n", strconv.Itoa(max(n*lastLogScan, 200)), "--no-pager", "-q",
		"-o", "json", "--output-fields=MESSAGE,CONTAINER_NAME,SYSLOG_IDENTIFIER,_PID"}
	if !since.IsZero() {
		args = append(args, "--since=@"+strconv.FormatInt(since.Unix(), 10))
	}
	cmd := exec.CommandContext(ctx, m.journalctl, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reading journal of unit %q: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return excerpt(parseEntries(stdout.Bytes()), n), nil
}

// lastLogScan is how many entries are read per line asked for, and
// logTail how many of systemd's lines follow the container's.
const (
	lastLogScan = 10
	logTail     = 3
)

// logEntry is one journal entry as LastLog reads it.
type logEntry struct {
	time      time.Time
	ident     string
	pid       string
	message   string
	container bool
}

func (e logEntry) String() string {
	return fmt.Sprintf("%s %s[%s]: %s", e.time.UTC().Format("2006-01-02T15:04:05Z"), e.ident, e.pid, e.message)
}

// parseEntries reads journalctl's JSON lines. A MESSAGE that is not UTF-8
// comes as an array of bytes; an entry that cannot be read is skipped.
func parseEntries(out []byte) []logEntry {
	var entries []logEntry
	for _, line := range bytes.Split(out, []byte("\n")) {
		var raw struct {
			Message   json.RawMessage `json:"MESSAGE"`
			Container string          `json:"CONTAINER_NAME"`
			Ident     string          `json:"SYSLOG_IDENTIFIER"`
			PID       string          `json:"_PID"`
			Realtime  string          `json:"__REALTIME_TIMESTAMP"`
		}
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &raw) != nil {
			continue
		}
		e := logEntry{ident: raw.Ident, pid: raw.PID, container: raw.Container != "", message: messageText(raw.Message)}
		if us, err := strconv.ParseInt(raw.Realtime, 10, 64); err == nil {
			e.time = time.UnixMicro(us)
		}
		e.message = strings.TrimRight(e.message, "\n")
		entries = append(entries, e)
	}
	return entries
}

// messageText is a journal MESSAGE: a string, or an array of bytes.
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b []byte
	var ints []int
	if json.Unmarshal(raw, &ints) == nil {
		for _, i := range ints {
			b = append(b, byte(i))
		}
	}
	return strings.ToValidUTF8(string(b), "?")
}

// excerpt chooses the lines LastLog returns (see there).
func excerpt(entries []logEntry, n int) []string {
	last := -1
	for i, e := range entries {
		if e.container {
			last = i
		}
	}
	var chosen []logEntry
	if last < 0 {
		chosen = entries[max(0, len(entries)-n):]
	} else {
		var own []logEntry
		for _, e := range entries[:last+1] {
			if e.container {
				own = append(own, e)
			}
		}
		chosen = own[max(0, len(own)-n):]
		tail := 0
		for _, e := range entries[last+1:] {
			if e.pid == "1" && tail < logTail {
				chosen = append(chosen, e)
				tail++
			}
		}
	}
	if len(chosen) == 0 {
		return nil
	}
	out := make([]string, len(chosen))
	for i, e := range chosen {
		out[i] = e.String()
	}
	return out
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
