package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestParseWindows: windows are read with their zone and duration; a
// wrong spec, a missing or bad duration are each told with the window's
// key and what is wrong, and nothing is read of a bad window.
func TestParseWindows(t *testing.T) {
	f := writeFiles(t)
	good := fmt.Sprintf(`
repos:
  - name: infra
    url: /srv/infra.git
    secretFile: %s
    windows:
      - {calendar: "Mon..Thu 02:00 Europe/Berlin", duration: 3h}
      - {calendar: "Sun 10:00 UTC", duration: 30m}
`, f.secret)
	c, err := Parse("test.yaml", []byte(good), "web1")
	if err != nil {
		t.Fatal(err)
	}
	ws := c.Repos[0].MaintenanceWindows
	if len(ws) != 2 || ws[0].Duration != 3*time.Hour || ws[0].String() != "Mon..Thu 02:00 Europe/Berlin for 3h" || ws[1].String() != "Sun 10:00 UTC for 30m" {
		t.Fatalf("windows %v", ws)
	}

	bad := fmt.Sprintf(`
repos:
  - name: infra
    url: /srv/infra.git
    secretFile: %s
    windows:
      - {calendar: "Fri..Mon 22:00", duration: 3h}
      - {calendar: "02:00 Europe/Berln", duration: 3}
      - {duration: -1h}
      - {calendar: "Sat 25:00"}
`, f.secret)
	_, err = Parse("test.yaml", []byte(bad), "web1")
	if err == nil {
		t.Fatal("parsed")
	}
	for _, want := range []string{
		`test.yaml: repos[0].windows[0].calendar: "Fri..Mon 22:00": weekday range "Fri..Mon" runs backwards`,
		`test.yaml: repos[0].windows[1].calendar: "02:00 Europe/Berln": "Europe/Berln" is not a time zone`,
		`test.yaml: repos[0].windows[1].duration: "3" is not a duration like 30m or 3h`,
		`test.yaml: repos[0].windows[2].calendar: required`,
		`test.yaml: repos[0].windows[2].duration: must be positive, got -1h0m0s`,
		`test.yaml: repos[0].windows[3].calendar: "Sat 25:00": hour "25": 25 is outside 0..23`,
		`test.yaml: repos[0].windows[3].duration: required`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}
