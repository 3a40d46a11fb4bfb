package queue

import (
	"context"
	"errors"

	"github.com/syslet/syslet/webhookd/clone"
	"github.com/syslet/syslet/webhookd/metrics"
)

// repack rolls up the clone's packs (clone.Checkout.Repack), within clone.RepackTimeout;
// stopping webhookd or a push arriving stops it, leaving the clone as it
// was (the next one starts over).
func (w *Worker) repack(stop <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), clone.RepackTimeout)
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		defer cancel()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-w.wake:
				if _, n := w.queue.waiting(); n > 0 {
					w.nudge() // the wake is the run loop's: hand it back
					return
				}
				// A wake whose push was deployed already: nothing waits.
			}
		}
	}()
	rep, err := w.co.Repack(ctx)
	cancel()
	<-watched
	w.m.Packs.WithLabelValues(w.cfg.Name).Set(float64(rep.After))
	switch {
	case err != nil && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		w.m.Repacks.WithLabelValues(w.cfg.Name, metrics.RepackStopped).Inc()
		w.log.Info().Int("packs", rep.Packs).Msg("repack stopped for a push or a shutdown; the clone is as it was")
	case err != nil:
		w.m.Repacks.WithLabelValues(w.cfg.Name, metrics.RepackFailed).Inc()
		w.log.Warn().Err(err).Int("packs", rep.Packs).Msg("repack failed; the clone is as it was")
	case rep.Merged > 0:
		w.m.Repacks.WithLabelValues(w.cfg.Name, metrics.RepackMerged).Inc()
		w.log.Info().Int("merged", rep.Merged).Int64("bytes", rep.Bytes).Int("packs", rep.After).
			Float64("seconds", rep.Took.Seconds()).Msg("repacked the clone")
	}
}
