package fleet

import (
	"fmt"

	"github.com/syslet/syslet/pkg/push"
)

// Need is how many of n hosts must succeed for min (a count, or a
// percentage of n). A percentage is rounded up, as a success threshold
// errs on the side of not promoting: 60% of 3 hosts is 2. A count larger
// than n can never be met and is an error.
func Need(min push.Size, n int) (int, error) {
	if !min.Percent {
		if min.N > n {
			return 0, fmt.Errorf("%d host(s) must succeed, but only %d are selected", min.N, n)
		}
		return min.N, nil
	}
	return (min.N*n + 99) / 100, nil
}

// Verdict is how a tally stands against its threshold.
type Verdict int

const (
	// Undecided: not enough hosts have succeeded yet, and enough may still.
	Undecided Verdict = iota
	// Met: at least the needed hosts succeeded.
	Met
	// Unreachable: so many hosts failed that the rest cannot make up the
	// need, whatever they do.
	Unreachable
)

// Decide weighs succeeded and failed hosts out of n against need. Met
// wins as soon as it holds: hosts that have not reported then do not
// hold a promotion back.
func Decide(need, n, succeeded, failed int) Verdict {
	switch {
	case succeeded >= need:
		return Met
	case n-failed < need:
		return Unreachable
	}
	return Undecided
}
