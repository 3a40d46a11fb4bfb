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
	// byte of spec input: its decoded, rendered and checked forms
	// (measured: 26 for a hundred thousand volumes, the densest shape;
	// 14 for specgen's containers with their volumes and networks).
	PerByte = 25
	// PerHostByte is the room a run is given per byte of the host's files
	// it reads (the installed tree it plans against, weighed as
	// pkg/host/fsroot tells it). They hold about 1.5 bytes of live heap a
	// byte, and planning against them makes much garbage: --diff of
	// 106,888 installed volumes took half a second more with 4 than with
	// 8 (470 MB of limit against 670).
	PerHostByte = 8
	// Slack is the room for garbage between collections over the live
	// heap Expect reckons with: a big set is collected every Slack bytes
	// it allocates, not without end. With it, render --out of 106,888
	// volumes peaks at 268-275 MB resident.
	Slack = 96 << 20
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
// the soft limit becomes the live heap that input makes (PerByte of all
// read so far) and what the host files read make (ExpectHost), plus
// Slack, never below BaseLimit nor above MemoryLimit. A run over little
// input, or hostile in shape (a unit of a hundred thousand keys), is held
// to BaseLimit; a hundred thousand specs get the room they need. The limit
// was twice that live heap once (at 40 a byte), which let render --out of
// 106,888 volumes (6.6 MB) grow to 530 MB for half a second less.
// Without ForCLI (tests, webhookd) it does nothing.
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
	return min(max(BaseLimit, PerByte*spec+PerHostByte*host+Slack), MemoryLimit)
}
