package part

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// sameCell compares row i of a and row j of b, floats by their bits (a
// warmed NaN or -0 must be the decoded one exactly).
func sameCell(a *types.Vector, i int, b *types.Vector, j int) bool {
	if a.IsNull(i) || b.IsNull(j) {
		return a.IsNull(i) == b.IsNull(j)
	}
	if a.Type().Kind.Class() == types.ClassFloat64 {
		return math.Float64bits(a.Float64s()[i]) == math.Float64bits(b.Float64s()[j])
	}
	return types.Equal(a.Get(i), b.Get(j))
}

// samePage reports how warmed page w differs from decoded page d of
// fixed column f (f < 0: a table column), or "".
func samePage(w, d *Data, f int) string {
	if w.first != d.first {
		return fmt.Sprintf("first %d, decoded %d", w.first, d.first)
	}
	vec := func(x, y *types.Vector) string {
		if x.Len() != y.Len() || x.Type() != y.Type() {
			return fmt.Sprintf("%d rows of %s, decoded %d of %s", x.Len(), x.Type(), y.Len(), y.Type())
		}
		for i := range x.Len() {
			if !sameCell(x, i, y, i) {
				return fmt.Sprintf("row %d: %v, decoded %v", i, x.Get(i), y.Get(i))
			}
		}
		return ""
	}
	switch f {
	case -1:
		return vec(w.Cols[0], d.Cols[0])
	case fSort:
		return vec(w.Sort, d.Sort)
	case fOrder:
		return vec(w.Order, d.Order)
	}
	got := fmt.Sprint(w.Group, w.Commit, w.Seq, w.Tomb, w.WonAt, w.EndedAt, w.SupersededBy, w.State)
	want := fmt.Sprint(d.Group, d.Commit, d.Seq, d.Tomb, d.WonAt, d.EndedAt, d.SupersededBy, d.State)
	if got != want {
		return fmt.Sprintf("%s, decoded %s", got, want)
	}
	return ""
}

// TestWarmPagesEqualDecoded: every page Write builds for the cache
// (WriteOptions.Warm) is exactly the page decodePages decodes from the
// file, for every type with its extremes and NULLs (narrow integers,
// REAL, 16-byte decimals), partial pages at block ends, and a delta whose
// optional fixed columns (ordering values, tombs, resolution) are absent.
// After OpenCached every warmed page is in the cache, and lookups of
// every key are served without a decode and equal an uncached reader's.
func TestWarmPagesEqualDecoded(t *testing.T) {
	full := makeFixture(t, 700, allTypes, nil)
	sparse := makeFixture(t, 700, allTypes[:6], nil)
	sparse.meta.Kind = KindDelta
	sparse.d.Order, sparse.d.Tomb, sparse.d.WonAt, sparse.d.EndedAt = nil, nil, nil, nil
	sparse.d.SupersededBy, sparse.d.State = nil, nil
	// A delta part with ordering values rebuilt, whose _order pages are
	// not warmed.
	ordered := orderFixture(t, 700)
	ordered.meta.Kind = KindDelta
	for _, tc := range []struct {
		name string
		fx   fixture
	}{{"current", full}, {"delta", sparse}, {"delta, rebuilt order", ordered}} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := newFS(t)
			c := NewCache(64 << 20)
			path := "parts/w.part"
			if _, err := Write(fsys, path, tc.fx.d, tc.fx.meta, WriteOptions{BlockRows: 300, PageRows: 64, Warm: c}); err != nil {
				t.Fatal(err)
			}
			pending := c.warm.parts[path]
			if pending == nil || len(pending.pages) == 0 {
				t.Fatal("Write kept no pages")
			}
			plain, err := Open(fsys, path)
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close()
			if m := plain.Meta(); tc.fx.meta.OrderFrom != nil && m.OrderFrom == nil {
				t.Fatalf("the part was not written in the form under test: %+v", m)
			}
			w := plain.window()
			checked := 0
			for _, wp := range pending.pages {
				task := chunkTask{col: wp.col, fixed: -1}
				for f := range numFixed {
					if plain.fixed[f] == wp.col {
						task.fixed = f
					}
				}
				if task.fixed < 0 {
					for k, l := range plain.leaf {
						if l == wp.col {
							task.v, task.ph = types.NewVector(plain.meta.Columns[k].Type, 0), plain.phys[k]
						}
					}
				}
				chunks := plain.file.RowGroups()[wp.block].ColumnChunks()
				src, tv, err := plain.decodePages(w, wp.block, &task, chunks, wp.first, wp.first+wp.rows, &Data{}, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				if task.fixed < 0 {
					src = &Data{first: src.first, Cols: []*types.Vector{tv}}
				}
				if diff := samePage(wp.d, src, task.fixed); diff != "" {
					t.Fatalf("block %d column %d page at %d: %s", wp.block, wp.col, wp.first, diff)
				}
				checked++
			}
			r, err := OpenCached(fsys, path, c)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if st := c.Stats(); st.Warmed != int64(checked) || st.Pages != checked {
				t.Fatalf("cache holds %d pages, %d warmed; Write built %d", st.Pages, st.Warmed, checked)
			}
			if c.warm.parts[path] != nil {
				t.Fatal("the open left the pages aside")
			}
			want, err := lookupEvery(plain, ids(tc.fx.meta))
			if err != nil {
				t.Fatal(err)
			}
			before := c.Stats()
			got, err := lookupEvery(r, ids(tc.fx.meta))
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatal("lookups through warmed pages differ from decoded ones")
			}
			if st := c.Stats(); st.Misses != before.Misses {
				t.Fatalf("%d misses after warming %d pages", st.Misses-before.Misses, st.Pages)
			}
		})
	}
}

// TestWarmOnlyMatchingOpen: pages are put in the cache only by the open
// of the file they were built for (same path and size), a part never
// opened does not keep its pages aside past maxWarmParts later writes or
// past half the cache's budget, a part larger than half the budget is not
// warmed, and neither is a history part.
func TestWarmOnlyMatchingOpen(t *testing.T) {
	fsys := newFS(t)
	c := NewCache(64 << 20)
	fx := makeFixture(t, 200, allTypes[:3], nil)
	if _, err := Write(fsys, "parts/a", fx.d, fx.meta, WriteOptions{Warm: c}); err != nil {
		t.Fatal(err)
	}
	// Rewritten without Warm (a retried write): the held pages name the
	// old file's size and must not be used for a different file.
	fx2 := makeFixture(t, 150, allTypes[:3], nil)
	if _, err := Write(fsys, "parts/a", fx2.d, fx2.meta, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenCached(fsys, "parts/a", c)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if st := c.Stats(); st.Warmed != 0 {
		t.Fatalf("%d pages of another file warmed", st.Warmed)
	}
	for i := range maxWarmParts + 5 {
		if _, err := Write(fsys, fmt.Sprint("parts/x", i), fx.d, fx.meta, WriteOptions{Warm: c}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.warm.parts); n != maxWarmParts || len(c.warm.order) != maxWarmParts {
		t.Fatalf("%d parts held aside (%d in order), want %d", n, len(c.warm.order), maxWarmParts)
	}
	// Held-aside pages take at most half the cache's budget, and a part
	// whose pages would take more than half of it is not warmed at all.
	one := c.warm.parts["parts/x0"]
	if one == nil {
		one = c.warm.parts[c.warm.order[0]]
	}
	small := NewCache(one.bytes * 5)
	for i := range 4 {
		if _, err := Write(fsys, fmt.Sprint("parts/y", i), fx.d, fx.meta, WriteOptions{Warm: small}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(small.warm.parts); n != 2 || small.warm.bytes != 2*one.bytes || small.warm.parts["parts/y3"] == nil {
		t.Fatalf("%d parts (%d bytes) held aside in a cache of %d bytes; want the newest 2 of %d bytes each", n, small.warm.bytes, small.bytes, one.bytes)
	}
	if r, err := OpenCached(fsys, "parts/y3", small); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}
	if small.warm.bytes != one.bytes || small.Stats().Warmed == 0 {
		t.Fatalf("after the open: %d bytes held aside, %d pages warmed", small.warm.bytes, small.Stats().Warmed)
	}
	tiny := NewCache(one.bytes * 3 / 2)
	if _, err := Write(fsys, "parts/z", fx.d, fx.meta, WriteOptions{Warm: tiny}); err != nil {
		t.Fatal(err)
	}
	if len(tiny.warm.parts) != 0 {
		t.Fatal("a part larger than half the cache was warmed")
	}
	// A history part is not warmed.
	fx.meta.Kind = KindHistory
	if _, err := Write(fsys, "parts/h", fx.d, fx.meta, WriteOptions{Warm: c}); err != nil {
		t.Fatal(err)
	}
	if c.warm.parts["parts/h"] != nil {
		t.Fatal("a history part's pages were kept")
	}
}

// lookupEvery finds every key of every block (FindKey) and reads its rows
// (ReadRows) with the fixed columns warmed and the table columns ids, and
// returns a transcript of the results.
func lookupEvery(r *Reader, ids []catalog.ColumnID) (string, error) {
	var out []byte
	var whole, sc, rows Data
	for bi, b := range r.Blocks() {
		if err := r.ReadBlockFixed(bi, FixSort, nil, &whole); err != nil {
			return "", err
		}
		for row := 0; row < b.Rows; row++ {
			lo, hi, err := r.FindKey(bi, whole.Sort.BytesAt(row), &sc)
			if err != nil {
				return "", err
			}
			if err := r.ReadRows(bi, lo, hi, warmFixed, ids, &rows); err != nil {
				return "", err
			}
			out = fmt.Appendf(out, "b%d [%d,%d):", bi, lo, hi)
			for i := range rows.Rows {
				out = fmt.Appendf(out, " %x/%x/%d/%d/%d/%v/%d/%d", rows.Sort.BytesAt(i), rows.Order.BytesAt(i), rows.Group[i],
					rows.Commit[i], rows.Seq[i], rows.Tomb[i], rows.WonAt[i], rows.EndedAt[i])
				for _, v := range rows.Cols {
					if v.Type().Kind.Class() == types.ClassFloat64 && !v.IsNull(i) {
						out = fmt.Appendf(out, "/%x", math.Float64bits(v.Float64s()[i]))
					} else {
						out = fmt.Appendf(out, "/%v", v.Get(i))
					}
				}
			}
			out = append(out, '\n')
		}
	}
	return string(out), nil
}

// TestWarmWithinCacheBudget: the pages held aside for parts not yet
// opened count against the cache's budget. Into a cache full of decoded
// pages, warmed writes make it evict as much as they hold, so that the
// two together never exceed the budget (they once took up to twice it);
// the opens give the budget back, and the warmed pages then sit in the
// cache within it.
func TestWarmWithinCacheBudget(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 200, allTypes[:3], nil)
	probe := NewCache(64 << 20)
	if _, err := Write(fsys, "parts/probe", fx.d, fx.meta, WriteOptions{Warm: probe}); err != nil {
		t.Fatal(err)
	}
	one := probe.warm.parts["parts/probe"].bytes
	c := NewCache(one * 5) // room for two parts held aside
	budgets := func() (sum int64) {
		for i := range c.shards {
			sum += c.shards[i].budget
		}
		return sum
	}
	full := budgets()
	// Decoded pages of some other part fill every shard.
	for i := range 4 * int(c.bytes/pageBytes(&Data{Group: make([]uint16, 100)})) {
		c.put(pageKey{reader: 1 << 60, block: uint32(i)}, &Data{Group: make([]uint16, 100)}, classCurrent)
	}
	if st := c.Stats(); st.Bytes < c.bytes*9/10 {
		t.Fatalf("the cache holds %d bytes of its %d", st.Bytes, c.bytes)
	}
	within := func(stage string) {
		t.Helper()
		if st := c.Stats(); st.Bytes+c.warm.bytes > c.bytes {
			t.Fatalf("%s: %d bytes cached and %d held aside, over the budget of %d", stage, st.Bytes, c.warm.bytes, c.bytes)
		}
	}
	for i := range 4 {
		if _, err := Write(fsys, fmt.Sprint("parts/w", i), fx.d, fx.meta, WriteOptions{Warm: c}); err != nil {
			t.Fatal(err)
		}
		within(fmt.Sprint("write ", i))
	}
	if len(c.warm.parts) != 2 {
		t.Fatalf("%d parts held aside, want 2", len(c.warm.parts))
	}
	for _, path := range slices.Clone(c.warm.order) {
		r, err := OpenCached(fsys, path, c)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		within("open " + path)
	}
	if c.warm.bytes != 0 || c.warm.lentPer != 0 || budgets() != full {
		t.Fatalf("after the opens: %d bytes held aside, %d lent per shard, budgets %d of %d", c.warm.bytes, c.warm.lentPer, budgets(), full)
	}
	if st := c.Stats(); st.Warmed == 0 || st.Bytes > c.bytes {
		t.Fatalf("after the opens: %d pages warmed, %d bytes cached of %d", st.Warmed, st.Bytes, c.bytes)
	}
}

// TestPrewarm: after Prewarm of a part written without warming, looking
// up every key with the columns prewarmed decodes nothing and answers as
// a part read without a cache does; a limit stops it early, having added
// at least that much and less than everything.
func TestPrewarm(t *testing.T) {
	fx := makeFixture(t, 700, allTypes[:6], nil)
	fx.meta.Kind = KindDelta
	fsys := newFS(t)
	path := "parts/p.part"
	if _, err := Write(fsys, path, fx.d, fx.meta, WriteOptions{BlockRows: 300, PageRows: 64}); err != nil {
		t.Fatal(err)
	}
	plain, err := Open(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want, err := lookupEvery(plain, ids(fx.meta))
	if err != nil {
		t.Fatal(err)
	}

	c := NewCache(64 << 20)
	r, err := OpenCached(fsys, path, c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	all, err := r.Prewarm(warmFixed, ids(fx.meta), 1<<40, &Data{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); all <= 0 || st.Bytes != all || st.Pages == 0 {
		t.Fatalf("Prewarm added %d bytes; the cache holds %d pages, %d bytes", all, st.Pages, st.Bytes)
	}
	before := c.Stats()
	got, err := lookupEvery(r, ids(fx.meta))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatal("lookups through prewarmed pages differ from decoded ones")
	}
	// lookupEvery's whole-block reads of the sort keys do not go through
	// the page cache; every page lookup does.
	if st := c.Stats(); st.Misses != before.Misses || st.Hits == before.Hits {
		t.Fatalf("after Prewarm: %d misses, %d hits", st.Misses-before.Misses, st.Hits-before.Hits)
	}
	// Prewarm of a part still cached probes each page's sort keys and
	// reads nothing: no hit, no miss, nothing added.
	before = c.Stats()
	if again, err := r.Prewarm(warmFixed, ids(fx.meta), 1<<40, &Data{}, nil); err != nil || again != 0 {
		t.Fatalf("Prewarm of a cached part added %d (%v)", again, err)
	}
	if st := c.Stats(); st.Hits != before.Hits || st.Misses != before.Misses {
		t.Fatalf("Prewarm of a cached part: %d hits, %d misses", st.Hits-before.Hits, st.Misses-before.Misses)
	}

	c2 := NewCache(64 << 20)
	r2, err := OpenCached(fsys, path, c2)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	limit := all / 4
	got2, err := r2.Prewarm(warmFixed, ids(fx.meta), limit, &Data{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got2 < limit || got2 >= all {
		t.Fatalf("Prewarm with limit %d added %d (everything is %d)", limit, got2, all)
	}
}
