package storage

import (
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/types"
)

// A commit waits for its WAL fsync (about a millisecond or more) before it
// may touch the memtables: applying a version changes what the version
// rules decided about older ones, which must not happen for a commit that
// may never become durable (R5.6; a failed fsync leaves nothing behind).
// The lookups that precede the changes do not change anything, though, so
// Commit runs them while the fsync is under way, on the core the waiting
// committer leaves idle: the rows' shards, the sort keys' encodings, the
// hash probes for the keys' entries and the encodings of the rows'
// ordering values and payloads (into a new block the memtable keeps). After
// the fsync applyWrite uses what still holds:
//
//   - the placement of rows in shards, if the table has the same shards
//     with the same memtables (a flush, merge or split installs new ones);
//   - a found entry, if its memtable is the same: entries are never removed
//     from a memtable (skiplist.go), so it is still the key's entry;
//   - a key found missing, if the memtable has had no key inserted since
//     (its skip list's count is the same); otherwise it is looked up again;
//   - the encoded values, if read from the same columns for the same rows.
//
// Reading each found entry's groups and winner as well (to have them in
// the cache for the apply) was tried and dropped: under the flush and
// merges beside it the lines were mostly evicted again by the apply, and
// it doubled the prepare to more than an fsync lasts.
//
// Nothing here takes the memtable's write lock or writes to shared state;
// the probes take its read lock only if it is free (TryRLock), so a
// prepare never delays another commit's apply: it is skipped instead.

// commitPrep is what prepare found for each write of a commit.
type commitPrep struct {
	writes []writePrep
}

// writePrep is one write's placement and, per shard, its keys' entries.
type writePrep struct {
	ok       bool       // prepared; false for writes prepare leaves alone
	td       *tableData // the table data it was prepared against
	mems     []*keyedMem
	perShard [][]int
	shards   []shardPrep
	kw       keyedWrite // its ordPos and payPos
}

// shardPrep is the looked-up entries of one shard's rows of a write.
type shardPrep struct {
	m       *keyedMem // nil when not prepared (the memtable was busy)
	n       int       // m.list.n at the lookups
	keyPos  []int     // batch positions of the key columns the keys encode
	keys    []byte
	offs    []int // len(ents)+1 bounds of the keys
	ents    []*keyEntry
	missing []int // indexes of rows whose key m lacked

	// The rows' ordering values and payloads, encoded as applyVersions
	// would (ordPos and payPos are the positions they were read from):
	// row i's segments are segs[i*k : i*k+k+1] with k = len(ordPos)+1,
	// its ordering values first, then its payload. vals is a fresh block
	// that the memtable keeps once the apply uses it (as it would keep
	// its arena's copies); sizes are the bytes per payload column.
	ordPos, payPos []int
	vals           []byte
	segs           []int
	sizes          []uint64
	rowBytes       int // the previous block's bytes per row
}

// prepPool recycles commitPreps, so that their slices keep their memory
// from one commit to the next.
var prepPool = sync.Pool{New: func() any { return new(commitPrep) }}

// prepare looks up the entries of ws's keyed version writes in the current
// memtables; see above. It returns nil when there is nothing to prepare.
func (e *Engine) prepare(ws []Write) *commitPrep {
	if len(ws) == 0 {
		return nil
	}
	st := e.cur.Load()
	var cp *commitPrep
	var scratch []byte
	for i := range ws {
		w := &ws[i]
		if w.Kind != WriteVersion || w.Batch == nil || w.Batch.Rows == 0 {
			continue
		}
		td := st.tables[w.Table]
		t, ok := st.cat.TableByID(w.Table)
		if td == nil || !ok || !td.keyed || !routed(td, t) {
			continue
		}
		if cp == nil {
			cp = prepPool.Get().(*commitPrep)
			cp.writes = slices.Grow(cp.writes[:0], len(ws))[:len(ws)]
			for j := range cp.writes {
				cp.writes[j].ok = false
			}
		}
		wp := &cp.writes[i]
		perShard, err := routeRows(td, t, w, 0, &scratch)
		if err != nil {
			continue // the apply reports it
		}
		g, ok := t.GroupByID(w.Group)
		if !ok {
			continue
		}
		if err := versionPositions(t, g, w, 0, &wp.kw); err != nil {
			continue
		}
		wp.td, wp.perShard = td, perShard
		wp.mems = wp.mems[:0]
		for _, sd := range td.shards {
			wp.mems = append(wp.mems, sd.keyed)
		}
		if cap(wp.shards) < len(td.shards) {
			wp.shards = make([]shardPrep, len(td.shards))
		}
		wp.shards = wp.shards[:len(td.shards)]
		var prev *writePrep // the previous prepared write of the same table
		for j := i - 1; j >= 0; j-- {
			if cp.writes[j].ok && cp.writes[j].td == td {
				prev = &cp.writes[j]
				break
			}
		}
		for s, rs := range perShard {
			sp := &wp.shards[s]
			sp.m = nil
			if len(rs) == 0 {
				continue
			}
			var pk []int
			if pk, err = keyPositions(t, w, 0, sp.keyPos[:0]); err != nil {
				break
			}
			sp.keyPos = pk
			var psp *shardPrep
			if prev != nil && prev.shards[s].m == td.shards[s].keyed {
				psp = &prev.shards[s]
			}
			td.shards[s].keyed.lookup(w.Batch, rs, sp, psp)
			sp.encode(w.Batch, rs, &wp.kw)
		}
		wp.ok = err == nil
	}
	return cp
}

// releasePrep returns cp to the pool once its commit is applied; its
// entries must not keep a dropped memtable alive.
func (e *Engine) releasePrep(cp *commitPrep) {
	if cp == nil {
		return
	}
	for i := range cp.writes {
		wp := &cp.writes[i]
		wp.td = nil
		clear(wp.mems)
		for s := range wp.shards {
			sp := &wp.shards[s]
			sp.m, sp.vals = nil, nil
			clear(sp.ents)
		}
		wp.ok = false
	}
	prepPool.Put(cp)
}

// write returns the prepare of write i, nil if there is none.
func (cp *commitPrep) write(i int) *writePrep {
	if cp == nil || i >= len(cp.writes) || !cp.writes[i].ok {
		return nil
	}
	return &cp.writes[i]
}

// valid reports whether wp's placement of rows holds for td: the table has
// the same shards, with the same memtables.
func (wp *writePrep) valid(td *tableData) bool {
	if wp == nil || len(td.shards) != len(wp.mems) {
		return false
	}
	for s, sd := range td.shards {
		if sd.keyed != wp.mems[s] {
			return false
		}
	}
	return true
}

// shard returns the prepare of shard s's rows, nil if there is none.
func (wp *writePrep) shard(s int) *shardPrep {
	if wp == nil || s >= len(wp.shards) || wp.shards[s].m == nil {
		return nil
	}
	return &wp.shards[s]
}

// lookup fills sp with the keys of rows and their entries in m, nil for
// the keys m lacks, unless m's lock is taken (then sp.m stays nil). psp, if
// not nil, is the previous write's prepare of the same rows (another group
// of the same statement): a row whose key is the same there takes its
// entry, found or not, without a probe.
func (m *keyedMem) lookup(b *types.Batch, rows []int, sp, psp *shardPrep) {
	if !m.mu.TryRLock() {
		return
	}
	defer m.mu.RUnlock()
	sp.keys, sp.offs, sp.ents, sp.missing = sp.keys[:0], sp.offs[:0], sp.ents[:0], sp.missing[:0]
	if psp != nil && !slices.Equal(psp.keyPos, sp.keyPos) {
		psp = nil
	}
	for i, r := range rows {
		start := len(sp.keys)
		for _, p := range sp.keyPos {
			sp.keys = types.AppendKeyAt(sp.keys, b.Cols[p], r)
		}
		sp.offs = append(sp.offs, start)
		k := sp.keys[start:]
		var e *keyEntry
		if psp != nil && i < len(psp.ents) && string(psp.keys[psp.offs[i]:psp.offs[i+1]]) == string(k) {
			e = psp.ents[i]
		} else {
			e = m.list.get(k)
		}
		if e == nil {
			sp.missing = append(sp.missing, i)
		}
		sp.ents = append(sp.ents, e)
	}
	sp.offs = append(sp.offs, len(sp.keys))
	sp.m, sp.n = m, m.list.n
}

// encode fills sp's vals, segs and sizes with rows' ordering values and
// payloads, in a new block, if lookup prepared sp.
func (sp *shardPrep) encode(b *types.Batch, rows []int, kw *keyedWrite) {
	if sp.m == nil {
		return
	}
	sp.ordPos = append(sp.ordPos[:0], kw.ordPos...)
	sp.payPos = append(sp.payPos[:0], kw.payPos...)
	sp.sizes = sp.sizes[:0]
	for range kw.payPos {
		sp.sizes = append(sp.sizes, 0)
	}
	// Sized by the previous block's bytes per row: one allocation, not
	// a doubling and copying of a block of hundreds of KiB.
	hint := len(rows) * 64
	if sp.rowBytes > 0 {
		hint = len(rows) * (sp.rowBytes + sp.rowBytes/8)
	}
	vals := make([]byte, 0, hint)
	sp.segs = append(sp.segs[:0], 0)
	for _, r := range rows {
		for _, p := range kw.ordPos {
			vals = types.AppendKeyAt(vals, b.Cols[p], r)
			sp.segs = append(sp.segs, len(vals))
		}
		for i, p := range kw.payPos {
			n := len(vals)
			vals = types.AppendBinaryAt(vals, b.Cols[p], r)
			sp.sizes[i] += uint64(len(vals) - n)
		}
		sp.segs = append(sp.segs, len(vals))
	}
	sp.vals = vals
	if len(rows) > 0 {
		sp.rowBytes = len(vals) / len(rows)
	}
}

// encoded returns the encodings encode made of rows for kw, nil if there
// are none or they were read from other positions than kw's.
func (sp *shardPrep) encoded(m *keyedMem, rows []int, kw *keyedWrite) *shardPrep {
	if sp == nil || sp.m != m || sp.vals == nil || len(sp.segs) != len(rows)*(len(kw.ordPos)+1)+1 ||
		!slices.Equal(sp.ordPos, kw.ordPos) || !slices.Equal(sp.payPos, kw.payPos) {
		return nil
	}
	return sp
}
