package calendar

import "time"

// horizon bounds the years Next searches: a spec that matches nothing in
// it (2030-02-30, Mon *-*-1 in a range of years without one) never elapses.
const horizon = 400

// Next is the first moment after t that the spec matches, in the spec's
// time zone; false when there is none. Like systemd, a local time a
// daylight saving change skips (02:30 on the night clocks go forward)
// does not elapse that day.
func (s Spec) Next(t time.Time) (time.Time, bool) {
	from := t.In(s.loc).Truncate(time.Second).Add(time.Second)
	for y := from.Year(); y <= from.Year()+horizon && y <= 2199; y++ {
		if !s.year.has(y) {
			continue
		}
		for m := time.January; m <= time.December; m++ {
			if !s.month.has(int(m)) || y == from.Year() && m < from.Month() {
				continue
			}
			if at, ok := s.inMonth(y, m, from, t); ok {
				return at, true
			}
		}
	}
	return time.Time{}, false
}

// inMonth is the first match in month m of year y at or after from.
func (s Spec) inMonth(y int, m time.Month, from, after time.Time) (time.Time, bool) {
	days := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	for d := 1; d <= days; d++ {
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if !s.day.has(d) || !s.weekday.has(int(day.Weekday())) {
			continue
		}
		sameDay := y == from.Year() && m == from.Month() && d == from.Day()
		if y == from.Year() && m == from.Month() && d < from.Day() {
			continue
		}
		if at, ok := s.inDay(y, m, d, sameDay, from, after); ok {
			return at, true
		}
	}
	return time.Time{}, false
}

// inDay is the first matching time of the day, at or after from's time of
// day when the day is from's.
func (s Spec) inDay(y int, m time.Month, d int, sameDay bool, from, after time.Time) (time.Time, bool) {
	for h := 0; h < 24; h++ {
		if !s.hour.has(h) || sameDay && h < from.Hour() {
			continue
		}
		for mi := 0; mi < 60; mi++ {
			if !s.minute.has(mi) || sameDay && h == from.Hour() && mi < from.Minute() {
				continue
			}
			for sec := 0; sec < 60; sec++ {
				if !s.second.has(sec) || sameDay && h == from.Hour() && mi == from.Minute() && sec < from.Second() {
					continue
				}
				at, ok := wallClock(y, m, d, h, mi, sec, s.loc)
				if !ok || !at.After(after) {
					continue // skipped by a clock change, or not after t
				}
				return at, true
			}
		}
	}
	return time.Time{}, false
}

// wallClock is the first moment the zone's clocks show this date and time;
// false when they never do (the hour skipped when clocks go forward). In
// the hour clocks go back, it is the first of the two, as systemd has it.
func wallClock(y int, m time.Month, d, h, mi, sec int, loc *time.Location) (time.Time, bool) {
	at := time.Date(y, m, d, h, mi, sec, 0, loc)
	if at.Hour() != h || at.Minute() != mi || at.Day() != d {
		return time.Time{}, false
	}
	// The same clock reading under the offset in force a day before.
	_, before := at.Add(-24 * time.Hour).Zone()
	earlier := time.Date(y, m, d, h, mi, sec, 0, time.UTC).Add(-time.Duration(before) * time.Second).In(loc)
	if earlier.Before(at) && earlier.Hour() == h && earlier.Minute() == mi && earlier.Day() == d {
		return earlier, true
	}
	return at, true
}
