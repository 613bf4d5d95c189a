package storage

import (
	"strconv"
	"sync"
	"weak"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
)

// The resolved-scan cache (ARCHITECTURE.md "Reads at a commit").
//
// After a burst of ingest a shard is a merged run, delta parts and a
// memtable that between them touch nearly every key, and a current scan
// resolves every touched key from its versions (rule 7 of package
// version): ~2 µs a key, where a merged run streams at a few tens of ns.
// Until a merge catches up, every repeated scan paid that again, although
// nothing it read had changed. What a full current scan of one shard
// returns is a pure function of the shard's data (its immutable parts and
// its memtable's versions up to the read's commit), the table's catalog
// entry, the columns read and the commit: the cache keeps those output
// rows, so the next current scan of the same data copies them out instead
// of resolving them again.
//
// An entry is valid for a read at n of shard data sd when it was filled
// from the same sd (a published shardData is never modified; a flush,
// merge or split publishes a new one, and a weak pointer never matches a
// later object at a reused address) and the same *catalog.Table (a DDL
// publishes a new one), and either n is the commit it was filled at, or
// it was filled at c < n and no part or memtable version of sd is newer
// than c (then the data visible at n is the data visible at c; the
// memtable's newest commit is read under its lock, and a commit is applied
// to it before any snapshot at that commit is published). Only reads of
// the whole key space fill or use it. Versions reads and the reference
// path tests compare with (slowReads) never use it.
//
// A read AS OF n of a versioned table has entries of its own, keyed by n
// as well: what it returns never changes once n is committed (every read
// filters by commit, a later commit, late writes included, only adds
// versions above n, and a freeze, flush or merge never changes a result
// at any commit), so such an entry is valid for every later state of the
// same shard data whatever its memtable takes, and carry moves it to the
// shard data a freeze, flush or merge publishes whatever that holds. A DDL
// publishes a new *catalog.Table (R6.5: a read at n returns the table's
// schema now), which the entry no longer matches. An upsert table's read
// at an old commit is not cached: its merges drop losers, and with them
// what such a read returned.
//
// Entries are bounded by bytes (at most a quarter of
// Options.PageCacheBytes; what they hold is lent from the page cache's
// budget, part.Cache.Lend, so the two together stay within it) and
// evicted least recently used first; the output is
// copied on every hit, so a consumer that keeps or modifies its batches
// never touches the cache, unless the read says it never modifies them
// (ScanSpec.ReadOnly: a grouped aggregate straight over the scan).

// scanCacheShare is the most of PageCacheBytes the resolved-scan cache
// may borrow from the page cache: 1/scanCacheShare.
const scanCacheShare = 4

// scanCacheOff, set by benchmarks, turns the cache off, so that they
// measure the reads of the sources.
var scanCacheOff bool

// scanCacheKey names one shard of one table read with one column set.
type scanCacheKey struct {
	table catalog.TableID
	shard uint32
	sig   string // the columns, _commit and the batch size
	asOf  uint64 // the commit of an AS OF read, 0 for a current read
}

// scanCacheEntry is one cached shard scan.
type scanCacheEntry struct {
	sd      weak.Pointer[shardData]
	t       *catalog.Table
	commit  uint64
	batches []*types.Batch
	rows    int
	bytes   int64
	seq     uint64 // last use, for eviction
}

// scanCache is the engine's resolved-scan cache; nil caches nothing.
type scanCache struct {
	pages   *part.Cache // lends the bytes entries hold
	lentPer int64       // what it lent, per cache shard
	mu      sync.Mutex
	m       map[scanCacheKey]*scanCacheEntry
	bytes   int64
	budget  int64
	seq     uint64
	// tooLarge names, per key, the shard data whose scan outgrew the
	// budget: its next scans do not copy their output only to drop it.
	tooLarge map[scanCacheKey]weak.Pointer[shardData]
	// succ maps shard data a freeze, flush or merge replaced to the data
	// it published in its place (carry records it), by weak identity, so
	// that a scan ending after the data it began on was replaced can keep
	// its rows for the data that holds the same versions now (carriedTo).
	// Weak on both sides: the record must not keep replaced data (their
	// memtables) alive for as long as an old snapshot is held. Entries
	// are dropped once no live shard data's chain passes through them.
	succ map[weak.Pointer[shardData]]weak.Pointer[shardData]
	// hits, misses and fills are counted for tests.
	hits, misses, fills int64
}

func newScanCache(pages *part.Cache, budget int64) *scanCache {
	if budget <= 0 {
		return nil
	}
	return &scanCache{pages: pages, m: map[scanCacheKey]*scanCacheEntry{}, budget: budget}
}

// scanCacheSig is the part of the key that says what a read returns.
func scanCacheSig(rd *reader) string {
	b := make([]byte, 0, 8*len(rd.plans)+16)
	for _, p := range rd.plans {
		b = strconv.AppendUint(b, uint64(p.id), 10)
		b = append(b, ',')
	}
	if rd.commit {
		b = append(b, 'c')
	}
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(rd.batchCap), 10)
	return string(b)
}

// shardNewest returns the newest commit of any version sd holds.
func shardNewest(sd *shardData) uint64 {
	var hi uint64
	for _, pf := range sd.parts {
		hi = max(hi, pf.r.Meta().MaxCommit)
	}
	for _, m := range sd.memtables() {
		if k := m.keyed; k != nil {
			k.mu.RLock()
			hi = max(hi, k.maxCommit)
			k.mu.RUnlock()
		}
	}
	return hi
}

// get returns the entry valid for a read of sd at n, nil when none.
func (c *scanCache) get(k scanCacheKey, t *catalog.Table, sd *shardData, n uint64) *scanCacheEntry {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	e := c.m[k]
	c.mu.Unlock()
	ok := e != nil && e.t == t && e.sd == weak.Make(sd) && e.commit <= n
	if ok && e.commit != n {
		// An AS OF entry is filled at its own commit; a current entry
		// serves a later commit only when sd has nothing newer.
		ok = k.asOf == 0 && shardNewest(sd) <= e.commit
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		c.misses++
		return nil
	}
	c.hits++
	// Evicted least recently used: a current read and reads at a few
	// commits may take turns on one budget.
	c.seq++
	e.seq = c.seq
	return e
}

// carry lets the entries filled from each pair's first shard data serve
// reads of its second, the shard data a freeze, a flush or a merge
// publishes in its place: neither changes a result
// at any commit (doc.go invariant 8, "A merge never changes a result").
// A current entry is carried only from data with nothing newer than its
// commit, so every version of to is one from had at or before it, and
// get still refuses to once its memtable takes newer commits; an AS OF
// entry always is, since nothing newer than its commit changes it. Without
// this, a scan right after ingest missed while merges published new data
// every few hundred milliseconds. Entries are replaced, not modified (but
// for seq, which only holders of the lock touch): get reads them without
// the lock.
func (c *scanCache) carry(pairs [][2]*shardData) {
	if c == nil || len(pairs) == 0 {
		return
	}
	c.mu.Lock()
	if c.succ == nil {
		c.succ = map[weak.Pointer[shardData]]weak.Pointer[shardData]{}
	}
	for _, p := range pairs {
		c.succ[weak.Make(p[0])] = weak.Make(p[1])
	}
	c.pruneSucc()
	empty := len(c.m) == 0
	c.mu.Unlock()
	if empty {
		return
	}
	for _, p := range pairs {
		from, to := p[0], p[1]
		w := weak.Make(from)
		var keys []scanCacheKey
		c.mu.Lock()
		for k, e := range c.m {
			if e.sd == w {
				keys = append(keys, k)
			}
		}
		c.mu.Unlock()
		if len(keys) == 0 {
			continue
		}
		newest := uint64(0)
		for _, k := range keys {
			if k.asOf == 0 {
				newest = shardNewest(from)
				break
			}
		}
		nw := weak.Make(to)
		c.mu.Lock()
		for _, k := range keys {
			if e := c.m[k]; e != nil && e.sd == w && (k.asOf != 0 || newest <= e.commit) {
				ne := *e
				ne.sd = nw
				c.m[k] = &ne
			}
		}
		c.mu.Unlock()
	}
}

// put keeps e under k, replacing what k held and evicting the least
// recently used entries (and those whose shard data is gone) until it
// fits. live is the shard's published data now (nil when unknown).
func (c *scanCache) put(k scanCacheKey, e *scanCacheEntry, live *shardData) {
	if c == nil || e.bytes > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[k]; old != nil && k.asOf != 0 && old.t == e.t && old.commit == e.commit &&
		live != nil && old.sd == weak.Make(live) && e.sd != old.sd {
		// Both hold the same rows, and the one kept is of the shard data
		// later reads will ask for: e's read was of an older snapshot,
		// whose data a freeze, flush or merge has replaced since.
		return
	}
	if old := c.m[k]; old != nil {
		c.bytes -= old.bytes
		delete(c.m, k)
	}
	for ok, oe := range c.m {
		if oe.sd.Value() == nil {
			c.bytes -= oe.bytes
			delete(c.m, ok)
		}
	}
	for tk, w := range c.tooLarge {
		if w.Value() == nil {
			delete(c.tooLarge, tk)
		}
	}
	for c.bytes+e.bytes > c.budget {
		var victim scanCacheKey
		var oldest *scanCacheEntry
		for ok, oe := range c.m {
			if oldest == nil || oe.seq < oldest.seq {
				victim, oldest = ok, oe
			}
		}
		c.bytes -= oldest.bytes
		delete(c.m, victim)
	}
	c.seq++
	e.seq = c.seq
	c.m[k] = e
	c.bytes += e.bytes
	c.fills++
	// Lent in whole per-shard amounts, so that what was lent is given
	// back exactly.
	per := c.bytes / part.CacheShards
	c.pages.Lend((per - c.lentPer) * part.CacheShards)
	c.lentPer = per
}

// copyBatch returns a copy of b's rows with types ts.
func copyBatch(ts []types.Type, b *types.Batch) *types.Batch {
	nb := types.NewBatch(ts, b.Rows)
	for i, v := range b.Cols {
		nb.Cols[i].AppendVector(v)
	}
	nb.Rows = b.Rows
	return nb
}

// batchBytes estimates the memory of a batch's vectors.
func batchBytes(b *types.Batch) int64 {
	n := int64(64)
	for _, v := range b.Cols {
		n += v.MemBytes()
	}
	return n
}

// cachedScan reads shard sd of a full scan (current, or AS OF a commit of
// a versioned table) from the cache when it holds it, and otherwise reads
// it with read, keeping what it returns.
// It reports false (having read nothing) when the read may not use the
// cache at all.
func (s *Snapshot) cachedScan(rd *reader, sd *shardData, asOf uint64, rs []KeyRange, n uint64,
	fn func(*types.Batch) error, read func(fn func(*types.Batch) error) error) (bool, error) {
	c := s.e.scans
	// A snapshot with pending writes (s.past) reads shard data no other
	// read will see again: not worth keeping.
	if c == nil || scanCacheOff || s.past != nil || rd.versions || rd.slow || len(rs) != 1 || rs[0].Lo != nil || rs[0].Hi != nil {
		return false, nil
	}
	if asOf != 0 && rd.t.Mode != catalog.ModeVersioned {
		return false, nil
	}
	if rd.sig == "" {
		rd.sig = scanCacheSig(rd)
	}
	k := scanCacheKey{table: rd.t.ID, shard: sd.num, sig: rd.sig, asOf: asOf}
	if c.isTooLarge(k, sd) {
		return false, nil
	}
	if e := c.get(k, rd.t, sd, n); e != nil {
		if err := rd.flush(fn); err != nil {
			return true, err
		}
		for _, b := range e.batches {
			rd.stats.RowsReturned += uint64(b.Rows)
			if !rd.readOnly {
				b = copyBatch(rd.outTypes, b)
			}
			if err := fn(b); err != nil {
				return true, err
			}
		}
		rd.stats.RowsRead += uint64(e.rows)
		rd.stats.CachedShards++
		return true, nil
	}
	// The shard's rows start a batch of their own, so that every batch
	// the read hands on is all this shard's.
	if err := rd.flush(fn); err != nil {
		return true, err
	}
	e := &scanCacheEntry{sd: weak.Make(sd), t: rd.t, commit: n}
	keep := func(b *types.Batch) error {
		if e != nil {
			cb := copyBatch(rd.outTypes, b)
			e.batches = append(e.batches, cb)
			e.rows += cb.Rows
			e.bytes += batchBytes(cb)
			if e.bytes > c.budget {
				e = nil // too large to keep: stop copying
			}
		}
		return fn(b)
	}
	if err := read(keep); err != nil {
		return true, err
	}
	if err := rd.flush(keep); err != nil {
		return true, err
	}
	if e != nil {
		live := s.e.liveShard(rd.t.ID, sd.num)
		if to := c.carriedTo(sd, live, asOf, n); to != nil {
			// A scan of a large shard right after ingest takes seconds,
			// and the merges it overlaps publish new shard data every few:
			// kept for the data it read, which no later read asks for, its
			// rows were resolved for nothing, and so were the next scan's.
			e.sd = weak.Make(to)
		}
		c.put(k, e, live)
	} else {
		c.markTooLarge(k, sd)
	}
	return true, nil
}

// carriedTo returns live when it replaced sd by a chain of freezes,
// flushes and merges (succ) and a read at n of sd, current or AS OF
// asOf, returns what the same read of live returns: always for an AS OF
// read, and for a current one when live has nothing newer than n (the
// conditions on which carry moves entries). Otherwise nil: a split or a
// DROP replaced sd, which carry never records.
func (c *scanCache) carriedTo(sd, live *shardData, asOf, n uint64) *shardData {
	if live == nil || live == sd {
		return nil
	}
	w, target := weak.Make(sd), weak.Make(live)
	c.mu.Lock()
	for steps := 0; w != target; steps++ {
		next, ok := c.succ[w]
		if !ok || steps > len(c.succ) {
			c.mu.Unlock()
			return nil
		}
		w = next
	}
	c.mu.Unlock()
	if asOf == 0 && shardNewest(live) > n {
		return nil
	}
	return live
}

// pruneSucc drops the successor records no chain from live shard data
// (the published data, or data a snapshot still reads) passes through;
// the caller holds c.mu. Replaced data nobody holds is collected, and its
// weak pointer then reads nil.
func (c *scanCache) pruneSucc() {
	keep := make(map[weak.Pointer[shardData]]bool, len(c.succ))
	for k := range c.succ {
		if k.Value() == nil {
			continue
		}
		for w := k; !keep[w]; {
			keep[w] = true
			next, ok := c.succ[w]
			if !ok {
				break
			}
			w = next
		}
	}
	for k := range c.succ {
		if !keep[k] {
			delete(c.succ, k)
		}
	}
}

// liveShard returns shard num of table id in the published state, nil
// when there is none.
func (e *Engine) liveShard(id catalog.TableID, num uint32) *shardData {
	if td := e.cur.Load().tables[id]; td != nil {
		for _, sd := range td.shards {
			if sd.num == num {
				return sd
			}
		}
	}
	return nil
}

// isTooLarge reports whether a scan of sd under k outgrew the budget. The
// note is kept per key without its AS OF commit: reads at every commit of
// one shard are about the same size (one row per key), and a note per
// commit read would pile up for as long as the shard data lives.
func (c *scanCache) isTooLarge(k scanCacheKey, sd *shardData) bool {
	k.asOf = 0
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.tooLarge[k]
	return ok && w == weak.Make(sd)
}

// markTooLarge notes that a scan of sd under k outgrew the budget (one
// note per key: newer shard data replaces it).
func (c *scanCache) markTooLarge(k scanCacheKey, sd *shardData) {
	k.asOf = 0
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tooLarge == nil {
		c.tooLarge = map[scanCacheKey]weak.Pointer[shardData]{}
	}
	c.tooLarge[k] = weak.Make(sd)
}
