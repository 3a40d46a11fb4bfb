package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/drift"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/settings"
)

// notifyFlush bounds how long syslet waits, after its run, for its
// notifications to be delivered; what is not delivered by then is dropped
// (and counted). The run itself never waits for them.
const notifyFlush = 10 * time.Second

// notifier is syslet's own notifications for one run: the targets of
// /etc/syslet/syslet.json, their failures said on stderr, every result
// counted in the notify state (the textfile's counters).
type notifier struct {
	n      *notify.Notifier
	root   string
	stderr io.Writer

	mu      sync.Mutex
	results []notify.Result
}

// openNotifier reads the settings' notification targets. A settings file
// that does not read, or a target that is wrong, turns notifications off
// with a warning: a notifier never fails the run. nil: none configured.
func openNotifier(root string, stderr io.Writer) *notifier {
	st, err := settings.Load(root)
	if err != nil {
		fmt.Fprintf(stderr, "syslet: warning: notifications are off: %v\n", err)
		return nil
	}
	if len(st.Notify) == 0 {
		return nil
	}
	ts, err := notify.Load(st.Notify, "notify")
	if err != nil {
		fmt.Fprintf(stderr, "syslet: warning: notifications are off: %s:\n%v\n", settings.Path, err)
		return nil
	}
	nt := &notifier{root: root, stderr: stderr}
	nt.n = notify.New(ts, nt.done)
	return nt
}

func (nt *notifier) done(r notify.Result) {
	nt.mu.Lock()
	nt.results = append(nt.results, r)
	nt.mu.Unlock()
	if r.Outcome != notify.OutcomeSent {
		fmt.Fprintf(nt.stderr, "syslet: notification %s to %s %s after %d attempt(s): %v\n", r.Event, r.Target, r.Outcome, r.Attempts, r.Err)
	}
}

// send queues ev; it never blocks.
func (nt *notifier) send(ev notify.Event) {
	if nt != nil {
		nt.n.Send(ev)
	}
}

// close waits for the queued notifications (at most notifyFlush) and
// counts what came of them; it returns the counters for a textfile.
func (nt *notifier) close() map[string]map[string]int {
	if nt == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyFlush)
	defer cancel()
	if err := nt.n.Close(ctx); err != nil {
		fmt.Fprintf(nt.stderr, "syslet: warning: gave up waiting for notifications after %s\n", notifyFlush)
	}
	var counts map[string]map[string]int
	warn, err := drift.Update(nt.root, func(st *drift.State) {
		for _, r := range nt.results {
			st.Count(r)
		}
		counts = st.Deliveries
	})
	if err != nil || warn != "" {
		fmt.Fprintf(nt.stderr, "syslet: warning: notification state: %v %s\n", err, warn)
	}
	return counts
}

// driftCheck is the check mode (--diff --metrics-file): the plan's
// differing units are remembered, told in one drift notification when
// they first appear, and written with the delivery counters as a
// textfile. A check while another apply holds the lock is skipped: its
// plan shows what that apply has not done yet, not drift.
func driftCheck(o applyOptions, out *view.Outcome, nt *notifier, stderr io.Writer) {
	at := time.Now()
	if out != nil && out.Busy != "" {
		fmt.Fprintf(stderr, "syslet: drift check skipped: an apply is in progress (%s)\n", out.Busy)
		nt.close()
		return
	}
	check := drift.Check{At: at}
	if out != nil && out.Plan != nil {
		check.OK, check.Units, check.Probes = true, out.Drift(), out.Probes
	}
	if check.OK {
		var news []notify.DriftUnit
		warn, err := drift.Update(o.req.Root, func(st *drift.State) { news = st.Record(check.Units, at) })
		if err != nil || warn != "" {
			fmt.Fprintf(stderr, "syslet: warning: notification state: %v %s\n", err, warn)
		}
		if len(news) > 0 {
			nt.send(out.DriftEvent(check.Units))
		}
	}
	check.Deliveries = nt.close()
	if err := drift.WriteTextfile(o.metricsFile, check); err != nil {
		fmt.Fprintf(stderr, "syslet: writing %s: %v\n", o.metricsFile, err)
	}
}

type notifyTestOptions struct {
	root  string
	event string
}

func (o *notifyTestOptions) define(f *flags) {
	f.String(&o.root, "root", "/", "read syslet's settings under `DIR` as if it were /")
	f.String(&o.event, "event", string(notify.Test), "send an example event of `KIND` (test, started, succeeded, failed, rolled-back, drift) to every target, whatever its events")
}

// cmdNotifyTest is `syslet notify-test`: one example event to every
// target of /etc/syslet/syslet.json, waited for, and each target's result
// printed; exit 1 when any delivery failed or nothing is configured.
func cmdNotifyTest(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o notifyTestOptions
	f := commandFlags("notify-test")
	o.define(f)
	if err := parseNone(f, args); err != nil {
		return usage(stdout, stderr, "notify-test", err)
	}
	kind := notify.Kind(o.event)
	if _, err := notify.ParseKind(o.event); err != nil && kind != notify.Test {
		return usage(stdout, stderr, "notify-test", fmt.Errorf("%w: --event: %v", errUsage, err))
	}
	if needsRoot(lookup("notify-test"), filepath.Clean(o.root), args, stderr) {
		return exitError
	}
	st, err := settings.Load(o.root)
	if err == nil && len(st.Notify) == 0 {
		err = fmt.Errorf("%w in %s (\"notify\": [...])", notify.ErrNoTargets, settings.Path)
	}
	var ts []*notify.Target
	if err == nil {
		ts, err = notify.Load(st.Notify, "notify")
	}
	if err != nil {
		fmt.Fprintln(stderr, "syslet notify-test:", err)
		return exitError
	}
	var mu sync.Mutex
	var results []notify.Result
	n := notify.New(ts, func(r notify.Result) {
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
	})
	n.Send(testEvent(kind))
	// Every attempt of every target, with its backoff, is bounded.
	ctx, cancel := context.WithTimeout(context.Background(), 2*notify.MaxAttempts*notify.MaxTimeout)
	defer cancel()
	_ = n.Close(ctx)
	code := exitOK
	for _, t := range ts {
		line := fmt.Sprintf("%s: not sent", t)
		for _, r := range results {
			if r.Target != t.Name() {
				continue
			}
			line = fmt.Sprintf("%s: %s after %d attempt(s) in %s", t, r.Outcome, r.Attempts, r.Took.Round(time.Millisecond))
			if r.Err != nil {
				line += ": " + r.Err.Error()
			}
			if r.Outcome != notify.OutcomeSent {
				code = exitError
			}
		}
		fmt.Fprintln(stdout, line)
	}
	return code
}

// testEvent is an example of an event of kind, marked as a test.
func testEvent(kind notify.Kind) notify.Event {
	host, _ := os.Hostname()
	ev := notify.Event{Event: kind, Host: host, Source: notify.Source{Kind: "test", Text: "syslet notify-test"},
		Summary: "a test notification from syslet notify-test: nothing was deployed"}
	switch kind {
	case notify.Failed, notify.RolledBack:
		ev.Error = "an example failure (syslet notify-test)"
		ev.Failing = []notify.Unit{{Unit: "example.service", Reason: "an example reason", Log: []string{"an example log line"}}}
	case notify.Drift:
		ev.Drift = []notify.DriftUnit{{Unit: "example.container", Kind: notify.DriftEdited, Effect: "drift", Reasons: []string{"an example reason"}}}
	}
	return ev
}
