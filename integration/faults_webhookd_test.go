//go:build integration

package integration

// webhookd killed (SIGKILL) in the middle of a deploy and restarted by
// systemd; applies racing each other (a second syslet, a webhookd deploy
// and a manual apply at once); the lock file deleted by hand while an
// apply holds it. The host here runs webhookd as the service
// examples/systemd/webhookd.service installs (webhookd_test.go).

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
)

func TestFaultWebhookd(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	first := strings.TrimSpace(w.MustRun(t, "git -C "+whWork+" rev-parse HEAD"))
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: first}); code != 202 {
		t.Fatalf("first push: %d %s", code, reply)
	}
	w.waitStatus("the first commit applied", func(s whStatus) bool { return s.LastApplied == first })

	t.Run("KilledMidDeploy", func(t *testing.T) {
		w.t = t
		// A start that takes 8 s keeps the deploy in step 9 long enough
		// to kill webhookd there.
		w.writeSpec("localhost:5000/web:v2", "killed", "/bin/sleep 8")
		c := w.commit("web v2, a slow start")
		pid := w.mainPID()
		d := whDelivery{forge: "github", ref: "refs/heads/main", after: c, id: "killed-mid-deploy-1"}
		if code, reply := w.push(d); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		if r := w.Eventually(`test "$(systemctl show -P ActiveState web.service)" = activating`, whWait); !r.OK() {
			t.Fatalf("the deploy never reached web's start: %+v", w.status())
		}
		w.MustRun(t, "kill -KILL "+pid)
		t0 := time.Now()
		if r := w.Eventually(fmt.Sprintf(`p=$(systemctl show -P MainPID webhookd.service); test "$p" != 0 && test "$p" != %s && systemctl is-active -q webhookd.service`, pid), time.Minute); !r.OK() {
			t.Fatalf("systemd did not restart webhookd: %s", r)
		}
		t.Logf("webhookd (pid %d) killed in step 9; systemd restarted it after %s", atoi(pid), time.Since(t0).Round(time.Millisecond))
		st := w.waitStatus("the killed deploy done again", func(s whStatus) bool { return s.LastApplied == c && s.State == "idle" })
		if st.Last.Result != "success" || !strings.HasPrefix(w.lastTrigger(), "resumed after a restart (github push killed-mid-deploy-1") {
			t.Errorf("status after the restart: %+v %+v (trigger %q)", st, st.Last, w.lastTrigger())
		}
		if img, marker, rev := w.running(); img != "localhost:5000/web:v2" || marker != "marker-2" || rev != "killed" {
			t.Errorf("web runs %s (%s) REV=%s, want web:v2 REV=killed", img, marker, rev)
		}
		// The journal: the killed run unfinished, the redo resuming it.
		runs := history(t, w.Host)
		var killed, redo *historyRun
		for i := range runs {
			if runs[i].Source == "git infra@"+c {
				if killed == nil {
					killed = &runs[i]
				} else {
					redo = &runs[i]
				}
			}
		}
		if killed == nil || redo == nil || killed.Result != "unfinished" || redo.Resumes != killed.Run || (redo.Result != "ok" && redo.Result != "no-changes") {
			t.Errorf("journal: killed %+v, redo %+v", killed, redo)
		}
		// The old delivery again: still refused after the restart.
		code, reply := w.push(d)
		if code != 409 || !strings.Contains(reply, "replay") {
			t.Errorf("the replayed delivery after the restart: %d %s", code, reply)
		}
		mode := strings.TrimSpace(w.MustRun(t, "stat -c %a /var/lib/syslet/webhookd/.status/.deliveries"))
		if mode != "600" {
			t.Errorf("the replay memory is mode %s, want 600", mode)
		}
		recordFault(t, faultRow{Fault: "webhookd SIGKILLed in the middle of a deploy (step 9), restarted by systemd", Tries: 1, Survived: 1,
			DataLost: "none: the pushed commit serves, /status says success, the old delivery id is refused (409)",
			NextRun:  fmt.Sprintf("webhookd after the restart deployed it again (trigger %q), run %s resuming %s", w.lastTrigger(), redo.Run, killed.Run)})
	})

	t.Run("RacingApplies", func(t *testing.T) {
		w.t = t
		// Two manual applies and a webhookd deploy, all at once.
		w.writeSpec("localhost:5000/web:v3", "hook", "")
		c := w.commit("web v3 by webhookd")
		for _, m := range []struct{ dir, rev string }{{"/root/m1", "m1"}, {"/root/m2", "m2"}} {
			w.MustRun(t, "mkdir -p "+m.dir+" && cp "+whWork+"/"+w.specDir+"/web.json "+m.dir+"/")
			editFile(t, w.Host, m.dir+"/web.json", fmt.Sprintf(`.unit.Container.Environment.REV = %q`, m.rev))
		}
		body, headers := w.request(whDelivery{forge: "github", ref: "refs/heads/main", after: c})
		must(t, w.WriteFile("/tmp/race.json", body, 0o644))
		out := w.MustRun(t, "syslet /root/m1 > /root/m1.log 2>&1 & a=$!; syslet /root/m2 > /root/m2.log 2>&1 & b=$!; "+
			"{ "+whCurl("/hooks/infra", "/tmp/race.json", headers)+"; } > /root/hook.log; wait $a; ra=$?; wait $b; rb=$?; echo $ra $rb; head -1 /root/hook.log")
		if f := strings.Fields(out); len(f) < 3 || f[0] != "0" || f[1] != "0" || f[2] != "202" {
			t.Fatalf("the racing applies: %q\nm1:\n%s\nm2:\n%s", out, w.Run("cat /root/m1.log").Stdout, w.Run("cat /root/m2.log").Stdout)
		}
		w.waitStatus("webhookd's deploy done", func(s whStatus) bool { return s.LastApplied == c && s.State == "idle" })
		logs := w.MustRun(t, "cat /root/m1.log /root/m2.log; journalctl -u webhookd.service -o cat --since '-2min'")
		if !strings.Contains(logs, "waiting for it to finish") {
			t.Errorf("none of the three waited for another:\n%s", logs)
		}
		runs := journalRuns(t, w.Host)
		overlaps := nonOverlapping(t, runs)
		last := runs[len(runs)-1]
		want := map[string]string{"/root/m1": "m1", "/root/m2": "m2", "git infra@" + c: "hook"}[last.Intent.Source]
		if _, _, rev := w.running(); rev != want {
			t.Errorf("web runs REV=%s, want %s: the run that took the lock last (%s) must win", rev, want, last.Intent.Source)
		}
		recordFault(t, faultRow{Fault: "a second syslet and a webhookd deploy racing a manual apply", Tries: 1, Survived: boolTo(overlaps == 0),
			DataLost: "none: the three ran one after the other (journal times do not overlap); the last one's input serves",
			NextRun:  "the runs that waited printed: another apply is running: pid … (source …); waiting for it to finish"})
	})

	t.Run("LockFileDeletedWhileHeld", func(t *testing.T) {
		w.t = t
		w.writeSpec("localhost:5000/web:v4", "after-lock", "")
		c := w.commit("web v4 while the lock file is gone")
		// A manual apply holding the lock, paused after its stops.
		w.MustRun(t, "mkdir -p /root/m3 && cp /root/m1/web.json /root/m3/")
		editFile(t, w.Host, "/root/m3/web.json", `.unit.Container.Environment.REV = "held"`)
		holder := startPaused(t, w.Host, 2, "/root/m3", "/root/holder.log")
		w.MustRun(t, "rm "+layout.LockFile)
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c}); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		r := syslet(w.Host, "--lock-timeout", "3s", "/root/m2")
		if r.OK() || !strings.Contains(r.Stderr, fmt.Sprintf("pid %d", holder)) || !strings.Contains(r.Stderr, "deleted") {
			t.Errorf("with the lock file deleted, a second apply must still wait for pid %d and say why:\n%s", holder, r)
		}
		if d := syslet(w.Host, "--diff", "/root/m2"); !strings.Contains(d.Stderr, "an apply is in progress") {
			t.Errorf("--diff must still see the apply in progress:\n%s", d.Stderr)
		}
		time.Sleep(2 * time.Second)
		if st := w.status(); st.State != "deploying" || st.LastApplied == c {
			t.Errorf("webhookd's deploy must wait for the holder: %+v", st)
		}
		w.MustRun(t, fmt.Sprintf("kill -TERM %d", holder))
		waitGone(t, w.Host, holder)
		st := w.waitStatus("webhookd's deploy after the holder", func(s whStatus) bool { return s.LastApplied == c && s.State == "idle" })
		if st.Last.Result != "success" {
			t.Errorf("webhookd's deploy: %+v", st.Last)
		}
		if _, _, rev := w.running(); rev != "after-lock" {
			t.Errorf("web runs REV=%s, want after-lock", rev)
		}
		overlaps := nonOverlapping(t, journalRuns(t, w.Host))
		if !w.Run("test -e " + layout.LockFile).OK() {
			t.Errorf("the lock file was not made again")
		}
		recordFault(t, faultRow{Fault: "the apply lock file deleted by hand while an apply holds it", Tries: 1, Survived: boolTo(overlaps == 0),
			DataLost: "none: a second apply still waited (and timed out), webhookd's deploy ran after the holder",
			NextRun:  "the second apply printed: " + firstLine(r.Stderr, "apply lock not acquired")})
	})
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func boolTo(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lastTrigger is the trigger of webhookd's last attempt.
func (w *whHost) lastTrigger() string {
	var doc struct {
		Repos []struct {
			Last struct{ Trigger string }
		}
	}
	_ = json.Unmarshal([]byte(w.MustRun(w.t, "curl -sSf "+whURL+"/status")), &doc)
	if len(doc.Repos) == 0 {
		return ""
	}
	return doc.Repos[0].Last.Trigger
}

// journalRuns reads the guest's run journal.
func journalRuns(t *testing.T, h *testhost.Host) []*runlog.RunInfo {
	t.Helper()
	root := t.TempDir()
	must(t, h.CopyOut(layout.Journal, root+layout.Journal))
	runs, err := runlog.Open(root).Runs()
	must(t, err)
	return runs
}

// nonOverlapping checks that no two runs that executed anything were in
// their steps at the same time (intent to end), and returns how many
// pairs did.
func nonOverlapping(t *testing.T, runs []*runlog.RunInfo) int {
	t.Helper()
	type span struct {
		run        string
		start, end time.Time
	}
	var spans []span
	for _, r := range runs {
		if len(r.Actions) == 0 || r.End == nil {
			continue
		}
		spans = append(spans, span{r.ID(), r.Intent.Time, r.End.Time})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	n := 0
	for i := 1; i < len(spans); i++ {
		if spans[i].start.Before(spans[i-1].end) {
			n++
			t.Errorf("runs %s and %s overlap: %s–%s and %s–%s", spans[i-1].run, spans[i].run,
				spans[i-1].start.Format(time.StampMicro), spans[i-1].end.Format(time.StampMicro), spans[i].start.Format(time.StampMicro), spans[i].end.Format(time.StampMicro))
		}
	}
	return n
}
