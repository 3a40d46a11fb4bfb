// Package load reads and sums up the record of a load client's requests
// (cmd integration/loadclient): how many failed and how, the longest
// time the service gave no good answer, and the latency — over the whole
// run or a window of it (a deploy).
package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Request is one request the client made.
type Request struct {
	Start  time.Time
	Took   time.Duration
	Status int    // the HTTP status; 0 when there was no answer
	Err    string // how it failed without an answer ("" when it got one)
}

// OK reports whether the request got a good answer (2xx or 3xx).
func (r Request) OK() bool { return r.Err == "" && r.Status >= 200 && r.Status < 400 }

// End is when the request ended.
func (r Request) End() time.Time { return r.Start.Add(r.Took) }

// Classify names how a request failed: refused, reset, timeout, eof or
// other (with the error's text).
func Classify(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	}
	return "other: " + strings.ReplaceAll(err.Error(), "\t", " ")
}

// Write writes the record, a tab-separated line per request: start (Unix
// nanoseconds), took (nanoseconds), status, error.
func Write(w io.Writer, rs []Request) error {
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%d\t%d\t%d\t%s\n", r.Start.UnixNano(), r.Took.Nanoseconds(), r.Status, r.Err); err != nil {
			return err
		}
	}
	return nil
}

// Read reads a record Write wrote.
func Read(r io.Reader) ([]Request, error) {
	var out []Request
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.SplitN(sc.Text(), "\t", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: want 4 fields, got %d", n, len(f))
		}
		start, err1 := strconv.ParseInt(f[0], 10, 64)
		took, err2 := strconv.ParseInt(f[1], 10, 64)
		status, err3 := strconv.Atoi(f[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, Request{Start: time.Unix(0, start), Took: time.Duration(took), Status: status, Err: f[3]})
	}
	return out, sc.Err()
}

// Summary is what a window of requests came to.
type Summary struct {
	Requests int
	Failed   int
	// Kinds counts the failures by how they failed ("refused", "status
	// 503", …).
	Kinds map[string]int
	// Gap is the longest time between two good answers (or from the
	// window's start to the first, or the last to its end).
	Gap                 time.Duration
	P50, P99, Max       time.Duration
	Span                time.Duration
	FirstFail, LastFail time.Time
}

// Summarize sums up the requests that started in [from, to) (zero: no
// bound).
func Summarize(rs []Request, from, to time.Time) Summary {
	var in []Request
	for _, r := range rs {
		if (from.IsZero() || !r.Start.Before(from)) && (to.IsZero() || r.Start.Before(to)) {
			in = append(in, r)
		}
	}
	s := Summary{Requests: len(in), Kinds: map[string]int{}}
	if len(in) == 0 {
		return s
	}
	slices.SortFunc(in, func(a, b Request) int { return a.Start.Compare(b.Start) })
	if from.IsZero() {
		from = in[0].Start
	}
	if to.IsZero() {
		to = in[len(in)-1].End()
	}
	s.Span = to.Sub(from)
	var lat []time.Duration
	var ends []time.Time
	for _, r := range in {
		lat = append(lat, r.Took)
		if r.OK() {
			ends = append(ends, r.End())
			continue
		}
		s.Failed++
		kind := r.Err
		if kind == "" {
			kind = fmt.Sprintf("status %d", r.Status)
		}
		s.Kinds[kind]++
		if s.FirstFail.IsZero() {
			s.FirstFail = r.Start
		}
		s.LastFail = r.Start
	}
	slices.Sort(lat)
	s.P50, s.P99, s.Max = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	prev := from
	for _, e := range ends {
		if d := e.Sub(prev); d > s.Gap {
			s.Gap = d
		}
		if e.After(prev) {
			prev = e
		}
	}
	if d := to.Sub(prev); d > s.Gap && len(ends) > 0 {
		s.Gap = d
	}
	if len(ends) == 0 {
		s.Gap = s.Span
	}
	return s
}

func (s Summary) String() string {
	kinds := make([]string, 0, len(s.Kinds))
	for k, n := range s.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	rate := 0.0
	if s.Span > 0 {
		rate = float64(s.Requests) / s.Span.Seconds()
	}
	return fmt.Sprintf("requests %d (%.0f/s over %s), failed %d [%s], longest gap %s, p50 %s, p99 %s, max %s",
		s.Requests, rate, s.Span.Round(time.Millisecond), s.Failed, strings.Join(kinds, ", "),
		s.Gap.Round(time.Millisecond), s.P50.Round(time.Microsecond), s.P99.Round(time.Microsecond), s.Max.Round(time.Microsecond))
}
