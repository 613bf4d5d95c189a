package storage

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
)

// Prewarming the deltas an idle shard keeps. A fold (merge.Settles)
// leaves an idle shard in its final runs and warms the current run it
// writes (warmMerge), but a shard whose newer runs hold less than
// 1/SettleRatio of its oldest run's bytes is not folded: it keeps a few
// small delta runs, and the lookups of the keys they touch (4 % of them
// at bench/'s medium scale) decode their pages cold, ~6 pages each, which
// is what the settled lookups' p99 was made of. Once the policy wants
// nothing and the engine is idle, the merger therefore decodes those
// deltas' pages into the page cache, as their lookups would, once per
// part. What it decodes is bounded by a share of the cache per pass, and
// parts beyond it are not tried again: deltas that large are due a fold
// soon anyway.

// The current runs are prewarmed too, once per part. A fold warms the
// run it writes, but a fold that ran during a pause in an ingest leaves
// the ingest's later flushes and merges to evict those pages, and the
// delta they end in is then too small to be folded again: at bench/'s
// medium scale, three runs of about sixteen so found R1 decoding 2.2
// pages per lookup, p50 50 µs instead of 9; prewarming halved that
// (docs/benchmarks.md, 2026-12-06, seventh session). After a restart the
// cache is cold the same way. A run's pages still cached cost the pass a
// probe each (Reader.Prewarm).

// prewarmRunFixed are the fixed columns lookups of a current run read:
// groups, commits, and the validity interval of lookups AS OF a commit.
const prewarmRunFixed = part.FixGroup | part.FixCommit | part.FixWonAt | part.FixEndedAt

// prewarmedBytes counts the bytes of pages prewarm passes put in page
// caches, for tests.
var prewarmedBytes atomic.Int64

// prewarmShare is the share of the page cache one prewarm pass may fill
// with deltas' pages, and again with current runs': both are the cache's
// current class, which eviction holds to about half the cache while
// history pages are cached, so a larger share would evict what the same
// pass had just warmed.
const prewarmShare = 4

// unwarmed lists the delta parts, then the current runs, of keyed tables
// that no prewarm pass has taken yet, in the published state.
func (e *Engine) unwarmed() (deltas, runs []*partFile) {
	st := e.cur.Load()
	for id, td := range st.tables {
		t, ok := st.cat.TableByID(id)
		if !ok || !t.Keyed() {
			continue
		}
		for _, sd := range td.shards {
			for _, pf := range sd.parts {
				if pf.prewarmed.Load() {
					continue
				}
				switch pf.man.Kind {
				case manifest.KindDelta:
					deltas = append(deltas, pf)
				case manifest.KindCurrent:
					runs = append(runs, pf)
				}
			}
		}
	}
	return deltas, runs
}

// prewarmLoop decodes the pages lookups read of the delta parts and
// current runs not yet prewarmed into the page cache, when idle says the
// engine is idle (it is asked only when there is something to do, so that
// an ingest's passes arm no timer for nothing). paced passes give way to
// foreground reads.
func (e *Engine) prewarmLoop(ctx context.Context, paced bool, idle func() bool) error {
	if e.pages == nil {
		return nil
	}
	deltas, runs := e.unwarmed()
	if len(deltas)+len(runs) == 0 || !idle() {
		return nil
	}
	var pace func()
	if paced {
		pace = e.paceMerge
	}
	var d part.Data
	start := time.Now()
	var dn, rn int
	var dBytes, rBytes int64
	defer func() {
		e.log.Debug("storage: prewarmed", "deltas", dn, "runs", rn, "bytes", dBytes+rBytes, "took", time.Since(start))
	}()
	var err error
	if dn, dBytes, err = e.prewarmParts(ctx, deltas, lightFixed, e.opts.PageCacheBytes/prewarmShare, &d, pace, idle); err != nil {
		return err
	}
	rn, rBytes, err = e.prewarmParts(ctx, runs, prewarmRunFixed, e.opts.PageCacheBytes/prewarmShare, &d, pace, idle)
	return err
}

// prewarmParts decodes the pages of todo that lookups read (the fixed
// columns fixed and every table column) into the page cache, until it has
// added budget bytes; each part is taken once, the ones past the budget
// included. It stops, leaving the parts not taken for a later pass, once
// idle says the engine is no longer idle: the pass holds the merge lock,
// which an ingest's merges wait for. It returns how many parts it read
// and the bytes it added to the cache.
func (e *Engine) prewarmParts(ctx context.Context, todo []*partFile, fixed part.Fixed, budget int64, d *part.Data, pace func(), idle func() bool) (read int, total int64, err error) {
	for _, pf := range todo {
		if err := ctx.Err(); err != nil {
			return read, total, err
		}
		if !idle() {
			return read, total, nil
		}
		if !pf.prewarmed.CompareAndSwap(false, true) || budget <= 0 {
			continue
		}
		// Held while read: a DROP TABLE may retire it meanwhile.
		if !pf.refs.acquire() {
			continue
		}
		meta := pf.r.Meta()
		ids := make([]catalog.ColumnID, len(meta.Columns))
		for i, c := range meta.Columns {
			ids[i] = c.ID
		}
		added, err := pf.r.Prewarm(fixed, ids, budget, d, pace)
		pf.refs.release()
		if err != nil {
			// A corrupt page is reported by the lookup that reads it, as
			// if nothing had been prewarmed.
			e.log.Warn("storage: prewarm failed", "part", pf.refs.path, "err", err)
			continue
		}
		budget -= added
		prewarmedBytes.Add(added)
		read++
		total += added
	}
	return read, total, nil
}
