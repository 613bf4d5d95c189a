package part

import (
	"fmt"
	"sync"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
)

// TestChunkCacheMatchesFreshDecode: blocks read through a cached reader
// equal what an uncached reader decodes — as views (decoded and kept the
// first time, shared from the cache after) and as copies (ReadBlockFixed,
// which copies cached chunks out and keeps nothing) — for every fixed
// column and table columns with NULLs, in projections that share chunks.
func TestChunkCacheMatchesFreshDecode(t *testing.T) {
	fsys := newFS(t)
	fx := balances(3*DefaultBlockRows/2 + 17)
	writeFixture(t, fsys, "p", fx, WriteOptions{})
	plain, r, c := openPlainCached(t, fsys, "p")
	reads := []struct {
		fixed Fixed
		ids   []catalog.ColumnID
	}{
		{FixSort | FixCommit, []catalog.ColumnID{3, 9, 1}},
		{FixAll, []catalog.ColumnID{1, 2, 3, 4}},
		{FixAll, []catalog.ColumnID{4, 4}},
		{FixGroup | FixWonAt | FixEndedAt, nil},
	}
	var want, got, view Data
	check := func(what string, rd int, bi int, d *Data) {
		t.Helper()
		// sameData wants every fixed column: compare the ones read.
		if diff := sameData(projected(&want, reads[rd].fixed), projected(d, reads[rd].fixed)); diff != "" {
			t.Fatalf("%s, read %d, block %d: %s", what, rd, bi, diff)
		}
	}
	// Copies from an empty cache decode and keep nothing.
	for bi := range r.Blocks() {
		if err := plain.ReadBlockFixed(bi, FixAll, nil, &want); err != nil {
			t.Fatal(err)
		}
		if err := r.ReadBlockFixed(bi, FixAll, nil, &got); err != nil {
			t.Fatal(err)
		}
		check("copy, nothing cached", 1, bi, &got)
	}
	if st := c.Stats(); st.Pages != 0 {
		t.Fatalf("ReadBlockFixed kept %d chunks", st.Pages)
	}
	for pass := range 2 {
		before := c.Stats()
		for rd := range reads {
			for bi := range r.Blocks() {
				if err := plain.ReadBlockFixed(bi, reads[rd].fixed, reads[rd].ids, &want); err != nil {
					t.Fatal(err)
				}
				if err := r.ReadBlockView(bi, reads[rd].fixed, reads[rd].ids, &view); err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("pass %d view", pass), rd, bi, &view)
				// Reading into a view as a copy drops the shared slices
				// instead of overwriting the cache's.
				if err := r.ReadBlockFixed((bi+1)%len(r.Blocks()), reads[rd].fixed, reads[rd].ids, &view); err != nil {
					t.Fatal(err)
				}
				if err := r.ReadBlockFixed(bi, reads[rd].fixed, reads[rd].ids, &got); err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("pass %d copy", pass), rd, bi, &got)
			}
		}
		if st := c.Stats(); pass == 1 && (st.Misses != before.Misses || st.Hits == before.Hits || st.Pages != before.Pages) {
			t.Fatalf("second pass: %+v after %+v, want hits only", st, before)
		}
	}
}

// projected returns a Data whose fixed columns not in fixed are filled
// with zeros, so sameData compares only those read.
func projected(d *Data, fixed Fixed) *Data {
	p := *d
	zero := func(f Fixed) bool { return fixed&f == 0 }
	if zero(FixSort) {
		p.Sort = sameKeys(d.Rows)
	}
	if zero(FixOrder) {
		p.Order = sameKeys(d.Rows)
	}
	if zero(FixGroup) {
		p.Group = make([]uint16, d.Rows)
	}
	if zero(FixCommit) {
		p.Commit = make([]uint64, d.Rows)
	}
	if zero(FixSeq) {
		p.Seq = make([]uint32, d.Rows)
	}
	if zero(FixTomb) {
		p.Tomb = make([]bool, d.Rows)
	}
	if zero(FixWonAt) {
		p.WonAt = make([]uint64, d.Rows)
	}
	if zero(FixEndedAt) {
		p.EndedAt = make([]uint64, d.Rows)
	}
	if zero(FixSupersededBy) {
		p.SupersededBy = make([]uint64, d.Rows)
	}
	if zero(FixState) {
		p.State = nil
		for range d.Rows {
			p.State = append(p.State, 0)
		}
	}
	return &p
}

// TestCloseDropsCached: closing a reader frees what the cache holds of
// it, and nothing of another reader.
func TestCloseDropsCached(t *testing.T) {
	fsys := newFS(t)
	writeFixture(t, fsys, "p", balances(1000), WriteOptions{})
	c := NewCache(DefaultCacheBytes)
	var d Data
	var rs []*Reader
	for range 2 {
		r, err := OpenCached(fsys, "p", c)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second view keeps
			if err := r.ReadBlockView(0, FixAll, []catalog.ColumnID{1, 2}, &d); err != nil {
				t.Fatal(err)
			}
		}
		rs = append(rs, r)
	}
	one := c.Stats()
	if one.Pages == 0 {
		t.Fatal("nothing cached")
	}
	if err := rs[0].Close(); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Pages != one.Pages/2 || st.Bytes != one.Bytes/2 {
		t.Fatalf("after closing one of two readers: %+v, was %+v", st, one)
	}
	if err := rs[1].Close(); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Pages != 0 || st.Bytes != 0 {
		t.Fatalf("after closing both readers: %+v", st)
	}
}

// TestViewsStopKeepingWhenEvicted: views of a part larger than the cache
// still read correctly, and once a kept chunk is found evicted the reader
// stops keeping chunks (each would be evicted before its next read).
func TestViewsStopKeepingWhenEvicted(t *testing.T) {
	fsys := newFS(t)
	writeFixture(t, fsys, "p", balances(3*DefaultBlockRows+5), WriteOptions{})
	plain, err := Open(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	c := NewCache(cacheShards * 256 << 10) // far less than one column of the part
	r, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ids := []catalog.ColumnID{1, 3}
	var want, view Data
	for pass := range 3 {
		for bi := range r.Blocks() {
			if err := plain.ReadBlockFixed(bi, FixAll, ids, &want); err != nil {
				t.Fatal(err)
			}
			if err := r.ReadBlockView(bi, FixAll, ids, &view); err != nil {
				t.Fatal(err)
			}
			if diff := sameData(&want, &view); diff != "" {
				t.Fatalf("pass %d block %d: %s", pass, bi, diff)
			}
		}
	}
	if !r.chunks.thrash.Load() {
		t.Fatal("views of a part larger than the cache still keep chunks")
	}
}

// TestConcurrentViews: readers viewing the same blocks at once (run with
// -race) share the cached chunks without writing them, and each sees what
// a fresh decode gives.
func TestConcurrentViews(t *testing.T) {
	fsys := newFS(t)
	writeFixture(t, fsys, "p", balances(2*DefaultBlockRows+3), WriteOptions{})
	plain, err := Open(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ids := []catalog.ColumnID{1, 2}
	want := make([]*Data, len(plain.Blocks()))
	for bi := range want {
		want[bi] = &Data{}
		if err := plain.ReadBlockFixed(bi, FixAll, ids, want[bi]); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenCached(fsys, "p", NewCache(DefaultCacheBytes))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var view, copied Data
			for pass := range 3 {
				for k := range want {
					bi := (k + g) % len(want)
					if err := r.ReadBlockView(bi, FixAll, ids, &view); err != nil {
						errs <- err.Error()
						return
					}
					if diff := sameData(want[bi], &view); diff != "" {
						errs <- fmt.Sprintf("goroutine %d pass %d block %d view: %s", g, pass, bi, diff)
						return
					}
					if err := r.ReadBlockFixed(bi, FixAll, ids, &copied); err != nil {
						errs <- err.Error()
						return
					}
					if diff := sameData(want[bi], &copied); diff != "" {
						errs <- fmt.Sprintf("goroutine %d pass %d block %d copy: %s", g, pass, bi, diff)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestCacheLend checks that lent bytes shrink every shard's budget (the
// next put evicts down to it) and that taking them back restores it.
func TestCacheLend(t *testing.T) {
	c := NewCache(cacheShards * 1000)
	page := func(rows int) *Data { return &Data{Commit: make([]uint64, rows)} }
	s0 := c.shard(pageKey{reader: 1})
	var keys []pageKey
	for f := uint32(0); len(keys) < 3; f++ {
		if k := (pageKey{reader: 1, first: f}); c.shard(k) == s0 {
			keys = append(keys, k)
		}
	}
	size := pageBytes(page(20))
	c.put(keys[0], page(20), classCurrent)
	c.put(keys[1], page(20), classCurrent)
	if s0.bytes != 2*size {
		t.Fatalf("shard holds %d bytes, want %d", s0.bytes, 2*size)
	}
	// Lend all but room for one page: the next put keeps one page only.
	c.Lend((1000 - size) * CacheShards)
	c.put(keys[2], page(20), classCurrent)
	if s0.bytes != size || c.get(keys[2]) == nil {
		t.Fatalf("with its budget lent the shard holds %d bytes, want %d", s0.bytes, size)
	}
	c.Lend(-(1000 - size) * CacheShards)
	for i := range c.shards {
		if b := c.shards[i].budget; b != 1000 {
			t.Fatalf("shard %d's budget is %d after taking back, want 1000", i, b)
		}
	}
	c.put(keys[0], page(20), classCurrent)
	if s0.bytes != 2*size {
		t.Fatalf("after taking back the shard holds %d bytes, want %d", s0.bytes, 2*size)
	}
	var nilCache *Cache
	nilCache.Lend(10) // must not panic
}

// TestLookupsReadKeptChunks: once scans' views kept a block's chunks, a
// point lookup (FindKey, ReadRows) takes its rows from them, decoding no
// page, and reads the same rows as a reader without a cache.
func TestLookupsReadKeptChunks(t *testing.T) {
	fsys := newFS(t)
	fx := balances(3*DefaultBlockRows/2 + 17)
	writeFixture(t, fsys, "p", fx, WriteOptions{})
	plain, err := Open(fsys, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	c := NewCache(DefaultCacheBytes)
	r, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fixed := FixSort | FixGroup | FixCommit | FixWonAt | FixEndedAt
	ids := []catalog.ColumnID{1, 3, 4}
	var view Data
	for range 2 {
		for bi := range r.Blocks() {
			if err := r.ReadBlockView(bi, fixed, ids, &view); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := c.Stats()
	var want, got, wk, gk Data
	for i := 0; i < fx.d.Rows; i += 997 {
		key := fx.d.Sort.BytesAt(i)
		blocks := r.Blocks()
		bi := 0
		for bi < len(blocks)-1 && string(blocks[bi].MaxSort) < string(key) {
			bi++
		}
		lo, hi, err := plain.FindKey(bi, key, &wk)
		if err != nil {
			t.Fatal(err)
		}
		glo, ghi, err := r.FindKey(bi, key, &gk)
		if err != nil {
			t.Fatal(err)
		}
		if lo != glo || hi != ghi || lo == hi {
			t.Fatalf("row %d: FindKey gave [%d, %d) from kept chunks, [%d, %d) decoding pages", i, glo, ghi, lo, hi)
		}
		if err := plain.ReadRows(bi, lo, hi, fixed, ids, &want); err != nil {
			t.Fatal(err)
		}
		if err := r.ReadRows(bi, lo, hi, fixed, ids, &got); err != nil {
			t.Fatal(err)
		}
		if diff := sameData(projected(&want, fixed), projected(&got, fixed)); diff != "" {
			t.Fatalf("row %d: %s", i, diff)
		}
	}
	if st := c.Stats(); st.Misses != before.Misses || st.Pages != before.Pages {
		t.Fatalf("lookups after the chunks were kept: %+v, before %+v; want no page decoded", st, before)
	}
}
