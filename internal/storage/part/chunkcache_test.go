package part

import (
	"testing"

	"github.com/strata-db/strata/internal/catalog"
)

// TestChunkCacheMatchesFreshDecode: blocks read through a cached reader —
// decoded the first time, copied out of the cache after — equal what an
// uncached reader decodes, for every fixed column and table columns with
// NULLs, in several projections that share chunks; and the second pass
// hits only.
func TestChunkCacheMatchesFreshDecode(t *testing.T) {
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
	reads := []struct {
		fixed Fixed
		ids   []catalog.ColumnID
	}{
		{FixAll, []catalog.ColumnID{1, 2, 3, 4}},
		{FixSort | FixCommit, []catalog.ColumnID{3, 9, 1}},
		{FixAll, []catalog.ColumnID{4, 4}},
		{FixGroup | FixWonAt | FixEndedAt, nil},
	}
	var want, got, view Data
	for pass := range 2 {
		before := c.Stats()
		for _, rd := range reads {
			for bi := range r.Blocks() {
				if err := plain.ReadBlockFixed(bi, rd.fixed, rd.ids, &want); err != nil {
					t.Fatal(err)
				}
				if err := r.ReadBlockFixed(bi, rd.fixed, rd.ids, &got); err != nil {
					t.Fatal(err)
				}
				// sameData wants every fixed column: compare the ones read.
				w, g := projected(&want, rd.fixed), projected(&got, rd.fixed)
				if diff := sameData(w, g); diff != "" {
					t.Fatalf("pass %d, read %+v, block %d: %s", pass, rd, bi, diff)
				}
				// A view shares the cached chunks; reading into it again
				// (as a copy, then as a view) must leave them intact.
				if err := r.ReadBlockView(bi, rd.fixed, rd.ids, &view); err != nil {
					t.Fatal(err)
				}
				if diff := sameData(w, projected(&view, rd.fixed)); diff != "" {
					t.Fatalf("pass %d, view %+v, block %d: %s", pass, rd, bi, diff)
				}
				if err := r.ReadBlockFixed((bi+1)%len(r.Blocks()), rd.fixed, rd.ids, &view); err != nil {
					t.Fatal(err)
				}
			}
		}
		if st := c.Stats(); pass == 1 && (st.Misses != before.Misses || st.Hits == before.Hits) {
			t.Fatalf("second pass: %+v after %+v, want hits only", st, before)
		}
	}
	// Views first, from a reader with nothing cached: misses, then hits.
	r3, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	for pass := range 2 {
		for bi := range r3.Blocks() {
			ids := []catalog.ColumnID{2, 9, 1}
			if err := plain.ReadBlockFixed(bi, FixSort|FixCommit|FixWonAt, ids, &want); err != nil {
				t.Fatal(err)
			}
			if err := r3.ReadBlockView(bi, FixSort|FixCommit|FixWonAt, ids, &view); err != nil {
				t.Fatal(err)
			}
			if diff := sameData(projected(&want, FixSort|FixCommit|FixWonAt), projected(&view, FixSort|FixCommit|FixWonAt)); diff != "" {
				t.Fatalf("pass %d, fresh view, block %d: %s", pass, bi, diff)
			}
		}
	}
	// A once-only read (a merge's) is served by the cache but adds nothing.
	r2, err := OpenCached(fsys, "p", c)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	before := c.Stats()
	if err := r2.ReadBlockOnce(0, []catalog.ColumnID{1}, &got); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Pages != before.Pages {
		t.Fatalf("ReadBlockOnce cached %d chunks", st.Pages-before.Pages)
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
		if err := r.ReadBlock(0, []catalog.ColumnID{1, 2}, &d); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	one := c.Stats()
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
