package main

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/runlog"
)

// syslet history PREFIX shows the run the prefix names, and says so when
// it is the start of several, naming them, rather than showing the first.
func TestHistoryPrefixNamesOneRun(t *testing.T) {
	var runs []*runlog.RunInfo
	for _, id := range []string{"20261207-101500-aaaa", "20261207-101501-bbbb", "20261207-111500-cccc"} {
		runs = append(runs, &runlog.RunInfo{Intent: runlog.Record{Run: id}})
	}
	if r, err := findRun(runs, "20261207-11"); err != nil || r.ID() != "20261207-111500-cccc" {
		t.Errorf("one run: %v %v", r, err)
	}
	_, err := findRun(runs, "20261207-10")
	if err == nil || !strings.Contains(err.Error(), `"20261207-10" is the start of 2 runs (20261207-101500-aaaa, 20261207-101501-bbbb): give more of the run's ID`) {
		t.Errorf("several runs: %v", err)
	}
	if _, err := findRun(runs, "2026"); err == nil || !strings.Contains(err.Error(), `no run "2026"`) {
		t.Errorf("a short prefix: %v", err)
	}
}
