package part

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// DefaultBlockRows is the number of rows per block when WriteOptions names
// none: large enough that per-block costs (a Parquet row group, one footer
// entry per column) vanish, small enough that skipping a block saves work.
const DefaultBlockRows = 64 << 10

// WriteOptions tune the layout of a part; the zero value is the default.
type WriteOptions struct {
	// BlockRows is the number of rows per block (0 = DefaultBlockRows).
	BlockRows int
	// PageRows is the rows of a page: every page but the last of a block
	// holds exactly that many (0 = PageRows, HistoryPageRows for a
	// KindHistory part, CurrentPageRows for a KindCurrent part).
	PageRows int
	// Warm, if not nil, is the cache the part will be opened with: the
	// pages lookups read of a delta or current part are built from the
	// rows written and put in it by the next OpenCached of the path
	// (warm.go), so that lookups right after a flush or merge find them.
	Warm *Cache
	// Pace, if not nil, is called before each column chunk is encoded and
	// may block: a background merge's writer gives way to foreground
	// reads as its reader does (merge.Options.Pace), or the encoding and
	// compression of a part would take a core from every read it overlaps.
	Pace func()
	// IndexCols, if not nil, returns the columns to write an index
	// filter for (index.go, R10.1) in a part of kind k: the caller names
	// those of the table's indexes whose scope covers that kind (a merge
	// writes current and history parts with one WriteOptions). Columns
	// the part does not hold are left out.
	IndexCols func(k Kind) []catalog.ColumnID
}

// ColumnSize is the space one column takes in a part, summed over blocks.
type ColumnSize struct {
	ID catalog.ColumnID
	// Compressed is the bytes on disk (page headers included), Uncompressed
	// the bytes before compression: what system.table_column_codecs shows
	// (R9.7).
	Compressed, Uncompressed int64
}

// Info is what Write reports about the file it wrote, and Reader.Info
// about an open one.
type Info struct {
	Rows   uint64
	Blocks int
	// Bytes is the size of the file.
	Bytes int64
	// Columns has one entry per table column, in Meta.Columns order.
	Columns []ColumnSize
	// Fixed is the space of the fixed columns (sort key, group, commit,
	// seq, tomb, resolution and ordering values), with ID 0.
	Fixed ColumnSize
}

// Write writes d as a part file at path, with the identity and column
// descriptions of meta (its computed fields are ignored and recomputed),
// and makes the file and its directory entry durable before returning:
// invariant 1 of the manifest (a part is added only after its file is
// durable) rests on that. On error the partial file is removed; the
// manifest never names it.
//
// d must be sorted by (Sort, Group, Commit, Seq) and have at least one row;
// Write checks both, and that every vector has the type meta gives it.
func Write(fsys vfs.FS, path string, d *Data, meta Meta, opts WriteOptions) (Info, error) {
	if err := d.validate(&meta); err != nil {
		return Info{}, err
	}
	w := &writer{d: d, meta: meta, opts: opts}
	w.meta.OrderFrom = orderFromRows(d, &meta)
	w.meta.Residual = residualKind(meta.Kind) && writeResiduals
	if w.opts.BlockRows <= 0 {
		w.opts.BlockRows = DefaultBlockRows
	}
	if w.opts.PageRows <= 0 {
		w.opts.PageRows = defaultPageRows(meta.Kind)
	}
	w.meta.PositionResidual = w.meta.Residual && positionsRepeat(d, w.opts.PageRows)
	f, err := fsys.Create(path)
	if err != nil {
		return Info{}, fmt.Errorf("part: create %s: %w", path, err)
	}
	if opts.Warm != nil && (meta.Kind == KindDelta || meta.Kind == KindCurrent) {
		w.warm, w.warmLimit = &warmPart{}, opts.Warm.warmPartLimit()
	}
	info, err := w.write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.SyncDir(filepath.Dir(path))
	}
	if err != nil {
		_ = fsys.Remove(path)
		return Info{}, fmt.Errorf("part: write %s: %w", path, err)
	}
	if w.warm != nil {
		w.warm.size = info.Bytes
		opts.Warm.keepWarm(path, w.warm)
	}
	return info, nil
}

// writer holds the state of one Write.
type writer struct {
	d    *Data
	meta Meta
	opts WriteOptions
	// phys is each table column's Parquet layout (for the warmed pages,
	// warm.go); leaves each Parquet column's plan, in column order, as
	// the schema gives it (pagewrite.go).
	phys   []physical
	leaves []leafPlan
	ps     pageScratch
	// resid and residQ are the residuals' scratch (resid.go).
	resid  []uint64
	residQ []uint32
	// warm collects the pages built for WriteOptions.Warm, or is nil;
	// warmLimit is the most bytes of them the part may take. fixed and
	// cols map fixed and table columns to their Parquet column index, as
	// the warmed pages' cache keys name them.
	warm      *warmPart
	warmLimit int64
	fixed     [numFixed]int
	cols      []int
}

// write encodes the whole file through a sealWriter onto f.
func (w *writer) write(f vfs.File) (Info, error) {
	schema, err := buildSchema(w.meta.Kind, w.meta.Columns)
	if err != nil {
		return Info{}, err
	}
	for i, name := range fixedNames {
		w.fixed[i] = leafIndex(schema, name)
	}
	w.cols = make([]int, len(w.meta.Columns))
	w.phys = make([]physical, len(w.meta.Columns))
	for i, c := range w.meta.Columns {
		w.cols[i] = leafIndex(schema, columnName(c.ID))
		w.phys[i], _ = physicalOf(c.Type) // validated
	}
	if w.leaves, err = w.planLeaves(schema); err != nil {
		return Info{}, err
	}
	sw := &sealWriter{out: bufio.NewWriterSize(f, 1<<20)}
	if _, err := sw.Write([]byte("PAR1")); err != nil {
		return Info{}, err
	}
	w.meta.PageRows = w.opts.PageRows
	n := w.d.Rows
	var blocks []BlockInfo
	var ends []int
	var groups []format.RowGroup
	var indexes [][]format.OffsetIndex
	w.meta.Rows = uint64(n)
	w.meta.MinCommit, w.meta.MaxCommit = math.MaxUint64, 0
	// Blocks end at sort-key boundaries, so that every row of a key is in
	// one block and a reader can resolve or stream a key from the one
	// block it has decoded. A key with more rows than a second BlockRows
	// is cut anyway (memory stays bounded) and the part then says its
	// blocks are not key-aligned (Meta.KeyBlocks), so readers take the
	// general path.
	w.meta.KeyBlocks = true
	for lo, hi := 0, 0; lo < n; lo = hi {
		hi = min(lo+w.opts.BlockRows, n)
		for hi < n && hi-lo < 2*w.opts.BlockRows && bytes.Equal(w.d.Sort.BytesAt(hi), w.d.Sort.BytesAt(hi-1)) {
			hi++
		}
		if hi < n && bytes.Equal(w.d.Sort.BytesAt(hi), w.d.Sort.BytesAt(hi-1)) {
			w.meta.KeyBlocks = false
		}
		rg := format.RowGroup{NumRows: int64(hi - lo), FileOffset: sw.off, Ordinal: int16(len(groups))}
		idx := make([]format.OffsetIndex, len(w.leaves))
		for j := range w.leaves {
			if w.opts.Pace != nil {
				w.opts.Pace()
			}
			cc, oi, err := w.writeChunk(sw, j, lo, hi)
			if err != nil {
				return Info{}, err
			}
			rg.Columns = append(rg.Columns, cc)
			rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
			rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
			idx[j] = oi
		}
		groups, indexes = append(groups, rg), append(indexes, idx)
		if w.warm != nil {
			w.warmBlock(len(blocks), lo, hi)
		}
		b := BlockInfo{
			Rows:    hi - lo,
			MinSort: bytes.Clone(w.d.Sort.BytesAt(lo)), MaxSort: bytes.Clone(w.d.Sort.BytesAt(hi - 1)),
			MinCommit: math.MaxUint64,
		}
		for j := lo + w.opts.PageRows; j < hi; j += w.opts.PageRows {
			b.Keys = append(b.Keys, bytes.Clone(w.d.Sort.BytesAt(j)))
		}
		for _, c := range w.d.Commit[lo:hi] {
			b.MinCommit, b.MaxCommit = min(b.MinCommit, c), max(b.MaxCommit, c)
		}
		w.meta.MinCommit, w.meta.MaxCommit = min(w.meta.MinCommit, b.MinCommit), max(w.meta.MaxCommit, b.MaxCommit)
		blocks = append(blocks, b)
		ends = append(ends, hi)
	}
	w.meta.MinSort, w.meta.MaxSort = blocks[0].MinSort, blocks[len(blocks)-1].MaxSort
	dataEnd := sw.endData()
	var filter []byte
	if hasKeyFilter(w.meta.Kind) {
		f := buildKeyFilter(w.d, KeyFilterBits)
		filter = f.encode()
	}
	if keyFilterHook != nil {
		filter = keyFilterHook(filter)
	}
	var index []byte
	if w.opts.IndexCols != nil {
		if cols := w.opts.IndexCols(w.meta.Kind); len(cols) > 0 {
			index = buildIndex(w.d, &w.meta, cols, ends, w.opts.PageRows)
		}
	}
	if indexHook != nil {
		index = indexHook(index)
	}
	js, err := encodeMeta(&w.meta, blocks, sw.stripes)
	if err != nil {
		return Info{}, err
	}
	kv := []format.KeyValue{{Key: metaKey, Value: js}}
	if len(filter) > 0 {
		// Raw bytes, not in the JSON document, where base64 would make it
		// a third larger; the seal covers the footer either way.
		kv = append(kv, format.KeyValue{Key: filterKey, Value: string(filter)})
	}
	if len(index) > 0 {
		kv = append(kv, format.KeyValue{Key: indexKey, Value: string(index)})
	}
	kv = append(kv, format.KeyValue{Key: sealKey, Value: fmt.Sprintf("%s%016x%08x", sealMagic, dataEnd, 0)})
	md, err := w.writeTail(sw, schema, groups, indexes, kv)
	if err != nil {
		return Info{}, err
	}
	if err := sw.seal(); err != nil {
		return Info{}, err
	}
	if sw.err != nil {
		return Info{}, sw.err
	}
	info := infoOf(md, w.meta.Columns, w.cols)
	info.Bytes = sw.off
	return info, nil
}

// leafIndex returns the Parquet column index of a top-level leaf.
func leafIndex(s *parquet.Schema, name string) int {
	lc, ok := s.Lookup(name)
	if !ok {
		return -1
	}
	return lc.ColumnIndex
}

// groupsOf returns rows [lo, hi) of d.Group, nil when d has none (every
// group 0).
func groupsOf(d *Data, lo, hi int) []uint16 {
	if len(d.Group) == 0 {
		return nil
	}
	return d.Group[lo:hi]
}

// residualValues puts into w.resid what format 3 stores of resolution
// column f (resid.go) for rows [lo, hi), one page.
func (w *writer) residualValues(f, lo, hi int) {
	d := w.d
	page := func(s []uint64) []uint64 {
		if len(s) == 0 {
			return nil
		}
		return s[lo:hi]
	}
	w.resid = slices.Grow(w.resid[:0], hi-lo)[:hi-lo] // residuals writes every entry
	var won, end, sup []uint64
	switch f {
	case fWonAt:
		won = w.resid
	case fEndedAt:
		end = w.resid
	default:
		sup = w.resid
	}
	var st []version.State
	if len(d.State) > 0 {
		st = d.State[lo:hi]
	}
	residuals(st, d.Commit[lo:hi], page(d.WonAt), page(d.EndedAt), page(d.SupersededBy), won, end, sup)
}

// infoOf sums column chunk sizes from a file's Parquet metadata.
func infoOf(md *format.FileMetaData, cols []ColumnMeta, leaf []int) Info {
	info := Info{Rows: uint64(md.NumRows), Blocks: len(md.RowGroups), Columns: make([]ColumnSize, len(cols))}
	isTable := make(map[int]int, len(leaf))
	for i, l := range leaf {
		isTable[l] = i
		info.Columns[i].ID = cols[i].ID
	}
	for _, rg := range md.RowGroups {
		for j, cc := range rg.Columns {
			s := &info.Fixed
			if i, ok := isTable[j]; ok {
				s = &info.Columns[i]
			}
			s.Compressed += cc.MetaData.TotalCompressedSize
			s.Uncompressed += cc.MetaData.TotalUncompressedSize
		}
	}
	return info
}

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealWriter sits between the page writer (pagewrite.go) and the file.
// While blocks are written it passes bytes on and folds them into one CRC
// per stripeSize bytes; once endData is called it keeps the tail (offset
// indexes, footer, trailer) in memory so that seal can patch the tail's
// own CRC into the footer before anything of it reaches the file (doc.go,
// "Checksums").
type sealWriter struct {
	out     *bufio.Writer
	off     int64
	crc     uint32
	fill    int
	stripes []uint32
	inTail  bool
	tail    []byte
	err     error
}

// Write implements io.Writer.
func (s *sealWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.off += int64(len(b))
	if s.inTail {
		s.tail = append(s.tail, b...)
		return len(b), nil
	}
	for rest := b; len(rest) > 0; {
		n := min(len(rest), stripeSize-s.fill)
		s.crc = crc32.Update(s.crc, castagnoli, rest[:n])
		s.fill += n
		rest = rest[n:]
		if s.fill == stripeSize {
			s.stripes = append(s.stripes, s.crc)
			s.crc, s.fill = 0, 0
		}
	}
	if _, err := s.out.Write(b); err != nil {
		s.err = err
		return 0, err
	}
	return len(b), nil
}

// endData closes the data region and returns its end offset.
func (s *sealWriter) endData() int64 {
	if s.fill > 0 {
		s.stripes = append(s.stripes, s.crc)
		s.crc, s.fill = 0, 0
	}
	s.inTail = true
	return s.off
}

// seal computes the CRC of the tail with the seal's CRC digits still zero,
// writes the digits in, and writes the tail out.
func (s *sealWriter) seal() error {
	pos, err := sealPos(s.tail)
	if err != nil {
		return err
	}
	crc := crc32.Checksum(s.tail, castagnoli)
	copy(s.tail[pos:pos+8], fmt.Sprintf("%08x", crc))
	if _, err := s.out.Write(s.tail); err != nil {
		return err
	}
	return s.out.Flush()
}

// sealPos finds the seal in a tail and returns the offset of its 8 CRC
// digits.
func sealPos(tail []byte) (int, error) {
	i := bytes.LastIndex(tail, []byte(sealMagic))
	if i < 0 || i+sealLen > len(tail) {
		return 0, fmt.Errorf("no seal in the footer")
	}
	return i + len(sealMagic) + 16, nil
}
