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
	// PerByte is about how much live heap a run holds at its peak per
	// byte of spec input while it checks it: the specs, their rendered
	// units and the converter check's tables (measured: 21 for 106,888
	// volumes, the densest shape, 137 MB for 6.6 MB of input).
	PerByte = 21
	// PerHostByte is about how much live heap planning holds per byte of
	// the host's files it reads (the installed tree, weighed as
	// host.File.Weight tells it): the tree, the plan's view of each
	// installed unit and its entries in the plan (measured: 4.4 for a plan
	// removing 106,887 volumes, 134 MB for 31 MB of files; 4.8 for the
	// converged plan of them, its rendered units included).
	PerHostByte = 5
	// Slack is the room for garbage between collections over the live
	// heap Expect reckons with: a big set is collected every Slack bytes
	// it allocates, not without end. The peaks of checking (specs) and of
	// planning (the host) are apart, as a run reads the host only once
	// its specs are checked and let go: the larger is reckoned with.
	// With it, --diff --root of 106,888 volumes against their installed
	// units peaks at about 240 MB resident.
	Slack = 64 << 20
	// MemoryLimit is the largest soft limit Expect sets.
	MemoryLimit = 2 << 30
)

var (
	mu       sync.Mutex
	adaptive bool  // ForCLI set the limit, and Expect may raise it
	input    int64 // spec input bytes Expect was told of so far
	hostRead int64 // host file bytes ExpectHost was told of so far
)

// ForCLI applies Percent and BaseLimit, each unless the environment sets
// its own (GOGC, GOMEMLIMIT): an operator's choice wins.
func ForCLI() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	mu.Lock()
	defer mu.Unlock()
	adaptive, input, hostRead = os.Getenv("GOMEMLIMIT") == "", 0, 0
	if adaptive {
		debug.SetMemoryLimit(BaseLimit)
	}
}

// Expect tells the policy that the run read n more bytes of spec input:
// the soft limit becomes the larger of the live heaps that input makes
// (PerByte of all read so far) and the host files read make
// (ExpectHost), plus Slack, never below BaseLimit nor above MemoryLimit.
// A run over little input, or hostile in shape (a unit of a hundred
// thousand keys), is held to BaseLimit; a hundred thousand specs get the
// room they need. Without ForCLI (tests, webhookd) it does nothing.
func Expect(n int64) { expect(&input, n) }

// ExpectHost is Expect for n more bytes of the host's files read.
func ExpectHost(n int64) { expect(&hostRead, n) }

func expect(total *int64, n int64) {
	mu.Lock()
	defer mu.Unlock()
	if !adaptive || n <= 0 {
		return
	}
	*total += n
	debug.SetMemoryLimit(limit(input, hostRead))
}

// limit is the soft limit for a run that read spec bytes of input and
// host bytes of the host's files.
func limit(spec, host int64) int64 {
	return min(max(BaseLimit, max(PerByte*spec, PerHostByte*host)+Slack), MemoryLimit)
}
