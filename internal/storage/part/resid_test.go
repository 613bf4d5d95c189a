package part

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// residFixture is a history part laid out as merges write the benchmark's
// table: keys of 8 rows, 4 in group 1 and 4 in group 2 that repeat group
// 1's commits (seq + 1000), each group's rows superseded, late, superseded,
// current, with the resolution version.Resolve gives (WonAt the commit of
// rows that won, EndedAt the next winner's commit, SupersededBy the EndedAt
// of ended rows and the previous winner's commit of late ones). Every 13th
// row has arbitrary values instead, and so do its commit and seq where
// the order allows: the residuals must be a bijection, not a bet on the
// rules.
func residFixture(t testing.TB, rows int) fixture {
	fx := makeFixture(t, rows, allTypes[:3], nil)
	fx.meta.Kind = KindHistory
	d := fx.d
	d.Sort = types.NewVector(types.Of(types.Bytes), rows)
	var key []byte
	for i := range rows {
		k, j := i/8, i%8
		g, rank := 1+j/4, j%4
		key = sortKey(key[:0], k)
		d.Sort.AppendBytes(key)
		d.Group[i] = uint16(g)
		d.Tomb[i] = false
		c := uint64(1000 + 3*k + 20*rank)
		d.Commit[i] = c
		d.Seq[i] = uint32((k*13+rank)%1000 + (g-1)*1000)
		d.WonAt[i], d.EndedAt[i], d.SupersededBy[i] = version.NoCommit, version.NoCommit, version.NoCommit
		switch rank {
		case 0:
			d.State[i] = version.Superseded
			d.WonAt[i], d.EndedAt[i], d.SupersededBy[i] = c, c+40, c+40
		case 1:
			d.State[i] = version.Late
			d.SupersededBy[i] = c - 20
		case 2:
			d.State[i] = version.Superseded
			d.WonAt[i], d.EndedAt[i], d.SupersededBy[i] = c, c+20, c+20
		case 3:
			d.State[i] = version.Current
			d.WonAt[i], d.EndedAt[i] = c, version.Forever
		}
		if i%13 == 0 {
			d.State[i] = version.State(i % 8)
			d.WonAt[i], d.EndedAt[i], d.SupersededBy[i] = uint64(i)*0x9e3779b97f4a7c15, uint64(i%3), ^uint64(i)
			if rank == 0 {
				d.Commit[i] = c - 1 - uint64(i%7)
				d.Seq[i] = ^uint32(i)
			}
		}
	}
	return fx
}

// TestResidualRoundTrip writes a history part with residuals (format 3)
// and reads it back by every path: whole blocks with and without the
// base columns, views of the chunk cache (first, kept, and with only some
// chunks cached), and page reads with and without the page cache. Every
// read gives the values written, and the residuals take fewer bytes than
// the plain columns.
func TestResidualRoundTrip(t *testing.T) {
	fsys := newFS(t)
	fx := residFixture(t, 5000)
	opts := WriteOptions{BlockRows: 1200, PageRows: 256}
	info := writeFixture(t, fsys, "parts/h.part", fx, opts)
	writeResiduals = false
	plain := writeFixture(t, fsys, "parts/plain.part", fx, opts)
	writeResiduals = true
	if info.Fixed.Compressed >= plain.Fixed.Compressed {
		t.Errorf("fixed columns take %d bytes with residuals, %d without", info.Fixed.Compressed, plain.Fixed.Compressed)
	}
	t.Logf("fixed columns: %d bytes with residuals, %d without", info.Fixed.Compressed, plain.Fixed.Compressed)
	for _, p := range []string{"parts/h.part", "parts/plain.part"} {
		if err := Check(fsys, p); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenCached(fsys, "parts/h.part", NewCache(DefaultCacheBytes))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.fm.Format != 3 || !r.Meta().Residual || !r.Meta().PositionResidual {
		t.Fatalf("format %d, residual %v, position residual %v", r.fm.Format, r.Meta().Residual, r.Meta().PositionResidual)
	}
	if diff := sameData(fx.d, readAll(t, r, ids(fx.meta))); diff != "" {
		t.Fatal(diff)
	}
	d := fx.d
	same := func(what string, got *Data, f Fixed, lo, hi int) {
		t.Helper()
		if f&FixWonAt != 0 && !slices.Equal(got.WonAt, d.WonAt[lo:hi]) {
			t.Fatalf("%s: won_at of rows [%d, %d) differs", what, lo, hi)
		}
		if f&FixCommit != 0 && !slices.Equal(got.Commit, d.Commit[lo:hi]) {
			t.Fatalf("%s: commit of rows [%d, %d) differs", what, lo, hi)
		}
		if f&FixSeq != 0 && !slices.Equal(got.Seq, d.Seq[lo:hi]) {
			t.Fatalf("%s: seq of rows [%d, %d) differs", what, lo, hi)
		}
		if f&FixEndedAt != 0 && !slices.Equal(got.EndedAt, d.EndedAt[lo:hi]) {
			t.Fatalf("%s: ended_at of rows [%d, %d) differs", what, lo, hi)
		}
		if f&FixSupersededBy != 0 && !slices.Equal(got.SupersededBy, d.SupersededBy[lo:hi]) {
			t.Fatalf("%s: superseded_by of rows [%d, %d) differs", what, lo, hi)
		}
		if f&FixCommit == 0 && len(got.Commit) != 0 || f&FixState == 0 && len(got.State) != 0 || f&FixEndedAt == 0 && len(got.EndedAt) != 0 {
			t.Fatalf("%s: base columns not asked for were filled", what)
		}
	}
	base := 0
	var blk Data
	for bi, b := range r.Blocks() {
		for _, read := range []struct {
			name  string
			fixed Fixed
			view  bool
		}{
			{"commit alone", FixCommit, false},
			{"seq alone", FixSeq, false},
			{"won_at alone", FixWonAt, false},
			{"won_at and group", FixWonAt | FixGroup, false},
			{"superseded_by alone", FixSupersededBy, false},
			{"ended_at alone", FixEndedAt, false},
			{"superseded_by and commit", FixSupersededBy | FixCommit, false},
			{"superseded_by and ended_at", FixSupersededBy | FixEndedAt, false},
			{"interval", FixSort | FixCommit | FixWonAt | FixEndedAt, false},
			{"with bases", FixWonAt | FixSupersededBy | FixState | FixCommit | FixEndedAt, false},
			{"view of the state, first", FixState, true},
			{"view of the state, kept", FixState, true},
			{"view of won_at and state, state cached", FixWonAt | FixState, true},
			{"view of the interval, first", FixCommit | FixWonAt | FixEndedAt, true},
			{"view of the interval, kept", FixCommit | FixWonAt | FixEndedAt, true},
			{"copy of cached won_at", FixWonAt, false},
			{"view of everything, kept", FixAll, true},
			{"view of superseded_by, cached", FixSupersededBy, true},
		} {
			f := r.ReadBlockFixed
			if read.view {
				f = r.ReadBlockView
			}
			if err := f(bi, read.fixed, nil, &blk); err != nil {
				t.Fatal(err)
			}
			same(fmt.Sprintf("block %d, %s", bi, read.name), &blk, read.fixed, base, base+b.Rows)
		}
		base += b.Rows
	}
	// Page reads, through a reader without a cache, then one with a
	// cache (twice: decoded, then cached pages), then one whose chunk
	// cache holds the bases but not won_at.
	nocache, err := Open(fsys, "parts/h.part")
	if err != nil {
		t.Fatal(err)
	}
	defer nocache.Close()
	paged, err := OpenCached(fsys, "parts/h.part", NewCache(DefaultCacheBytes))
	if err != nil {
		t.Fatal(err)
	}
	defer paged.Close()
	for _, rd := range []*Reader{nocache, paged, paged, r} {
		base = 0
		for bi, b := range rd.Blocks() {
			for _, rg := range [][2]int{{0, 1}, {100, 120}, {250, 270}, {255, 513}, {b.Rows - 3, b.Rows}, {0, b.Rows}} {
				if rg[1] > b.Rows || rg[0] < 0 {
					continue
				}
				for _, f := range []Fixed{FixCommit, FixSeq, FixWonAt, FixEndedAt, FixSupersededBy, FixWonAt | FixSupersededBy | FixState, FixAll} {
					if err := rd.ReadRows(bi, rg[0], rg[1], f, nil, &blk); err != nil {
						t.Fatal(err)
					}
					same(fmt.Sprintf("block %d rows %v", bi, rg), &blk, f, base+rg[0], base+rg[1])
				}
			}
			base += b.Rows
		}
	}
}

// TestResidualOnlyHistory: parts of other kinds, and history parts
// written with the hook off, store the resolution as it is.
func TestResidualOnlyHistory(t *testing.T) {
	for _, c := range []struct {
		name   string
		kind   Kind
		hook   bool
		format int
	}{
		{"current", KindCurrent, true, 1},
		{"delta", KindDelta, true, 1},
		{"asof", KindAsOf, true, 1},
		{"history, hook off", KindHistory, false, 1},
		{"history", KindHistory, true, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := newFS(t)
			fx := residFixture(t, 1000)
			fx.meta.Kind = c.kind
			writeResiduals = c.hook
			defer func() { writeResiduals = true }()
			writeFixture(t, fsys, "parts/p.part", fx, WriteOptions{BlockRows: 300, PageRows: 128})
			r, err := Open(fsys, "parts/p.part")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.fm.Format != c.format || r.Meta().Residual != (c.format == 3) {
				t.Fatalf("format %d, residual %v", r.fm.Format, r.Meta().Residual)
			}
			if diff := sameData(fx.d, readAll(t, r, ids(fx.meta))); diff != "" {
				t.Fatal(diff)
			}
			if err := Check(fsys, "parts/p.part"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReadFormat2 reads testdata/format2-history.part, which main's code
// wrote before format 3 (orderFixture(2000), BlockRows 700, PageRows 256:
// _order rebuilt, resolution stored as it is): this build reads it by
// every path and Check passes.
func TestReadFormat2(t *testing.T) {
	fx := orderFixture(t, 2000)
	r, err := OpenCached(vfs.OS{}, "testdata/format2-history.part", NewCache(DefaultCacheBytes))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.fm.Format != 2 || r.Meta().Residual || len(r.Meta().OrderFrom) != 2 {
		t.Fatalf("format %d, residual %v, OrderFrom %v", r.fm.Format, r.Meta().Residual, r.Meta().OrderFrom)
	}
	if err := Check(vfs.OS{}, "testdata/format2-history.part"); err != nil {
		t.Fatal(err)
	}
	if diff := sameData(fx.d, readAll(t, r, ids(fx.meta))); diff != "" {
		t.Fatal(diff)
	}
	var d Data
	base := 0
	for bi, b := range r.Blocks() {
		for k := range 2 {
			if err := r.ReadBlockView(bi, FixWonAt|FixSupersededBy, []catalog.ColumnID{10}, &d); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.WonAt, fx.d.WonAt[base:base+b.Rows]) || !slices.Equal(d.SupersededBy, fx.d.SupersededBy[base:base+b.Rows]) {
				t.Fatalf("block %d, view %d: resolution differs", bi, k)
			}
		}
		if err := r.ReadRows(bi, 10, 300, FixWonAt|FixSupersededBy, nil, &d); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.WonAt, fx.d.WonAt[base+10:base+300]) || !slices.Equal(d.SupersededBy, fx.d.SupersededBy[base+10:base+300]) {
			t.Fatalf("block %d: page read of the resolution differs", bi)
		}
		base += b.Rows
	}
}

// TestResidualRefused: metadata claiming residuals where Write never puts
// them (before format 3, in a part of another kind, or without pages to
// take bases within) is corrupt rather than read with the wrong values.
func TestResidualRefused(t *testing.T) {
	const cols = `"columns":[{"id":10,"type":"UINT64","kind":"UINT64","codec":"DELTA, ZSTD(1)"}]`
	for _, js := range []string{
		`{"format":2,"kind":"history","stripe":32768,` + cols + `,"resolution_residual":true}`,
		`{"format":3,"kind":"current","stripe":32768,"page_rows":256,` + cols + `,"resolution_residual":true}`,
		`{"format":3,"kind":"history","stripe":32768,` + cols + `,"resolution_residual":true}`,
		`{"format":2,"kind":"history","stripe":32768,"page_rows":256,` + cols + `,"position_residual":true}`,
		`{"format":3,"kind":"delta","stripe":32768,"page_rows":256,` + cols + `,"position_residual":true}`,
	} {
		_, _, _, err := decodeMeta(js)
		if err == nil || errors.Is(err, ErrVersion) {
			t.Errorf("%s: %v", js, err)
		}
	}
	m, _, _, err := decodeMeta(`{"format":3,"kind":"history","stripe":32768,"page_rows":256,` + cols + `,"resolution_residual":true}`)
	if err != nil || !m.Residual {
		t.Fatalf("valid residual part: %v %v", m, err)
	}
	if _, _, _, err := decodeMeta(`{"format":4,"kind":"history","stripe":32768,` + cols + `}`); !errors.Is(err, ErrVersion) {
		t.Fatalf("format 4: %v", err)
	}
}

// TestPositionResidualWherePays: a history part whose second group does
// not repeat the first group's commits (groups written by separate
// commits) keeps commit and seq as they are, and its resolution residuals
// still read back; one where most rows repeat them stores residuals.
func TestPositionResidualWherePays(t *testing.T) {
	for _, c := range []struct {
		name  string
		shift uint64
		want  bool
	}{{"repeated", 0, true}, {"separate commits", 1, false}} {
		t.Run(c.name, func(t *testing.T) {
			fsys := newFS(t)
			fx := residFixture(t, 2000)
			for i := range fx.d.Rows {
				if fx.d.Group[i] == 2 {
					fx.d.Commit[i] += c.shift
				}
			}
			writeFixture(t, fsys, "parts/p.part", fx, WriteOptions{BlockRows: 700, PageRows: 128})
			r, err := Open(fsys, "parts/p.part")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.fm.Format != 3 || !r.Meta().Residual || r.Meta().PositionResidual != c.want {
				t.Fatalf("format %d, residual %v, position residual %v", r.fm.Format, r.Meta().Residual, r.Meta().PositionResidual)
			}
			if diff := sameData(fx.d, readAll(t, r, ids(fx.meta))); diff != "" {
				t.Fatal(diff)
			}
			if err := Check(fsys, "parts/p.part"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
