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
	// the run turns out to work on, up to MemoryLimit. It keeps a run
	// whose live heap is well under it below 300 MB resident, the
	// runtime's own memory included, whatever the shape of its input.
	BaseLimit = 224 << 20
	// PerByte is about how much live heap a run holds per byte of what it
	// works on (spec input, the host's files): its decoded, rendered and
	// planned forms (measured: 40 for a hundred thousand volumes, and for
	// a container of 30,000 Volume= lines beside its volumes).
	PerByte = 40
	// Headroom, in percent of that live heap, is the limit Expect sets
	// when it is over BaseLimit: room for the garbage between
	// collections, so that a big set is not collected without end.
	Headroom = 200
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
// read, host files read): the soft limit becomes Headroom percent of the
// live heap that much input makes (PerByte of everything so far), never
// below BaseLimit nor above MemoryLimit. A run over little input, or
// hostile in shape (a unit of a hundred thousand keys), is held to
// BaseLimit; a hundred thousand specs get the room they need. The limit
// was BaseLimit plus that heap once, which gave a medium set (2.5 MB of
// input, 100 MB live) 350 MB to grow into, and 300 MB of RSS for no gain.
// Without ForCLI (tests, webhookd) it does nothing.
func Expect(n int64) {
	mu.Lock()
	defer mu.Unlock()
	if !adaptive || n <= 0 {
		return
	}
	expected += n
	debug.SetMemoryLimit(limit(expected))
}

// limit is the soft limit for a run that works on n bytes.
func limit(n int64) int64 {
	return min(max(BaseLimit, PerByte*n*Headroom/100), MemoryLimit)
}
