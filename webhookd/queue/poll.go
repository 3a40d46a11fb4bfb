package queue

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/syslet/syslet/webhookd/clone"
)

// Polling: a repository with repos[].poll fetches its branch on that
// interval and deploys a tip it has not applied yet. The first poll after
// a start waits a random delay within repos[].pollSpread, so a fleet
// started together spreads its fetches over the interval (run keeps the
// timers).

// randomDelay is a delay drawn evenly from [0, max): where in the poll
// interval this host's polls fall until its next start.
func randomDelay(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return rand.N(max)
}

// setNextPoll shows in /status when the next poll is due, d from now.
func (w *Worker) setNextPoll(d time.Duration) {
	w.board.nextPoll(time.Now().Add(d).UTC().Truncate(time.Second))
}

// poll fetches the branch and queues its tip unless that commit is already
// applied, queued, or its apply already failed (a failed fetch is retried). It
// reports whether the fetch went through.
func (w *Worker) poll() (fetched bool) {
	ctx, cancel := context.WithTimeout(context.Background(), clone.FetchTimeout)
	defer cancel()
	tip, err := w.co.Fetch(ctx)
	w.m.Fetches.WithLabelValues(w.cfg.Name, resultOf(err)).Inc()
	w.board.polled(time.Now().UTC(), err)
	if err != nil {
		w.log.Error().Err(err).Msg("poll: fetch failed")
		return false
	}
	st := w.board.read()
	last := st.Last
	done := tip == st.LastApplied || last != nil && last.Commit == tip && last.Reason != FetchFailed
	// A tip already queued (waiting for a window) is not queued again.
	if queued, _ := w.queue.waiting(); !done && queued != tip {
		w.log.Info().Str("commit", tip).Msg("poll: branch moved")
		w.Enqueue(tip, "poll")
	}
	return true
}
