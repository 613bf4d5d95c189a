package part

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// ErrCorrupt is wrapped by every error that reports a part whose bytes are
// not what Write wrote: a checksum mismatch, a footer that does not parse,
// metadata that contradicts itself. The error names the file.
var ErrCorrupt = errors.New("part: corrupt part file")

// ErrVersion is wrapped by the error Open returns for a part written in a
// format version this build does not read.
var ErrVersion = errors.New("part: unsupported format version")

// Reader reads an open part. Its methods are safe for concurrent use.
type Reader struct {
	path    string
	f       vfs.File
	size    int64
	dataEnd int64
	file    *parquet.File
	meta    *Meta
	blocks  []BlockInfo
	fm      *fileMeta
	// fixed and leaf map the fixed and the table columns to Parquet
	// column indexes; colIdx maps a column id to its index in meta.Columns.
	fixed  [numFixed]int
	leaf   []int
	phys   []physical
	colIdx map[catalog.ColumnID]int
	// windows pools the buffers chunks are read and verified in.
	windows sync.Pool
	// cache, if not nil, keeps the pages lookups decode (cache.go); id
	// names this open of the file in its keys.
	cache *Cache
	id    uint64
	// chunks tracks what ReadBlockView kept of this part (chunkcache.go).
	chunks chunkState
	// filter is the part's key filter; empty (every key may be held) in
	// parts without one.
	filter KeyFilter
	// index are the part's index filters (index.go), one per column.
	index []IndexFilter
	// order is set when the part's ordering values are rebuilt from its
	// table columns (Meta.OrderFrom, order.go).
	order *orderSource
	// checked has a bit per column chunk (block × Parquet column) whose
	// page headers checkPages has passed: the stripes prove that a later
	// read of the chunk sees the same bytes.
	checked []atomic.Uint64
	// pages maps the start of each page a lookup's checkPages passed to
	// its end, so that a page the page cache dropped is not checked (its
	// values decompressed twice) again.
	pages pageSet
}

// pageSet is a Reader's pageMemo.
type pageSet struct{ m sync.Map } // int64 → int64

func (p *pageSet) checked(start int64) (int64, bool) {
	if e, ok := p.m.Load(start); ok {
		return e.(int64), true
	}
	return 0, false
}

func (p *pageSet) pass(start, end int64) { p.m.Store(start, end) }

// Open opens the part at path and verifies its footer (the seal, doc.go
// "Checksums") before any of it is parsed. Data pages are verified as
// blocks are read.
func Open(fsys vfs.FS, path string) (*Reader, error) {
	return OpenCached(fsys, path, nil)
}

// OpenCached is Open with the pages that point lookups (FindKey,
// ReadRows) decode kept in c, shared with other readers; c may be nil.
func OpenCached(fsys vfs.FS, path string, c *Cache) (*Reader, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("part: open %s: %w", path, err)
	}
	r := &Reader{path: path, f: f, cache: c, id: readerIDs.Add(1)}
	if err := r.open(); err != nil {
		f.Close()
		return nil, err
	}
	r.warm()
	return r, nil
}

// corrupt returns an error wrapping ErrCorrupt that names the file.
func (r *Reader) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrCorrupt, r.path, fmt.Sprintf(format, args...))
}

// readAt reads len(b) bytes at off; a short file is corruption, any other
// failure an I/O error.
func (r *Reader) readAt(b []byte, off int64) error {
	n, err := r.f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return r.corrupt("file ends at %d, inside bytes [%d, %d)", off+int64(n), off, off+int64(len(b)))
	}
	return fmt.Errorf("part: %s: read: %w", r.path, err)
}

func (r *Reader) open() error {
	st, err := r.f.Stat()
	if err != nil {
		return fmt.Errorf("part: %s: stat: %w", r.path, err)
	}
	r.size = st.Size()
	if r.size < 12 {
		return r.corrupt("file of %d bytes is too short", r.size)
	}
	var trailer [8]byte
	if err := r.readAt(trailer[:], r.size-8); err != nil {
		return err
	}
	if string(trailer[4:]) != "PAR1" {
		return r.corrupt("no Parquet magic at the end")
	}
	footerStart := r.size - 8 - int64(binary.LittleEndian.Uint32(trailer[:4]))
	if footerStart < 4 {
		return r.corrupt("footer length %d exceeds the file", binary.LittleEndian.Uint32(trailer[:4]))
	}
	footer := make([]byte, r.size-8-footerStart)
	if err := r.readAt(footer, footerStart); err != nil {
		return err
	}
	pos, err := sealPos(footer)
	if err != nil {
		return r.corrupt("%v", err)
	}
	// The digits are parsed and must read back as written: %x writes
	// lower case, so a flipped case bit is caught too.
	dataEnd, err1 := strconv.ParseUint(string(footer[pos-16:pos]), 16, 63)
	want, err2 := strconv.ParseUint(string(footer[pos:pos+8]), 16, 32)
	if err1 != nil || err2 != nil || dataEnd < 4 || int64(dataEnd) > footerStart ||
		fmt.Sprintf("%016x%08x", dataEnd, want) != string(footer[pos-16:pos+8]) {
		return r.corrupt("malformed seal")
	}
	r.dataEnd = int64(dataEnd)
	// The tail is everything after the data: page index, footer, trailer.
	tail := make([]byte, r.size-r.dataEnd)
	mid := footerStart - r.dataEnd
	if err := r.readAt(tail[:mid], r.dataEnd); err != nil {
		return err
	}
	copy(tail[mid:], footer)
	copy(tail[mid+int64(len(footer)):], trailer[:])
	p := mid + int64(pos)
	crc := crc32.Update(0, castagnoli, tail[:p])
	crc = crc32.Update(crc, castagnoli, []byte("00000000"))
	crc = crc32.Update(crc, castagnoli, tail[p+8:])
	if crc != uint32(want) {
		return r.corrupt("footer checksum mismatch")
	}
	var head [4]byte
	if err := r.readAt(head[:], 0); err != nil {
		return err
	}
	if string(head[:]) != "PAR1" {
		return r.corrupt("no Parquet magic at the start")
	}
	r.file, err = openParquet(&windowReader{base: r.dataEnd, b: tail}, r.size)
	if err != nil {
		return r.corrupt("footer: %v", err)
	}
	js, ok := r.file.Lookup(metaKey)
	if !ok {
		return r.corrupt("no %s metadata", metaKey)
	}
	r.meta, r.blocks, r.fm, err = decodeMeta(js)
	if errors.Is(err, ErrVersion) {
		return fmt.Errorf("part: %s: %w", r.path, err)
	}
	if err != nil {
		return r.corrupt("%v", err)
	}
	r.order = newOrderSource(r.meta.OrderFrom)
	if f, ok := r.file.Lookup(filterKey); ok {
		if r.filter, err = decodeKeyFilter([]byte(f)); err != nil {
			return r.corrupt("%v", err)
		}
	}
	if f, ok := r.file.Lookup(indexKey); ok {
		if r.index, err = decodeIndex([]byte(f), r.blocks, r.meta.PageRows); err != nil {
			return r.corrupt("%v", err)
		}
	}
	return r.checkLayout()
}

// MayContain reports whether the part can hold rows of the sort key key:
// false only when its key filter (keyfilter.go) says it holds none. A part
// without a filter may hold any key.
func (r *Reader) MayContain(key []byte) bool { return r.filter.MayContain(key) }

// KeyFilterBytes is the size of the part's key filter, 0 without one.
func (r *Reader) KeyFilterBytes() int { return r.filter.Bytes() }

// checkLayout checks that the Parquet footer and the part metadata agree:
// the schema the columns imply, the blocks, and chunk byte ranges that lie
// inside the checksummed data region.
func (r *Reader) checkLayout() error {
	if want := (r.dataEnd + int64(r.fm.Stripe) - 1) / int64(r.fm.Stripe); int64(len(r.fm.Stripes)/4) != want {
		return r.corrupt("%d stripe checksums for %d data bytes", len(r.fm.Stripes)/4, r.dataEnd)
	}
	expect, err := buildSchema(r.meta.Kind, r.meta.Columns)
	if err != nil {
		return r.corrupt("%v", err)
	}
	got := r.file.Schema()
	if len(got.Columns()) != len(expect.Columns()) {
		return r.corrupt("%d Parquet columns, metadata implies %d", len(got.Columns()), len(expect.Columns()))
	}
	leafOf := func(name string) (int, error) {
		e, ok1 := expect.Lookup(name)
		g, ok2 := got.Lookup(name)
		if !ok1 || !ok2 || e.ColumnIndex != g.ColumnIndex || e.Node.Optional() != g.Node.Optional() ||
			e.Node.Type().Kind() != g.Node.Type().Kind() || e.Node.Type().Length() != g.Node.Type().Length() {
			return 0, r.corrupt("Parquet column %s does not match the metadata", name)
		}
		return g.ColumnIndex, nil
	}
	for f, name := range fixedNames {
		if r.fixed[f], err = leafOf(name); err != nil {
			return err
		}
	}
	r.leaf = make([]int, len(r.meta.Columns))
	r.phys = make([]physical, len(r.meta.Columns))
	r.colIdx = make(map[catalog.ColumnID]int, len(r.meta.Columns))
	for i, c := range r.meta.Columns {
		if r.leaf[i], err = leafOf(columnName(c.ID)); err != nil {
			return err
		}
		r.phys[i], _ = physicalOf(c.Type)
		r.colIdx[c.ID] = i
	}
	md := r.file.Metadata()
	if len(md.RowGroups) != len(r.blocks) || len(r.file.RowGroups()) != len(r.blocks) {
		return r.corrupt("%d row groups, metadata lists %d blocks", len(md.RowGroups), len(r.blocks))
	}
	for i, rg := range md.RowGroups {
		if rg.NumRows != int64(r.blocks[i].Rows) || len(rg.Columns) != len(expect.Columns()) {
			return r.corrupt("row group %d does not match block %d", i, i)
		}
		for j := range rg.Columns {
			start, end := chunkRange(&rg, j)
			if start < 4 || end <= start || end > r.dataEnd {
				return r.corrupt("block %d column %s lies at [%d, %d), outside the data", i, r.colName(j), start, end)
			}
			// parquet-go decodes every chunk of a column with the codec
			// of its first; Write uses no other codecs than these.
			switch c := rg.Columns[j].MetaData.Codec; {
			case c != md.RowGroups[0].Columns[j].MetaData.Codec:
				return r.corrupt("block %d column %s is compressed with %s, block 0 with %s", i, r.colName(j), c, md.RowGroups[0].Columns[j].MetaData.Codec)
			case c != format.Uncompressed && c != format.Zstd && c != format.Lz4Raw:
				return r.corrupt("block %d column %s is compressed with %s, which parts do not use", i, r.colName(j), c)
			}
		}
	}
	r.checked = make([]atomic.Uint64, (len(r.blocks)*len(expect.Columns())+63)/64)
	return nil
}

// colName names Parquet column col for errors: a fixed column's name, or
// "c<id>" for a table column.
func (r *Reader) colName(col int) string {
	if cols := r.file.Schema().Columns(); col >= 0 && col < len(cols) && len(cols[col]) > 0 {
		return cols[col][0]
	}
	return fmt.Sprintf("#%d", col)
}

// checkChunkPages runs checkPages over pages [from, to) of block blk's
// chunk of Parquet column col (the first being page page0 of the chunk),
// held in buf from file offset base: whole chunks once per reader, a
// lookup's pages each time they are decoded.
func (r *Reader) checkChunkPages(buf []byte, base, from, to int64, page0, blk, col int) error {
	rg := &r.file.Metadata().RowGroups[blk]
	start, end := chunkRange(rg, col)
	bit := blk*len(rg.Columns) + col
	whole := from == start && to == end
	if whole && r.checked[bit/64].Load()&(1<<(bit%64)) != 0 {
		return nil
	}
	rows := r.blocks[blk].Rows
	if r.meta.PageRows > 0 {
		rows = min(rows, r.meta.PageRows)
	}
	m := &rg.Columns[col].MetaData
	var seen pageMemo
	if !whole {
		seen = &r.pages
	}
	if err := checkPages(buf, base, from, to, page0, rows, m.TotalUncompressedSize, m.Codec, seen); err != nil {
		return r.corrupt("block %d column %s: %v", blk, r.colName(col), err)
	}
	if whole {
		r.checked[bit/64].Or(1 << (bit % 64))
	}
	return nil
}

// chunkRange returns the byte range of column j's chunk in a row group.
func chunkRange(rg *format.RowGroup, j int) (start, end int64) {
	m := &rg.Columns[j].MetaData
	start = m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	return start, start + m.TotalCompressedSize
}

// Meta returns the part's metadata. It is shared: do not modify it.
func (r *Reader) Meta() *Meta { return r.meta }

// Blocks describes the part's blocks, in order. The slice is shared.
func (r *Reader) Blocks() []BlockInfo { return r.blocks }

// Info reports the part's size and the space of each column.
func (r *Reader) Info() Info {
	info := infoOf(r.file.Metadata(), r.meta.Columns, r.leaf)
	info.Bytes = r.size
	return info
}

// Close closes the file and drops what the cache holds of it: a closed
// reader's pages and chunks are never read again, and a whole scan's worth
// of them would otherwise crowd out live ones until the clock reached them.
func (r *Reader) Close() error {
	r.cache.dropReader(r.id)
	return r.f.Close()
}

// ReadBlock reads block i into dst: every fixed column, and the table
// columns cols in that order (dst.IDs = cols). A column the part does not
// hold comes back as a nil vector; the caller fills in the column's
// introduced default (R6.5). Vectors and slices already in dst are reused
// when their types fit, so a scan that reads block after block into one
// Data allocates nothing per row. Columns not asked for are not read from
// the file.
func (r *Reader) ReadBlock(i int, cols []catalog.ColumnID, dst *Data) error {
	return r.ReadBlockFixed(i, FixAll, cols, dst)
}

// Fixed names a set of the fixed columns, for ReadBlockFixed.
type Fixed uint16

// The fixed columns, one bit each.
const (
	FixSort Fixed = 1 << iota
	FixGroup
	FixCommit
	FixSeq
	FixTomb
	FixWonAt
	FixEndedAt
	FixSupersededBy
	FixState
	FixOrder
	// FixAll is every fixed column, what ReadBlock reads.
	FixAll = FixSort | FixGroup | FixCommit | FixSeq | FixTomb | FixWonAt | FixEndedAt | FixSupersededBy | FixState | FixOrder
)

// chunkTasks appends to tasks one task per column chunk a read decodes:
// the fixed columns asked for, then cols, whose vectors in dst are reused
// when their type still fits (n rows) and are nil for a column the part
// does not hold.
func (r *Reader) chunkTasks(tasks []chunkTask, fixed Fixed, cols []catalog.ColumnID, dst *Data, n int) []chunkTask {
	for f := range numFixed {
		if fixed&(1<<f) != 0 {
			tasks = append(tasks, chunkTask{col: r.fixed[f], fixed: f})
		}
	}
	dst.IDs = append(dst.IDs[:0], cols...)
	for len(dst.Cols) < len(cols) {
		dst.Cols = append(dst.Cols, nil)
	}
	dst.Cols = dst.Cols[:len(cols)]
	for j, id := range cols {
		k, ok := r.colIdx[id]
		if !ok {
			dst.Cols[j] = nil
			continue
		}
		t := r.meta.Columns[k].Type
		v := dst.Cols[j]
		if v == nil || v.Type() != t {
			v = types.NewVector(t, n)
			dst.Cols[j] = v
		}
		tasks = append(tasks, chunkTask{col: r.leaf[k], fixed: -1, v: v, ph: r.phys[k]})
	}
	return tasks
}

// ReadBlockFixed is ReadBlock reading only the fixed columns in fixed: the
// slices (and vectors) of the others are left empty. A current read needs
// neither ordering values nor resolution columns, and decoding them is
// most of the cost of a block (the sort key and ordering values are byte
// arrays); this keeps it to what the read uses.
//
// Chunks the cache holds (ReadBlockView keeps them) are copied out of it
// instead of being read and decoded; what ReadBlockFixed decodes itself is
// not kept (chunkcache.go).
//
// In a part whose ordering values are rebuilt (Meta.OrderFrom), FixOrder
// decodes the ordering columns, unless cols holds them already, and
// encodes Order from them (order.go).
func (r *Reader) ReadBlockFixed(i int, fixed Fixed, cols []catalog.ColumnID, dst *Data) error {
	if fixed&FixOrder == 0 || r.order == nil {
		return r.readBlockFixed(i, fixed, cols, dst)
	}
	if err := r.readBlockFixed(i, fixed&^FixOrder, cols, dst); err != nil {
		return err
	}
	return r.readOrder(dst, fixed, cols, func(f Fixed, c []catalog.ColumnID, d *Data) error {
		return r.readBlockFixed(i, f, c, d)
	})
}

// readBlockFixed is ReadBlockFixed reading _order as stored.
func (r *Reader) readBlockFixed(i int, fixed Fixed, cols []catalog.ColumnID, dst *Data) error {
	if i < 0 || i >= len(r.blocks) {
		return fmt.Errorf("part: %s: block %d of %d", r.path, i, len(r.blocks))
	}
	n := r.blocks[i].Rows
	dst.Reset()
	if dst.Sort == nil {
		dst.Sort = types.NewVector(types.Of(types.Bytes), n)
	}
	if dst.Order == nil {
		dst.Order = types.NewVector(types.Of(types.Bytes), n)
	}
	rg := &r.file.Metadata().RowGroups[i]
	tasks := r.chunkTasks(make([]chunkTask, 0, numFixed+len(cols)), fixed, cols, dst, n)
	tasks = r.fromCache(i, tasks, dst)
	// Residuals are undone in the chunks decoded here; those the cache
	// gave hold final values (resid.go).
	var undo Fixed
	for t := range tasks {
		tasks[t].start, tasks[t].end = chunkRange(rg, tasks[t].col)
		if r.residual(tasks[t].fixed) {
			undo |= 1 << tasks[t].fixed
		}
	}
	slices.SortFunc(tasks, func(a, b chunkTask) int { return cmp.Compare(a.start, b.start) })
	w := r.window()
	defer r.windows.Put(w)
	chunks := r.file.RowGroups()[i].ColumnChunks()
	s := int64(r.fm.Stripe)
	// Chunks whose stripes touch share one read and one verification.
	for lo := 0; lo < len(tasks); {
		start, end := tasks[lo].start, tasks[lo].end
		hi := lo + 1
		for hi < len(tasks) && tasks[hi].start/s*s <= (end+s-1)/s*s {
			end = max(end, tasks[hi].end)
			hi++
		}
		buf, base, err := r.verified(w, start, end)
		if err != nil {
			return fmt.Errorf("%w (block %d)", err, i)
		}
		for t := lo; t < hi; t++ {
			if err := r.readChunk(&windowReader{base: base, b: buf}, i, &tasks[t], chunks, n, dst); err != nil {
				return err
			}
		}
		lo = hi
	}
	dst.Rows = n
	if undo != 0 {
		return r.undoBlock(i, undo, fixed, dst)
	}
	return nil
}

// chunkTask is one column chunk ReadBlock decodes: a fixed column (fixed ≥
// 0) or a table column into v.
type chunkTask struct {
	col        int
	fixed      int
	v          *types.Vector
	ph         physical
	start, end int64
	// uncached makes decodePages neither look in the page cache nor put
	// the page it decodes there: keyRunsPage caches another form of it.
	// noPut makes it look there but not put what it decodes: undoPages's
	// base columns.
	uncached, noPut bool
}

// Bytes past the checksums are what a writer wrote, but not necessarily
// this package (a file from elsewhere, a writer's bug), and parquet-go
// panics on some malformed input where it could have returned an error:
// FuzzPart found a data page header with a negative value count. No input
// may crash the process, so the calls into parquet-go that parse file
// bytes (the footer, page headers) turn a panic into an error, reported
// as corruption of the file.
//
// What no recover catches is an allocation parquet-go sizes from a page
// header (a fatal out-of-memory): checkPages (pagecheck.go) checks the
// headers of the pages before parquet-go reads them.

// unpanic, deferred, turns a panic into *err.
func unpanic(err *error) {
	if x := recover(); x != nil {
		*err = fmt.Errorf("malformed Parquet data: %v", x)
	}
}

// openParquet parses the footer of a verified tail.
func openParquet(tail *windowReader, size int64) (f *parquet.File, err error) {
	defer unpanic(&err)
	return parquet.OpenFile(tail, size,
		parquet.SkipMagicBytes(true), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
		parquet.OptimisticRead(false))
}

// readPage is pages.ReadPage.
func readPage(pages parquet.Pages) (p parquet.Page, err error) {
	defer unpanic(&err)
	return pages.ReadPage()
}

// offsetIndex is fc.OffsetIndex (FuzzPart's second finding: an offset
// index whose page count overflows a slice length).
func offsetIndex(fc *parquet.FileColumnChunk) (oi parquet.OffsetIndex, err error) {
	defer unpanic(&err)
	return fc.OffsetIndex()
}

// seekToRow is pages.SeekToRow.
func seekToRow(pages parquet.Pages, row int64) (err error) {
	defer unpanic(&err)
	return pages.SeekToRow(row)
}

// window returns a pooled read buffer.
func (r *Reader) window() *[]byte {
	if w, ok := r.windows.Get().(*[]byte); ok {
		return w
	}
	return new([]byte)
}

// readChunk decodes one column chunk of block blk out of verified bytes,
// appending its pages to dst or t.v. The chunk must hold exactly rows rows.
func (r *Reader) readChunk(win *windowReader, blk int, t *chunkTask, chunks []parquet.ColumnChunk, rows int, dst *Data) error {
	fc, ok := chunks[t.col].(*parquet.FileColumnChunk)
	if !ok {
		return r.corrupt("block %d column %s is not a file column chunk", blk, r.colName(t.col))
	}
	col := t.col
	m := &r.file.Metadata().RowGroups[blk].Columns[col].MetaData
	// Pages decoded here are checked as they are decoded (eachOwnPage).
	own := ownTask(m, t)
	if !own {
		if err := r.checkChunkPages(win.b, win.base, t.start, t.end, 0, blk, col); err != nil {
			return err
		}
	} else {
		if t.start < win.base || t.end > win.base+int64(len(win.b)) {
			return r.corrupt("block %d column %s lies outside the bytes read", blk, r.colName(col))
		}
		b := win.b[t.start-win.base : t.end-win.base]
		var got int
		var err error
		if t.fixed >= 0 {
			got, err = decodeOwnFixed(b, m.Codec, r.pageLimits(blk, col), fc.Type(), dst, t.fixed, rows, 0)
		} else {
			got, err = decodeOwnPages(b, m.Codec, r.pageLimits(blk, col), t.ph, fc.Type(), t.v, rows, 0)
		}
		if err == nil && got != rows {
			err = fmt.Errorf("%d rows, want %d", got, rows)
		}
		if err != nil {
			return r.corrupt("block %d column %s: %v", blk, r.colName(col), err)
		}
		return nil
	}
	pages := fc.PagesFrom(win)
	defer pages.Close()
	got := 0
	for {
		p, err := readPage(pages)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r.corrupt("block %d column %s: %v", blk, r.colName(col), err)
		}
		got += int(p.NumRows())
		if got > rows {
			parquet.Release(p)
			return r.corrupt("block %d column %s holds more than %d rows", blk, r.colName(col), rows)
		}
		if t.fixed >= 0 {
			err = appendFixed(dst, t.fixed, p)
		} else {
			err = appendPage(t.v, t.ph, p)
		}
		parquet.Release(p)
		if err != nil {
			return r.corrupt("block %d column %s: %v", blk, r.colName(col), err)
		}
	}
	if got != rows {
		return r.corrupt("block %d column %s holds %d rows, want %d", blk, r.colName(col), got, rows)
	}
	return nil
}

// verified reads the whole stripes covering [start, end) into *w and checks
// their CRCs; it returns the bytes and the file offset they start at.
func (r *Reader) verified(w *[]byte, start, end int64) ([]byte, int64, error) {
	s := int64(r.fm.Stripe)
	k0, k1 := start/s, (end-1)/s
	base, limit := k0*s, min((k1+1)*s, r.dataEnd)
	if int64(cap(*w)) < limit-base {
		*w = make([]byte, limit-base)
	}
	buf := (*w)[:limit-base]
	if err := r.readAt(buf, base); err != nil {
		return nil, 0, err
	}
	for k := k0; k <= k1; k++ {
		lo := (k - k0) * s
		hi := min(lo+s, int64(len(buf)))
		if crc32.Checksum(buf[lo:hi], castagnoli) != r.fm.stripeCRC(int(k)) {
			return nil, 0, r.corrupt("checksum mismatch in data bytes [%d, %d)", base+lo, base+hi)
		}
	}
	return buf, base, nil
}

// windowReader serves reads from verified bytes b that start at file
// offset base; anything outside them was not verified and is refused.
type windowReader struct {
	base int64
	b    []byte
}

// ReadAt implements io.ReaderAt.
func (w *windowReader) ReadAt(p []byte, off int64) (int, error) {
	if off < w.base || off-w.base > int64(len(w.b)) {
		return 0, fmt.Errorf("read at %d outside the verified bytes [%d, %d)", off, w.base, w.base+int64(len(w.b)))
	}
	n := copy(p, w.b[off-w.base:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Check opens the part at path and verifies all of it: the seal, every
// stripe checksum, every page checksum, and that every block decodes to
// the rows, order and bounds the metadata promises. storage.Check and
// `strata check` call it; any finding wraps ErrCorrupt.
func Check(fsys vfs.FS, path string) error {
	r, err := Open(fsys, path)
	if err != nil {
		return err
	}
	defer r.Close()
	w := r.window()
	for off := int64(0); off < r.dataEnd; off += 32 * int64(r.fm.Stripe) {
		if _, _, err := r.verified(w, off, min(off+32*int64(r.fm.Stripe), r.dataEnd)); err != nil {
			return err
		}
	}
	r.windows.Put(w)
	ids := make([]catalog.ColumnID, len(r.meta.Columns))
	for i, c := range r.meta.Columns {
		ids[i] = c.ID
	}
	var d, od Data
	var last struct {
		sort   []byte
		group  uint16
		commit uint64
		seq    uint32
	}
	lo, hi := ^uint64(0), uint64(0)
	m := r.meta
	for i, b := range r.blocks {
		if err := r.ReadBlock(i, ids, &d); err != nil {
			return err
		}
		if err := checkBlock(&d, &b, m.PageRows); err != nil {
			return r.corrupt("block %d: %v", i, err)
		}
		if i > 0 && m.KeyBlocks && bytes.Equal(d.Sort.BytesAt(0), last.sort) {
			return r.corrupt("block %d continues the last key of block %d, but the part says its blocks end at keys", i, i-1)
		}
		if i > 0 && posLess(d.Sort.BytesAt(0), d.Group[0], d.Commit[0], d.Seq[0], last.sort, last.group, last.commit, last.seq) {
			return r.corrupt("block %d starts before the end of block %d", i, i-1)
		}
		if r.order != nil {
			// Rebuilt ordering values ignore the stored column, which
			// Write left empty: anything else there is not this package's.
			if err := r.readBlockFixed(i, FixOrder, nil, &od); err != nil {
				return err
			}
			for j := range od.Rows {
				if len(od.Order.BytesAt(j)) != 0 {
					return r.corrupt("block %d: row %d holds ordering values the part says are rebuilt", i, j)
				}
			}
		}
		if r.meta.Residual || r.meta.PositionResidual {
			if err := r.checkResidualPages(i, &d, &od); err != nil {
				return err
			}
		}
		// A filter that misses a key would make lookups report it absent.
		for j := range d.Rows {
			if !r.filter.MayContain(d.Sort.BytesAt(j)) {
				return r.corrupt("block %d: the key filter does not hold the key of row %d", i, j)
			}
		}
		// A filter that misses a value would make an index read skip a
		// row it must return.
		if err := r.checkIndex(i, &d); err != nil {
			return err
		}
		n := d.Rows - 1
		last.sort = append(last.sort[:0], d.Sort.BytesAt(n)...)
		last.group, last.commit, last.seq = d.Group[n], d.Commit[n], d.Seq[n]
		lo, hi = min(lo, b.MinCommit), max(hi, b.MaxCommit)
	}
	if lo != m.MinCommit || hi != m.MaxCommit ||
		string(m.MinSort) != string(r.blocks[0].MinSort) || string(m.MaxSort) != string(r.blocks[len(r.blocks)-1].MaxSort) {
		return r.corrupt("part bounds do not match its blocks")
	}
	return nil
}

// checkBlock checks one decoded block against its BlockInfo.
func checkBlock(d *Data, b *BlockInfo, pageRows int) error {
	for i := 1; i < d.Rows; i++ {
		if d.less(i, i-1) {
			return fmt.Errorf("rows %d and %d are out of order", i-1, i)
		}
	}
	lo, hi := ^uint64(0), uint64(0)
	for _, c := range d.Commit {
		lo, hi = min(lo, c), max(hi, c)
	}
	if pageRows > 0 && len(b.Keys) != (d.Rows-1)/pageRows || pageRows <= 0 && len(b.Keys) != 0 {
		return fmt.Errorf("%d index keys for %d rows", len(b.Keys), d.Rows)
	}
	for j, k := range b.Keys {
		if string(d.Sort.BytesAt((j+1)*pageRows)) != string(k) {
			return fmt.Errorf("index key %d does not match row %d", j, (j+1)*pageRows)
		}
	}
	if lo != b.MinCommit || hi != b.MaxCommit ||
		string(d.Sort.BytesAt(0)) != string(b.MinSort) || string(d.Sort.BytesAt(d.Rows-1)) != string(b.MaxSort) {
		return fmt.Errorf("rows do not match the block's bounds")
	}
	return nil
}

// checkResidualPages checks that the page reads of block i (ReadRows, what
// lookups use) undo the residuals of a part with Meta.Residual or
// Meta.PositionResidual to the
// values the whole-chunk read gave in d: the two paths undo them in
// different places (resid.go), each from the base columns of its own rows.
func (r *Reader) checkResidualPages(i int, d, pd *Data) error {
	pr := r.meta.PageRows
	if pr <= 0 {
		pr = d.Rows
	}
	for lo := 0; lo < d.Rows; lo += pr {
		hi := min(lo+pr, d.Rows)
		if err := r.ReadRows(i, lo, hi, FixCommit|FixSeq|FixWonAt|FixEndedAt|FixSupersededBy, nil, pd); err != nil {
			return err
		}
		if !slices.Equal(pd.Commit, d.Commit[lo:hi]) || !slices.Equal(pd.Seq, d.Seq[lo:hi]) ||
			!slices.Equal(pd.WonAt, d.WonAt[lo:hi]) || !slices.Equal(pd.EndedAt, d.EndedAt[lo:hi]) ||
			!slices.Equal(pd.SupersededBy, d.SupersededBy[lo:hi]) {
			return r.corrupt("block %d: rows [%d, %d) read by page give other positions or resolution values than by block", i, lo, hi)
		}
	}
	return nil
}
