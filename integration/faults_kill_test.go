//go:build integration

package integration

// SIGKILL at a random moment: the boundary kill tests (resume_test.go)
// pause syslet after a step has finished and been journalled; these kill
// it anywhere — in the middle of a batch of writes or stops, after an
// action landed but before its journal line, while it plans or stages, in
// the health gate — at an offset drawn uniformly over the whole duration
// of an upgrade with work in all nine steps. After each kill the trees are
// checked for half-written files, then one plain apply in a fresh process
// must converge with the same end-state checks as the boundary kill tests.
//
// SYSLET_FAULT_KILLS sets how many kills land (default defaultKills, sized
// for CI; 20 or more use two hosts side by side); SYSLET_FAULT_SEED
// replays a run's offsets (the seed is printed).

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/runlog"
)

// defaultKills is the CI-sized count of random kills.
const defaultKills = 8

// killCmd is the upgrade the kills cut short: the same as the boundary
// kill tests apply, with a one-second soak so that the health gate is a
// small part of the duration the offsets are drawn from.
var killCmd = "syslet --soak 1s " + upgradeDir

// killStats is what one host's share of the kills found.
type killStats struct {
	kills, converged, halfWritten, oneshotTwice, finishedFirst int
	resumed, leftoversSeen                                     int
	phases                                                     map[string]int
	next                                                       string // one resuming run's output, for the table
}

// faultCount reads a positive count from the environment.
func faultCount(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestFaultRandomKills(t *testing.T) {
	randomKills(t, faultCount("SYSLET_FAULT_KILLS", defaultKills))
}

// randomKills lands n random kills (SYSLET_FAULT_SEED replays a run's).
func randomKills(t *testing.T, n int) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("SYSLET_FAULT_SEED"), 10, 64); err == nil {
		seed = v
	}
	hosts := 1
	if n >= 20 {
		hosts = 2
	}
	t.Logf("random kills: %d SIGKILLs on %d host(s), seed %d (replay with SYSLET_FAULT_SEED=%d SYSLET_FAULT_KILLS=%d)", n, hosts, seed, seed, n)
	stats := make([]killStats, hosts)
	t.Run("hosts", func(t *testing.T) {
		for i := range hosts {
			share := n / hosts
			if i < n%hosts {
				share++
			}
			t.Run(fmt.Sprintf("host%d", i), func(t *testing.T) {
				if hosts > 1 {
					// One host runs in the test's own slot: a parallel
					// subtest would queue for another and count the wait
					// as the test's time.
					t.Parallel()
				}
				stats[i] = killLoop(t, share, rand.New(rand.NewPCG(seed, uint64(i))))
			})
		}
	})
	var all killStats
	all.phases = map[string]int{}
	for _, s := range stats {
		all.kills += s.kills
		all.converged += s.converged
		all.halfWritten += s.halfWritten
		all.oneshotTwice += s.oneshotTwice
		all.finishedFirst += s.finishedFirst
		all.resumed += s.resumed
		all.leftoversSeen += s.leftoversSeen
		for p, c := range s.phases {
			all.phases[p] += c
		}
		if all.next == "" {
			all.next = s.next
		}
	}
	var where []string
	for p, c := range all.phases {
		where = append(where, fmt.Sprintf("%s %d", p, c))
	}
	sort.Strings(where)
	t.Logf("random kills (seed %d): %d landed (%d runs finished before their kill and are not counted), %d converged, %d half-written files, %d oneshots run twice; %d next runs resumed the killed run, %d kills left temporary files (all removed by the next run); landed in: %s",
		seed, all.kills, all.finishedFirst, all.converged, all.halfWritten, all.oneshotTwice, all.resumed, all.leftoversSeen, strings.Join(where, ", "))
	if all.kills < n {
		t.Errorf("only %d of %d kills landed", all.kills, n)
	}
	lost := "none"
	if all.halfWritten+all.oneshotTwice > 0 {
		lost = fmt.Sprintf("%d half-written file(s), %d oneshot(s) run twice", all.halfWritten, all.oneshotTwice)
	}
	recordFault(t, faultRow{Fault: fmt.Sprintf("SIGKILL at a random moment of an upgrade with work in all nine steps (seed %d; landed in: %s)", seed, strings.Join(where, ", ")),
		Tries: all.kills, Survived: all.converged, DataLost: lost,
		NextRun: fmt.Sprintf("%d resumed (e.g. %s), %d planned afresh", all.resumed, all.next, all.kills-all.resumed)})
}

// killLoop kills count upgrades on one host, each at an offset drawn from
// rng over the duration of an upgrade run to the end on the same host.
func killLoop(t *testing.T, count int, rng *rand.Rand) killStats {
	h := upgradeHost(t)
	st := killStats{phases: map[string]int{}}
	// The duration the offsets are drawn over: the upgrade run to its
	// end, twice, from the same state each time, on average.
	var d time.Duration
	for range 2 {
		out := h.MustRun(t, `s=$(date +%s%N); `+killCmd+` > /root/full.log 2>&1; rc=$?; e=$(date +%s%N); echo $rc $(( (e - s) / 1000 ))`)
		var rc int
		var us int64
		if _, err := fmt.Sscan(out, &rc, &us); err != nil || rc != 0 {
			t.Fatalf("the upgrade run to its end: %q\n%s", out, h.Run("cat /root/full.log"))
		}
		d += time.Duration(us) * time.Microsecond / 2
		resetUpgrade(t, h)
	}
	t.Logf("an upgrade takes %s on this host: the kills land in [0, %s)", d.Round(time.Millisecond), d.Round(time.Millisecond))
	for try := 0; st.kills < count; try++ {
		if try >= 2*count {
			t.Errorf("%d tries for %d kills: the upgrade finished before its kill too often", try, count)
			break
		}
		at := time.Duration(rng.Float64() * float64(d))
		landed := false
		ok := t.Run(fmt.Sprintf("kill%02d", try), func(t *testing.T) {
			if try > 0 {
				resetUpgrade(t, h)
			}
			out := h.MustRun(t, fmt.Sprintf(`%s > /root/kill.log 2>&1 & pid=$!; sleep %.3f; if kill -KILL $pid 2>/dev/null; then echo killed $pid; else echo finished $pid; fi; wait $pid; echo rc=$?`, killCmd, at.Seconds()))
			f := strings.Fields(out)
			if len(f) < 2 {
				t.Fatalf("kill: %q", out)
			}
			if f[0] != "killed" {
				st.finishedFirst++
				t.Logf("the upgrade finished before its kill at %s: not counted", at.Round(time.Millisecond))
				// It ran faster than when it was timed (the machine is less
				// busy now): it took less than at, so the next offsets are
				// drawn over [0, at).
				d = at
				return
			}
			pid, _ := strconv.Atoi(f[1])
			st.kills++
			landed = true
			rep := checkTrees(t, h)
			phase := killPhase(rep.runs, pid)
			st.phases[phase]++
			st.halfWritten += len(rep.bad)
			for _, b := range rep.bad {
				t.Errorf("after the kill at %s (%s): half-written: %s", at.Round(time.Millisecond), phase, b)
			}
			if len(rep.leftovers) > 0 {
				st.leftoversSeen++
			}
			// One plain apply in a fresh process (the kill tests' soak: the
			// checks below judge the containers again).
			r := syslet(h, "--soak", testSoak, upgradeDir)
			if !r.OK() {
				t.Fatalf("the run after the kill at %s (%s) failed:\n%s", at.Round(time.Millisecond), phase, r)
			}
			if strings.Contains(r.Stdout, "did not finish; resuming") {
				st.resumed++
				if st.next == "" {
					st.next = nextRun(r.Stdout)
				}
			}
			t.Logf("killed at %s of %s (%s; %d unit and %d config files checked, %d explained by the journal, %d temporary files left); next run: %s",
				at.Round(time.Millisecond), d.Round(time.Millisecond), phase, rep.units, rep.files, len(rep.explained), len(rep.leftovers), nextRun(r.Stdout))
			if runs := strings.TrimSpace(h.Run("cat $(podman volume inspect db-data --format '{{.Mountpoint}}')/seed-runs").Stdout); strings.Count(runs, "ran") > 1 {
				st.oneshotTwice++
			}
			checkUpgraded(t, h)
			sane(t, h, true)
			c := cursor(t, h)
			if third := apply(t, h, upgradeDir); !strings.Contains(third.Stdout, "No changes") {
				t.Errorf("the third run must plan nothing:\n%s", third.Stdout)
			}
			if jobs := deployJobs(t, h, c); len(jobs) > 0 {
				t.Errorf("the third run made systemd work:\n%s", strings.Join(jobs, "\n"))
			}
			if failed := strings.TrimSpace(h.MustRun(t, "systemctl --failed --no-legend --plain")); failed != "" {
				t.Errorf("units left failed:\n%s", failed)
			}
		})
		if landed && ok {
			st.converged++
		}
		if !ok {
			// A failed trial leaves the host in an unknown state: stop here
			// with what it found, rather than pile failures up.
			break
		}
	}
	return st
}

// emptyStep matches an empty step in a --diff's step list.
var emptyStep = regexp.MustCompile(`(?m)^  (\d)\. .* -$`)

// resetUpgrade puts the host back to examples/demo-previous as the upgrade
// found it — its image not pulled, the new oneshot never run — and checks
// the upgrade plans work in all nine steps again.
func resetUpgrade(t *testing.T, h *testhost.Host) {
	t.Helper()
	if r := syslet(h, "--soak", "0", specDir+"/demo-previous"); !r.OK() {
		t.Fatalf("resetting to demo-previous:\n%s", r)
	}
	h.MustRun(t, "podman rmi -f localhost:5000/busybox:v2 >/dev/null && rm -f $(podman volume inspect db-data --format '{{.Mountpoint}}')/seed-runs")
	d := syslet(h, "--diff", upgradeDir)
	if m := emptyStep.FindStringSubmatch(d.Stdout); m != nil {
		t.Fatalf("after the reset the upgrade has no action in step %s:\n%s", m[1], d)
	}
}

// killPhase says where the kill of the run with pid landed, from its
// journal: before its intent was written (reading, planning, staging the
// units), during a step (its last step line: the step, or the staging
// of files after step 1), in the health gate (every action landed), or
// after the journal closed.
func killPhase(runs []*runlog.RunInfo, pid int) string {
	var r *runlog.RunInfo
	for _, x := range runs {
		if x.Intent.PID == pid {
			r = x
		}
	}
	switch {
	case r == nil:
		return "before the intent"
	case r.End != nil:
		return "after the journal closed"
	case len(r.Unfinished()) == 0:
		return "health gate"
	case len(r.Steps) == 0:
		return "before step 1"
	}
	return fmt.Sprintf("step %d", r.Steps[len(r.Steps)-1].Step)
}
