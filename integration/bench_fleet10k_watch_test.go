//go:build integration && bench

package integration

// What TestBenchFleet10k watches beside its rows: open descriptors and
// memory of this process and of Prometheus.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// watch samples this process's and Prometheus's open descriptors and
// memory every second, keeping the peaks.
type watch struct {
	mu                   sync.Mutex
	selfFDs, promFDs     int
	selfRSS, promRSS     int64
	selfFDMax, promFDMax int
	pid                  int
}

func startWatch(promPid int) *watch {
	w := &watch{pid: promPid}
	go func() {
		for range time.Tick(time.Second) {
			w.sample()
		}
	}()
	return w
}

func (w *watch) sample() {
	self, prom := countFDs("self"), countFDs(strconv.Itoa(w.pid))
	srss, prss := rssOf("self"), rssOf(strconv.Itoa(w.pid))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.selfFDs, w.promFDs = max(w.selfFDs, self), max(w.promFDs, prom)
	w.selfRSS, w.promRSS = max(w.selfRSS, srss), max(w.promRSS, prss)
}

// peaks returns the peaks since the last call, and starts anew.
func (w *watch) peaks() (selfFDs, promFDs int, selfRSS, promRSS int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	selfFDs, promFDs, selfRSS, promRSS = w.selfFDs, w.promFDs, w.selfRSS, w.promRSS
	w.selfFDMax, w.promFDMax = max(w.selfFDMax, w.selfFDs), max(w.promFDMax, w.promFDs)
	w.selfFDs, w.promFDs = 0, 0
	return
}

func (w *watch) self() string {
	fds, _, rss, _ := w.peaks()
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("peak %d open descriptors (soft limit %s), peak RSS %.0f MB", max(fds, w.selfFDMax), fdLimit(), float64(rss)/(1<<20))
}

func countFDs(pid string) int {
	ents, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

// rssOf is a process's resident memory in bytes (0 when unreadable).
func rssOf(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func fdLimit() string {
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Max open files") {
			return strings.Fields(l)[3]
		}
	}
	return "?"
}
