package plan_test

import (
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/gcpolicy"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/specgen"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// pipeline is everything an apply or --diff does between reading the
// spec bytes and holding a plan, minus reading the host: decode and
// pre-render validation, render, post-render validation, plan.
func pipeline(tb testing.TB, srcs []spec.Source, obs *plan.Observed) *plan.Plan {
	set := load.Sources(srcs)
	out, rep := set.Out, set.Report
	if rep.HasErrors() {
		tb.Fatalf("generated specs invalid:\n%s", rep.String())
	}
	return plan.Build(out, obs, plan.Options{})
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
//
// The collector is set as the syslet command sets it (gcpolicy.ForCLI);
// GOGC=100 in the environment measures with Go's default instead.
func BenchmarkPipeline(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	gcpolicy.ForCLI()
	for _, n := range pipelineSizes {
		srcs := []spec.Source{{Name: "gen.json", Data: specgen.Generate(specgen.Sized(n))}}
		gcpolicy.Expect(int64(len(srcs[0].Data))) // as load.Path tells it, for the CLI
		b.Run(fmt.Sprintf("first/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if p := pipeline(b, srcs, emptyHost()); p.Empty() {
					b.Fatal("fresh host planned nothing")
				}
			}
			reportCPU(b, cpuTime()-c0)
		})
		b.Run(fmt.Sprintf("converged/%d", n), func(b *testing.B) {
			obs := memInstall(renderStream(&testing.T{}, string(srcs[0].Data)))
			var read int64
			for p, f := range obs.Files {
				read += f.Weight(p)
			}
			gcpolicy.ExpectHost(read) // as pkg/host/fsroot tells it, reading them
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if p := pipeline(b, srcs, obs); !p.Empty() {
					b.Fatalf("converged host planned %d actions", len(p.Actions))
				}
			}
			reportCPU(b, cpuTime()-c0)
		})
	}
}

// reportCPU adds the process's CPU time per iteration (all threads, the
// garbage collector's included) beside ns/op, which is wall time and grows
// with whatever else keeps the machine busy.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time this process has used, user and system, on all
// threads (the garbage collector's included). Unlike wall time it does not
// grow when other processes keep the machine busy.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bestOf returns the least CPU time of runs calls of f.
func bestOf(runs int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	// The collector is off while f runs: its work grows with the live heap
	// times the number of cycles, which adds a few tenths to a doubled
	// count's ratio however linear the code is, and the ratio is to judge
	// the code.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for range runs {
		runtime.GC()
		t0 := cpuTime()
		f()
		best = min(best, cpuTime()-t0)
	}
	return best
}

// memInstall is the host an apply of out leaves behind, as Observe would
// read it, built in memory: the same files, links and directories that
// fsroot writes (TestMemInstallMatchesDisk holds it to that), without the
// tens of thousands of fsyncs that writing a big set to disk costs.
func memInstall(out *render.Output) *plan.Observed {
	files := map[string]host.File{}
	roots := []string{layout.UnitDir, layout.ConfigRoot, layout.BuildRoot}
	mkdir := func(p string) {
		for ; p != "/"; p = path.Dir(p) {
			if _, ok := files[p]; ok {
				return
			}
			files[p] = host.File{Mode: fs.ModeDir | 0o755}
		}
	}
	put := func(p string, data []byte, mode uint32) {
		mkdir(path.Dir(p))
		files[p] = host.File{Data: data, Mode: fs.FileMode(mode)}
	}
	link := func(p, target string) { files[p] = host.File{Mode: fs.ModeSymlink | 0o777, Link: target} }
	for _, u := range out.Units {
		put(u.Path, u.Bytes(), 0o644)
	}
	for _, f := range out.Files {
		put(f.Path, f.Content, f.Mode)
	}
	for _, d := range out.Dirs {
		mkdir(d.Path + "/..v1")
		for _, f := range d.Installed() {
			put(d.Path+"/..v1/"+f.Name, f.Content, f.Mode)
			if !layout.Internal(f.Name) {
				link(d.Path+"/"+f.Name, "..data/"+f.Name)
			}
		}
		link(d.Path+"/..data", "..v1")
	}
	for p := range files {
		if !slices.ContainsFunc(roots, func(r string) bool { return p == r || strings.HasPrefix(p, r+"/") }) {
			delete(files, p)
		}
	}
	obs := runningHost(out)
	obs.Files = files
	return obs
}

// TestMemInstallMatchesDisk holds the benchmarks' in-memory host to what
// fsroot really writes.
func TestMemInstallMatchesDisk(t *testing.T) {
	o := specgen.Default(12)
	o.ConfigFiles = 3
	out := renderStream(t, string(specgen.Generate(o)))
	disk := install(t, out).obs
	mem := memInstall(out)
	for p, f := range disk.Files {
		f.ModTime = 0 // the in-memory host has no clock
		disk.Files[p] = f
	}
	if !reflect.DeepEqual(disk, mem) {
		for p, f := range disk.Files {
			if g, ok := mem.Files[p]; !ok || !reflect.DeepEqual(f, g) {
				t.Errorf("%s: disk %+v, memory %+v (present %v)", p, f, g, ok)
			}
		}
		for p := range mem.Files {
			if _, ok := disk.Files[p]; !ok {
				t.Errorf("%s: only in memory", p)
			}
		}
		t.Fatal("the in-memory install differs from the disk")
	}
}
