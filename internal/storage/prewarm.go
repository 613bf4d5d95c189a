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

// History runs come last, into the room the cache has left: a lookup AS
// OF a past commit reads, of the history run, the sort keys, groups and
// validity intervals of its key's rows (and _state and _commit, which the
// intervals are stored against) besides the columns it asks for, ~9 pages
// a lookup, and at bench/'s medium scale ~4 of them were cold, ~40 µs
// each. Those columns of the whole history take about a quarter of what
// its pages of every column would, so an idle engine decodes them into
// the room the cache has free when the pass begins, at most a quarter of
// it (not evicting other pages for them: they are the likeliest of all to
// go unread), and a lookup AS OF a past commit then decodes cold little
// more than the table columns it asks for. The room is free when the pass
// begins: current-run pages a later lookup decodes may then find the
// cache full, and while the history's pages hold at most half of it
// (cache.go's classes) such a page evicts another current one, not them.
// A history run is one part, and the pass checks for commits between
// parts: a commit arriving while it decodes one is not held up (commits
// take no merge lock), but the merges its flush kicks wait for the merge
// lock until the part is done (a few hundred pages).

// prewarmHistoryFixed are the fixed columns lookups of a history run
// read (lookupRun's interval path).
const prewarmHistoryFixed = part.FixGroup | part.FixWonAt | part.FixEndedAt

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

// unwarmed lists the delta parts, the current runs and the history runs
// of keyed tables that no prewarm pass has taken yet, in the published
// state.
func (e *Engine) unwarmed() (deltas, runs, hists []*partFile) {
	st := e.cur.Load()
	for id, td := range st.tables {
		t, ok := st.cat.TableByID(id)
		if !ok || !t.Keyed() {
			continue
		}
		for _, sd := range td.shards {
			for _, pf := range sd.parts {
				// A part moved to an object store is cold by choice: not
				// read back whole to warm the cache (docs/tiering.md).
				if pf.prewarmed.Load() || !pf.man.OnDisk() {
					continue
				}
				switch pf.man.Kind {
				case manifest.KindDelta:
					deltas = append(deltas, pf)
				case manifest.KindCurrent:
					runs = append(runs, pf)
				case manifest.KindHistory:
					hists = append(hists, pf)
				}
			}
		}
	}
	return deltas, runs, hists
}

// prewarmLoop decodes the pages lookups read of the delta parts, current
// runs and history runs not yet prewarmed into the page cache (of history
// runs the columns prewarmHistoryFixed and the sort keys only, into the
// room free when it gets to them), when idle says the
// engine is idle (it is asked only when there is something to do, so that
// an ingest's passes arm no timer for nothing). paced passes give way to
// foreground reads.
func (e *Engine) prewarmLoop(ctx context.Context, paced bool, idle func() bool) error {
	if e.pages == nil {
		return nil
	}
	deltas, runs, hists := e.unwarmed()
	if len(deltas)+len(runs)+len(hists) == 0 || !idle() {
		return nil
	}
	var pace func()
	if paced {
		pace = e.paceMerge
	}
	var d part.Data
	start := time.Now()
	var dn, rn, hn int
	var dBytes, rBytes, hBytes int64
	defer func() {
		e.log.Debug("storage: prewarmed", "deltas", dn, "runs", rn, "histories", hn, "bytes", dBytes+rBytes+hBytes, "took", time.Since(start))
	}()
	var err error
	var more bool
	if dn, dBytes, more, err = e.prewarmParts(ctx, deltas, lightFixed, true, e.opts.PageCacheBytes/prewarmShare, &d, pace, idle); err != nil || !more {
		return err
	}
	if rn, rBytes, more, err = e.prewarmParts(ctx, runs, prewarmRunFixed, true, e.opts.PageCacheBytes/prewarmShare, &d, pace, idle); err != nil || !more {
		return err
	}
	hn, hBytes, _, err = e.prewarmParts(ctx, hists, prewarmHistoryFixed, false, min(e.opts.PageCacheBytes/prewarmShare, e.pages.Free()), &d, pace, idle)
	return err
}

// prewarmParts decodes the pages of todo that lookups read (the fixed
// columns fixed, and every table column when cols) into the page cache, until it has
// added budget bytes; each part is taken once, the ones past the budget
// included. It stops, leaving the parts not taken for a later pass, once
// idle says the engine is no longer idle: the pass holds the merge lock,
// which an ingest's merges wait for. It returns how many parts it read,
// the bytes it added to the cache, and whether the engine was still idle
// (false once the pass stopped for it).
func (e *Engine) prewarmParts(ctx context.Context, todo []*partFile, fixed part.Fixed, cols bool, budget int64, d *part.Data, pace func(), idle func() bool) (read int, total int64, more bool, err error) {
	for _, pf := range todo {
		if err := ctx.Err(); err != nil {
			return read, total, false, err
		}
		if !idle() {
			return read, total, false, nil
		}
		if !pf.prewarmed.CompareAndSwap(false, true) || budget <= 0 {
			continue
		}
		// Held while read: a DROP TABLE may retire it meanwhile.
		if !pf.refs.acquire() {
			continue
		}
		var ids []catalog.ColumnID
		if cols {
			for _, c := range pf.r.Meta().Columns {
				ids = append(ids, c.ID)
			}
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
	return read, total, true, nil
}
