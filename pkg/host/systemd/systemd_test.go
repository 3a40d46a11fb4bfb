package systemd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	godbus "github.com/godbus/dbus/v5"

	"github.com/syslet/syslet/pkg/host"
)

func TestClassifyNoSuchUnit(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		notFound bool
	}{
		{"value error", godbus.Error{Name: noSuchUnit, Body: []any{"Unit x.service not loaded."}}, true},
		{"pointer error", &godbus.Error{Name: noSuchUnit, Body: []any{"Unit x.service not found."}}, true},
		{"other bus error", godbus.Error{Name: "org.freedesktop.systemd1.JobTypeNotApplicable", Body: []any{"no"}}, false},
		{"plain error", errors.New("boom"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.err)
			if errors.Is(got, host.ErrNotFound) != c.notFound {
				t.Fatalf("errors.Is(classify(%v), ErrNotFound) = %v, want %v", c.err, !c.notFound, c.notFound)
			}
			if got.Error() != c.err.Error() {
				t.Errorf("message changed: %q, want systemd's own %q", got.Error(), c.err.Error())
			}
			if isNoSuchUnit(c.err) != isNoSuchUnit(got) {
				t.Errorf("bus error lost from the chain: %#v", got)
			}
		})
	}
}

func TestIsDown(t *testing.T) {
	cases := map[string]bool{"inactive": true, "failed": true, "active": false, "deactivating": false, "activating": false}
	for state, want := range cases {
		if got := isDown(host.UnitState{ActiveState: state}); got != want {
			t.Errorf("isDown(%s) = %v, want %v", state, got, want)
		}
	}
}

func TestJobErrorText(t *testing.T) {
	err := error(&host.JobError{Unit: "web.service", Op: "start", Result: stateResult(host.UnitState{ActiveState: "activating", SubState: "auto-restart"})})
	if got, want := err.Error(), "start web.service: job state activating/auto-restart"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for op, want := range map[string]string{"start": "starting", "stop": "stopping", "restart": "restarting", "reload": "reloading"} {
		if got := gerund(op); got != want {
			t.Errorf("gerund(%q) = %q, want %q", op, got, want)
		}
	}
}

// fakeJournalctl writes a script that records its arguments and prints out.
func fakeJournalctl(t *testing.T, out string, code int) (prog, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	prog = filepath.Join(dir, "journalctl")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\nprintf '%s' '" + out + "'\necho 'some complaint' >&2\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, argsFile
}

func TestLastLog(t *testing.T) {
	prog, argsFile := fakeJournalctl(t, `{"MESSAGE":"one","SYSLOG_IDENTIFIER":"web","_PID":"1","__REALTIME_TIMESTAMP":"1767225600000000"}
{"MESSAGE":"two","SYSLOG_IDENTIFIER":"web","_PID":"1","__REALTIME_TIMESTAMP":"1767225601000000"}
`, 0)
	m := &Manager{journalctl: prog}
	lines, err := m.LastLog(context.Background(), "web.service", time.Time{}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "one") || !strings.HasSuffix(lines[1], "two") {
		t.Errorf("lines = %q", lines)
	}
	args, _ := os.ReadFile(argsFile)
	if got, want := strings.Fields(string(args)), []string{"-u", "web.service", "-n", "200", "--no-pager", "-q", "-o", "json", "--output-fields=MESSAGE,CONTAINER_NAME,SYSLOG_IDENTIFIER,_PID"}; !reflect.DeepEqual(got, want) {
		t.Errorf("journalctl args = %q, want %q", got, want)
	}
}

func TestLastLogEmptyAndZero(t *testing.T) {
	prog, argsFile := fakeJournalctl(t, "", 0)
	m := &Manager{journalctl: prog}
	lines, err := m.LastLog(context.Background(), "quiet.service", time.Time{}, 10)
	if err != nil || lines != nil {
		t.Errorf("LastLog on an empty journal = %q, %v; want no lines, no error", lines, err)
	}
	os.Remove(argsFile)
	if lines, err := m.LastLog(context.Background(), "quiet.service", time.Time{}, 0); err != nil || lines != nil {
		t.Errorf("LastLog(n=0) = %q, %v", lines, err)
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Error("LastLog(n=0) ran journalctl")
	}
}

func TestLastLogFailure(t *testing.T) {
	prog, _ := fakeJournalctl(t, "", 1)
	m := &Manager{journalctl: prog}
	_, err := m.LastLog(context.Background(), "web.service", time.Time{}, 3)
	if err == nil || !strings.Contains(err.Error(), `reading journal of unit "web.service"`) || !strings.Contains(err.Error(), "some complaint") {
		t.Errorf("err = %v, want the unit and journalctl's stderr", err)
	}
}

// startsLogged asks the journal for PID 1's "Starting" lines of the named
// units only, newest first, and keeps each unit's newest.
func TestStartsLogged(t *testing.T) {
	out := `{"UNIT":"seed.service","__REALTIME_TIMESTAMP":"1764600000000000"}
{"UNIT":"seed.service","__REALTIME_TIMESTAMP":"1764500000000000"}
{"UNIT":"migrate.service","__REALTIME_TIMESTAMP":"1764400000000000"}
not json
`
	prog, argsFile := fakeJournalctl(t, out, 0)
	m := &Manager{journalctl: prog}
	got, err := m.startsLogged(context.Background(), []string{"seed.service", "migrate.service", "never.service"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["seed.service"].UnixMicro() != 1764600000000000 || got["migrate.service"].UnixMicro() != 1764400000000000 {
		t.Errorf("startsLogged = %v", got)
	}
	args, _ := os.ReadFile(argsFile)
	for _, want := range []string{"_PID=1", "MESSAGE_ID=" + startingMessage, "UNIT=seed.service", "UNIT=never.service", "-r"} {
		if !strings.Contains(string(args), want+"\n") {
			t.Errorf("journalctl args lack %q:\n%s", want, args)
		}
	}
}
