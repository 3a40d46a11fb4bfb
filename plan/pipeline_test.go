package plan_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/specgen"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// pipeline is everything an apply or --diff does between reading the
// spec bytes and holding a plan, minus reading the host: decode and
// pre-render validation, render, post-render validation, plan.
func pipeline(tb testing.TB, srcs []spec.Source, obs *plan.Observed) *plan.Plan {
	specs, rep := spec.Load(srcs)
	out := render.Render(specs)
	rep.Merge(render.Check(out))
	rep.Sort()
	if rep.HasErrors() {
		tb.Fatalf("generated specs invalid:\n%s", rep.String())
	}
	return plan.Build(out, obs)
}

// emptyHost is a host syslet has never touched, read in full.
func emptyHost() *plan.Observed {
	return &plan.Observed{Files: map[string]host.File{}, Units: map[string]host.UnitState{}, Secrets: map[string]host.Secret{}, Images: map[string]bool{}, UnitsKnown: true, StoreKnown: true}
}

var pipelineSizes = []int{200, 2000, 20000}

// BenchmarkPipeline measures load + validate + render + plan of a
// generated spec set (specgen.Sized: containers with a config file and a
// config dir, on shared volumes and networks) against a fresh host
// ("first": every action planned) and against a host that already runs
// it ("converged": an empty plan, what every no-op apply and --diff pays).
func BenchmarkPipeline(b *testing.B) {
	for _, n := range pipelineSizes {
		srcs := []spec.Source{{Name: "gen.json", Data: specgen.Generate(specgen.Sized(n))}}
		b.Run(fmt.Sprintf("first/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p := pipeline(b, srcs, emptyHost()); p.Empty() {
					b.Fatal("fresh host planned nothing")
				}
			}
		})
		b.Run(fmt.Sprintf("converged/%d", n), func(b *testing.B) {
			h := install(&testing.T{}, renderStream(&testing.T{}, string(srcs[0].Data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if p := pipeline(b, srcs, h.obs); !p.Empty() {
					b.Fatalf("converged host planned %d actions", len(p.Actions))
				}
			}
		})
	}
}

// bestOf returns the shortest of runs calls of f: the least disturbed by
// other load on the machine.
func bestOf(runs int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range runs {
		runtime.GC()
		t0 := time.Now()
		f()
		best = min(best, time.Since(t0))
	}
	return best
}

// TestPipelineScalesLinearly doubles the input and checks that the time
// at most about doubles: a quadratic step anywhere (validation, render,
// plan) would show as ×4. Each size is timed as the best of several runs,
// interleaved, so a busy machine slows both sizes alike rather than one.
func TestPipelineScalesLinearly(t *testing.T) {
	cases := []struct {
		name string
		gen  func(n int) specgen.Options
		n    int
	}{
		// Many specs: the shape of a big host.
		{"specs", specgen.Sized, 4000},
		// One spec with many config files: validation of mount paths
		// across one container's files.
		{"config-files", func(n int) specgen.Options { return specgen.Options{Containers: 1, ConfigFiles: n} }, 8000},
		// One config dir with many files.
		{"config-dir-files", func(n int) specgen.Options {
			return specgen.Options{Containers: 1, ConfigDirFiles: n}
		}, 8000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			small := []spec.Source{{Name: "gen.json", Data: specgen.Generate(c.gen(c.n))}}
			big := []spec.Source{{Name: "gen.json", Data: specgen.Generate(c.gen(2 * c.n))}}
			var ts, tb time.Duration
			// Up to three rounds: a ratio above the bound is measured again
			// before it fails the test, so one burst of load cannot.
			for round := range 3 {
				ts = bestOf(5, func() { pipeline(t, small, emptyHost()) })
				tb = bestOf(5, func() { pipeline(t, big, emptyHost()) })
				ratio := float64(tb) / float64(ts)
				t.Logf("round %d: n=%d %s, 2n=%d %s, ratio %.2f", round, c.n, ts, 2*c.n, tb, ratio)
				if ratio <= 2.2 {
					return
				}
			}
			t.Errorf("doubling the input multiplied the time by %.2f (> 2.2): a step is worse than linear", float64(tb)/float64(ts))
		})
	}
}
