package part

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// writePaged writes a part of rows rows (three rows per key, an INT8 and a
// STRING column with NULLs) in blocks of 2·PageRows+10 rows, so blocks
// hold whole and partial pages and keys straddle page boundaries.
func writePaged(t testing.TB, fsys vfs.FS, path string, rows int) {
	t.Helper()
	cols := []ColumnMeta{
		{ID: 1, Type: types.Of(types.Int64), Codec: catalog.DefaultCodec(types.Of(types.Int64))},
		{ID: 2, Type: types.Of(types.String), Codec: catalog.DefaultCodec(types.Of(types.String))},
	}
	d := &Data{Sort: types.NewVector(types.Of(types.Bytes), rows), IDs: []catalog.ColumnID{1, 2},
		Cols: []*types.Vector{types.NewVector(cols[0].Type, rows), types.NewVector(cols[1].Type, rows)}}
	for i := range rows {
		d.Sort.AppendBytes(types.AppendKey(nil, types.NewInt64(int64(i/3))))
		d.Commit = append(d.Commit, uint64(i+1))
		d.Seq = append(d.Seq, uint32(i))
		d.Tomb = append(d.Tomb, i%3 == 1)
		d.Cols[0].AppendInt64(int64(i))
		if i%7 == 0 {
			d.Cols[1].AppendNull()
		} else {
			d.Cols[1].AppendString(fmt.Sprint("v", i))
		}
		d.Rows++
	}
	if _, err := Write(fsys, path, d, Meta{Table: 1, Part: 1, Kind: KindDelta, Columns: cols}, WriteOptions{BlockRows: 2*PageRows + 10}); err != nil {
		t.Fatal(err)
	}
}

// lookupAll runs, for every block, FindKey of every key, then ReadRows of
// the key's rows (every fixed column, both table columns and one the part
// lacks), and returns a transcript of all results; the first error stops it.
func lookupAll(r *Reader, keyEvery int) (string, error) {
	ids := []catalog.ColumnID{2, 1, 9}
	var out []byte
	var whole, sc, rows Data
	for bi, b := range r.Blocks() {
		if err := r.ReadBlockFixed(bi, FixSort, nil, &whole); err != nil {
			return "", err
		}
		for row := 0; row < b.Rows; row += keyEvery {
			lo, hi, err := r.FindKey(bi, whole.Sort.BytesAt(row), &sc)
			if err != nil {
				return string(out), err
			}
			if err := r.ReadRows(bi, lo, hi, FixAll, ids, &rows); err != nil {
				return string(out), err
			}
			out = fmt.Appendf(out, "b%d [%d,%d):", bi, lo, hi)
			for i := range rows.Rows {
				out = fmt.Appendf(out, " %x/%d/%d/%v/%v/%v/%d/%d/%d/%d", rows.Sort.BytesAt(i), rows.Commit[i], rows.Seq[i],
					rows.Tomb[i], rows.Cols[0].Get(i), rows.Cols[1].Get(i), rows.Group[i], rows.WonAt[i], rows.EndedAt[i], rows.State[i])
			}
			if rows.Cols[2] != nil {
				return "", fmt.Errorf("column 9 is not nil")
			}
			out = append(out, '\n')
		}
	}
	return string(out), nil
}

// TestCacheHitsMatchFreshDecode: lookups served from the cache return
// exactly what an uncached reader decodes, on the first (miss) and second
// (hit) pass, and the second pass is all hits.
func TestCacheHitsMatchFreshDecode(t *testing.T) {
	fsys := vfs.NewMem()
	writePaged(t, fsys, "p", 5*PageRows+77)
	plain, err := Open(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want, err := lookupAll(plain, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(DefaultCacheBytes)
	r, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for pass := range 2 {
		before := c.Stats()
		got, err := lookupAll(r, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("pass %d: cached lookups differ from a fresh decode", pass)
		}
		st := c.Stats()
		if pass == 1 && (st.Misses != before.Misses || st.Hits == before.Hits) {
			t.Fatalf("second pass: %+v after %+v, want hits only", st, before)
		}
	}
	if st := c.Stats(); st.Pages == 0 || st.Bytes <= 0 || st.Bytes > DefaultCacheBytes {
		t.Fatalf("stats %+v", st)
	}
	// A second open of the same file (a new id) shares nothing with the
	// first: a file rewritten under the name could not be served stale.
	r2, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	before := c.Stats()
	var sc Data
	if _, _, err := r2.FindKey(0, types.AppendKey(nil, types.NewInt64(0)), &sc); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Misses == before.Misses {
		t.Fatal("a new reader of the same path hit the old reader's pages")
	}
}

// TestCacheHitAllocations: a FindKey and a ReadRows served from the
// cache allocate nothing.
func TestCacheHitAllocations(t *testing.T) {
	fsys := vfs.NewMem()
	writePaged(t, fsys, "p", 3*PageRows)
	r, err := OpenCached(fsys, "p", NewCache(DefaultCacheBytes))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	key := types.AppendKey(nil, types.NewInt64(PageRows/3+5))
	var sc Data
	if _, _, err := r.FindKey(0, key, &sc); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, _, err := r.FindKey(0, key, &sc); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("FindKey on a cached page: %v allocations", n)
	}
	ids := []catalog.ColumnID{1, 2}
	var d Data
	if err := r.ReadRows(0, PageRows+3, PageRows+6, FixAll, ids, &d); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		if err := r.ReadRows(0, PageRows+3, PageRows+6, FixAll, ids, &d); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("ReadRows on cached pages: %v allocations", n)
	}
}

// TestCacheEvictionTinyBudget: with a budget of a few pages the cache
// stays within it, evicts, and still returns the right rows.
func TestCacheEvictionTinyBudget(t *testing.T) {
	fsys := vfs.NewMem()
	writePaged(t, fsys, "p", 5*PageRows+77)
	plain, err := Open(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want, err := lookupAll(plain, 5)
	if err != nil {
		t.Fatal(err)
	}
	const budget = cacheShards * 16 << 10 // ~16 KiB per shard, one or two pages
	c := NewCache(budget)
	r, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 2 {
		got, err := lookupAll(r, 5)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatal("lookups through a tiny cache differ from a fresh decode")
		}
		for i := range c.shards {
			if s := &c.shards[i]; s.bytes > s.budget || int(s.bytes) < 0 {
				t.Fatalf("shard %d holds %d bytes, budget %d", i, s.bytes, s.budget)
			}
		}
	}
	if st := c.Stats(); st.Bytes > budget || st.Pages == 0 || st.Misses <= int64(st.Pages) {
		t.Fatalf("stats %+v: want evictions within %d bytes", st, budget)
	}
}

// TestCacheClock checks the policy on one shard: an entry hit since the
// hand last passed survives an eviction that takes an unreferenced one.
func TestCacheClock(t *testing.T) {
	c := NewCache(cacheShards * 1000)
	page := func(rows int) *Data { return &Data{Commit: make([]uint64, rows)} }
	// Keys that land in one shard.
	var keys []pageKey
	s0 := c.shard(pageKey{reader: 1})
	for f := uint32(0); len(keys) < 3; f++ {
		if k := (pageKey{reader: 1, first: f}); c.shard(k) == s0 {
			keys = append(keys, k)
		}
	}
	// Each shard holds 1000 bytes: two pages of 20 rows, not three.
	size := pageBytes(page(20))
	if 2*size > 1000 || 3*size <= 1000 {
		t.Fatalf("page of %d bytes does not fit the test", size)
	}
	a, b := page(20), page(20)
	c.put(keys[0], a, classCurrent)
	c.put(keys[1], b, classCurrent)
	if c.get(keys[0]) != a { // keys[0] referenced
		t.Fatal("miss on a just-inserted page")
	}
	c.put(keys[2], page(20), classCurrent) // must evict keys[1], not keys[0]
	if c.get(keys[0]) != a || c.get(keys[1]) != nil || c.get(keys[2]) == nil {
		t.Fatal("CLOCK did not give the referenced page a second chance")
	}
	if s0.bytes != 2*size {
		t.Fatalf("shard holds %d bytes, want %d", s0.bytes, 2*size)
	}
	// A page bigger than a shard is not cached at all.
	big := page(1000)
	if got := c.put(pageKey{reader: 2}, big, classCurrent); got != big || c.get(pageKey{reader: 2}) != nil {
		t.Fatal("an oversized page was cached")
	}
	var nilCache *Cache
	if st := nilCache.Stats(); st != (CacheStats{}) {
		t.Fatal("nil cache has stats")
	}
	if NewCache(0) != nil || NewCache(-1) != nil {
		t.Fatal("a cache of no bytes is not nil")
	}
}

// TestCacheClasses checks the split of a shard's budget between history
// pages and the others: a class within half the budget keeps its pages
// whatever the other puts, and a class alone may use the whole budget.
func TestCacheClasses(t *testing.T) {
	const perShard = 4000
	page := func() *Data { return &Data{Commit: make([]uint64, 20)} }
	size := pageBytes(page())
	if 9*size > perShard || 10*size <= perShard {
		t.Fatalf("page of %d bytes does not fit the test", size)
	}
	// keysOf returns n keys of reader id that land in the shard of reader
	// 1's first key.
	keysOf := func(c *Cache, id uint64, n int) []pageKey {
		s0 := c.shard(pageKey{reader: 1})
		var keys []pageKey
		for f := uint32(0); len(keys) < n; f++ {
			if k := (pageKey{reader: id, first: f}); c.shard(k) == s0 {
				keys = append(keys, k)
			}
		}
		return keys
	}
	check := func(c *Cache) *cacheShard {
		t.Helper()
		s := c.shard(pageKey{reader: 1})
		if s.bytes > s.budget || s.bytes != s.clocks[0].bytes+s.clocks[1].bytes {
			t.Fatalf("shard holds %d bytes (%d + %d), budget %d", s.bytes, s.clocks[0].bytes, s.clocks[1].bytes, s.budget)
		}
		return s
	}

	// Four current pages, within half the budget, survive any number of
	// history pages, referenced or not.
	c := NewCache(cacheShards * perShard)
	cur, hist := keysOf(c, 1, 4), keysOf(c, 2, 40)
	for _, k := range cur {
		c.put(k, page(), classCurrent)
	}
	for _, k := range hist {
		c.put(k, page(), classHistory)
		c.get(k)
	}
	s := check(c)
	for _, k := range cur {
		if c.get(k) == nil {
			t.Fatalf("current page %v evicted by history pages", k)
		}
	}
	if got := s.clocks[classHistory].bytes; got != 5*size {
		t.Fatalf("history holds %d bytes, want the 5 pages that fit beside the current ones (%d)", got, 5*size)
	}

	// History alone fills the whole budget; then current pages take
	// history's room until they would pass half the budget themselves
	// (four pages and a fifth would), and no further.
	c = NewCache(cacheShards * perShard)
	cur, hist = keysOf(c, 1, 40), keysOf(c, 2, 40)
	for _, k := range hist {
		c.put(k, page(), classHistory)
	}
	if s = check(c); s.clocks[classHistory].bytes != 9*size {
		t.Fatalf("history alone holds %d bytes, want all 9 pages that fit (%d)", s.clocks[classHistory].bytes, 9*size)
	}
	for _, k := range cur {
		c.put(k, page(), classCurrent)
	}
	s = check(c)
	if h, cb := s.clocks[classHistory].bytes, s.clocks[classCurrent].bytes; h != 5*size || cb != 4*size {
		t.Fatalf("after current puts history holds %d bytes and current %d, want 5 and 4 pages (%d, %d)", h, cb, 5*size, 4*size)
	}

	// A smaller budget evicts from the larger class first.
	c.Lend((perShard - 2*size) * cacheShards)
	if s = check(c); len(s.m) != 2 || s.clocks[classCurrent].bytes != size || s.clocks[classHistory].bytes != size {
		t.Fatalf("after lending, the classes hold %d and %d bytes, want a page each", s.clocks[classCurrent].bytes, s.clocks[classHistory].bytes)
	}
}

// TestCacheNeverHoldsCorruption flips bits in the data region: every read
// that touches the bad stripe reports ErrCorrupt, on the first and on a
// repeated read through the same cache, and reads elsewhere still work.
func TestCacheNeverHoldsCorruption(t *testing.T) {
	fsys := vfs.NewMem()
	writePaged(t, fsys, "good", 5*PageRows+77)
	orig, err := vfs.ReadFile(fsys, "good")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(fsys, "good")
	if err != nil {
		t.Fatal(err)
	}
	dataEnd := g.dataEnd
	g.Close()
	corrupted := 0
	for _, frac := range []int64{2, 3, 5} {
		buf := append([]byte(nil), orig...)
		off := dataEnd * (frac - 1) / frac
		buf[off] ^= 0x10
		if err := vfs.WriteFile(fsys, "bad", buf); err != nil {
			t.Fatal(err)
		}
		c := NewCache(DefaultCacheBytes)
		r, err := OpenCached(fsys, "bad", c)
		if err != nil {
			t.Fatal(err)
		}
		var errs [2]string
		for pass := range 2 {
			// Each page on its own, so a bad page does not hide the rest.
			ids := []catalog.ColumnID{1, 2}
			var d Data
			for bi, b := range r.Blocks() {
				for lo := 0; lo < b.Rows; lo += PageRows {
					err := r.ReadRows(bi, lo, min(lo+PageRows, b.Rows), FixAll, ids, &d)
					if err != nil {
						if !errors.Is(err, ErrCorrupt) {
							t.Fatalf("flip at %d: %v", off, err)
						}
						errs[pass] += fmt.Sprintf("b%d r%d: %v\n", bi, lo, err)
					}
				}
			}
		}
		r.Close()
		if errs[0] == "" {
			t.Fatalf("flip at %d went unnoticed", off)
		}
		if errs[0] != errs[1] {
			t.Fatalf("flip at %d: second read differs:\n%s\nvs\n%s", off, errs[0], errs[1])
		}
		corrupted++
	}
	if corrupted != 3 {
		t.Fatal("not every flip was checked")
	}
}

// TestCacheConcurrentLookups runs lookups from several goroutines through
// one small cache (so that inserts, hits and evictions interleave) and
// checks every result; run under -race.
func TestCacheConcurrentLookups(t *testing.T) {
	fsys := vfs.NewMem()
	writePaged(t, fsys, "p", 5*PageRows+77)
	plain, err := Open(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want, err := lookupAll(plain, 11)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(cacheShards * 48 << 10)
	r, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				got, err := lookupAll(r, 11)
				if err == nil && got != want {
					err = errors.New("concurrent cached lookups differ from a fresh decode")
				}
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Hits == 0 {
		t.Fatalf("no hits: %+v", st)
	}
}
