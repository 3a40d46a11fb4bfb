package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/webhookd/config"
)

// notifyTest is `webhookd --notify-test`: one test event to every
// notification target of the configuration, waited for, each target's
// result printed; exit 1 when one failed or none is configured.
func notifyTest(cfg *config.Config, hostname string, stdout, stderr io.Writer) int {
	if len(cfg.NotifyTargets) == 0 {
		fmt.Fprintln(stderr, "webhookd: no notification targets are configured (notify: [...])")
		return exitError
	}
	var mu sync.Mutex
	results := map[string]notify.Result{}
	n := notify.New(cfg.NotifyTargets, func(r notify.Result) {
		mu.Lock()
		results[r.Target] = r
		mu.Unlock()
	})
	n.Send(notify.Event{Event: notify.Test, Host: hostname, Source: notify.Source{Kind: "test", Text: "webhookd --notify-test"},
		Summary: "a test notification from webhookd --notify-test: nothing was deployed"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*notify.MaxAttempts*notify.MaxTimeout)
	defer cancel()
	_ = n.Close(ctx)
	code := exitOK
	for _, t := range cfg.NotifyTargets {
		r, ok := results[t.Name()]
		if !ok {
			fmt.Fprintf(stdout, "%s: not sent\n", t)
			code = exitError
			continue
		}
		line := fmt.Sprintf("%s: %s after %d attempt(s) in %s", t, r.Outcome, r.Attempts, r.Took.Round(time.Millisecond))
		if r.Err != nil {
			line += ": " + r.Err.Error()
			code = exitError
		}
		fmt.Fprintln(stdout, line)
	}
	return code
}
