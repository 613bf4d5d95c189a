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

// Cache is a bounded, concurrency-safe cache of decoded, checksum-verified
// pages, evicted by CLOCK (second chance) per shard. The zero value is not
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
type cacheShard struct {
	mu     sync.RWMutex
	m      map[pageKey]int32
	ents   []cacheEntry
	free   []int32
	hand   int
	bytes  int64
	budget int64
	// hits and misses are counted for tests and diagnostics.
	hits, misses atomic.Int64
}

// cacheEntry is one slot of a shard's clock; d is nil in a free slot.
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
	s := c.shard(k)
	s.mu.RLock()
	i, ok := s.m[k]
	var d *Data
	if ok {
		e := &s.ents[i]
		d = e.d
		if !e.ref.Load() {
			e.ref.Store(true)
		}
	}
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	} else {
		s.misses.Add(1)
	}
	return d
}

// put inserts page d (which nobody modifies afterwards) under k and
// returns the page now cached under k: d, or the page another reader
// inserted first. A page larger than a shard's budget is not cached.
func (c *Cache) put(k pageKey, d *Data) *Data {
	size := pageBytes(d)
	s := c.shard(k)
	// The budget is read under the lock: Lend changes it while scans put.
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > s.budget {
		return d
	}
	if i, ok := s.m[k]; ok {
		return s.ents[i].d
	}
	s.evict(size)
	var i int32
	if n := len(s.free); n > 0 {
		i = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		s.ents = append(s.ents, cacheEntry{})
		i = int32(len(s.ents) - 1)
	}
	e := &s.ents[i]
	e.key, e.d, e.size = k, d, size
	e.ref.Store(false)
	s.m[k] = i
	s.bytes += size
	c.added.Add(size)
	return d
}

// evict drops entries until size more bytes fit the shard's budget, or
// the shard is empty; the caller holds s.mu. CLOCK: a referenced entry
// gets a second chance (its bit cleared); an unreferenced one is evicted.
// Two passes at most evict anything.
func (s *cacheShard) evict(size int64) {
	for s.bytes+size > s.budget && len(s.m) > 0 {
		if s.hand >= len(s.ents) {
			s.hand = 0
		}
		e := &s.ents[s.hand]
		switch {
		case e.d == nil:
		case e.ref.Load():
			e.ref.Store(false)
		default:
			delete(s.m, e.key)
			s.bytes -= e.size
			e.d, e.key = nil, pageKey{}
			s.free = append(s.free, int32(s.hand))
		}
		s.hand++
	}
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
	n += d.Sort.MemBytes() + d.Order.MemBytes()
	for _, v := range d.Cols {
		n += v.MemBytes()
	}
	return n
}
