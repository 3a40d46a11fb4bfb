package unit_test

import (
	"testing"

	"github.com/syslet/syslet/pkg/unit"
)

// TestSystemdKeys holds a few rows of the systemd key table to what
// systemd's manual pages say: the keys of systemd.exec(5), systemd.kill(5)
// and systemd.resource-control(5) are [Service] keys too, a key 259
// documented is dated so, and a typo is no key.
func TestSystemdKeys(t *testing.T) {
	tests := []struct {
		section, key string
		since        unit.Systemd
		ok           bool
	}{
		{unit.Service, "TimeoutStartSec", unit.OldestSystemd, true},
		{unit.Service, "KillMode", unit.OldestSystemd, true},
		{unit.Service, "MemoryMax", unit.OldestSystemd, true},
		{unit.Service, "Environment", unit.OldestSystemd, true},
		{unit.Service, "ExecReloadPost", 259, true},
		{unit.Unit, "ConditionVersion", 258, true},
		{unit.Unit, "AssertVersion", 258, true},
		{unit.Unit, "StartLimitIntervalSec", unit.OldestSystemd, true},
		{unit.Install, "WantedBy", unit.OldestSystemd, true},
		{unit.Service, "X-Anything", unit.OldestSystemd, true},
		{unit.Service, "TimeoutStarSec", 0, false},
		{unit.Install, "After", 0, false},
	}
	for _, tt := range tests {
		since, ok := unit.SystemdKeySince(tt.section, tt.key)
		if ok != tt.ok || (ok && since != tt.since) {
			t.Errorf("[%s] %s: %v %v, want %v %v", tt.section, tt.key, since, ok, tt.since, tt.ok)
		}
	}
	if unit.SystemdSection(unit.Container) || !unit.SystemdSection(unit.Service) {
		t.Error("only systemd's own sections are systemd's")
	}
}
