package part

import (
	"sync"
	"sync/atomic"
)

// A point lookup decodes one page of each column it reads (FindKey's sort
// pages, then ReadRows' pages), and before this cache it verified and
// decoded them again on every lookup: ~15 pages of zstd, checksum and
// Parquet decoding per part touched, most of the lookup's cost. Parts are
// immutable, so a decoded page never goes stale; Cache keeps them, bounded
// by bytes, shared by every Reader opened with it.
//
// Only pages that passed their stripe checksums and decoded without error
// are inserted, so a corrupt page is reported on every read, never served
// from the cache. Entries are keyed by the Reader's process-unique id, not
// its file name: a later part written under the same name (a retried
// flush, a reopened database) gets a new id and can never see an older
// file's pages. Pages of a retired part are not dropped eagerly; they are
// never hit again and age out under the clock.

// DefaultCacheBytes is the page cache budget storage.Options.PageCacheBytes
// defaults to.
const DefaultCacheBytes = 256 << 20

// cacheShards spreads the cache over independently locked shards so that
// concurrent lookups rarely contend; a power of two.
const cacheShards = 16

// readerIDs hands out Reader ids for cache keys; 0 is never used.
var readerIDs atomic.Uint64

// pageKey names one decoded page: the reader (one open of one file), the
// block, the Parquet column and the block row the page starts at.
type pageKey struct {
	reader uint64
	block  uint32
	col    uint32
	first  uint32
}

// pageTag names the rows [first, first+rows) of fixed column col of block
// block of the reader whose id is reader, as decoded into a scratch Data.
type pageTag struct {
	reader            uint64
	block, col, first int
	rows              int
}

// Cache is a bounded, concurrency-safe cache of decoded, checksum-verified
// pages, evicted by CLOCK (second chance) per shard and page class. The zero value is not
// usable; see NewCache. A nil *Cache caches nothing.
type Cache struct {
	shards [cacheShards]cacheShard
	// warm holds the pages Write built for parts not yet opened, and
	// warmed counts the pages put in the cache from them (warm.go).
	warm   warmSet
	warmed atomic.Int64
	// added counts the bytes of every page put, for Prewarm's budget.
	added atomic.Int64
	// bytes is the budget NewCache was given (Lend moves part of it
	// elsewhere for a while: the resolved-scan cache's entries, the pages
	// warm.go holds aside).
	bytes int64
}

// cacheShard is one lock's worth of the cache. Hits take only the read
// lock and set the entry's reference bit atomically; inserts and evictions
// take the write lock.
//
// A shard keeps two clocks, one for the pages of history parts and one for
// every other part's (cacheClass), and splits its budget between them
// softly: a class may use the whole budget while the other leaves it free,
// but a class at or under half the budget never loses a page to the
// other's inserts. Point lookups AS OF a past commit read history pages
// that are large (HistoryPageRows rows a page) and mostly read once, tens of
// megabytes a second of them; under one clock they pushed out the current
// run's pages that lookups of now keep reading (bench/ medium: R1 p99 42
// µs before a burst of AS OF lookups, 132 µs after it). With the split,
// neither kind of read can empty the cache of the other's pages.
type cacheShard struct {
	mu     sync.RWMutex
	m      map[pageKey]int32 // slot: index in its clock's ents << 1 | class
	clocks [2]clock
	bytes  int64 // both clocks'
	budget int64
	// hits and misses are counted for tests and diagnostics.
	hits, misses atomic.Int64
}

// Page classes, the clocks of a shard.
const (
	classCurrent = 0 // pages of delta, current and append parts
	classHistory = 1 // pages of history parts
)

// clock is the entries of one class of a shard, evicted by CLOCK (second
// chance).
type clock struct {
	ents  []cacheEntry
	free  []int32
	hand  int
	bytes int64
}

// entry returns the entry of slot i; the caller holds s.mu.
func (s *cacheShard) entry(i int32) *cacheEntry { return &s.clocks[i&1].ents[i>>1] }

// cacheEntry is one slot of a clock; d is nil in a free slot.
type cacheEntry struct {
	key  pageKey
	d    *Data
	size int64
	ref  atomic.Bool
}

// NewCache returns a cache holding at most about bytes of decoded pages
// (each shard holds bytes/16). bytes ≤ 0 returns nil: no cache.
func NewCache(bytes int64) *Cache {
	if bytes <= 0 {
		return nil
	}
	c := &Cache{bytes: bytes}
	for i := range c.shards {
		c.shards[i].m = map[pageKey]int32{}
		c.shards[i].budget = max(bytes/cacheShards, 1)
	}
	return c
}

// shard returns the shard of key k (a cheap mix of its fields, so pages of
// one column spread over the shards).
func (c *Cache) shard(k pageKey) *cacheShard {
	h := k.reader*0x9e3779b97f4a7c15 ^ uint64(k.block)*0xbf58476d1ce4e5b9 ^
		uint64(k.col)*0x94d049bb133111eb ^ uint64(k.first)*0x2545f4914f6cdd1d
	return &c.shards[(h>>32^h)&(cacheShards-1)]
}

// get returns the cached page for k, or nil. It does not allocate.
func (c *Cache) get(k pageKey) *Data {
	d := c.find(k)
	if d == nil {
		c.missed(k)
	}
	return d
}

// find is get counting a hit but not a miss: the caller looks elsewhere
// (a kept chunk) before it decodes, and counts the miss then (missed), or
// looks for a whole chunk that is mostly not kept (chunkcache.go), whose
// absence is no miss: the miss count is what tells whether lookups' pages
// are served from the cache.
func (c *Cache) find(k pageKey) *Data {
	s := c.shard(k)
	s.mu.RLock()
	i, ok := s.m[k]
	var d *Data
	if ok {
		e := s.entry(i)
		d = e.d
		if !e.ref.Load() {
			e.ref.Store(true)
		}
	}
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	}
	return d
}

// has reports whether k is cached, counting nothing and leaving the
// page's reference bit alone: a background pass asking is no use.
func (c *Cache) has(k pageKey) bool {
	s := c.shard(k)
	s.mu.RLock()
	_, ok := s.m[k]
	s.mu.RUnlock()
	return ok
}

// missed counts a miss of k: a page that will be decoded.
func (c *Cache) missed(k pageKey) { c.shard(k).misses.Add(1) }

// put inserts page d (which nobody modifies afterwards) of a part of class
// cls under k and returns the page now cached under k: d, or the page
// another reader inserted first. A page larger than a shard's budget is
// not cached.
func (c *Cache) put(k pageKey, d *Data, cls int) *Data {
	d.indexKeys()
	size := pageBytes(d)
	s := c.shard(k)
	// The budget is read under the lock: Lend changes it while scans put.
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > s.budget {
		return d
	}
	if i, ok := s.m[k]; ok {
		return s.entry(i).d
	}
	s.evict(size, cls)
	cl := &s.clocks[cls]
	var i int32
	if n := len(cl.free); n > 0 {
		i = cl.free[n-1]
		cl.free = cl.free[:n-1]
	} else {
		cl.ents = append(cl.ents, cacheEntry{})
		i = int32(len(cl.ents) - 1)
	}
	e := &cl.ents[i]
	e.key, e.d, e.size = k, d, size
	e.ref.Store(false)
	s.m[k] = i<<1 | int32(cls)
	cl.bytes += size
	s.bytes += size
	c.added.Add(size)
	return d
}

// evict drops entries until size more bytes of class cls fit the shard's
// budget, or the shard is empty; the caller holds s.mu. cls < 0 makes
// room for no class in particular (a smaller budget).
func (s *cacheShard) evict(size int64, cls int) {
	for s.bytes+size > s.budget && len(s.m) > 0 {
		s.step(s.victim(size, cls))
	}
}

// victim is the class evict takes the next entry from when size bytes of
// class cls are to be put: the other class while cls, with them, stays
// within half the budget; cls itself once it would exceed that, or when
// the other holds nothing. The other class is then over its half, since
// the shard is over its budget. For no class, the larger.
func (s *cacheShard) victim(size int64, cls int) int {
	if cls < 0 {
		if s.clocks[classCurrent].bytes >= s.clocks[classHistory].bytes {
			return classCurrent
		}
		return classHistory
	}
	o := 1 - cls
	if s.clocks[cls].bytes == 0 || s.clocks[o].bytes > 0 && s.clocks[cls].bytes+size <= s.budget/2 {
		return o
	}
	return cls
}

// step moves class cls's hand one entry on: a referenced entry gets a
// second chance (its bit cleared), an unreferenced one is evicted. Two
// turns of a hand evict anything.
func (s *cacheShard) step(cls int) {
	cl := &s.clocks[cls]
	if cl.hand >= len(cl.ents) {
		cl.hand = 0
	}
	e := &cl.ents[cl.hand]
	switch {
	case e.d == nil:
	case e.ref.Load():
		e.ref.Store(false)
	default:
		s.drop(cls, int32(cl.hand))
	}
	cl.hand++
}

// drop evicts entry i of class cls; the caller holds s.mu.
func (s *cacheShard) drop(cls int, i int32) {
	cl := &s.clocks[cls]
	e := &cl.ents[i]
	delete(s.m, e.key)
	cl.bytes -= e.size
	s.bytes -= e.size
	e.d, e.key = nil, pageKey{}
	cl.free = append(cl.free, i)
}

// Free is the room left in the cache's budget: what it can take without
// evicting a page (in shards that all have room; a page goes to one shard
// by its key). 0 for a nil cache.
func (c *Cache) Free() int64 {
	if c == nil {
		return 0
	}
	var n int64
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += max(s.budget-s.bytes, 0)
		s.mu.RUnlock()
	}
	return n
}

// CacheStats counts a cache's lookups and what it holds.
type CacheStats struct {
	Hits, Misses int64
	Pages        int
	Bytes        int64
	// Warmed is the pages put in the cache from the rows a part was
	// written from (WriteOptions.Warm) rather than decoded.
	Warmed int64
}

// Stats reports the cache's counters; the zero value for a nil cache.
func (c *Cache) Stats() CacheStats {
	var st CacheStats
	if c == nil {
		return st
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		st.Pages += len(s.m)
		st.Bytes += s.bytes
		s.mu.RUnlock()
		st.Hits += s.hits.Load()
		st.Misses += s.misses.Load()
	}
	st.Warmed = c.warmed.Load()
	return st
}

// pageBytes estimates the memory a decoded page holds: its slices'
// capacities and its vectors' contents, plus a fixed overhead for the
// headers and the map entry.
func pageBytes(d *Data) int64 {
	n := int64(256)
	n += int64(cap(d.Group))*2 + int64(cap(d.Commit))*8 + int64(cap(d.Seq))*4 + int64(cap(d.Tomb)) +
		int64(cap(d.WonAt)+cap(d.EndedAt)+cap(d.SupersededBy))*8 + int64(cap(d.State))
	n += d.Sort.MemBytes() + d.Order.MemBytes() + int64(cap(d.keyIdx)+cap(d.runEnds))*2
	for _, v := range d.Cols {
		n += v.MemBytes()
	}
	return n
}

// cacheClass is the class of the pages r puts in its cache.
func (r *Reader) cacheClass() int {
	if r.meta.Kind == KindHistory {
		return classHistory
	}
	return classCurrent
}
