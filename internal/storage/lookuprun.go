package storage

import (
	"bytes"
	"sort"
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/merge"
	"github.com/strata-db/strata/internal/storage/part"
)

// Lookups of a merged run read what the fast scans read (runscan.go), for
// one key. A lookup through lookupParts (lookuplight.go) gathers the key's
// inputs from every source (the commit, seq, tomb and ordering values of
// every row, payloads only where resolution needs them) and resolves them
// afresh. Of a
// shard laid out as a run, with no newer source holding the key, the
// answer is already stored:
//
//   - at n ≥ runMax, the key's current-run rows are its winners (as
//     scanCurrent emits an untouched key);
//   - at n < runMax, nothing newer is visible, and the winner of each
//     group is the one row of the current or history run whose interval
//     holds n, WonAt ≤ n < EndedAt (as scanInterval reads it).
//
// So lookupRun reads, of the one block of each run that holds the key,
// only the pages of the group (commit, for _commit or a column added or
// dropped since the table was created) and interval columns and of the
// columns asked for: at n ≥ runMax three pages where lookupParts read
// seven, and before it (bench/ R4) five per run where it read ten, the
// history run's being larger pages (HistoryPageRows). A cold page (zstd, checksums,
// Parquet decoding) is what a slow lookup spends its time on, and fewer
// pages per lookup also leave more of the cache to other keys. The row is
// built by runScan.materialize, the fast scans' own, so columns added
// after a row was written, dropped columns, narrower stored types and
// _commit read as they do there.

// lookupRun answers a lookup of key at n from a shard laid out as a merged
// run (classifyRun), when no newer source holds the key at n; it appends
// the row, if the key has one, to rd.batch. It reports false (having read
// nothing into rd.batch) when the shard or the read does not qualify: the
// caller then takes lookupParts.
func (rd *reader) lookupRun(sd *shardData, key []byte, n uint64) (handled, found bool, err error) {
	if rd.slow || rd.versions {
		return false, false, nil
	}
	rs, ok := rd.classifyRun(sd)
	if !ok {
		return false, false, nil
	}
	interval := n < rs.runMax
	if interval && rd.t.Mode != catalog.ModeVersioned {
		return false, false, nil
	}
	if rd.fast == nil {
		fp, ok := rd.newFastPlan()
		if !ok {
			return false, false, nil
		}
		rd.fast = fp
	}
	if !interval {
		// Newer sources hold only commits after runMax: invisible before
		// it. At or after it, a key they hold is resolved from its inputs.
		touched, err := rd.newerHolds(rs.newer, sd, key, n)
		if err != nil || touched {
			return false, false, err
		}
	}
	s := rd.lookupRunScan(rs, n)
	// Commits are read only for _commit and for columns some rows may
	// predate or outlive (materialize compares them with the row's).
	withCommit := rd.commit
	for oi := range rd.plans {
		if c, _ := rd.t.AnyColumn(rd.plans[oi].id); c != nil && (rd.plans[oi].late || c.DroppedCommit != 0) {
			withCommit = true
		}
	}
	fixed := part.FixGroup
	if withCommit {
		fixed |= part.FixCommit
	}
	if interval {
		fixed |= part.FixWonAt | part.FixEndedAt
	}
	runs := [2][]*partFile{rs.cur, nil}
	if interval {
		runs[1] = rs.hist
	}
	bufs := runLookupPool.Get().(*runLookupBufs)
	defer runLookupPool.Put(bufs)
	for src, parts := range runs {
		d := &bufs.d[src]
		ok, err := rd.seekRun(parts, key, n, fixed, d)
		if err != nil {
			return true, false, err
		}
		if !ok {
			continue
		}
		s.srcs[src] = d
		tag := int32(0)
		if src == 1 {
			tag = srcB
		}
		for i := 0; i < d.Rows; i++ {
			if interval && (d.WonAt[i] > n || n >= d.EndedAt[i]) {
				continue
			}
			if !found {
				s.addRow(int32(i) | tag)
				found = true
			}
			if withCommit {
				s.setGroup(d, i, int32(i)|tag)
			} else if sl := s.fp.slot(d.Group[i]); sl >= 0 {
				s.gidx[sl][0] = int32(i) | tag
			}
		}
	}
	if interval {
		rd.tracePath(PathInterval)
	} else {
		rd.tracePath(PathRun)
	}
	if !found {
		return true, false, nil
	}
	// One row: the batch must not be handed on (Lookup returns its row).
	keep := rd.batchCap
	rd.batchCap = rd.batch.Rows + 2
	err = s.materialize()
	rd.batchCap = keep
	return true, err == nil, err
}

// lookupRunScan returns the runScan of one lookupRun: the reader's own,
// reset, when it was made for the reader's fast plan. A pooled reader
// serves lookup after lookup of one table, and a fresh runScan per lookup
// was several allocations and a large clear.
func (rd *reader) lookupRunScan(rs runShard, n uint64) *runScan {
	s := rd.runLookup
	if s == nil || s.fp != rd.fast {
		s = newRunScan(rd, rd.fast, rs, nil, n, nil)
		rd.runLookup = s
		return s
	}
	gidx := s.gidx
	for sl := range gidx {
		gidx[sl] = gidx[sl][:0]
	}
	*s = runScan{rd: rd, fp: rd.fast, rs: rs, n: n, gidx: gidx, commits: s.commits[:0], keyRef: s.keyRef[:0], colIdx: s.colIdx[:0]}
	for oi := range rd.plans {
		if k := rd.plans[oi].keyIdx; k >= 0 {
			rd.fast.keys.out[k] = nil
		}
	}
	return s
}

// classifyRun is classifyRun of sd, kept for the next lookup of a shard
// with the same parts: a shard's parts never change once published (a
// flush or merge publishes a new shardData), and classifying them
// allocated and sorted per lookup. The reader keeps the parts slice, not
// sd, so a pooled reader does not hold an old memtable alive.
func (rd *reader) classifyRun(sd *shardData) (runShard, bool) {
	if len(sd.parts) > 0 && len(rd.runOf) == len(sd.parts) && &rd.runOf[0] == &sd.parts[0] {
		return rd.run, rd.runOK
	}
	rd.run, rd.runOK = classifyRun(sd)
	rd.runOf = sd.parts
	return rd.run, rd.runOK
}

// runLookupBufs are the rows lookupRun reads of the current run (d[0])
// and the history run (d[1]), pooled: a lookup served from the page cache
// then allocates no block-sized buffer.
type runLookupBufs struct {
	d [2]part.Data
}

var runLookupPool = sync.Pool{New: func() any { return &runLookupBufs{} }}

// seekRun reads into d the rows of key in the one part of a run (parts
// key-disjoint and in key order, as classifyRun leaves them) that can
// hold it: the fixed columns fixed and the fast plan's columns, and the
// sort key filled in from key rather than decoded again. It reports false
// when the run holds no row of key.
func (rd *reader) seekRun(parts []*partFile, key []byte, n uint64, fixed part.Fixed, d *part.Data) (bool, error) {
	i := sort.Search(len(parts), func(i int) bool { return bytes.Compare(parts[i].r.Meta().MaxSort, key) >= 0 })
	if i == len(parts) || bytes.Compare(parts[i].r.Meta().MinSort, key) > 0 || parts[i].r.Meta().MinCommit > n {
		rd.stats.PartsSkipped += len(parts)
		return false, nil
	}
	rd.stats.PartsSkipped += len(parts) - 1
	pf := parts[i]
	if !rd.mayContain(pf, key) {
		rd.stats.PartsSkipped++
		return false, nil
	}
	rd.stats.Parts++
	blocks := pf.r.Blocks()
	bi := sort.Search(len(blocks), func(i int) bool { return bytes.Compare(blocks[i].MaxSort, key) >= 0 })
	if bi == len(blocks) || bytes.Compare(blocks[bi].MinSort, key) > 0 || blocks[bi].MinCommit > n {
		rd.stats.BlocksSkipped++
		return false, nil
	}
	rd.stats.Blocks++
	tr := rd.pageTrace(pf)
	rd.seek.keys.Trace, d.Trace = tr, tr
	lo, hi, err := pf.r.FindKey(bi, key, &rd.seek.keys)
	if err != nil || lo == hi {
		return false, err
	}
	if err := pf.r.ReadRows(bi, lo, hi, fixed, rd.fast.ids, d); err != nil {
		return false, err
	}
	for range d.Rows {
		d.Sort.AppendBytes(key)
	}
	return true, nil
}

// newerHolds reports whether a part newer than the run (a delta) or one
// of sd's memtables (a frozen one too) holds key at a commit at or before
// n. A delta's rows of the key are found through its sort-key pages only
// (FindKey); any row counts, even one after n, which only sends the
// lookup to lookupParts.
func (rd *reader) newerHolds(newer []*partFile, sd *shardData, key []byte, n uint64) (bool, error) {
	for _, pf := range newer {
		meta := pf.r.Meta()
		if meta.MinCommit > n || bytes.Compare(key, meta.MinSort) < 0 || bytes.Compare(key, meta.MaxSort) > 0 || !rd.mayContain(pf, key) {
			rd.stats.PartsSkipped++
			continue
		}
		blocks := pf.r.Blocks()
		bi := sort.Search(len(blocks), func(i int) bool { return bytes.Compare(blocks[i].MaxSort, key) >= 0 })
		if bi == len(blocks) || bytes.Compare(blocks[bi].MinSort, key) > 0 || blocks[bi].MinCommit > n {
			continue
		}
		rd.seek.keys.Trace = rd.pageTrace(pf)
		lo, hi, err := pf.r.FindKey(bi, key, &rd.seek.keys)
		if err != nil {
			return true, err
		}
		if lo < hi {
			rd.newerAt = keySeek{pf: pf, bi: bi, lo: lo, hi: hi}
			return true, nil
		}
	}
	if f := sd.frozen; f != nil && f.keyed.holds(key, n) {
		return true, nil
	}
	return sd.keyed.holds(key, n), nil
}

// keyFilterOverride, set by tests and benchmarks, answers in place of the
// parts' key filters: always true to measure lookups without them, false
// to check that tests catch a filter that wrongly rules a key out.
var keyFilterOverride func(pf *partFile, key []byte) bool

// mayContain reports whether pf can hold rows of key, by its key filter
// (part.KeyFilter); a part without one may hold any key. A traced lookup
// counts the answers.
func (rd *reader) mayContain(pf *partFile, key []byte) bool {
	ok := pf.r.MayContain(key)
	if keyFilterOverride != nil {
		ok = keyFilterOverride(pf, key)
	}
	if tr := rd.trace; tr != nil {
		if ok {
			tr.KeyProbes++
		} else {
			tr.FilterSkips++
		}
	}
	return ok
}

// holds reports whether m has a version or delete of key at a commit at
// or before n.
func (m *keyedMem) holds(key []byte, n uint64) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := m.list.get(key)
	if e == nil {
		return false
	}
	for gi := range e.groups {
		g := &e.groups[gi]
		for i := range g.vers {
			if g.vers[i].v.Commit <= n {
				return true
			}
		}
	}
	for _, p := range e.dels {
		if p.Commit <= n {
			return true
		}
	}
	return false
}

// warmCache is the cache flushes and merges build their parts' pages for
// as they write them: a lookup right after a flush or merge then finds
// the pages of the part it reaches instead of decoding them (part/warm.go).
// Nil unless Options.WarmWrites.
func (e *Engine) warmCache() *part.Cache {
	if !e.opts.WarmWrites {
		return nil
	}
	return e.pages
}

// warmMerge is the cache a merge for why builds its parts' pages for:
// warmCache, and for the fold of an idle shard (merge.Settle) the page
// cache even without Options.WarmWrites. A fold runs when no commit has
// come for a while, so warming costs an ingest nothing (the reason
// WarmWrites is off), and its current run is what lookups will read
// until the next ingest: without it every lookup that reaches a page of
// the new run first decodes it (~100 µs for the 3 pages of a lookup, the
// p99 of R1 in bench/). part.Cache bounds what one part may take.
func (e *Engine) warmMerge(why merge.Why) *part.Cache {
	if why == merge.Settle {
		return e.pages
	}
	return e.warmCache()
}
