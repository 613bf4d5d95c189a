package storage

import (
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/merge"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/storage/wal"
)

// Stats is what the engine has done since its data directory was created
// and what it holds now, for /metrics (internal/metrics). It is computed
// from the published state when asked, so the commit path carries no
// counters of its own: a scrape every few seconds costs one pass over the
// commit list and the shards, a commit costs nothing more.
type Stats struct {
	// Commit is the newest published commit; commits are numbered from 1
	// without gaps among applied ones, so it is also their count.
	Commit uint64
	// RowsWritten sums the rows of commits 1..Commit (system.commits.rows).
	RowsWritten uint64
	// Merges counts the merges published since Open.
	Merges int64
	// WAL is the log writer's counters since Open (fsyncs, their
	// latencies, bytes); zero once the engine is closed.
	WAL wal.Stats
	// Shards lists every shard of every table, by table name then shard.
	Shards []ShardStats
	// PageCache is the page cache's counters: pages and bytes held, hits,
	// misses, and pages put in it from parts as they were written
	// (Options.WarmWrites and folds) rather than decoded.
	PageCache part.CacheStats
	// Conflicts counts the commits refused since Open because a later
	// commit wrote a key they read (ErrConflict), and Exclusives the
	// times a statement held every other commit off (Engine.Exclusive).
	Conflicts, Exclusives int64
}

// ShardStats is one shard's size and merge state.
type ShardStats struct {
	Table string
	Shard uint32
	// Parts is the number of immutable parts the shard reads.
	Parts int
	// MemtableBytes is what its memtable holds, not yet in a part.
	MemtableBytes uint64
	// MergeDue says the compaction policy (merge.Choose) would merge now:
	// the merge backlog is the number of shards where it is true.
	MergeDue bool
}

// Stats returns the engine's counters and per-shard state now.
func (e *Engine) Stats() Stats {
	st := e.cur.Load()
	// The cache before the merge count: a fold (which warms) finishing
	// between the two then shows as a merge, never as pages warmed with
	// no merge.
	pages := e.pages.Stats()
	s := Stats{Commit: st.commit, Merges: e.merges.Load(), PageCache: pages, Conflicts: e.conflicts.Load(), Exclusives: e.exclusives.Load()}
	for i := range st.commits {
		s.RowsWritten += st.commits[i].Rows
	}
	e.pipe.Lock()
	if !e.pipe.closed && e.wal != nil {
		s.WAL = e.wal.Stats()
	}
	e.pipe.Unlock()
	for id, td := range st.tables {
		t, ok := st.cat.TableByID(id)
		if !ok {
			continue
		}
		set := merge.SettingsOf(st.cat.Bound(t, catalog.RoleCompaction))
		for _, sd := range td.shards {
			ss := ShardStats{Table: t.Name, Shard: sd.num, Parts: len(sd.parts), MemtableBytes: sd.memBytes()}
			if len(sd.parts) > 0 {
				mps := make([]manifest.Part, len(sd.parts))
				for i, pf := range sd.parts {
					mps[i] = pf.man
				}
				_, ss.MergeDue = merge.Choose(mps, set)
			}
			s.Shards = append(s.Shards, ss)
		}
	}
	slices.SortFunc(s.Shards, func(a, b ShardStats) int {
		if a.Table != b.Table {
			if a.Table < b.Table {
				return -1
			}
			return 1
		}
		return int(a.Shard) - int(b.Shard)
	})
	return s
}
