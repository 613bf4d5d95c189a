package part

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// Whole decoded column chunks in the cache. A scan reads every block of
// the parts it touches, and decoding them (zstd, then DELTA_BYTE_ARRAY
// sort keys and BYTE_STREAM_SPLIT wide integers) was most of a repeated
// scan's cost even though the parts never change. ReadBlockView keeps each
// chunk it decodes in the reader's cache (the one lookups' pages live in,
// so one budget bounds both) and hands the cached chunks themselves to the
// caller, read-only; ReadBlockFixed copies cached chunks out (a memmove
// per slice) but keeps nothing, so the callers decide what is worth the
// memory: a scan of long-lived merged runs uses views, a merge reading
// parts it is about to retire does not.
//
// Entries are keyed like pages, with the first row chunkFirst, which no
// page can start at. They hold exactly one column and are never modified.

// chunkFirst is the first row of a whole-chunk cache key.
const chunkFirst = math.MaxUint32

// chunkKey is the cache key of task t's chunk in block blk.
func (r *Reader) chunkKey(blk int, t *chunkTask) pageKey {
	return pageKey{reader: r.id, block: uint32(blk), col: uint32(t.col), first: chunkFirst}
}

// fromCache copies the chunks of tasks the cache holds into dst and
// returns the tasks left to read.
func (r *Reader) fromCache(blk int, tasks []chunkTask, dst *Data) []chunkTask {
	if r.cache == nil {
		return tasks
	}
	left := tasks[:0]
	for _, t := range tasks {
		// find, not get: a chunk not kept is no miss (below).
		c := r.cache.find(r.chunkKey(blk, &t))
		if c == nil {
			left = append(left, t)
			continue
		}
		if t.fixed < 0 {
			t.v.AppendVector(c.Cols[0])
			continue
		}
		switch t.fixed {
		case fSort:
			dst.Sort.AppendVector(c.Sort)
		case fOrder:
			dst.Order.AppendVector(c.Order)
		case fGroup:
			dst.Group = append(dst.Group, c.Group...)
		case fCommit:
			dst.Commit = append(dst.Commit, c.Commit...)
		case fSeq:
			dst.Seq = append(dst.Seq, c.Seq...)
		case fTomb:
			dst.Tomb = append(dst.Tomb, c.Tomb...)
		case fWonAt:
			dst.WonAt = append(dst.WonAt, c.WonAt...)
		case fEndedAt:
			dst.EndedAt = append(dst.EndedAt, c.EndedAt...)
		case fSupersededBy:
			dst.SupersededBy = append(dst.SupersededBy, c.SupersededBy...)
		case fState:
			dst.State = append(dst.State, c.State...)
		}
	}
	return left
}

// derivedCol is the cache column of a reader's derived vector slot 0; no
// Parquet column index comes near it.
const derivedCol = 1 << 30

// Derived returns the vector a caller computed from block blk and kept
// under slot with KeepDerived (a key column decoded from the sort keys,
// say), or nil when the cache does not hold it. The vector is shared:
// it must not be modified.
func (r *Reader) Derived(blk, slot int) *types.Vector {
	if r.cache == nil {
		return nil
	}
	if c := r.cache.get(pageKey{reader: r.id, block: uint32(blk), col: derivedCol + uint32(slot), first: chunkFirst}); c != nil {
		return c.Cols[0]
	}
	return nil
}

// KeepDerived caches v, computed from block blk alone and never modified
// afterwards, under slot, and returns the vector now cached there (v, or
// one another reader kept first).
func (r *Reader) KeepDerived(blk, slot int, v *types.Vector) *types.Vector {
	if r.cache == nil || r.chunks.thrash.Load() {
		return v
	}
	c := r.cache.put(pageKey{reader: r.id, block: uint32(blk), col: derivedCol + uint32(slot), first: chunkFirst}, &Data{Cols: []*types.Vector{v}}, r.cacheClass())
	return c.Cols[0]
}

// dropReader evicts every entry of reader id; a nil cache holds none.
func (c *Cache) dropReader(id uint64) {
	if c == nil {
		return
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for cls := range s.clocks {
			for j := range s.clocks[cls].ents {
				if e := &s.clocks[cls].ents[j]; e.d != nil && e.key.reader == id {
					s.drop(cls, int32(j))
				}
			}
		}
		s.mu.Unlock()
	}
}

// ReadBlockView is ReadBlockFixed without the copy: dst is filled with the
// cached chunks themselves (those missing are read, decoded and cached
// first, from the block's second view on). A scan that only reads its blocks is spared copying every
// column of every block out of the cache. dst is a view: its slices and
// vectors are shared and must not be modified; a later read into dst, or
// its Reset, drops them rather than reusing them. Without a cache it is
// ReadBlockFixed.
//
// A part whose scans need more than the cache holds would have every
// chunk decoded into fresh memory, kept, and evicted before its next read:
// slower than decoding into reused buffers. So once a chunk ReadBlockView
// kept is found evicted, the reader stops keeping (chunkState) and its
// views are plain ReadBlockFixed reads, which still copy what is cached.
func (r *Reader) ReadBlockView(i int, fixed Fixed, cols []catalog.ColumnID, dst *Data) error {
	if r.cache == nil || r.chunks.thrash.Load() {
		return r.ReadBlockFixed(i, fixed, cols, dst)
	}
	if i < 0 || i >= len(r.blocks) {
		return fmt.Errorf("part: %s: block %d of %d", r.path, i, len(r.blocks))
	}
	kept := r.keptChunks(i)
	if !r.chunks.seen[i].Swap(true) {
		// The first view of a block keeps nothing: a part that merges
		// replace before it is scanned again (the common case while they
		// catch up with ingest) then costs no more than ReadBlockFixed.
		return r.ReadBlockFixed(i, fixed, cols, dst)
	}
	*dst = Data{Rows: r.blocks[i].Rows, IDs: append(dst.IDs[:0], cols...), Cols: dst.Cols[:0], view: true}
	var missFixed Fixed
	var missCols []catalog.ColumnID
	var missAt []int
	for f := range numFixed {
		if fixed&(1<<f) == 0 {
			continue
		}
		c := r.cache.get(pageKey{reader: r.id, block: uint32(i), col: uint32(r.fixed[f]), first: chunkFirst})
		if c == nil {
			if r.evicted(kept, r.fixed[f]) {
				return r.ReadBlockFixed(i, fixed, cols, dst)
			}
			missFixed |= 1 << f
			continue
		}
		shareFixed(dst, c, f)
	}
	for j, id := range cols {
		dst.Cols = append(dst.Cols, nil)
		k, ok := r.colIdx[id]
		if !ok {
			continue // the part does not hold it: nil, as ReadBlockFixed
		}
		if c := r.cache.get(pageKey{reader: r.id, block: uint32(i), col: uint32(r.leaf[k]), first: chunkFirst}); c != nil {
			dst.Cols[j] = c.Cols[0]
			continue
		}
		if r.evicted(kept, r.leaf[k]) {
			return r.ReadBlockFixed(i, fixed, cols, dst)
		}
		missCols = append(missCols, id)
		missAt = append(missAt, j)
	}
	if missFixed == 0 && len(missCols) == 0 {
		return nil
	}
	// The misses are decoded into a Data of their own, which nobody
	// modifies afterwards: the cache and dst share its slices. Only
	// chunks that decoded without error get here, so corruption is never
	// cached.
	m := &Data{}
	if err := r.ReadBlockFixed(i, missFixed, missCols, m); err != nil {
		*dst = Data{}
		return err
	}
	for f := range numFixed {
		if missFixed&(1<<f) != 0 {
			c := &Data{}
			shareFixed(c, m, f)
			shareFixed(dst, r.cache.put(pageKey{reader: r.id, block: uint32(i), col: uint32(r.fixed[f]), first: chunkFirst}, c, r.cacheClass()), f)
			kept.Or(1 << (r.fixed[f] & 63))
		}
	}
	for k, j := range missAt {
		c := &Data{Cols: []*types.Vector{m.Cols[k]}}
		col := r.leaf[r.colIdx[missCols[k]]]
		dst.Cols[j] = r.cache.put(pageKey{reader: r.id, block: uint32(i), col: uint32(col), first: chunkFirst}, c, r.cacheClass()).Cols[0]
		kept.Or(1 << (col & 63))
	}
	return nil
}

// chunkState is what a Reader remembers of the chunks ReadBlockView kept:
// per block, a bit per Parquet column (modulo 64) once its chunk was put
// in the cache, and thrash, set once such a chunk was found evicted.
// seen marks the blocks viewed at least once.
type chunkState struct {
	once   sync.Once
	kept   []atomic.Uint64
	seen   []atomic.Bool
	thrash atomic.Bool
}

// keptChunks returns block i's kept bits.
func (r *Reader) keptChunks(i int) *atomic.Uint64 {
	r.chunks.once.Do(func() {
		r.chunks.kept = make([]atomic.Uint64, len(r.blocks))
		r.chunks.seen = make([]atomic.Bool, len(r.blocks))
	})
	return &r.chunks.kept[i]
}

// Shared reports whether d is a view of the cache (ReadBlockView shared
// its chunks rather than decoding into d's own buffers).
func (d *Data) Shared() bool { return d.view }

// evicted reports whether the chunk of Parquet column col, missing from
// the cache, was kept before (a column sharing its bit may have been: a
// false alarm only stops keeping early), and if so marks the reader as
// thrashing.
func (r *Reader) evicted(kept *atomic.Uint64, col int) bool {
	if kept.Load()&(1<<(col&63)) == 0 {
		return false
	}
	r.chunks.thrash.Store(true)
	return true
}

// shareFixed points dst's fixed column f at src's.
func shareFixed(dst, src *Data, f int) {
	switch f {
	case fSort:
		dst.Sort = src.Sort
	case fOrder:
		dst.Order = src.Order
	case fGroup:
		dst.Group = src.Group
	case fCommit:
		dst.Commit = src.Commit
	case fSeq:
		dst.Seq = src.Seq
	case fTomb:
		dst.Tomb = src.Tomb
	case fWonAt:
		dst.WonAt = src.WonAt
	case fEndedAt:
		dst.EndedAt = src.EndedAt
	case fSupersededBy:
		dst.SupersededBy = src.SupersededBy
	case fState:
		dst.State = src.State
	}
}

// CacheShards is the number of independently budgeted shards of a Cache:
// Lend moves whole multiples of it.
const CacheShards = cacheShards

// Lend moves bytes of the cache's budget to memory its owner keeps under
// the same budget elsewhere (storage's resolved-scan cache), or takes them
// back when negative: each shard's budget changes by bytes/CacheShards,
// and a shard holding more than its new budget evicts down to it at once
// (the memory is in use elsewhere now). A nil cache lends nothing.
func (c *Cache) Lend(bytes int64) {
	if c == nil {
		return
	}
	c.lend(bytes / cacheShards)
}

// lend takes per bytes from every shard's budget (gives them back when
// negative), evicting what no longer fits.
func (c *Cache) lend(per int64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.budget -= per
		s.evict(0, -1)
		s.mu.Unlock()
	}
}
