package gcpolicy

import (
	"os"
	"runtime/debug"
)

const (
	// Percent is the heap growth, in percent of the live heap, that
	// triggers a collection (Go's default is 100).
	Percent = 400
	// MemoryLimit is the soft limit past which the collector runs
	// whatever Percent says.
	MemoryLimit = 2 << 30
)

// ForCLI applies Percent and MemoryLimit, each unless the environment
// sets its own (GOGC, GOMEMLIMIT): an operator's choice wins.
func ForCLI() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
	}
}
