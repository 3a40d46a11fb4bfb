package push

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSize is wrapped by every error about a batch size or a failure budget.
var ErrSize = errors.New("invalid size")

// Size is a number of hosts given either as a count ("3") or as a
// percentage of all the targets ("25%").
type Size struct {
	N       int
	Percent bool
}

// ParseSize reads "N" or "P%". A count must be at least min (1 for a
// batch, 0 for a failure budget); a percentage must be 1 to 100 for a
// batch and 0 to 100 for a budget, as min says.
func ParseSize(s string, min int) (Size, error) {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	n, err := strconv.Atoi(num)
	switch {
	case err != nil || num != strings.TrimSpace(num) || strings.HasPrefix(num, "+"):
		return Size{}, fmt.Errorf("%w %q: want a number of hosts or a percentage (3, 25%%)", ErrSize, s)
	case n < min:
		return Size{}, fmt.Errorf("%w %q: less than %d", ErrSize, s, min)
	case pct && n > 100:
		return Size{}, fmt.Errorf("%w %q: more than 100%%", ErrSize, s)
	}
	return Size{N: n, Percent: pct}, nil
}

// ParseSizes reads a comma-separated list of batch sizes ("1,25%").
func ParseSizes(list string) ([]Size, error) {
	var sizes []Size
	for _, f := range strings.Split(list, ",") {
		s, err := ParseSize(f, 1)
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, s)
	}
	return sizes, nil
}

// Of is how many of total hosts the size stands for. A percentage is
// rounded down, as Ansible's serial does: a smaller batch or a smaller
// failure budget errs on the side of stopping early.
func (s Size) Of(total int) int {
	if !s.Percent {
		return s.N
	}
	return s.N * total / 100
}

func (s Size) String() string {
	if s.Percent {
		return strconv.Itoa(s.N) + "%"
	}
	return strconv.Itoa(s.N)
}

// Batches splits n targets, in order, into batches of the given sizes; the
// last size repeats until every target has a batch, and a size that
// comes to no host counts as one. It returns each batch's length. No
// sizes means one batch of all.
func Batches(n int, sizes []Size) []int {
	if n == 0 {
		return nil
	}
	if len(sizes) == 0 {
		return []int{n}
	}
	var out []int
	for i, left := 0, n; left > 0; i++ {
		k := max(sizes[min(i, len(sizes)-1)].Of(n), 1)
		k = min(k, left)
		out = append(out, k)
		left -= k
	}
	return out
}
