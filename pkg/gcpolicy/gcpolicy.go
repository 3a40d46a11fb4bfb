package gcpolicy

import (
	"os"
	"runtime/debug"
	"sync"
)

const (
	// Percent is the heap growth, in percent of the live heap, that
	// triggers a collection (Go's default is 100).
	Percent = 400
	// BaseLimit is the soft memory limit a run starts with: past it the
	// collector runs whatever Percent says. It is raised (Expect) by what
	// the run turns out to work on, up to MemoryLimit.
	BaseLimit = 256 << 20
	// PerByte is how much heap a run may take per byte of what it works
	// on (spec input, the host's files): its decoded, rendered and
	// planned forms, with the garbage between collections.
	PerByte = 40
	// MemoryLimit is the largest soft limit Expect sets.
	MemoryLimit = 2 << 30
)

var (
	mu       sync.Mutex
	adaptive bool  // ForCLI set the limit, and Expect may raise it
	expected int64 // bytes Expect was told of so far
)

// ForCLI applies Percent and BaseLimit, each unless the environment sets
// its own (GOGC, GOMEMLIMIT): an operator's choice wins.
func ForCLI() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	mu.Lock()
	defer mu.Unlock()
	adaptive, expected = os.Getenv("GOMEMLIMIT") == "", 0
	if adaptive {
		debug.SetMemoryLimit(BaseLimit)
	}
}

// Expect tells the policy that the run works on n more bytes (spec input
// read, host files read): the soft limit becomes BaseLimit plus PerByte
// of everything so far, at most MemoryLimit. A run over little input but
// hostile in shape (a unit of a hundred thousand keys) is held to about
// BaseLimit; a hundred thousand specs get the room they need. Without
// ForCLI (tests, webhookd) it does nothing.
func Expect(n int64) {
	mu.Lock()
	defer mu.Unlock()
	if !adaptive || n <= 0 {
		return
	}
	expected += n
	debug.SetMemoryLimit(min(BaseLimit+PerByte*expected, MemoryLimit))
}
