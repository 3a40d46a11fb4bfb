package gcpolicy

import (
	"runtime/debug"
	"testing"
)

func TestForCLIKeepsTheEnvironmentsChoice(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(100)
	ForCLI()
	if got := debug.SetGCPercent(100); got != Percent {
		t.Errorf("GC percent %d, want %d", got, Percent)
	}
	if got := debug.SetMemoryLimit(-1); got != BaseLimit {
		t.Errorf("memory limit %d, want %d", got, BaseLimit)
	}
	// Little input keeps BaseLimit; more raises the limit with it, up to
	// MemoryLimit.
	Expect(2 << 20)
	if got := debug.SetMemoryLimit(-1); got != BaseLimit {
		t.Errorf("after 2 MiB of input: limit %d, want %d", got, BaseLimit)
	}
	Expect(14 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(PerByte*(16<<20)+Slack); got != want || got <= BaseLimit {
		t.Errorf("after 16 MiB of input: limit %d, want %d", got, want)
	}
	// The larger of the two heaps is reckoned with: the specs are let go
	// before the host is read.
	ExpectHost(8 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(PerByte*(16<<20)+Slack); got != want {
		t.Errorf("after 16 MiB of input and 8 MiB of host files: limit %d, want %d", got, want)
	}
	ExpectHost(100 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(PerHostByte*(108<<20)+Slack); got != want {
		t.Errorf("after 16 MiB of input and 108 MiB of host files: limit %d, want %d", got, want)
	}
	Expect(1 << 30)
	if got := debug.SetMemoryLimit(-1); got != MemoryLimit {
		t.Errorf("after 1 GiB more: limit %d, want the most, %d", got, MemoryLimit)
	}

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(1 << 30)
	ForCLI()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("with GOGC set: GC percent %d, want the environment's 150", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT set: limit %d, want the environment's", got)
	}
	Expect(1 << 30)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT set, Expect changed the limit to %d", got)
	}
}
