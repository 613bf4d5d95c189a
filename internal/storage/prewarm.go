package storage

import (
	"context"
	"sync/atomic"

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

// prewarmedBytes counts the bytes of pages prewarm passes put in page
// caches, for tests.
var prewarmedBytes atomic.Int64

// prewarmShare is the share of the page cache one prewarm pass may fill.
const prewarmShare = 4

// unwarmedDeltas lists the delta parts of keyed tables that no prewarm
// pass has taken yet, in the published state.
func (e *Engine) unwarmedDeltas() []*partFile {
	st := e.cur.Load()
	var out []*partFile
	for id, td := range st.tables {
		t, ok := st.cat.TableByID(id)
		if !ok || !t.Keyed() {
			continue
		}
		for _, sd := range td.shards {
			for _, pf := range sd.parts {
				if pf.man.Kind == manifest.KindDelta && !pf.prewarmed.Load() {
					out = append(out, pf)
				}
			}
		}
	}
	return out
}

// prewarmLoop decodes the pages lookups read of the delta parts not yet
// prewarmed into the page cache, when idle says the engine is idle (it is
// asked only when there is something to do, so that an ingest's passes
// arm no timer for nothing). paced passes give way to foreground reads.
func (e *Engine) prewarmLoop(ctx context.Context, paced bool, idle func() bool) error {
	if e.pages == nil {
		return nil
	}
	todo := e.unwarmedDeltas()
	if len(todo) == 0 || !idle() {
		return nil
	}
	var pace func()
	if paced {
		pace = e.paceMerge
	}
	budget := e.opts.PageCacheBytes / prewarmShare
	var d part.Data
	for _, pf := range todo {
		if err := ctx.Err(); err != nil {
			return err
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
		added, err := pf.r.Prewarm(lightFixed, ids, budget, &d, pace)
		pf.refs.release()
		if err != nil {
			// A corrupt page is reported by the lookup that reads it, as
			// if nothing had been prewarmed.
			e.log.Warn("storage: prewarm failed", "part", pf.refs.path, "err", err)
			continue
		}
		budget -= added
		prewarmedBytes.Add(added)
	}
	return nil
}
