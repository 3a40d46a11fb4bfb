package parallel

import (
	"runtime"
	"sync"
)

// Parts is how many ranges n items are split into: one per CPU, but no
// range smaller than minPart items (below that a goroutine costs more
// than it saves), and at least one.
func Parts(n, minPart int) int {
	p := min(runtime.GOMAXPROCS(0), n/max(minPart, 1))
	return max(p, 1)
}

// Run calls f(part, lo, hi) for parts consecutive ranges covering [0, n),
// each on its own goroutine (the last on the caller's), and returns when
// all have returned.
func Run(parts, n int, f func(part, lo, hi int)) {
	if parts <= 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts - 1 {
		wg.Go(func() { f(p, p*n/parts, (p+1)*n/parts) })
	}
	f(parts-1, (parts-1)*n/parts, n)
	wg.Wait()
}
