// Package calendar reads the calendar specs of systemd's OnCalendar=
// (systemd.time(7)) that maintenance windows are written in, and says when
// one next elapses and whether a window of a given length is open at a
// moment. It is pure: it reads the time zone database (time.LoadLocation)
// and nothing else, and takes "now" as an argument.
//
// The subset read is the one operators write: weekday lists and ranges
// (Mon..Fri, Sat,Sun), a date with *, lists, ranges and repetitions
// (*-*-*, *-*-1..7, 2027-01-*), a time HH:MM[:SS] with the same forms
// (02:00, *:0/15), an optional trailing time zone (UTC, Europe/Berlin),
// and the words minutely, hourly, daily, weekly, monthly, yearly. A spec
// without a zone is read in the host's local time zone, as systemd reads
// it. What systemd reads differently or not at all (~ for the last days of
// a month, fractions of seconds, a wrapping weekday range) is an error
// here, never a guess.
//
// Layer: ground. It imports nothing of syslet.
package calendar
