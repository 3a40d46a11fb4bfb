//go:build bench

package plan_test

// The scaling checks time each count at n and 2n and fail on a ratio that
// is worse than linear. They are measurements, so they run with the
// benchmarks (go tool task bench:scaling), not in go test ./..., where a
// loaded CI machine could fail them.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/specgen"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
)

// maxLinear bounds the CPU time ratio of a doubled count in the tests
// below: linear work doubles (about: a map outgrowing the caches adds a
// little), anything quadratic quadruples.
const maxLinear = 2.2

// maxSorted bounds it for a pass that sorts what it counts, as the
// semantic comparison of two units sorts each section's keys: n log n
// doubles to 2.14 at these counts before any cache is outgrown. It is
// the pipeline's bound, and still far from quadratic.
const maxSorted = maxDoubling

// TestEveryCountScalesLinearly doubles, one at a time, each count hostile
// input can grow inside every limit — a unit's keys, its sections, a
// spec's sections, a secret's keys, a build's context files, a
// container's references, the lines of the run journal, the specs
// themselves — and checks that the time at most about doubles. Each size
// is the best of several runs, the two interleaved and measured again
// before a ratio fails the test, as TestPipelineScalesLinearly does.
func TestEveryCountScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	web := renderStream(t, specContainer("web", `"Image":"busybox"`))
	webUnit := string(web.Units[0].Bytes())
	// hostWith is a host that runs web, its unit replaced by text.
	hostWith := func(text string) *plan.Observed {
		obs := memInstall(web)
		f := obs.Files["/etc/containers/systemd/web.container"]
		f.Data = []byte(text)
		obs.Files["/etc/containers/systemd/web.container"] = f
		return obs
	}
	// planOf plans the specs against a host.
	planOf := func(stream string, obs func() *plan.Observed) func() {
		out := renderStream(t, stream)
		return func() { plan.Build(out, obs(), plan.Options{}) }
	}
	// validate is `syslet validate` without the CLI: load, render, check,
	// podman's converter.
	validate := func(stream string) func() {
		return func() {
			s := load.Bytes("gen.json", []byte(stream))
			s.CheckPodman(unit.OldestPodman)
		}
	}
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i))
		}
		return b.String()
	}
	withoutDigest := func(text string) string {
		i := strings.Index(text, "\nDigest=")
		return text[:i+1]
	}
	cases := []struct {
		name string
		n    int
		run  func(n int) func()
	}{
		{"installed unit sections", 20000, func(n int) func() {
			unmanaged := "[Container]\nImage=busybox\n" + lines(n, func(i int) string { return fmt.Sprintf("[X-S%d]\nA=b\n", i) })
			return func() { unit.Parse([]byte(unmanaged)) }
		}},
		{"managed unit keys", 20000, func(n int) func() {
			text := withoutDigest(strings.Replace(webUnit, "[Service]\n", "[Service]\n"+lines(n, func(i int) string { return fmt.Sprintf("X%d=v\n", i) }), 1))
			obs := hostWith(text)
			return planOf(specContainer("web", `"Image":"busybox"`), func() *plan.Observed { return obs })
		}},
		{"drifted unit lines", 5000, func(n int) func() {
			text := strings.Replace(webUnit, "[Service]\n", "[Service]\n"+lines(n, func(i int) string { return fmt.Sprintf("Environment=K%d=v\n", i) }), 1)
			obs := hostWith(text)
			return planOf(specContainer("web", `"Image":"busybox"`), func() *plan.Observed { return obs })
		}},
		{"spec X- sections", 5000, func(n int) func() {
			secs := lines(n, func(i int) string { return fmt.Sprintf(`,"X-S%d":{"A":"b"}`, i) })
			return validate(`{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"busybox"}` + secs + "}}")
		}},
		{"secret keys", 5000, func(n int) func() {
			enc := "ENC[AES256_GCM,data:eHg=,iv:aXZpdml2aXZpdml2aXZpdml2aXY=,tag:dGFndGFndGFndGFndGFnMQ==,type:str]"
			doc := lines(n, func(i int) string { return fmt.Sprintf("k%d: %s\n", i, enc) }) +
				"sops:\n    age:\n        - recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n          enc: x\n"
			return validate(fmt.Sprintf(`{"apiVersion":"v1","type":"secret","name":"s","ciphertext":%q}`, doc))
		}},
		{"build context files", 5000, func(n int) func() {
			files := lines(n, func(i int) string {
				sep := ","
				if i == 0 {
					sep = ""
				}
				return fmt.Sprintf(`%s{"filename":"d%d/f%d","content":"x"}`, sep, i%50, i)
			})
			stream := `{"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM x\n","contextFiles":[` + files + `],"unit":{"Build":{"ImageTag":"localhost/app:v1"}}}`
			v := validate(stream)
			p := planOf(stream, func() *plan.Observed { return emptyHost() })
			return func() { v(); p() }
		}},
		{"secret references", 4000, func(n int) func() {
			secrets := lines(n, func(i int) string {
				return fmt.Sprintf(`{"apiVersion":"v1","type":"secret","name":"e%d","external":true}`+"\n", i)
			})
			refs := lines(n, func(i int) string { return fmt.Sprintf(`"e%d",`, i) })
			return validate(secrets + specContainer("web", `"Image":"busybox","Secret":[`+strings.TrimSuffix(refs, ",")+`]`))
		}},
		{"volume references", 2000, func(n int) func() {
			vols := lines(n, func(i int) string {
				return fmt.Sprintf(`{"apiVersion":"v1","type":"volume","name":"v%d","unit":{}}`+"\n", i)
			})
			refs := lines(n, func(i int) string { return fmt.Sprintf(`"v%d.volume:/m%d",`, i, i) })
			stream := vols + specContainer("web", `"Image":"busybox","Volume":[`+strings.TrimSuffix(refs, ",")+`]`)
			v := validate(stream)
			p := planOf(stream, func() *plan.Observed { return emptyHost() })
			return func() { v(); p() }
		}},
		{"specs", 1500, func(n int) func() {
			return validate(lines(n, func(i int) string {
				return fmt.Sprintf(`{"apiVersion":"v1","type":"volume","name":"v%d","unit":{}}`+"\n", i) +
					specContainer(fmt.Sprintf("c%d", i), fmt.Sprintf(`"Image":"busybox","Volume":"v%d.volume:/data"`, i))
			}))
		}},
		{"journal lines", 4000, func(n int) func() {
			// Written as the journal writes them, without its fsyncs.
			root := t.TempDir()
			j := runlog.Open(root)
			must(t, os.MkdirAll(filepath.Dir(j.Path()), 0o700))
			var b strings.Builder
			for r := range n / 20 {
				run := fmt.Sprintf("20261201T000000Z-%06d", r)
				acts := make([]runlog.Action, 20)
				for i := range acts {
					acts[i] = runlog.Action{Index: i, Step: 9, Op: "start", Target: fmt.Sprintf("u%d.service", i)}
				}
				line, _ := json.Marshal(runlog.Record{Type: runlog.TypeIntent, Run: run, Source: "x", Actions: acts})
				b.Write(append(line, '\n'))
				for i := range acts {
					line, _ := json.Marshal(runlog.Record{Type: runlog.TypeAction, Run: run, Index: &i, Step: 9, Op: "start", Target: acts[i].Target, Result: runlog.ResultOK})
					b.Write(append(line, '\n'))
				}
				line, _ = json.Marshal(runlog.Record{Type: runlog.TypeEnd, Run: run, Result: runlog.ResultOK})
				b.Write(append(line, '\n'))
			}
			must(t, os.WriteFile(j.Path(), []byte(b.String()), 0o600))
			return func() { j.Runs() }
		}},
	}
	// The passes that sort what they count, bound by maxSorted.
	sorted := map[string]float64{"managed unit keys": maxSorted}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLinear(t, c.n, cmp.Or(sorted[c.name], maxLinear), c.run(c.n), c.run(2*c.n))
		})
	}
}

// checkLinear passes once any of ten rounds doubles at most max: a
// busy machine slows one side of a round or the other, by chance, but
// never makes quadratic work (4×) look linear.
func checkLinear(t *testing.T, n int, max float64, small, big func()) {
	t.Helper()
	var ts, tb time.Duration
	for round := range 10 {
		ts = bestOf(5, small)
		tb = bestOf(5, big)
		ratio := float64(tb) / float64(ts)
		t.Logf("round %d: n=%d %s, 2n=%d %s, ratio %.2f", round, n, ts, 2*n, tb, ratio)
		if ratio <= max {
			return
		}
	}
	t.Errorf("doubling the count multiplied the CPU time by %.2f (> %.1f): a pass is worse than linear", float64(tb)/float64(ts), max)
}

// TestPipelineScalesLinearly doubles the input and checks that the time
// at most about doubles: a quadratic step anywhere (validation, render,
// plan) shows as ×3 to ×4. The bound is 2.5, not 2.0: linear work over
// maps of tens of thousands of paths measures 2.2–2.4× per doubling on
// these machines, as more of each map falls out of the CPU caches. Each shape is planned against a fresh host and
// against a host that already runs it. Each size is timed as the best of
// several runs, interleaved, so a busy machine slows both sizes alike
// rather than one, and a ratio above the bound is measured again before it
// fails the test.
func TestPipelineScalesLinearly(t *testing.T) {
	cases := []struct {
		name string
		gen  func(n int) specgen.Options
		n    int
	}{
		// Many specs: the shape of a big host.
		{"specs", specgen.Sized, 1500},
		// One spec with many config files: mount path checks across one
		// container's files, stale-file detection under its directory.
		{"config-files", func(n int) specgen.Options { return specgen.Options{Containers: 1, ConfigFiles: n} }, 4000},
		// One config dir with many files.
		{"config-dir-files", func(n int) specgen.Options { return specgen.Options{Containers: 1, ConfigDirFiles: n} }, 4000},
	}
	for _, c := range cases {
		small := []spec.Source{{Name: "gen.json", Data: specgen.Generate(c.gen(c.n))}}
		big := []spec.Source{{Name: "gen.json", Data: specgen.Generate(c.gen(2 * c.n))}}
		t.Run(c.name+"/first", func(t *testing.T) {
			checkLinear(t, c.n, maxDoubling, func() { pipeline(t, small, emptyHost()) }, func() { pipeline(t, big, emptyHost()) })
		})
		t.Run(c.name+"/converged", func(t *testing.T) {
			hs := memInstall(renderStream(t, string(small[0].Data)))
			hb := memInstall(renderStream(t, string(big[0].Data)))
			checkLinear(t, c.n, maxDoubling, func() { pipeline(t, small, hs) }, func() { pipeline(t, big, hb) })
		})
	}
}

// maxDoubling bounds the CPU time ratio of 2n to n for the whole
// pipeline (checkLinear, in ten rounds: in CI the unit tests run beside
// the build of the test host's image).
const maxDoubling = 2.5
