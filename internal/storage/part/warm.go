package part

import (
	"encoding/binary"
	"sync"

	"github.com/holiman/uint256"
	"github.com/parquet-go/parquet-go"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// Freshly written parts, kept hot. Right after ingest (bench/ R1) most
// point lookups reach a part a flush or merge has just written, and every
// page they touch is cold: ~40 µs of zstd, checksums and Parquet decoding
// per page, 3 to 7 pages per part sought. Yet the writer held those rows
// decoded a moment before. So Write, given WriteOptions.Warm, also builds
// the pages a lookup decodes (page cache entries, cache.go) from the rows
// it writes, and the next OpenCached of the same path puts them in the
// cache under the new reader's id, as if a lookup had decoded them.
//
// A warmed page must be exactly what decodePages would produce: the same
// rows, values narrowed and widened as the file's physical types do, NULL
// slots zero, absent optional fixed columns as zeros. OpenCached checks
// each page's first row and row count against the file's offset index
// and drops a page that does not match; TestWarmPagesEqualDecoded
// compares every warmed page with a decoded one.
//
// Only delta and current parts are warmed (the parts lookups of current
// rows read), and only the columns lookups read (not SupersededBy or
// State). History parts are ~9× larger and read only AS OF an older
// commit. Warmed pages enter the cache unreferenced, so under pressure
// they are the first evicted (CLOCK).

// maxWarmParts bounds the parts written but not yet opened whose pages a
// cache holds aside: a write whose part is never opened (a merge that
// failed after writing) must not keep its pages forever.
const maxWarmParts = 64

// Memory is bounded too, by the cache's own budget: a part whose pages
// would take more than half of it is not warmed at all (Write stops
// building them: at medium scale and above a merge's current run is
// larger than the cache, and warming it would evict everything else for
// pages mostly evicted in turn), and the parts held aside take at most
// half of it, the oldest dropped first. What they hold is lent from the
// cache's budget (as the resolved-scan cache's is, Lend) until their
// OpenCached puts the pages in: the cache evicts to make room for them
// when they are built, not only when they enter it, so that the pages
// held aside and the pages cached never take more than the budget
// together (they took up to twice as much when held aside uncounted).

// warmPartLimit is the most bytes of pages one part is warmed with, and
// warmHeldLimit the most the parts held aside take together: a merge
// opens its outputs only once all are written, and the cache keeps at
// least the rest of its budget (less the scan cache's share) for the
// pages lookups decode meanwhile.
func (c *Cache) warmPartLimit() int64 { return c.bytes / 2 }
func (c *Cache) warmHeldLimit() int64 { return c.bytes / 2 }

// warmFixed are the fixed columns warmed: what FindKey, lookupRun and
// seekKey read.
const warmFixed = FixSort | FixGroup | FixCommit | FixSeq | FixTomb | FixOrder | FixWonAt | FixEndedAt

// warmPage is one page built by Write: block, Parquet column and first
// block row, as in its cache key, and the page itself.
type warmPage struct {
	block, col, first, rows int
	d                       *Data
}

// warmPart is what Write built for one file, waiting for its OpenCached.
type warmPart struct {
	size  int64
	pages []warmPage
	// bytes is the pages' size as the cache counts it (pageBytes).
	bytes int64
}

// warmSet is the parts a cache holds aside, by path, oldest first.
type warmSet struct {
	mu    sync.Mutex
	parts map[string]*warmPart
	order []string
	bytes int64
	// lentPer is what the set has lent from each cache shard's budget:
	// bytes/cacheShards rounded up, so that what it holds is always
	// covered, in whole per-shard amounts so that it is given back
	// exactly.
	lentPer int64
}

// relend brings what ws has lent from c's budget to what it holds; the
// caller holds ws.mu.
func (c *Cache) relend(ws *warmSet) {
	per := (ws.bytes + cacheShards - 1) / cacheShards
	if per != ws.lentPer {
		c.lend(per - ws.lentPer)
		ws.lentPer = per
	}
}

// keepWarm holds p aside for the next OpenCached of path.
func (c *Cache) keepWarm(path string, p *warmPart) {
	if c == nil || len(p.pages) == 0 {
		return
	}
	ws := &c.warm
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.parts == nil {
		ws.parts = map[string]*warmPart{}
	}
	if old, ok := ws.parts[path]; ok {
		ws.bytes -= old.bytes
	} else {
		ws.order = append(ws.order, path)
	}
	ws.parts[path] = p
	ws.bytes += p.bytes
	for len(ws.order) > maxWarmParts || ws.bytes > c.warmHeldLimit() && len(ws.order) > 1 {
		ws.bytes -= ws.parts[ws.order[0]].bytes
		delete(ws.parts, ws.order[0])
		ws.order = ws.order[1:]
	}
	c.relend(ws)
}

// takeWarm returns and forgets what Write held aside for path.
func (c *Cache) takeWarm(path string) *warmPart {
	ws := &c.warm
	ws.mu.Lock()
	defer ws.mu.Unlock()
	p := ws.parts[path]
	if p == nil {
		return nil
	}
	delete(ws.parts, path)
	ws.bytes -= p.bytes
	for i, s := range ws.order {
		if s == path {
			ws.order = append(ws.order[:i], ws.order[i+1:]...)
			break
		}
	}
	// Given back before the caller puts the pages in the cache.
	c.relend(ws)
	return p
}

// warm puts the pages Write built for r's file into the cache under r's
// id. A page whose place the file's offset index does not confirm (a page
// the writer closed early by size, say) is left out: lookups decode it.
func (r *Reader) warm() {
	if r.cache == nil {
		return
	}
	p := r.cache.takeWarm(r.path)
	if p == nil || p.size != r.size {
		return
	}
	warmed := 0
	var rgs []parquet.RowGroup
	for _, wp := range p.pages {
		if wp.block >= len(r.blocks) {
			return
		}
		if rgs == nil {
			rgs = r.file.RowGroups()
		}
		fc, ok := rgs[wp.block].ColumnChunks()[wp.col].(*parquet.FileColumnChunk)
		if !ok {
			continue
		}
		oi, err := offsetIndex(fc)
		if err != nil {
			continue
		}
		match := false
		for pg := range oi.NumPages() {
			if int(oi.FirstRowIndex(pg)) != wp.first {
				continue
			}
			end := r.blocks[wp.block].Rows
			if pg+1 < oi.NumPages() {
				end = int(oi.FirstRowIndex(pg + 1))
			}
			match = end-wp.first == wp.rows
			break
		}
		if !match {
			continue
		}
		r.cache.put(pageKey{reader: r.id, block: uint32(wp.block), col: uint32(wp.col), first: uint32(wp.first)}, wp.d, r.cacheClass())
		warmed++
	}
	r.cache.warmed.Add(int64(warmed))
}

// warmBlock builds the pages of block bi, rows [lo, hi) of the part, as
// decodePages would decode them.
func (w *writer) warmBlock(bi, lo, hi int) {
	d := w.d
	defer func() {
		if w.warm.bytes > w.warmLimit {
			w.warm = nil // too large to be worth warming (warmPartLimit)
		}
	}()
	for s := lo; s < hi; s += w.opts.PageRows {
		e := min(s+w.opts.PageRows, hi)
		n := e - s
		for f := range numFixed {
			if warmFixed&(1<<f) == 0 || f == fOrder && len(w.meta.OrderFrom) > 0 {
				// A part whose ordering values are rebuilt never reads
				// its _order pages (ReadRows rebuilds Order instead).
				continue
			}
			pd := &Data{first: s - lo}
			switch f {
			case fSort:
				pd.Sort = copyBytes(d.Sort, s, e)
			case fOrder:
				pd.Order = copyBytes(d.Order, s, e)
			case fGroup:
				pd.Group = copyFixed(d.Group, s, e)
			case fCommit:
				pd.Commit = copyFixed(d.Commit, s, e)
			case fSeq:
				pd.Seq = copyFixed(d.Seq, s, e)
			case fTomb:
				pd.Tomb = copyFixed(d.Tomb, s, e)
			case fWonAt:
				pd.WonAt = copyFixed(d.WonAt, s, e)
			case fEndedAt:
				pd.EndedAt = copyFixed(d.EndedAt, s, e)
			case fSupersededBy:
				pd.SupersededBy = copyFixed(d.SupersededBy, s, e)
			case fState:
				pd.State = copyFixed[version.State](d.State, s, e)
			}
			w.warm.pages = append(w.warm.pages, warmPage{block: bi, col: w.fixed[f], first: s - lo, rows: n, d: pd})
			w.warm.bytes += pageBytes(pd)
		}
		for c, v := range d.Cols {
			pd := &Data{first: s - lo, Cols: []*types.Vector{warmColumn(v, w.phys[c], s, e)}}
			w.warm.pages = append(w.warm.pages, warmPage{block: bi, col: w.cols[c], first: s - lo, rows: n, d: pd})
			w.warm.bytes += pageBytes(pd)
		}
	}
}

// copyFixed copies rows [lo, hi) of an optional fixed column, zeros when
// the column is absent (Write stores zeros for it).
func copyFixed[T any](s []T, lo, hi int) []T {
	if len(s) == 0 {
		return make([]T, hi-lo)
	}
	return append(make([]T, 0, hi-lo), s[lo:hi]...)
}

// copyBytes copies rows [lo, hi) of a fixed BYTES column (the sort key,
// the ordering values), empty values when the column is absent.
func copyBytes(v *types.Vector, lo, hi int) *types.Vector {
	out := types.NewVector(types.Of(types.Bytes), hi-lo)
	if v == nil || v.Len() == 0 {
		for range hi - lo {
			out.AppendBytes(nil)
		}
		return out
	}
	out.Reserve(bytesIn(v, lo, hi))
	for i := lo; i < hi; i++ {
		out.AppendBytes(v.BytesAt(i))
	}
	return out
}

// warmColumn copies rows [lo, hi) of table column v into a new vector as
// appendPage decodes them from the file: NULL slots zero, values through
// their physical type (a 32-bit integer column, a REAL's float32, a
// 16-byte wide integer's sign extension).
func warmColumn(v *types.Vector, p physical, lo, hi int) *types.Vector {
	out := types.NewVector(v.Type(), hi-lo)
	switch v.Type().Kind.Class() {
	case types.ClassInt64:
		xs := v.Int64s()
		for i := lo; i < hi; i++ {
			switch {
			case v.IsNull(i):
				out.AppendNull()
			case p.kind == parquet.Int32:
				out.AppendInt64(int64(int32(xs[i])))
			default:
				out.AppendInt64(xs[i])
			}
		}
	case types.ClassUint64:
		xs := v.Uint64s()
		for i := lo; i < hi; i++ {
			switch {
			case v.IsNull(i):
				out.AppendNull()
			case p.kind == parquet.Int32:
				out.AppendUint64(uint64(uint32(xs[i])))
			default:
				out.AppendUint64(xs[i])
			}
		}
	case types.ClassWide:
		xs := v.Wides()
		k := v.Type().Kind
		signed := k.IsSigned() || k == types.Decimal
		var b [32]byte
		var x uint256.Int
		for i := lo; i < hi; i++ {
			if v.IsNull(i) {
				out.AppendNull()
				continue
			}
			for j := range p.size / 8 {
				binary.BigEndian.PutUint64(b[8*j:], xs[i][p.size/8-1-j])
			}
			decodeWide(&x, b[:p.size], signed)
			out.AppendWide(&x)
		}
	case types.ClassFloat64:
		xs := v.Float64s()
		for i := lo; i < hi; i++ {
			switch {
			case v.IsNull(i):
				out.AppendNull()
			case p.kind == parquet.Float:
				out.AppendFloat64(float64(float32(xs[i])))
			default:
				out.AppendFloat64(xs[i])
			}
		}
	case types.ClassVarlen:
		out.Reserve(bytesIn(v, lo, hi))
		for i := lo; i < hi; i++ {
			out.AppendFrom(v, i)
		}
	default:
		for i := lo; i < hi; i++ {
			out.AppendFrom(v, i)
		}
	}
	return out
}

// bytesIn is the bytes of rows [lo, hi) of a BYTES or STRING vector, so
// that a copy of them is allocated once.
func bytesIn(v *types.Vector, lo, hi int) int {
	n := 0
	for i := lo; i < hi; i++ {
		n += len(v.BytesAt(i))
	}
	return n
}

// Prewarm decodes into the cache the pages of r that FindKey and
// ReadRows(fixed, cols) read, page by page as a lookup would, so that the
// lookups that come next find them there. Write warms the parts it writes
// when asked (WriteOptions.Warm); Prewarm is for parts already written:
// the small delta runs an idle shard keeps beside its final runs, which
// a few percent of lookups reach and decode cold. It stops once the
// cache has taken limit more bytes (counting pages other readers put
// meanwhile too) and returns what was added; with no cache it does
// nothing. d is scratch, reused across calls; pace, when not nil, is
// called before each block (a background caller gives way to reads).
//
// Of a history part, the sort keys are put as key runs, the form FindKey
// caches them in (keyruns.go), where FindKey keeps that form (pages of at
// most maxIndexedRows rows), and row by row otherwise.
func (r *Reader) Prewarm(fixed Fixed, cols []catalog.ColumnID, limit int64, d *Data, pace func()) (int64, error) {
	if r.cache == nil {
		return 0, nil
	}
	start := r.cache.added.Load()
	for i, b := range r.blocks {
		if pace != nil {
			pace()
		}
		pr := r.meta.PageRows
		if pr <= 0 {
			pr = b.Rows
		}
		// One row per page: decodePages caches a page only when the rows
		// asked for lie in one page, and then caches all of it. A page
		// whose groups are cached is taken as warm and skipped, so a pass
		// over a part still in the cache costs a probe per page, not a
		// read of every column. Groups, not sort keys: a lookup that only
		// seeks (a key absent, a filter's false positive) caches the sort
		// keys alone, while the groups are read with the rows' columns, by
		// a lookup that found its key or by a warming write.
		probe := chunkTask{col: r.fixed[fGroup], fixed: fGroup}
		for from := 0; from < b.Rows; from += pr {
			if added := r.cache.added.Load() - start; added >= limit {
				return added, nil
			}
			if probe.col >= 0 {
				if k, ok := r.uniformPage(i, &probe, from, from+1); ok && r.cache.has(k) {
					continue
				}
			}
			read := fixed | FixSort
			if r.meta.Kind == KindHistory && r.fixed[fSort] >= 0 {
				runs, err := r.warmKeyRuns(i, from, min(from+pr, b.Rows), d)
				if err != nil {
					return r.cache.added.Load() - start, err
				}
				if runs {
					read = fixed
				}
			}
			if err := r.ReadRows(i, from, from+1, read, cols, d); err != nil {
				return r.cache.added.Load() - start, err
			}
		}
	}
	return r.cache.added.Load() - start, nil
}
