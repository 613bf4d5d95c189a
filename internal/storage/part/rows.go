package part

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// Reading a few rows of a block (point lookups). A block's column chunks
// are cut into pages of at most PageRows rows (Write flushes every column
// at those boundaries), and Parquet's offset index, in the sealed tail,
// says where each page starts and which row it begins with. ReadRows uses
// it to verify and decode only the pages that hold the rows asked for,
// instead of every page of every chunk.

// PageRows is the most rows one data page of a delta or append part holds
// when WriteOptions names none: small enough that a lookup decodes ~1/8
// of an 8 192-row block per column. It costs space and scan speed
// (smaller zstd frames, more page headers; measured on the balances
// schema: 1.9 → 5.6 bytes per version, AS OF scans ~30 % slower), so
// history parts, which lookups of current rows do not read, get
// HistoryPageRows; current parts, which they read most, get
// CurrentPageRows.
const PageRows = 1024

// HistoryPageRows is the default page size of KindHistory parts. Point
// reads AS OF a past commit (bench/ R4) and versions() of one key (R5)
// read them, and once the history outgrows the page cache's share for it
// (bench/'s medium scale: 9 M history rows) most of their pages are
// decoded cold, whole. At 8 192 rows such a page cost ~92 µs and an R4
// lookup ~5 of them: p50 531–554 µs. At 2 048 rows a page costs ~50 µs
// (zstd, checksums and allocation do not shrink with it): R4 p50 242–279
// µs, R5 1.5–1.7 → 0.15 ms, for 5 % more bytes after settling (296.8 →
// 312.4 MiB at medium, 36.0 → 37.6 at small) and no measurable change to
// the AS OF scans (R3), whose first run varies more between runs.
const HistoryPageRows = 2048

// CurrentPageRows is the default page size of KindCurrent parts, the
// merged current rows that most point lookups end in: a lookup whose pages
// are not cached decompresses and decodes one page of each column it reads,
// and at 1 024 rows that was ~25 µs a page. Measured on the balances schema
// at 1 M keys (BenchmarkBalances merged/lookup, default page cache), 256
// rows took the lookup p99 from 275 to 157–161 µs (512: 187 µs), for 0.8
// more bytes per version (2.23 → 3.03; bench/'s random data: S1 settled
// +5.6 %) and a merged current scan ~8–15 % slower (more page headers and
// compressed frames per row).
const CurrentPageRows = 256

// defaultPageRows is the page size of a part of kind k when WriteOptions
// names none.
func defaultPageRows(k Kind) int {
	switch k {
	case KindHistory:
		return HistoryPageRows
	case KindCurrent:
		return CurrentPageRows
	}
	return PageRows
}

// PageTrace counts what point reads (FindKey, ReadRows) into one Data
// took from the caches and decoded, for a per-lookup trace: which part
// kind a slow lookup decodes, and how much. Counting costs a few adds per
// page and happens only when Data.Trace is set.
type PageTrace struct {
	// Seeks counts FindKey calls: the blocks whose sort keys were searched.
	Seeks int
	// Hits counts pages served by the page cache, ChunkHits pages served
	// from whole chunks a scan kept (chunkcache.go).
	Hits, ChunkHits int
	// Decoded counts the page ranges read, verified and decoded (one
	// page each, unless a key's rows crossed a page boundary), Rows the
	// rows they held, Stored their stored (compressed) bytes and Read the
	// bytes read and checksummed to get them (whole stripes, Meta's size).
	Decoded, Rows int
	Stored, Read  int64
	// Nanos is the wall time spent reading, verifying and decoding them.
	Nanos int64
}

// Add adds u's counts to t.
func (t *PageTrace) Add(u *PageTrace) {
	t.Seeks += u.Seeks
	t.Hits += u.Hits
	t.ChunkHits += u.ChunkHits
	t.Decoded += u.Decoded
	t.Rows += u.Rows
	t.Stored += u.Stored
	t.Read += u.Read
	t.Nanos += u.Nanos
}

// ReadRows reads rows [lo, hi) of block i into dst as ReadBlockFixed
// would read the whole block (dst.Rows = hi-lo, row 0 of dst is row lo of
// the block), decoding only the pages of each chunk that hold them.
// FixOrder in a part with Meta.OrderFrom decodes the ordering columns'
// pages, as ReadBlockFixed does their chunks.
func (r *Reader) ReadRows(i, lo, hi int, fixed Fixed, cols []catalog.ColumnID, dst *Data) error {
	if fixed&FixOrder == 0 || r.order == nil {
		return r.readRows(i, lo, hi, fixed, cols, dst)
	}
	if err := r.readRows(i, lo, hi, fixed&^FixOrder, cols, dst); err != nil {
		return err
	}
	return r.readOrder(dst, fixed, cols, func(f Fixed, c []catalog.ColumnID, d *Data) error {
		return r.readRows(i, lo, hi, f, c, d)
	})
}

// readRows is ReadRows reading _order as stored.
func (r *Reader) readRows(i, lo, hi int, fixed Fixed, cols []catalog.ColumnID, dst *Data) error {
	if i < 0 || i >= len(r.blocks) || lo < 0 || hi > r.blocks[i].Rows || lo >= hi {
		return fmt.Errorf("part: %s: rows [%d, %d) of block %d", r.path, lo, hi, i)
	}
	n := hi - lo
	tr := dst.Trace
	dst.Reset()
	if dst.Sort == nil {
		dst.Sort = types.NewVector(types.Of(types.Bytes), n)
	}
	if dst.Order == nil {
		dst.Order = types.NewVector(types.Of(types.Bytes), n)
	}
	// The task list is kept in dst: a lookup served from the page cache
	// then allocates nothing here.
	tasks := r.chunkTasks(dst.tasks[:0], fixed, cols, dst, n)
	defer func() { dst.tasks = tasks }()
	w := r.window()
	defer r.windows.Put(w)
	chunks := r.file.RowGroups()[i].ColumnChunks()
	if dst.scratch == nil {
		dst.scratch = &Data{}
	}
	sc := dst.scratch
	for t := range tasks {
		if err := r.readRowsOfChunk(w, i, &tasks[t], chunks, lo, hi, dst, sc, t, tr); err != nil {
			return err
		}
	}
	dst.Rows = n
	return nil
}

// maxSplitPages is the most pages readRowsOfChunk reads one at a time,
// each cached, for rows that cross page boundaries.
const maxSplitPages = 4

// readRowsOfChunk decodes rows [lo, hi) of one chunk from the pages that
// hold them, through the scratch sc, and copies them to dst.
func (r *Reader) readRowsOfChunk(w *[]byte, blk int, t *chunkTask, chunks []parquet.ColumnChunk, lo, hi int, dst, sc *Data, ti int, tr *PageTrace) error {
	if pr := r.meta.PageRows; r.cache != nil && !t.uncached && pr > 0 && hi > lo && lo/pr != (hi-1)/pr && (hi-1)/pr-lo/pr < maxSplitPages {
		// Rows that cross a page boundary (a key's rows at the end of one
		// page and the start of the next) are read a page at a time, so
		// that each page is cached: decoded together, the two pages went
		// to scratch, and every lookup of such a key decoded them cold
		// again (bench/ R4's slowest lookups, ~6 pages each). The rows
		// of a key with versions over more pages than that (a versions()
		// of a hot key) still go through scratch, not filling the cache.
		for p := lo; p < hi; {
			e := min(hi, (p/pr+1)*pr)
			if err := r.readRowsOfChunk(w, blk, t, chunks, p, e, dst, sc, ti, tr); err != nil {
				return err
			}
			p = e
		}
		return nil
	}
	src, tv, err := r.decodePages(w, blk, t, chunks, lo, hi, sc, ti, tr)
	if err != nil {
		return err
	}
	sc = src
	first := sc.first
	a, b := lo-first, hi-first
	if a < 0 || b > sc.pageLen(t.fixed, tv) {
		return r.corrupt("block %d column %s: pages from row %d do not hold rows [%d, %d)", blk, r.colName(t.col), first, lo, hi)
	}
	switch t.fixed {
	case -1:
		for i := a; i < b; i++ {
			t.v.AppendFrom(tv, i)
		}
	case fSort:
		for i := a; i < b; i++ {
			dst.Sort.AppendBytes(sc.Sort.BytesAt(i))
		}
	case fOrder:
		for i := a; i < b; i++ {
			dst.Order.AppendBytes(sc.Order.BytesAt(i))
		}
	case fGroup:
		dst.Group = append(dst.Group, sc.Group[a:b]...)
	case fCommit:
		dst.Commit = append(dst.Commit, sc.Commit[a:b]...)
	case fSeq:
		dst.Seq = append(dst.Seq, sc.Seq[a:b]...)
	case fTomb:
		dst.Tomb = append(dst.Tomb, sc.Tomb[a:b]...)
	case fWonAt:
		dst.WonAt = append(dst.WonAt, sc.WonAt[a:b]...)
	case fEndedAt:
		dst.EndedAt = append(dst.EndedAt, sc.EndedAt[a:b]...)
	case fSupersededBy:
		dst.SupersededBy = append(dst.SupersededBy, sc.SupersededBy[a:b]...)
	case fState:
		dst.State = append(dst.State, sc.State[a:b]...)
	}
	return nil
}

// decodePages decodes the whole pages of one chunk that hold rows [lo,
// hi) and returns them: src's first is the block row of its row 0, and a
// table column's values are tv. They are decoded into sc (a table column
// into sc.Cols[ti]), or, when they are one page and r has a cache, come
// from the cache or are decoded into a new Data the cache keeps; such a
// src is shared and must not be modified (t.uncached: the cache is neither
// asked nor filled; t.noPut: it is asked, not filled). tr, when not nil,
// counts them.
func (r *Reader) decodePages(w *[]byte, blk int, t *chunkTask, chunks []parquet.ColumnChunk, lo, hi int, sc *Data, ti int, tr *PageTrace) (src *Data, tv *types.Vector, err error) {
	scratch := sc
	var fast pageKey
	tried := false
	if r.cache != nil && !t.uncached {
		// The page cache first, by the page's first row worked out from
		// the part's page size: a lookup's page is nearly always cached,
		// and the offset index's two binary searches (interface calls
		// over hundreds of page locations) were most of a hit's cost.
		if k, ok := r.uniformPage(blk, t, lo, hi); ok {
			if d := r.cache.find(k); d != nil {
				if tr != nil {
					tr.Hits++
				}
				return d, d.pageVec(t.fixed), nil
			}
			fast, tried = k, true
		}
		// A scan that read the block more than once keeps its whole
		// chunks (chunkcache.go); rows found there need no page decoded.
		// A chunk holds the block from row 0 (its first is 0).
		if c := r.cache.find(r.chunkKey(blk, t)); c != nil {
			if tr != nil {
				tr.ChunkHits++
			}
			return c, c.pageVec(t.fixed), nil
		}
	}
	fc, ok := chunks[t.col].(*parquet.FileColumnChunk)
	if !ok {
		return nil, nil, r.corrupt("block %d column %s is not a file column chunk", blk, r.colName(t.col))
	}
	oi, err := offsetIndex(fc)
	if err != nil {
		return nil, nil, r.corrupt("block %d column %s: offset index: %v", blk, r.colName(t.col), err)
	}
	// The pages holding rows [lo, hi): p0 the last to start at or before
	// lo, p1 the last to start before hi. Binary searches, since a
	// block has hundreds of pages (64 Ki rows in CurrentPageRows pages)
	// and a lookup asks this of every column it reads. Whatever the
	// index holds (the seal's CRC covers it), the search ends with page
	// p0 starting at or before lo and p1 before hi, as the walk over
	// every page it replaced did; the checks below and the decode's row
	// count refuse the rest.
	np := oi.NumPages()
	p0 := sort.Search(np, func(p int) bool { return int(oi.FirstRowIndex(p)) > lo }) - 1
	p1 := sort.Search(np, func(p int) bool { return int(oi.FirstRowIndex(p)) >= hi }) - 1
	rg := &r.file.Metadata().RowGroups[blk]
	cstart, cend := chunkRange(rg, t.col)
	if p0 < 0 || p1 < p0 {
		return nil, nil, r.corrupt("block %d column %s: offset index does not cover rows [%d, %d)", blk, r.colName(t.col), lo, hi)
	}
	start, end := oi.Offset(p0), oi.Offset(p1)+oi.CompressedPageSize(p1)
	if start < cstart || end > cend || end <= start {
		return nil, nil, r.corrupt("block %d column %s: page at [%d, %d) outside its chunk", blk, r.colName(t.col), start, end)
	}
	first := int(oi.FirstRowIndex(p0))
	// One page is what a lookup decodes per column; it is cached. A range
	// of pages (rows readRowsOfChunk does not read a page at a time: over
	// maxSplitPages pages, pages not cut every PageRows rows, or no
	// cache) is decoded into scratch.
	cached := r.cache != nil && p0 == p1 && !t.uncached && !t.noPut
	var key pageKey
	if cached {
		key = pageKey{reader: r.id, block: uint32(blk), col: uint32(t.col), first: uint32(first)}
		if tried && key == fast {
			r.cache.missed(key)
		} else if d := r.cache.get(key); d != nil {
			if tr != nil {
				tr.Hits++
			}
			return d, d.pageVec(t.fixed), nil
		}
		// A page of its own, holding only the column decoded, sized to
		// the page's rows so that the cache's accounting is close.
		n := r.blocks[blk].Rows
		if p0+1 < np {
			n = int(oi.FirstRowIndex(p0 + 1))
		}
		n -= first
		sc, ti, lo, hi = &Data{}, 0, first, first+max(n, 1)
		switch t.fixed {
		case fSort:
			sc.Sort = types.NewVector(types.Of(types.Bytes), hi-lo)
		case fOrder:
			sc.Order = types.NewVector(types.Of(types.Bytes), hi-lo)
		}
	}
	var t0 time.Time
	if tr != nil {
		t0 = time.Now()
	}
	buf, base, err := r.verified(w, start, end)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (block %d)", err, blk)
	}
	if tr != nil {
		defer func() {
			tr.Decoded++
			tr.Rows += hi - first
			tr.Stored += end - start
			tr.Read += int64(len(buf))
			tr.Nanos += int64(time.Since(t0))
		}()
	}
	// Whole pages are decoded into scratch and the rows copied out:
	// parquet-go's sliced pages keep a bit offset into boolean data that
	// Data() does not expose.
	m := &rg.Columns[t.col].MetaData
	// Pages decoded here are checked as they are decoded (eachOwnPage).
	own := ownTask(m, t)
	if !own {
		if err := r.checkChunkPages(buf, base, start, end, p0, blk, t.col); err != nil {
			return nil, nil, err
		}
	}
	sc.first = first
	sc.Reset()
	if sc.Sort == nil && !cached {
		sc.Sort = types.NewVector(types.Of(types.Bytes), hi-lo)
		sc.Order = types.NewVector(types.Of(types.Bytes), hi-lo)
	}
	if t.fixed < 0 {
		for len(sc.Cols) <= ti {
			sc.Cols = append(sc.Cols, nil)
		}
		if tv = sc.Cols[ti]; tv == nil || tv.Type() != t.v.Type() {
			tv = types.NewVector(t.v.Type(), hi-lo)
			sc.Cols[ti] = tv
		}
		tv.Reset()
	}
	if own {
		var n int
		var err error
		if t.fixed >= 0 {
			n, err = decodeOwnFixed(buf[start-base:end-base], m.Codec, r.pageLimits(blk, t.col), fc.Type(), sc, t.fixed, hi-first, p0)
		} else {
			n, err = decodeOwnPages(buf[start-base:end-base], m.Codec, r.pageLimits(blk, t.col), t.ph, fc.Type(), tv, hi-first, p0)
		}
		if err == nil && n < hi-first {
			err = fmt.Errorf("pages end before row %d", hi)
		}
		if err != nil {
			return nil, nil, r.corrupt("block %d column %s: %v", blk, r.colName(t.col), err)
		}
	} else if err := r.readPages(fc, buf, base, blk, t, first, hi, sc, tv); err != nil {
		return nil, nil, err
	}
	if r.residual(t.fixed) {
		if err := r.undoPages(blk, t.fixed, chunks, first, sc, scratch, tr); err != nil {
			return nil, nil, err
		}
	}
	if cached {
		// Only a page that was verified and decoded without error gets
		// here, so corruption is never cached.
		d := r.cache.put(key, sc, r.cacheClass())
		return d, d.pageVec(t.fixed), nil
	}
	return sc, tv, nil
}

// uniformPage returns the page cache's key of the one page of task t's
// chunk in block blk that holds rows [lo, hi), when the part's pages are
// cut every PageRows rows of a block (as Write cuts every column, and
// FindKey relies on): page p holds rows [p·PageRows, (p+1)·PageRows). It
// reports false when the part names no page size or the rows span pages.
// The key is the one decodePages caches the page under, from the offset
// index; a page found under it is checked against the rows asked for by
// its caller, as any cached page is.
func (r *Reader) uniformPage(blk int, t *chunkTask, lo, hi int) (pageKey, bool) {
	pr := r.meta.PageRows
	if pr <= 0 || lo < 0 || hi <= lo {
		return pageKey{}, false
	}
	first := lo / pr * pr
	if hi > first+pr {
		return pageKey{}, false
	}
	return pageKey{reader: r.id, block: uint32(blk), col: uint32(t.col), first: uint32(first)}, true
}

// readPages decodes through parquet-go the pages in buf (file offsets
// from base) of task t's chunk in block blk, from the page that starts at
// row first until row hi is covered, into sc (a fixed column) or tv.
func (r *Reader) readPages(fc *parquet.FileColumnChunk, buf []byte, base int64, blk int, t *chunkTask, first, hi int, sc *Data, tv *types.Vector) error {
	pages := fc.PagesFrom(&windowReader{base: base, b: buf})
	defer pages.Close()
	if err := seekToRow(pages, int64(first)); err != nil {
		return r.corrupt("block %d column %s: seek to row %d: %v", blk, r.colName(t.col), first, err)
	}
	for got := first; got < hi; {
		p, err := readPage(pages)
		if errors.Is(err, io.EOF) {
			return r.corrupt("block %d column %s ends before row %d", blk, r.colName(t.col), hi)
		}
		if err != nil {
			return r.corrupt("block %d column %s: %v", blk, r.colName(t.col), err)
		}
		got += int(p.NumRows())
		if t.fixed >= 0 {
			err = appendFixed(sc, t.fixed, p)
		} else {
			err = appendPage(tv, t.ph, p)
		}
		parquet.Release(p)
		if err != nil {
			return r.corrupt("block %d column %s: %v", blk, r.colName(t.col), err)
		}
	}
	return nil
}

// pageVec returns the table column of a cached page (fixed < 0), or nil.
func (d *Data) pageVec(fixed int) *types.Vector {
	if fixed < 0 {
		return d.Cols[0]
	}
	return nil
}

// pageLen is the number of rows decoded pages d hold of fixed column
// fixed, or of the table column tv.
func (d *Data) pageLen(fixed int, tv *types.Vector) int {
	switch fixed {
	case -1:
		return tv.Len()
	case fSort:
		return d.Sort.Len()
	case fOrder:
		return d.Order.Len()
	case fGroup:
		return len(d.Group)
	case fCommit:
		return len(d.Commit)
	case fSeq:
		return len(d.Seq)
	case fTomb:
		return len(d.Tomb)
	case fWonAt:
		return len(d.WonAt)
	case fEndedAt:
		return len(d.EndedAt)
	case fSupersededBy:
		return len(d.SupersededBy)
	case fState:
		return len(d.State)
	}
	return 0
}

// FindKey returns the rows [lo, hi) of block i whose sort key is key
// (lo = hi when there are none), decoding only the sort-key pages that can
// hold it: the block's sparse index (BlockInfo.Keys) names the page where
// the key's first row can be, and pages are decoded from there until a
// greater key. d is scratch, reused across calls.
func (r *Reader) FindKey(i int, key []byte, d *Data) (lo, hi int, err error) {
	if i < 0 || i >= len(r.blocks) {
		return 0, 0, fmt.Errorf("part: %s: block %d of %d", r.path, i, len(r.blocks))
	}
	b := &r.blocks[i]
	// Page j holds rows [j·pr, (j+1)·pr); Keys[j-1] is its first key. The
	// key's first row is in the last page whose first key is below it (or
	// at the start of the next one).
	pr := r.meta.PageRows
	if pr <= 0 {
		pr = b.Rows
	}
	j := sort.Search(len(b.Keys), func(j int) bool { return bytes.Compare(b.Keys[j], key) >= 0 })
	w := r.window()
	defer r.windows.Put(w)
	chunks := r.file.RowGroups()[i].ColumnChunks()
	task := chunkTask{col: r.fixed[fSort], fixed: fSort}
	if d.scratch == nil {
		d.scratch = &Data{}
	}
	lo = -1
	if d.Trace != nil {
		d.Trace.Seeks++
	}
	for from := j * pr; from < b.Rows; from += pr {
		to := min(from+pr, b.Rows)
		// A history part's page is searched as key runs (keyruns.go).
		kr, err := r.keyRunsPage(w, i, chunks, from, to, d)
		if err != nil {
			return 0, 0, err
		}
		if kr != nil {
			n := to - from
			x := 0
			if lo < 0 {
				if x = kr.findRun(key); x < 0 {
					if bytes.Compare(kr.Sort.BytesAt(kr.Sort.Len()-1), key) < 0 {
						continue // the key's rows begin on the next page, if anywhere
					}
					return 0, 0, nil
				}
				lo = from + kr.runStart(x)
			} else if !bytes.Equal(kr.Sort.BytesAt(0), key) {
				return lo, from, nil // the key's rows ended with the page before
			}
			if e := int(kr.runEnds[x]); e < n {
				return lo, from + e, nil
			}
			continue
		}
		// The page is decoded into d's scratch (or taken from the page
		// cache) and searched there.
		src, _, err := r.decodePages(w, i, &task, chunks, from, to, d.scratch, 0, d.Trace)
		if err != nil {
			return 0, 0, err
		}
		keys, off := src.Sort, from-src.first
		if off < 0 || keys.Len() < off+to-from {
			return 0, 0, r.corrupt("block %d: sort pages from row %d hold %d rows", i, src.first, keys.Len())
		}
		n := to - from
		at := func(x int) []byte { return keys.BytesAt(off + x) }
		k := 0
		if lo < 0 {
			// A cached page's key index answers at once (keyindex.go);
			// another page is searched.
			x, indexed := -1, false
			if off == 0 && keys.Len() == n {
				x, indexed = src.findKey(key)
			}
			switch {
			case indexed && x < 0:
				if bytes.Compare(at(n-1), key) < 0 {
					continue // the key's rows begin on the next page, if anywhere
				}
				return 0, 0, nil
			case indexed:
				k = x
			default:
				k = sort.Search(n, func(x int) bool { return bytes.Compare(at(x), key) >= 0 })
				if k == n {
					continue // the key's rows begin on the next page, if anywhere
				}
				if !bytes.Equal(at(k), key) {
					return 0, 0, nil
				}
			}
			lo = from + k
		}
		for k < n && bytes.Equal(at(k), key) {
			k++
		}
		if k < n {
			return lo, from + k, nil
		}
	}
	if lo < 0 {
		return 0, 0, nil
	}
	return lo, b.Rows, nil
}
