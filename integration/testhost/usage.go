package testhost

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Usage is the harness's share of one top-level test's time: what it spent
// booting and stopping hosts and polling them (Eventually), as opposed to
// the work the test exercises. CI prints it beside each test's duration, so
// that the share of a test spent waiting on the harness shows.
type Usage struct {
	Boots int
	Boot  time.Duration // in Start: up to SSH and finished boot-up
	Stop  time.Duration // in Stop
	Poll  time.Duration // in Eventually
	// CPU is what its guests used, boots included (their cgroups' usage
	// when stopped). The machine is shared by tests running side by side,
	// so CPU, not duration, is what a test costs the whole run.
	CPU time.Duration
}

// guestCPU reads the cpu_usec=N line `testhost.sh down` prints.
func guestCPU(out string) (time.Duration, bool) {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "cpu_usec="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return time.Duration(n) * time.Microsecond, true
			}
		}
	}
	return 0, false
}

var (
	usageMu sync.Mutex
	usage   = map[string]*Usage{}
)

// topLevel is the name of the top-level test of a (sub)test name.
func topLevel(name string) string {
	top, _, _ := strings.Cut(name, "/")
	return top
}

// account adds to the usage of test (a top-level test's name).
func account(test string, add func(*Usage)) {
	if test == "" {
		return
	}
	usageMu.Lock()
	defer usageMu.Unlock()
	u := usage[test]
	if u == nil {
		u = &Usage{}
		usage[test] = u
	}
	add(u)
}

// WriteUsage writes one line per top-level test that started a host, the
// most harness time first:
//
//	testhost-usage: TestX boots=2 boot=9.1s stop=0.6s poll=3.2s cpu=41.0s
//
// and a total line. Tests call it from TestMain once m.Run has returned.
func WriteUsage(w io.Writer) {
	usageMu.Lock()
	defer usageMu.Unlock()
	names := make([]string, 0, len(usage))
	var total Usage
	for n, u := range usage {
		names = append(names, n)
		total.Boots += u.Boots
		total.Boot += u.Boot
		total.Stop += u.Stop
		total.Poll += u.Poll
		total.CPU += u.CPU
	}
	sum := func(u *Usage) time.Duration { return u.Boot + u.Stop + u.Poll }
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(sum(usage[b]), sum(usage[a])) })
	line := func(name string, u *Usage) {
		fmt.Fprintf(w, "testhost-usage: %s boots=%d boot=%.1fs stop=%.1fs poll=%.1fs cpu=%.1fs\n", name, u.Boots, u.Boot.Seconds(), u.Stop.Seconds(), u.Poll.Seconds(), u.CPU.Seconds())
	}
	for _, n := range names {
		line(n, usage[n])
	}
	line("total", &total)
}
