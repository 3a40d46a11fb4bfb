package calendar

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Spec is a parsed calendar spec: the moments whose every field matches.
type Spec struct {
	text                      string
	weekday, year, month, day field
	hour, minute, second      field
	loc                       *time.Location
}

// field is the values one component of a spec allows.
type field []span

// span is from..to stepping by step: "3", "1..7", "0/15", "*".
type span struct{ from, to, step int }

func (f field) has(v int) bool {
	for _, s := range f {
		if v >= s.from && v <= s.to && (v-s.from)%s.step == 0 {
			return true
		}
	}
	return false
}

// shorthands are systemd's words for common specs.
var shorthands = map[string]string{
	"minutely": "*-*-* *:*:00",
	"hourly":   "*-*-* *:00:00",
	"daily":    "*-*-* 00:00:00",
	"weekly":   "Mon *-*-* 00:00:00",
	"monthly":  "*-*-01 00:00:00",
	"yearly":   "*-01-01 00:00:00",
	"annually": "*-01-01 00:00:00",
}

var weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Parse reads a calendar spec; the error says which part is wrong.
func Parse(text string) (Spec, error) {
	s := Spec{text: strings.Join(strings.Fields(text), " "), loc: time.Local}
	words := strings.Fields(text)
	if len(words) == 0 {
		return s, fmt.Errorf("empty calendar spec")
	}
	if long, ok := shorthands[strings.ToLower(words[0])]; ok {
		words = append(strings.Fields(long), words[1:]...)
	}
	s.weekday = field{{0, 6, 1}}
	s.year, s.month, s.day = field{{1970, 2199, 1}}, field{{1, 12, 1}}, field{{1, 31, 1}}
	s.hour, s.minute, s.second = field{{0, 0, 1}}, field{{0, 0, 1}}, field{{0, 0, 1}}
	parts := 0
	var err error
	if len(words) > 0 && isLetter(words[0][0]) && !strings.Contains(words[0], "/") {
		if s.weekday, err = parseWeekdays(words[0]); err != nil {
			return s, err
		}
		words, parts = words[1:], parts+1
	}
	if len(words) > 0 && strings.Contains(words[0], "-") && !strings.Contains(words[0], ":") && !isLetter(words[0][0]) {
		if err := s.parseDate(words[0]); err != nil {
			return s, err
		}
		words, parts = words[1:], parts+1
	}
	if len(words) > 0 && strings.Contains(words[0], ":") {
		if err := s.parseTime(words[0]); err != nil {
			return s, err
		}
		words, parts = words[1:], parts+1
	}
	if parts == 0 {
		return s, fmt.Errorf("%q is neither a weekday, a date (*-*-*) nor a time (HH:MM)", words[0])
	}
	if len(words) > 0 {
		if s.loc, err = zone(words[0]); err != nil {
			return s, err
		}
		words = words[1:]
	}
	if len(words) > 0 {
		return s, fmt.Errorf("unexpected %q after the time zone (want [weekdays] [date] [time] [zone])", words[0])
	}
	return s, nil
}

// zone is the time zone a spec names.
func zone(name string) (*time.Location, error) {
	if name == "UTC" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, fmt.Errorf("%q is not a time zone of the tz database (e.g. UTC, Europe/Berlin)", name)
	}
	return loc, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseWeekdays reads "Mon..Fri", "Sat,Sun", "mon-fri", "Monday".
func parseWeekdays(w string) (field, error) {
	var f field
	for _, item := range strings.Split(w, ",") {
		a, b, isRange := strings.Cut(item, "..")
		if !isRange {
			a, b, isRange = strings.Cut(item, "-")
		}
		from, err := weekday(a)
		if err != nil {
			return nil, err
		}
		to := from
		if isRange {
			if to, err = weekday(b); err != nil {
				return nil, err
			}
		}
		// systemd counts Monday first: Mon..Sun is the week, Sun..Mon wraps.
		if (from+6)%7 > (to+6)%7 {
			return nil, fmt.Errorf("weekday range %q runs backwards (the week starts on Monday: write Fri..Sun,Mon)", item)
		}
		for d := from; ; d = (d + 1) % 7 {
			f = append(f, span{d, d, 1})
			if d == to {
				break
			}
		}
	}
	return f, nil
}

func weekday(name string) (int, error) {
	n := strings.ToLower(name)
	for i, d := range weekdays {
		if n == d || n == d+fullDay[i] {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q is not a weekday (Mon, Tue, … or Monday, …)", name)
}

var fullDay = []string{"day", "day", "sday", "nesday", "rsday", "day", "urday"}

// parseDate reads [YEAR-]MONTH-DAY, each component a field.
func (s *Spec) parseDate(w string) error {
	c := strings.Split(w, "-")
	var err error
	switch len(c) {
	case 3:
		if s.year, err = parseField(c[0], 1970, 2199, "year"); err != nil {
			return err
		}
		c = c[1:]
	case 2:
	default:
		return fmt.Errorf("date %q: want YEAR-MONTH-DAY or MONTH-DAY", w)
	}
	if strings.Contains(c[1], "~") {
		return fmt.Errorf("date %q: counting days back from the month's end (~) is not supported", w)
	}
	if s.month, err = parseField(c[0], 1, 12, "month"); err != nil {
		return err
	}
	s.day, err = parseField(c[1], 1, 31, "day")
	return err
}

// parseTime reads HOUR:MINUTE[:SECOND], each component a field.
func (s *Spec) parseTime(w string) error {
	c := strings.Split(w, ":")
	if len(c) < 2 || len(c) > 3 {
		return fmt.Errorf("time %q: want HH:MM or HH:MM:SS", w)
	}
	var err error
	if s.hour, err = parseField(c[0], 0, 23, "hour"); err != nil {
		return err
	}
	if s.minute, err = parseField(c[1], 0, 59, "minute"); err != nil {
		return err
	}
	if len(c) == 3 {
		s.second, err = parseField(c[2], 0, 59, "second")
	}
	return err
}

// parseField reads one component: *, N, A..B, N/STEP, A..B/STEP, or a
// comma list of them, each within min..max.
func parseField(w string, min, max int, what string) (field, error) {
	if w == "*" {
		return field{{min, max, 1}}, nil
	}
	var f field
	for _, item := range strings.Split(w, ",") {
		sp, err := parseSpan(item, min, max)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", what, w, err)
		}
		f = append(f, sp)
	}
	return f, nil
}

func parseSpan(item string, min, max int) (span, error) {
	rng, stepText, stepped := strings.Cut(item, "/")
	a, b, isRange := strings.Cut(rng, "..")
	from, err := number(a, min, max)
	if err != nil {
		return span{}, err
	}
	sp := span{from, from, 1}
	if isRange {
		if sp.to, err = number(b, from, max); err != nil {
			return span{}, err
		}
	}
	if stepped {
		if sp.step, err = number(stepText, 1, max); err != nil {
			return span{}, fmt.Errorf("repetition: %w", err)
		}
		if !isRange {
			sp.to = max
		}
	}
	return sp, nil
}

func number(w string, min, max int) (int, error) {
	n, err := strconv.Atoi(w)
	if err != nil || w == "" || w[0] == '+' || w[0] == '-' {
		return 0, fmt.Errorf("%q is not a number", w)
	}
	if n < min || n > max {
		return 0, fmt.Errorf("%d is outside %d..%d", n, min, max)
	}
	return n, nil
}

// String is the spec as written (spaces collapsed).
func (s Spec) String() string { return s.text }
