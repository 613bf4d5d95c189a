package part

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// writeHistoryRuns writes a history part of rows whose keys come in runs
// of 1 to 25 rows, and a few runs longer than a page, so that runs cross
// page and block boundaries; it returns the distinct keys in order.
func writeHistoryRuns(t *testing.T, fsys vfs.FS, path string, rows, pageRows, blockRows int) [][]byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 9))
	cols := []ColumnMeta{{ID: 1, Type: types.Of(types.Int64), Codec: catalog.DefaultCodec(types.Of(types.Int64))}}
	d := &Data{Sort: types.NewVector(types.Of(types.Bytes), rows), IDs: []catalog.ColumnID{1},
		Cols: []*types.Vector{types.NewVector(cols[0].Type, rows)}}
	var keys [][]byte
	for k := 0; d.Rows < rows; k += 2 {
		key := fmt.Appendf(nil, "key-%08d", k)
		keys = append(keys, key)
		run := 1 + rng.IntN(25)
		if rng.IntN(40) == 0 {
			run = pageRows + rng.IntN(2*pageRows)
		}
		for ; run > 0 && d.Rows < rows; run-- {
			d.Sort.AppendBytes(key)
			d.Commit = append(d.Commit, uint64(d.Rows+1))
			d.Seq = append(d.Seq, 0)
			d.Tomb = append(d.Tomb, false)
			d.Cols[0].AppendInt64(int64(d.Rows))
			d.Rows++
		}
	}
	if _, err := Write(fsys, path, d, Meta{Table: 1, Part: 1, Kind: KindHistory, Columns: cols}, WriteOptions{BlockRows: blockRows, PageRows: pageRows}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// sameFindKey runs FindKey of probe in block bi on an uncached reader and
// on r and fails t unless both succeed with the same rows, which it
// returns; ps and cs are their scratch, what names the case.
func sameFindKey(t *testing.T, plain, r *Reader, bi int, probe []byte, ps, cs *Data, what string) (lo, hi int) {
	t.Helper()
	plo, phi, err := plain.FindKey(bi, probe, ps)
	if err != nil {
		t.Fatal(err)
	}
	clo, chi, err := r.FindKey(bi, probe, cs)
	if err != nil {
		t.Fatal(err)
	}
	if plo != clo || phi != chi {
		t.Fatalf("%s, block %d key %q: [%d,%d), uncached [%d,%d)", what, bi, probe, clo, chi, plo, phi)
	}
	return plo, phi
}

// TestFindKeyRunsMatchesRows: FindKey over a history part's sort-key pages
// cached as key runs returns what an uncached reader finds row by row, for
// every key held (runs within a page, across pages and across blocks),
// keys between two held keys and keys before and after all of them, on
// the pass that decodes the pages and the one served from the cache; and
// the pages are cached in that form, not row by row.
func TestFindKeyRunsMatchesRows(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows, rows = 64, 40*64 + 17
	keys := writeHistoryRuns(t, fsys, "h", rows, pageRows, 7*pageRows+5)
	plain, r, c := openPlainCached(t, fsys, "h")
	var probes [][]byte
	probes = append(probes, []byte("a"), []byte("z"))
	for _, k := range keys {
		probes = append(probes, k, append(bytes.Clone(k), 0), k[:len(k)-1])
	}
	var ps, cs Data
	found := 0
	for pass := range 2 {
		for bi := range r.Blocks() {
			for _, probe := range probes {
				plo, phi := sameFindKey(t, plain, r, bi, probe, &ps, &cs, fmt.Sprint("pass ", pass))
				if pass == 0 && phi > plo {
					found++
				}
			}
		}
	}
	if found < len(keys) {
		t.Fatalf("found %d keys of %d", found, len(keys))
	}
	runs, rowByRow := 0, 0
	for bi, b := range r.Blocks() {
		for from := 0; from < b.Rows; from += pageRows {
			k := pageKey{reader: r.id, block: uint32(bi), col: uint32(r.fixed[fSort]), first: uint32(from)}
			if c.has(k) {
				rowByRow++
			}
			k.col |= keyRunsCol
			if d := c.find(k); d != nil {
				runs++
				if d.Rows != min(pageRows, b.Rows-from) || int(d.runEnds[len(d.runEnds)-1]) != d.Rows || d.Sort.Len() != len(d.runEnds) {
					t.Fatalf("block %d page at %d: %d rows, %d keys, runs end %v", bi, from, d.Rows, d.Sort.Len(), d.runEnds)
				}
			}
		}
	}
	if runs == 0 || rowByRow != 0 {
		t.Fatalf("%d pages cached as key runs, %d row by row", runs, rowByRow)
	}
}

// TestFindKeyRowPagesKept: a history part's sort-key page already cached
// row by row (a read of the keys put it there) is searched in that form,
// not decoded again into key runs, and gives the same rows.
func TestFindKeyRowPagesKept(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows = 64
	keys := writeHistoryRuns(t, fsys, "h", 10*pageRows, pageRows, 0)
	plain, r, c := openPlainCached(t, fsys, "h")
	var rows Data
	if err := r.ReadRows(0, 0, 1, FixSort, nil, &rows); err != nil {
		t.Fatal(err)
	}
	var ps, cs Data
	for _, k := range keys[:3] {
		sameFindKey(t, plain, r, 0, k, &ps, &cs, "page cached row by row")
	}
	if c.find(pageKey{reader: r.id, col: uint32(r.fixed[fSort]) | keyRunsCol}) != nil {
		t.Fatal("the first page was decoded into key runs beside its cached rows")
	}
}

// TestKeyRuns: the key-runs form of a page holds each key once, in order,
// with the end of its rows.
func TestKeyRuns(t *testing.T) {
	v := types.NewVector(types.Of(types.Bytes), 8)
	for _, k := range []string{"a", "a", "b", "c", "c", "c", "d", "e"} {
		v.AppendBytes([]byte(k))
	}
	kr := keyRuns(v)
	var got []string
	for i := range kr.Sort.Len() {
		got = append(got, fmt.Sprintf("%s:%d-%d", kr.Sort.BytesAt(i), kr.runStart(i), kr.runEnds[i]))
	}
	if want := "[a:0-2 b:2-3 c:3-6 d:6-7 e:7-8]"; fmt.Sprint(got) != want {
		t.Fatalf("key runs %v, want %v", got, want)
	}
	if kr.Rows != 8 {
		t.Fatalf("rows %d", kr.Rows)
	}
	if x := kr.findRun([]byte("c")); x != 2 {
		t.Fatalf("findRun(c) = %d", x)
	}
	if x := kr.findRun([]byte("bb")); x != -1 {
		t.Fatalf("findRun(bb) = %d", x)
	}
}

// TestPrewarmHistoryKeyRuns: Prewarm of a history part puts its sort-key
// pages in the cache as key runs, not row by row, so that FindKey then
// decodes nothing and finds what an uncached reader does.
func TestPrewarmHistoryKeyRuns(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows, rows = 64, 12*64 + 5
	keys := writeHistoryRuns(t, fsys, "h", rows, pageRows, 5*pageRows)
	plain, r, c := openPlainCached(t, fsys, "h")
	var d Data
	if _, err := r.Prewarm(FixGroup|FixWonAt|FixEndedAt, nil, 1<<30, &d, nil); err != nil {
		t.Fatal(err)
	}
	for bi, b := range r.Blocks() {
		for from := 0; from < b.Rows; from += pageRows {
			k := pageKey{reader: r.id, block: uint32(bi), col: uint32(r.fixed[fSort]), first: uint32(from)}
			if c.has(k) {
				t.Fatalf("block %d page at %d: sort keys cached row by row", bi, from)
			}
			if k.col |= keyRunsCol; !c.has(k) {
				t.Fatalf("block %d page at %d: no key runs cached", bi, from)
			}
		}
	}
	var tr PageTrace
	cs := Data{Trace: &tr}
	var ps Data
	for bi := range r.Blocks() {
		for _, k := range keys {
			sameFindKey(t, plain, r, bi, k, &ps, &cs, "prewarmed")
		}
	}
	if tr.Decoded != 0 || tr.Hits == 0 {
		t.Fatalf("FindKey after Prewarm decoded %d pages, found %d cached", tr.Decoded, tr.Hits)
	}
}

// TestCacheFree: a cache's free room is its budget less what it holds.
func TestCacheFree(t *testing.T) {
	var nilCache *Cache
	if nilCache.Free() != 0 {
		t.Fatal("a nil cache has room")
	}
	c := NewCache(64 << 20)
	empty := c.Free()
	if empty < 63<<20 || empty > 64<<20 {
		t.Fatalf("an empty 64 MiB cache has %d bytes free", empty)
	}
	d := &Data{Group: make([]uint16, 4096)}
	c.put(pageKey{reader: 1}, d, classCurrent)
	if got, want := c.Free(), empty-pageBytes(d); got != want {
		t.Fatalf("free %d after a page of %d bytes, want %d", got, pageBytes(d), want)
	}
}

// TestResidualBasesNotCached: reading a history part's intervals decodes
// the columns they are stored against (_state, _commit) once for both and
// leaves them out of the cache, and the values equal an uncached reader's.
func TestResidualBasesNotCached(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows = 64
	writeHistoryRuns(t, fsys, "h", 6*pageRows, pageRows, 0)
	plain, r, c := openPlainCached(t, fsys, "h")
	if !r.residual(fWonAt) {
		t.Fatal("the history part stores no residuals")
	}
	var tr PageTrace
	got := Data{Trace: &tr}
	var want Data
	const lo, hi = pageRows + 3, pageRows + 9
	if err := r.ReadRows(0, lo, hi, FixWonAt|FixEndedAt, nil, &got); err != nil {
		t.Fatal(err)
	}
	if err := plain.ReadRows(0, lo, hi, FixWonAt|FixEndedAt, nil, &want); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.WonAt, got.EndedAt) != fmt.Sprint(want.WonAt, want.EndedAt) {
		t.Fatalf("intervals %v %v, want %v %v", got.WonAt, got.EndedAt, want.WonAt, want.EndedAt)
	}
	if tr.Decoded != 4 {
		t.Fatalf("decoded %d pages for two interval columns and their two bases, want 4", tr.Decoded)
	}
	for _, f := range []int{fState, fCommit} {
		if c.has(pageKey{reader: r.id, col: uint32(r.fixed[f]), first: pageRows}) {
			t.Fatalf("base column %d cached", f)
		}
	}
	for _, f := range []int{fWonAt, fEndedAt} {
		if !c.has(pageKey{reader: r.id, col: uint32(r.fixed[f]), first: pageRows}) {
			t.Fatalf("interval column %d not cached", f)
		}
	}
}

// keyProbes returns the keys held and, for each, a key just after it and
// one just before it, plus keys before and after all of them.
func keyProbes(keys [][]byte) [][]byte {
	probes := [][]byte{[]byte("a"), []byte("z")}
	for _, k := range keys {
		probes = append(probes, k, append(bytes.Clone(k), 0), k[:len(k)-1])
	}
	return probes
}

// TestFindKeyMixedForms: FindKey over a history part whose pages are
// cached in random forms, row by row, as key runs, whole chunks kept by a
// scan or not at all, finds what an uncached reader finds.
func TestFindKeyMixedForms(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows, rows = 64, 40*64 + 17
	keys := writeHistoryRuns(t, fsys, "h", rows, pageRows, 7*pageRows+5)
	probes := keyProbes(keys)
	for trial := range 20 {
		rng := rand.New(rand.NewPCG(uint64(trial), 3))
		plain, r, _ := openPlainCached(t, fsys, "h")
		var scratch Data
		for bi, b := range r.Blocks() {
			if trial%4 == 3 && rng.IntN(3) == 0 {
				var v Data
				for range 3 { // a scan that reads a block again keeps its chunks
					if err := r.ReadBlockView(bi, FixSort, nil, &v); err != nil {
						t.Fatal(err)
					}
				}
			}
			for from := 0; from < b.Rows; from += pageRows {
				switch rng.IntN(3) {
				case 0:
					if err := r.ReadRows(bi, from, from+1, FixSort, nil, &scratch); err != nil {
						t.Fatal(err)
					}
				case 1:
					if _, err := r.warmKeyRuns(bi, from, min(from+pageRows, b.Rows), &scratch); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		var ps, cs Data
		for pass := range 2 {
			for bi := range r.Blocks() {
				for _, p := range probes {
					sameFindKey(t, plain, r, bi, p, &ps, &cs, fmt.Sprintf("trial %d pass %d", trial, pass))
				}
			}
		}
	}
}

// TestFindKeyMisalignedPages: a part whose meta names a page size its
// pages are not cut at (no file Write makes) is searched row by row, with
// the same results as an uncached reader.
func TestFindKeyMisalignedPages(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows, rows = 64, 40*64 + 17
	keys := writeHistoryRuns(t, fsys, "h", rows, pageRows, 7*pageRows+5)
	probes := keyProbes(keys)
	for _, pr := range []int{32, 96, 128} {
		plain, r, c := openPlainCached(t, fsys, "h")
		plain.meta.PageRows, r.meta.PageRows = pr, pr
		var ps, cs Data
		for pass := range 2 {
			for bi := range r.Blocks() {
				for _, p := range probes {
					plo, phi, perr := plain.FindKey(bi, p, &ps)
					clo, chi, cerr := r.FindKey(bi, p, &cs)
					if (perr != nil) != (cerr != nil) || plo != clo || phi != chi {
						t.Fatalf("PageRows %d pass %d block %d key %q: [%d,%d) %v, want [%d,%d) %v", pr, pass, bi, p, clo, chi, cerr, plo, phi, perr)
					}
				}
			}
		}
		if pr != 96 {
			// Pages of 32 rows start on real ones half the time, and 128
			// rows are two whole real pages: both are searched as key runs.
			continue
		}
		for bi := range r.Blocks() {
			if c.has(pageKey{reader: r.id, block: uint32(bi), col: uint32(r.fixed[fSort]) | keyRunsCol, first: uint32(pr)}) {
				t.Fatalf("PageRows %d: a misaligned page was cached as key runs", pr)
			}
		}
	}
}

// TestPrewarmLargeHistoryPages: a history part whose pages are larger
// than FindKey keeps as key runs (written when HistoryPageRows was 8 192)
// gets its sort keys prewarmed row by row.
func TestPrewarmLargeHistoryPages(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows = 8192
	writeHistoryRuns(t, fsys, "h", 2*pageRows+5, pageRows, 0)
	_, r, c := openPlainCached(t, fsys, "h")
	var d Data
	if _, err := r.Prewarm(FixGroup|FixWonAt|FixEndedAt, nil, 1<<30, &d, nil); err != nil {
		t.Fatal(err)
	}
	if !c.has(pageKey{reader: r.id, col: uint32(r.fixed[fSort])}) {
		t.Fatal("the sort keys of a large history page were not prewarmed")
	}
}

// TestResidualBaseReuse: random reads of residual columns through one
// scratch Data, over readers with and without a cache (so base pages come
// from scratch, from the cache or are decoded again), return the values
// written: a base page kept in scratch is reused only for the same rows
// of the same column of the same reader.
func TestResidualBaseReuse(t *testing.T) {
	fsys := newFS(t)
	fx := residFixture(t, 5000)
	writeFixture(t, fsys, "parts/h.part", fx, WriteOptions{BlockRows: 1200, PageRows: 256})
	var rds []*Reader
	for i := range 4 {
		var r *Reader
		var err error
		if i%2 == 0 {
			r, err = Open(fsys, "parts/h.part")
		} else {
			r, err = OpenCached(fsys, "parts/h.part", NewCache(DefaultCacheBytes))
		}
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rds = append(rds, r)
	}
	d := fx.d
	rng := rand.New(rand.NewPCG(1, 2))
	var got Data
	reads := []Fixed{FixWonAt | FixEndedAt, FixCommit, FixSeq, FixSupersededBy, FixWonAt, FixEndedAt | FixCommit, FixAll}
	for it := range 20000 {
		r := rds[rng.IntN(len(rds))]
		bi := rng.IntN(len(r.Blocks()))
		b := r.Blocks()[bi]
		base := 0
		for j := range bi {
			base += r.Blocks()[j].Rows
		}
		lo := rng.IntN(b.Rows)
		hi := lo + 1 + rng.IntN(min(b.Rows-lo, 600))
		f := reads[rng.IntN(len(reads))]
		if err := r.ReadRows(bi, lo, hi, f, nil, &got); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			fix       Fixed
			name      string
			got, want []uint64
		}{
			{FixWonAt, "won_at", got.WonAt, d.WonAt},
			{FixEndedAt, "ended_at", got.EndedAt, d.EndedAt},
			{FixCommit, "commit", got.Commit, d.Commit},
			{FixSupersededBy, "superseded_by", got.SupersededBy, d.SupersededBy},
		} {
			if f&c.fix != 0 && fmt.Sprint(c.got) != fmt.Sprint(c.want[base+lo:base+hi]) {
				t.Fatalf("read %d, block %d rows [%d, %d): %s differs", it, bi, lo, hi, c.name)
			}
		}
		if f&FixSeq != 0 && fmt.Sprint(got.Seq) != fmt.Sprint(d.Seq[base+lo:base+hi]) {
			t.Fatalf("read %d, block %d rows [%d, %d): seq differs", it, bi, lo, hi)
		}
	}
}

// TestRowsAcrossPagesCached: rows that cross a page boundary are read a
// page at a time, so a second read of them decodes nothing, and both
// reads return what an uncached reader does.
func TestRowsAcrossPagesCached(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows = 64
	writeHistoryRuns(t, fsys, "h", 6*pageRows, pageRows, 0)
	plain, r, _ := openPlainCached(t, fsys, "h")
	const lo, hi = 2*pageRows - 5, 3*pageRows + 7 // three pages
	want := Data{}
	if err := plain.ReadRows(0, lo, hi, FixGroup|FixWonAt|FixEndedAt|FixCommit, []catalog.ColumnID{1}, &want); err != nil {
		t.Fatal(err)
	}
	for pass := range 2 {
		var tr PageTrace
		got := Data{Trace: &tr}
		if err := r.ReadRows(0, lo, hi, FixGroup|FixWonAt|FixEndedAt|FixCommit, []catalog.ColumnID{1}, &got); err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprint(got.Group, got.WonAt, got.EndedAt, got.Commit, got.Cols[0].Int64s()), fmt.Sprint(want.Group, want.WonAt, want.EndedAt, want.Commit, want.Cols[0].Int64s()); g != w {
			t.Fatalf("pass %d: %s, want %s", pass, g, w)
		}
		if pass == 1 && (tr.Decoded != 0 || tr.Hits == 0) {
			t.Fatalf("a second read across pages decoded %d pages, found %d cached", tr.Decoded, tr.Hits)
		}
	}
}

// TestRowsOverManyPagesScratch: rows over more than maxSplitPages pages
// (a hot key's many versions) are decoded through scratch, not put in
// the cache page by page, and equal an uncached reader's.
func TestRowsOverManyPagesScratch(t *testing.T) {
	fsys := vfs.NewMem()
	const pageRows = 64
	writeHistoryRuns(t, fsys, "h", (maxSplitPages+2)*pageRows, pageRows, 0)
	plain, r, c := openPlainCached(t, fsys, "h")
	const lo, hi = 3, (maxSplitPages+1)*pageRows + 3
	var got, want Data
	if err := plain.ReadRows(0, lo, hi, FixGroup, []catalog.ColumnID{1}, &want); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadRows(0, lo, hi, FixGroup, []catalog.ColumnID{1}, &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Group, got.Cols[0].Int64s()) != fmt.Sprint(want.Group, want.Cols[0].Int64s()) {
		t.Fatal("rows over many pages differ from an uncached reader's")
	}
	if st := c.Stats(); st.Pages != 0 {
		t.Fatalf("a read over %d pages cached %d pages", maxSplitPages+2, st.Pages)
	}
}
