package storage

import (
	"context"
	"errors"
	"time"
)

// background is the engine's merger goroutine. A flush kicks it; it then
// runs the policy over every shard and merges until nothing is due. It
// never holds a lock that commits or reads wait on while it merges: the
// apply lock only for the manifest edit and the publication of each merge
// (mergejob.go). Kicks that arrive while it merges coalesce into one more
// pass, so a burst of flushes costs one look at the policy afterwards.
// Once the policy wants nothing, a shard may be due a fold into its final
// runs (merge.Settles); that waits until no commit has arrived for
// Options.SettleAfter, so folds do not compete with an ingest, and a
// timer brings the merger back when that time has passed.
type background struct {
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// startBackground starts the merger unless Options disable it; it runs
// after recovery, so replay never races a merge.
func (e *Engine) startBackground() {
	if e.opts.NoBackgroundMerges {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &background{kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	e.bg = b
	go e.runBackground(ctx, b)
	// Parts left by an earlier run may already be due.
	b.poke()
}

// poke asks for one more pass without waiting.
func (b *background) poke() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// kickMerges tells the background merger that parts changed. Safe to call
// with the merger disabled.
func (e *Engine) kickMerges() {
	if e.bg != nil {
		e.bg.poke()
	}
}

func (e *Engine) runBackground(ctx context.Context, b *background) {
	defer close(b.done)
	var (
		timer *time.Timer
		wake  <-chan time.Time
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		case <-wake:
			wake = nil
		}
		// deferred is how long until the engine is idle, when a fold is
		// due but commits came too recently.
		var deferred time.Duration
		settle := func() bool {
			if e.opts.SettleAfter < 0 {
				return false
			}
			since := time.Since(e.opened) - time.Duration(e.lastCommit.Load())
			if since >= e.opts.SettleAfter {
				return true
			}
			deferred = e.opts.SettleAfter - since
			return false
		}
		e.mergeMu.Lock()
		err := e.mergeLoop(ctx, false, true, settle)
		e.mergeMu.Unlock()
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
			// The inputs stay live and the next flush retries; an engine
			// failure (manifest) is already reported by fail.
			e.log.Warn("storage: background merge failed", "err", err)
			if errors.Is(err, ErrFailed) {
				return
			}
		}
		if err == nil {
			// Retention expires data as time passes, with no flush to
			// kick the merger: look again when a shard may be due.
			if w := e.expiryWake(); w > 0 && (deferred <= 0 || w < deferred) {
				deferred = w
			}
		}
		if deferred > 0 && err == nil {
			// Look again once the engine may be idle; a commit meanwhile
			// only pushes the fold back by another look.
			deferred = max(deferred, settleRecheck)
			if timer == nil {
				timer = time.NewTimer(deferred)
			} else {
				timer.Reset(deferred)
			}
			wake = timer.C
		}
	}
}

// settleRecheck is the shortest wait before the merger looks again at a
// fold it put off, so a steady trickle of commits costs few looks.
const settleRecheck = 10 * time.Millisecond

// stopBackground stops the merger and waits for the merge in progress,
// which finishes first (merges are not interruptible, and bounded).
func (e *Engine) stopBackground() {
	if e.bg == nil {
		return
	}
	// e.bg stays set: a late kick only fills the buffered channel.
	e.stopping.Store(true)
	e.bg.cancel()
	<-e.bg.done
}
