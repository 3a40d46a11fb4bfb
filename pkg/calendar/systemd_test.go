package calendar

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The specs the comparison with systemd runs over: what maintenance
// windows are written as, the words, zones, and a night clocks go forward
// (02:30 in Berlin on 2027-03-28 does not exist, so it is not an elapse).
var systemdSpecs = []string{
	"Mon..Fri 02:00",
	"Mon..Thu 02:00 Europe/Berlin",
	"Sat,Sun *-*-* 22:30",
	"mon-fri 10:00",
	"Fri *-*-* 18:00:00 UTC",
	"Tuesday 03:15 America/New_York",
	"*-*-* 02:30 Europe/Berlin",
	"*-*-* 02:30",
	"*:0/15",
	"*-*-* 00/6:00",
	"Sat..Sun 1..3:0/20",
	"*-*-1/2 3:00",
	"Mon *-*-1..7 9:00",
	"*-02-29 00:00",
	"2027-01-* 12:00 Asia/Tokyo",
	"2027-*-01,15 04:00:30",
	"12-24 18:00",
	"Wed,Fri..Sun 23:59:59",
	"Mon",
	"hourly",
	"daily",
	"weekly",
	"monthly",
	"yearly",
	"02:00 UTC",
	"Mon..Fri *-*-* 01,13:00 Australia/Sydney",
}

// systemdBases are the moments the comparison starts from: now-ish, the
// Friday before the spring change in Berlin, a leap year's February.
var systemdBases = []string{"2026-12-07 14:59:59", "2027-03-26 23:00:00", "2028-02-27 12:00:00", "2027-10-31 00:30:00"}

// TestNextAsSystemd compares Next with systemd-analyze calendar for every
// spec and base time: the same elapses, ten in a row, with specs without
// a zone read in the local time zone (set to Berlin for both).
func TestNextAsSystemd(t *testing.T) {
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		// CI installs it (.ci/run): there the comparison must run.
		if os.Getenv("CI") != "" {
			t.Fatal("no systemd-analyze in CI:", err)
		}
		t.Skip("no systemd-analyze (Debian: apt install systemd)")
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = berlin
	const iterations = 10
	compared := 0
	defer func() {
		t.Logf("%d elapses of %d specs from %d start times agree with systemd-analyze", compared, len(systemdSpecs), len(systemdBases))
	}()
	for _, base := range systemdBases {
		at, err := time.ParseInLocation("2006-01-02 15:04:05", base, berlin)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range systemdSpecs {
			want := systemdElapses(t, bin, text, base, iterations)
			s, err := Parse(text)
			if err != nil {
				t.Errorf("%q: %v (systemd reads it)", text, err)
				continue
			}
			from := at
			for i, w := range want {
				got, ok := s.Next(from)
				if !ok || !got.Equal(w) {
					t.Errorf("%q from %s: elapse #%d is %s (%v), systemd says %s", text, base, i+1, got.In(berlin), ok, w)
					break
				}
				from = got
				compared++
			}
			if len(want) < iterations {
				// systemd found no more: neither may Next.
				if got, ok := s.Next(from); ok {
					t.Errorf("%q from %s: elapse #%d is %s, systemd says never", text, base, len(want)+1, got)
				}
			}
		}
	}
}

// systemdElapses runs systemd-analyze calendar in Berlin time.
func systemdElapses(t *testing.T, bin, spec, base string, n int) []time.Time {
	t.Helper()
	cmd := exec.Command(bin, "calendar", "--iterations="+strconv.Itoa(n), "--base-time="+base, spec)
	cmd.Env = append(os.Environ(), "TZ=Europe/Berlin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze calendar %q: %v\n%s", spec, err, out)
	}
	// Each elapse is printed in Berlin time and again "(in UTC)"; the
	// latter is unambiguous in the hour clocks go back.
	var elapses []time.Time
	for _, line := range strings.Split(string(out), "\n") {
		_, v, ok := strings.Cut(line, "(in UTC): ")
		if !ok {
			continue
		}
		f := strings.Fields(v) // Tue 2026-12-08 01:00:00 UTC
		if len(f) != 4 {
			t.Fatalf("systemd-analyze's %q: want a weekday, date, time and UTC", line)
		}
		at, err := time.Parse("2006-01-02 15:04:05", f[1]+" "+f[2])
		if err != nil {
			t.Fatalf("systemd-analyze's %q: %v", line, err)
		}
		elapses = append(elapses, at)
	}
	if len(elapses) == 0 && !strings.Contains(string(out), "Next elapse: never") {
		t.Fatalf("systemd-analyze calendar %q printed no elapse:\n%s", spec, out)
	}
	return elapses
}

// TestParseRefusesWhatSystemdRefuses: specs systemd-analyze rejects are
// errors here too, never read as something else.
func TestParseRefusesWhatSystemdRefuses(t *testing.T) {
	bad := []string{"", "Fri..Mon 22:00", "*:*/15", "25:00", "Mon 02:60", "*-13-01", "Funday 02:00", "02:00 Mars/Olympus", "02:00 UTC extra", "*-*-32", "2-1..", "now"}
	bin, _ := exec.LookPath("systemd-analyze")
	for _, text := range bad {
		if _, err := Parse(text); err == nil {
			t.Errorf("%q: no error", text)
		}
		if bin != "" && text != "" {
			if out, err := exec.Command(bin, "calendar", text).CombinedOutput(); err == nil {
				t.Errorf("%q: systemd reads it:\n%s", text, out)
			}
		}
	}
}
