package push

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseSizes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"1", "[1]"}, {"1,25%", "[1 25%]"}, {"10%", "[10%]"}, {"2, 3", "[2 3]"}, {"100%", "[100%]"},
	} {
		got, err := ParseSizes(tt.in)
		if err != nil || fmt.Sprint(got) != tt.want {
			t.Errorf("ParseSizes(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "0%", "101%", "1,,2", "x", "25 %", "+3", "1.5"} {
		if got, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) = %v; want an error", bad, got)
		}
	}
	if s, err := ParseSize("0", 0); err != nil || s.Of(7) != 0 {
		t.Errorf("a budget of 0: %v, %v", s, err)
	}
	if s, _ := ParseSize("10%", 0); s.Of(25) != 2 {
		t.Errorf("10%% of 25 = %d; want 2 (rounded down)", s.Of(25))
	}
}

func TestBatches(t *testing.T) {
	sizes := func(s string) []Size { z, _ := ParseSizes(s); return z }
	for _, tt := range []struct {
		n     int
		sizes []Size
		want  []int
	}{
		{5, nil, []int{5}},
		{5, sizes("1,2"), []int{1, 2, 2}},
		{200, sizes("10%"), []int{20, 20, 20, 20, 20, 20, 20, 20, 20, 20}},
		{10, sizes("1,25%"), []int{1, 2, 2, 2, 2, 1}},
		{3, sizes("10%"), []int{1, 1, 1}}, // a size that comes to no host counts one
		{2, sizes("5"), []int{2}},
		{0, sizes("1"), nil},
	} {
		if got := Batches(tt.n, tt.sizes); !slices.Equal(got, tt.want) {
			t.Errorf("Batches(%d, %v) = %v; want %v", tt.n, tt.sizes, got, tt.want)
		}
	}
}

// fakeHost answers as a host's syslet would: the apply (with a verdict
// of its own), `syslet status` and `syslet --diff`.
type fakeHost struct {
	srv *testServer
	// code, lines and doc are the apply's exit code, text and document
	// (none when "").
	code  int
	lines []string
	doc   string
	// invocation is what `syslet status` reports for app.service.
	invocation atomic.Value
	// drifted is what `syslet --diff` finds: "" nothing, "changed" a
	// change to make, "edited" a unit edited by hand.
	drifted atomic.Value

	mu         sync.Mutex
	start, end time.Time // of the apply
}

func newFakeHost(t *testing.T, f *fixture, code int, doc string, lines ...string) *fakeHost {
	h := &fakeHost{code: code, lines: lines, doc: doc}
	h.invocation.Store("inv-1")
	h.drifted.Store("")
	h.srv = startServer(t, f.client.PublicKey(), func(s *execSession) int {
		switch s.Cmd {
		case "syslet --stdin --output text+json":
			h.mu.Lock()
			h.start = time.Now()
			h.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			for _, l := range h.lines {
				fmt.Fprintln(s.Stdout, l)
			}
			report(s.Stderr, h.doc)
			h.mu.Lock()
			h.end = time.Now()
			h.mu.Unlock()
			return h.code
		case "syslet status --stdin --output json":
			fmt.Fprintf(s.Stdout, `{"services":[{"service":"app.service","container":"app","activeState":"active","subState":"running","result":"success","invocationId":%q,"nRestarts":0}]}`+"\n", h.invocation.Load())
			return 0
		case "syslet --diff --stdin --detailed-exitcode --output text+json":
			switch h.drifted.Load() {
			case "changed":
				fmt.Fprintln(s.Stdout, "Plan: 0 to create, 1 to change, 3 unchanged; 2 actions (digest 1234).")
				report(s.Stderr, `{"verdict":"planned","exit":0,"planCounts":{"change":1,"unchanged":3,"actions":2}}`)
				return 3
			case "edited":
				fmt.Fprintln(s.Stdout, "No changes detected. The host differs from the specs only where 1 unit(s) were edited by hand, which an apply keeps (drift); --force replaces them.")
				report(s.Stderr, `{"verdict":"planned","exit":0,"planCounts":{"unchanged":3,"drift":1,"actions":0}}`)
				return 3
			}
			fmt.Fprintln(s.Stdout, "No changes detected. The host matches the specs.")
			report(s.Stderr, `{"verdict":"planned","exit":0,"planCounts":{"unchanged":4,"actions":0}}`)
			return 0
		}
		fmt.Fprintf(s.Stderr, "unexpected command %q\n", s.Cmd)
		return 64
	})
	f.know(h.srv.addr, h.srv.hostKey.PublicKey())
	return h
}

// report writes a host's JSON document as its syslet does at the end of
// stderr with --output text+json: one record (verdict.WriteRecord).
func report(w io.Writer, doc string) {
	if doc != "" {
		fmt.Fprintf(w, "\x1e%s\n", doc)
	}
}

func (h *fakeHost) times() (time.Time, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.start, h.end
}

// The text and the document of an apply, and of an apply rolled back.
var (
	appliedLines    = []string{"Plan: 0 to create, 1 to change, 3 unchanged; 4 actions (digest 1234).", "", "Applying (run 20261201T1015-1):", "Summary: 4 applied, 0 failed, 0 not reached (1.2s, run 20261201T1015-1)"}
	rolledBackLines = []string{"Plan: 0 to create, 1 to change, 3 unchanged; 4 actions (digest 1234).", "", "Applying (run 20261201T1015-1):", "Summary: 4 applied, 0 failed, 0 not reached (1.2s, run 20261201T1015-1)",
		"Health gate FAILED after 3s:", "  app.service: restarted 5 time(s) by Restart= before it was up",
		"Plan: 0 to create, 1 to change, 3 unchanged; 3 actions (digest 9876).", "", "Applying (run 20261201T1015-2):", "Summary: 3 applied, 0 failed, 0 not reached (1.2s, run 20261201T1015-2)",
		"", "ROLLED BACK: run 20261201T1015-1 failed its health gate (app.service: restarted 5 time(s) by Restart= before it was up); run 20261201T1015-2 applied the generation of run 20261201T1015-0 again, and it passed the gate."}
)

const (
	appliedDoc = `{"verdict":"applied","exit":0,"run":"20261201T1015-1","planCounts":{"create":0,"change":1,"unchanged":3,"actions":4},` +
		`"result":{"applied":[{},{},{},{}],"failed":[],"notReached":[]}}`
	rolledBackDoc = `{"verdict":"rolled-back","exit":4,"run":"20261201T1015-1","planCounts":{"change":1,"unchanged":3,"actions":4},` +
		`"result":{"applied":[{},{},{},{}],"failed":[],"notReached":[]},"rollback":{"run":"20261201T1015-2","generation":"20261201T1015-0",` +
		`"message":"run 20261201T1015-1 failed its health gate (app.service: restarted 5 time(s) by Restart= before it was up); run 20261201T1015-2 applied the generation of run 20261201T1015-0 again, and it passed the gate"}}`
)

func (f *fixture) rolloutOptions(log *bytes.Buffer) Options {
	o := f.options(nil, nil, nil)
	o.Command = "syslet --stdin"
	if log != nil {
		o.Log = log
	}
	return o
}

func zero() *Size { return &Size{} }

func TestRolloutCanaryRollsBack(t *testing.T) {
	f := newFixture(t)
	canary := newFakeHost(t, f, 4, rolledBackDoc, rolledBackLines...)
	var rest []*fakeHost
	jobs := []Job{f.job(canary.srv.addr, "web1")}
	for i := 2; i <= 5; i++ {
		h := newFakeHost(t, f, 0, appliedDoc, appliedLines...)
		rest = append(rest, h)
		jobs = append(jobs, f.job(h.srv.addr, fmt.Sprintf("web%d", i)))
	}
	var log bytes.Buffer
	sizes, _ := ParseSizes("1,2")
	rep := Rollout(context.Background(), jobs, f.rolloutOptions(&log), Strategy{Batches: sizes, MaxFailed: zero()})

	if rep.Batches != 3 {
		t.Errorf("%d batches; want 3", rep.Batches)
	}
	if r := rep.Results[0]; r.Ending.String() != "rolled back" || r.Batch != 1 || fmt.Sprintln(r.Runs()) != "20261201T1015-1 20261201T1015-2\n" {
		run, back := r.Runs()
		t.Errorf("canary: %v batch %d runs %q %q (%v); want rolled back in batch 1", r.Ending, r.Batch, run, back, r.Err)
	}
	for i, h := range rest {
		r := rep.Results[i+1]
		if r.Ending.String() != "not reached" || r.Batch != []int{2, 2, 3, 3}[i] || h.srv.authCalls.Load() != 0 || h.srv.execs.Load() != 0 {
			t.Errorf("%s: %v batch %d, %d logins tried; want not reached and never contacted", r.Target.Arg, r.Ending, r.Batch, h.srv.authCalls.Load())
		}
	}
	st := rep.Stop
	if st == nil || st.Host != "web1" || st.Outcome.String() != "rolled back" || st.Batch != 1 || st.AfterPause || st.Interrupted || st.Failed != 1 || st.Allowed != 0 {
		t.Fatalf("stop = %+v", st)
	}
	if !strings.Contains(st.Why, "failed its health gate (app.service: restarted 5 time(s)") {
		t.Errorf("stop reason %q does not give the host's own verdict", st.Why)
	}

	d := rep.Document("syslet --stdin")
	d.Hosts[0].Started, d.Hosts[0].Seconds, d.Hosts[0].ConnectSeconds = nil, 0, 0
	data, _ := json.Marshal(d)
	for _, want := range []string{
		`"batches":3`,
		`{"host":"web1","address":"` + canary.srv.addr + `","batch":1,"outcome":"rolled back","verdict":"rolled-back","exitCode":4,"plan":"1 to change, 3 unchanged; 4 actions; 4 applied, 0 failed, 0 not reached","run":"20261201T1015-1","rollbackRun":"20261201T1015-2","reason":"run 20261201T1015-1 failed its health gate`,
		`{"host":"web5","address":"` + rest[3].srv.addr + `","batch":3,"outcome":"not reached","exitCode":null,"reason":"the rollout stopped before this host's turn","seconds":0,"connectSeconds":0}`,
		`"stopped":{"batch":1,"afterPause":false,"interrupted":false,"host":"web1","outcome":"rolled back","reason":"run 20261201T1015-1 failed`,
		`"failed":1,"allowed":0,"message":"web1 rolled back in batch 1 (run 20261201T1015-1 failed`,
		`"counts":{"not reached":4,"rolled back":1}`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON lacks %s:\n%s", want, data)
		}
	}

	var table bytes.Buffer
	WriteTable(&table, rep)
	for _, want := range []string{
		"HOST  BATCH  RESULT       PLAN",
		"web1  1      rolled back  1 to change, 3 unchanged; 4 actions; 4 applied, 0 failed, 0 not reached",
		"web4  3      not reached  -",
		"web1: rolled back: run 20261201T1015-1 failed its health gate",
		"not reached (never connected to, left as they were): web2, web3, web4, web5\n",
		"Rollout stopped: web1 rolled back in batch 1; 1 host(s) failed, more than the 0 allowed.\n",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	// The rollback is said once, in web1's line (issue 55: the stop line
	// said it again).
	if n := strings.Count(table.String(), "failed its health gate"); n != 1 {
		t.Errorf("the table says the rollback %d times, want once:\n%s", n, table.String())
	}
	if !strings.HasSuffix(table.String(), "5 host(s): 4 not reached, 1 rolled back\n") {
		t.Errorf("table's count:\n%s", table.String())
	}
	for _, want := range []string{"syslet push: batch 1 of 3: web1\n", "syslet push: rollout stopped: web1 rolled back in batch 1"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "batch 2 of 3") {
		t.Errorf("batch 2 was announced:\n%s", log.String())
	}
}

func TestRolloutBatchesInOrder(t *testing.T) {
	f := newFixture(t)
	var hosts []*fakeHost
	var jobs []Job
	for i := 1; i <= 5; i++ {
		h := newFakeHost(t, f, 0, appliedDoc, appliedLines...)
		hosts = append(hosts, h)
		jobs = append(jobs, f.job(h.srv.addr, fmt.Sprintf("web%d", i)))
	}
	sizes, _ := ParseSizes("1,2")
	var log bytes.Buffer
	rep := Rollout(context.Background(), jobs, f.rolloutOptions(&log), Strategy{Batches: sizes, MaxFailed: zero()})
	if rep.Stop != nil || AnyFailed(rep.Results) {
		t.Fatalf("stop %+v, results %+v", rep.Stop, rep.Results)
	}
	batchOf := []int{1, 2, 2, 3, 3}
	for i, r := range rep.Results {
		if run, _ := r.Runs(); r.Ending.String() != "applied" || r.Batch != batchOf[i] || run != "20261201T1015-1" {
			t.Errorf("%s: %v batch %d; want applied in batch %d", r.Target.Arg, r.Ending, r.Batch, batchOf[i])
		}
	}
	// Every host of a batch began after every host of the batch before ended.
	for i := range hosts {
		for k := range hosts {
			si, _ := hosts[i].times()
			_, ek := hosts[k].times()
			if batchOf[k] < batchOf[i] && !si.After(ek) {
				t.Errorf("web%d (batch %d) began before web%d (batch %d) ended", i+1, batchOf[i], k+1, batchOf[k])
			}
		}
	}
	var table bytes.Buffer
	WriteTable(&table, rep)
	if !strings.HasSuffix(table.String(), "5 host(s): 5 applied\n") || strings.Contains(table.String(), "stopped") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestRolloutBudgetStopsMidBatch(t *testing.T) {
	f := newFixture(t)
	var jobs []Job
	var hosts []*fakeHost
	for i := 1; i <= 10; i++ {
		code := 0
		if i <= 3 {
			code = 1
		}
		h := newFakeHost(t, f, code, "")
		hosts = append(hosts, h)
		jobs = append(jobs, f.job(h.srv.addr, fmt.Sprintf("h%02d", i)))
	}
	sizes, _ := ParseSizes("50%")
	budget, _ := ParseSize("20%", 0) // 2 of 10
	o := f.rolloutOptions(nil)
	o.Parallel = 1
	rep := Rollout(context.Background(), jobs, o, Strategy{Batches: sizes, MaxFailed: &budget})
	// h01–h03 fail one after the other; the third is one too many, and
	// h04 and h05 of the same batch are never started.
	for i, r := range rep.Results {
		want := Ending{Own: NotReached}
		if i < 3 {
			want = Ending{Own: Broke} // exited 1, with no document
		}
		if r.Ending != want {
			t.Errorf("%s: %v; want %v", r.Target.Arg, r.Ending, want)
		}
		if want.Own == NotReached && hosts[i].srv.authCalls.Load() != 0 {
			t.Errorf("%s was contacted", r.Target.Arg)
		}
	}
	if st := rep.Stop; st == nil || st.Host != "h03" || st.Batch != 1 || st.Failed != 3 || st.Allowed != 2 {
		t.Errorf("stop = %+v", rep.Stop)
	}
}

func TestRolloutNoBudgetGoesOn(t *testing.T) {
	f := newFixture(t)
	bad, good := newFakeHost(t, f, 1, ""), newFakeHost(t, f, 0, appliedDoc, appliedLines...)
	sizes, _ := ParseSizes("1")
	rep := Rollout(context.Background(), []Job{f.job(bad.srv.addr, "bad"), f.job(good.srv.addr, "good")}, f.rolloutOptions(nil), Strategy{Batches: sizes})
	if rep.Stop != nil || rep.Results[0].Ending.String() != "failed" || rep.Results[1].Ending.String() != "applied" {
		t.Errorf("without a budget: stop %+v, %v, %v", rep.Stop, rep.Results[0].Ending, rep.Results[1].Ending)
	}
}

func pauseStrategy(pause time.Duration) Strategy {
	sizes, _ := ParseSizes("1")
	return Strategy{Batches: sizes, MaxFailed: zero(), Pause: pause,
		StatusCommand: "syslet status --stdin --output json", DiffCommand: "syslet --diff --stdin --detailed-exitcode"}
}

func TestRolloutPauseCatchesARestart(t *testing.T) {
	f := newFixture(t)
	web1, web2, web3 := newFakeHost(t, f, 0, appliedDoc, appliedLines...), newFakeHost(t, f, 0, appliedDoc, appliedLines...), newFakeHost(t, f, 0, appliedDoc, appliedLines...)
	jobs := []Job{f.job(web1.srv.addr, "web1"), f.job(web2.srv.addr, "web2"), f.job(web3.srv.addr, "web3")}
	var log syncBuffer
	o := f.rolloutOptions(nil)
	o.Log = &log
	done := make(chan Report)
	go func() { done <- Rollout(context.Background(), jobs, o, pauseStrategy(time.Second)) }()
	// web1 passes its first look; during the pause after batch 2 web2's
	// container is killed and started again by systemd.
	waitFor(t, &log, "pausing 1s before looking at web2 again")
	web2.invocation.Store("inv-2")
	rep := <-done

	if r := rep.Results[0]; r.Ending.String() != "applied" || r.Check == nil || len(r.Check.Problems) != 0 {
		t.Errorf("web1: %v, check %+v", r.Ending, r.Check)
	}
	r := rep.Results[1]
	if r.Ending.String() != "failed" || r.Check == nil || len(r.Check.Problems) != 1 || !strings.Contains(r.Err.Error(), "after the 1s pause: app.service was started again (InvocationID changed), now active/running") {
		t.Errorf("web2: %v %v, check %+v", r.Ending, r.Err, r.Check)
	}
	if r := rep.Results[2]; r.Ending.String() != "not reached" || web3.srv.authCalls.Load() != 0 {
		t.Errorf("web3: %v; want not reached", r.Ending)
	}
	if st := rep.Stop; st == nil || st.Host != "web2" || !st.AfterPause || st.Batch != 2 || st.Outcome.String() != "failed" {
		t.Errorf("stop = %+v", rep.Stop)
	} else if !strings.Contains(st.Message(), "web2 failed after the pause that followed batch 2 (after the 1s pause: app.service was started again") {
		t.Errorf("stop: %s", st)
	}
	for _, want := range []string{"after the pause: web1 still up, unrestarted and unchanged", "after the pause: web2 fell over", "rollout stopped: web2 failed after the pause"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	d := rep.Document("syslet --stdin")
	if c := d.Hosts[1].Check; c == nil || len(c.Problems) != 1 || d.Hosts[2].Check != nil || !d.Stopped.AfterPause {
		t.Errorf("document: %+v %+v", d.Hosts[1], d.Stopped)
	}
}

func TestRolloutPauseCatchesDrift(t *testing.T) {
	for drift, want := range map[string]string{
		"changed": "it no longer matches its specs: 1 to change, 3 unchanged; 2 actions",
		"edited":  "it no longer matches its specs: 1 unit(s) edited by hand (drift, which an apply keeps; --force replaces them)",
	} {
		f := newFixture(t)
		web1, web2 := newFakeHost(t, f, 0, appliedDoc, appliedLines...), newFakeHost(t, f, 0, appliedDoc, appliedLines...)
		web1.drifted.Store(drift)
		rep := Rollout(context.Background(), []Job{f.job(web1.srv.addr, "web1"), f.job(web2.srv.addr, "web2")}, f.rolloutOptions(nil), pauseStrategy(10*time.Millisecond))
		if r := rep.Results[0]; r.Ending.String() != "failed" || !strings.Contains(r.Err.Error(), want) {
			t.Errorf("%s: web1: %v %v", drift, r.Ending, r.Err)
		}
		if rep.Results[1].Ending.String() != "not reached" {
			t.Errorf("%s: web2: %v", drift, rep.Results[1].Ending)
		}
	}
}

func TestRolloutInterruptDuringPause(t *testing.T) {
	f := newFixture(t)
	web1, web2 := newFakeHost(t, f, 0, appliedDoc, appliedLines...), newFakeHost(t, f, 0, appliedDoc, appliedLines...)
	var log syncBuffer
	o := f.rolloutOptions(nil)
	o.Log = &log
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan Report)
	go func() {
		done <- Rollout(ctx, []Job{f.job(web1.srv.addr, "web1"), f.job(web2.srv.addr, "web2")}, o, pauseStrategy(time.Minute))
	}()
	waitFor(t, &log, "pausing 1m0s")
	cancel(fmt.Errorf("interrupted"))
	rep := <-done
	if rep.Results[0].Ending.String() != "applied" || rep.Results[0].Check != nil {
		t.Errorf("web1: %v, check %+v; want applied, not looked at again", rep.Results[0].Ending, rep.Results[0].Check)
	}
	if r := rep.Results[1]; r.Ending.String() != "not reached" || web2.srv.authCalls.Load() != 0 || r.Err.Error() != "interrupted before this host's turn" {
		t.Errorf("web2: %v %v", r.Ending, r.Err)
	}
	if st := rep.Stop; st == nil || !st.Interrupted || !st.AfterPause || st.String() != "interrupted during the pause after batch 1" {
		t.Errorf("stop = %+v", rep.Stop)
	}
}

func TestRolloutPauseNeedsStatus(t *testing.T) {
	f := newFixture(t)
	old := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		if s.Cmd == "syslet --stdin --output text+json" {
			fmt.Fprintln(s.Stdout, "No changes detected. The host matches the specs.")
			report(s.Stderr, `{"verdict":"no-changes","exit":0,"planCounts":{"unchanged":1,"actions":0}}`)
			return 0
		}
		fmt.Fprintln(s.Stderr, "syslet: unknown flag") // an older syslet
		return 64
	})
	f.know(old.addr, old.hostKey.PublicKey())
	other := newFakeHost(t, f, 0, "")
	rep := Rollout(context.Background(), []Job{f.job(old.addr, "old"), f.job(other.srv.addr, "other")}, f.rolloutOptions(nil), pauseStrategy(time.Millisecond))
	if r := rep.Results[0]; r.Ending.String() != "failed" || !strings.Contains(r.Err.Error(), `reading its services for the check after the pause failed: "syslet status --stdin --output json" exited 64 (the host's syslet did not accept the command line: is it older than this one?): syslet: unknown flag`) {
		t.Errorf("old: %v %v", r.Ending, r.Err)
	}
	if rep.Results[1].Ending.String() != "not reached" {
		t.Errorf("other: %v", rep.Results[1].Ending)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.String(), s); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q in:\n%s", s, b.String())
		}
	}
}
