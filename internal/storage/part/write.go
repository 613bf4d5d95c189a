package part

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// DefaultBlockRows is the number of rows per block when WriteOptions names
// none: large enough that per-block costs (a Parquet row group, one footer
// entry per column) vanish, small enough that skipping a block saves work.
const DefaultBlockRows = 64 << 10

// DefaultPageBytes is the uncompressed size after which a column's page is
// closed when WriteOptions names none.
const DefaultPageBytes = 256 << 10

// WriteOptions tune the layout of a part; the zero value is the default.
type WriteOptions struct {
	// BlockRows is the number of rows per block (0 = DefaultBlockRows).
	BlockRows int
	// PageBytes bounds a data page's uncompressed size (0 = DefaultPageBytes).
	PageBytes int
	// PageRows bounds a page's rows: every page ends at a multiple of it
	// (0 = PageRows, HistoryPageRows for a KindHistory part).
	PageRows int
	// Warm, if not nil, is the cache the part will be opened with: the
	// pages lookups read of a delta or current part are built from the
	// rows written and put in it by the next OpenCached of the path
	// (warm.go), so that lookups right after a flush or merge find them.
	Warm *Cache
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
	if w.opts.PageBytes <= 0 {
		w.opts.PageBytes = DefaultPageBytes
	}
	if w.opts.PageRows <= 0 {
		w.opts.PageRows = PageRows
		if meta.Kind == KindHistory {
			w.opts.PageRows = HistoryPageRows
		}
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
	// leaf maps fixed column i to its Parquet column index; cols does the
	// same for table columns.
	fixed [numFixed]int
	cols  []int
	phys  []physical
	vals  []parquet.Value
	wide  []byte
	// resid and residQ are the residuals' scratch (resid.go).
	resid  []uint64
	residQ []uint32
	// warm collects the pages built for WriteOptions.Warm, or is nil;
	// warmLimit is the most bytes of them the part may take.
	warm      *warmPart
	warmLimit int64
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
	sw := &sealWriter{out: bufio.NewWriterSize(f, 1<<20)}
	popts := []parquet.WriterOption{
		schema,
		// The seal needs every byte of a block to reach sw when Flush
		// returns, so parquet-go must not buffer on its own.
		parquet.WriteBufferSize(0),
		parquet.PageBufferSize(w.opts.PageBytes),
		// Nothing reads page statistics or page bounds: blocks are
		// skipped by BlockInfo, pages found by BlockInfo.Keys and the
		// offset index, which parquet-go writes regardless. Min/max in
		// every page header and 16-byte bounds of the byte-array and wide
		// columns in the column index took 2 % of a settled table
		// (docs/benchmarks.md, "Bytes on disk, third pass"). The
		// footer's column-chunk statistics stay for other readers, but
		// for the columns whose bounds are skipped.
		parquet.DataPageStatistics(false),
		parquet.SkipPageBounds(colSort),
		parquet.SkipPageBounds(colOrder),
		parquet.CreatedBy("strata", strconv.Itoa(FormatVersion), ""),
	}
	for i, c := range w.meta.Columns {
		if k := w.phys[i].kind; k == parquet.ByteArray || k == parquet.FixedLenByteArray {
			popts = append(popts, parquet.SkipPageBounds(columnName(c.ID)))
		}
	}
	pw := parquet.NewWriter(sw, popts...)
	w.vals = make([]parquet.Value, 0, w.opts.PageRows)
	w.meta.PageRows = w.opts.PageRows
	n := w.d.Rows
	var blocks []BlockInfo
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
		cw := pw.ColumnWriters()
		if err := w.writeBlock(cw, lo, hi); err != nil {
			return Info{}, err
		}
		if w.warm != nil {
			w.warmBlock(len(blocks), lo, hi)
		}
		if err := pw.Flush(); err != nil {
			return Info{}, err
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
	js, err := encodeMeta(&w.meta, blocks, sw.stripes)
	if err != nil {
		return Info{}, err
	}
	pw.SetKeyValueMetadata(metaKey, js)
	if len(filter) > 0 {
		// Raw bytes, not in the JSON document, where base64 would make it
		// a third larger; the seal covers the footer either way.
		pw.SetKeyValueMetadata(filterKey, string(filter))
	}
	pw.SetKeyValueMetadata(sealKey, fmt.Sprintf("%s%016x%08x", sealMagic, dataEnd, 0))
	if err := pw.Close(); err != nil {
		return Info{}, err
	}
	if err := sw.seal(); err != nil {
		return Info{}, err
	}
	if sw.err != nil {
		return Info{}, sw.err
	}
	info := infoOf(pw.File().Metadata(), w.meta.Columns, w.cols)
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

// writeBlock writes rows [lo, hi) to every column writer.
func (w *writer) writeBlock(cw []*parquet.ColumnWriter, lo, hi int) error {
	d := w.d
	for s := lo; s < hi; s += w.opts.PageRows {
		e := min(s+w.opts.PageRows, hi)
		put := func(col int) error {
			_, err := cw[col].WriteRowValues(w.vals)
			w.vals = w.vals[:0]
			return err
		}
		for f := range numFixed {
			w.appendFixed(f, s, e)
			if err := put(w.fixed[f]); err != nil {
				return err
			}
		}
		for c, v := range d.Cols {
			if err := w.appendColumn(v, w.phys[c], s, e); err != nil {
				return fmt.Errorf("column %d: %w", w.meta.Columns[c].ID, err)
			}
			if err := put(w.cols[c]); err != nil {
				return err
			}
		}
		// Every page ends at a multiple of PageRows rows (FindKey).
		if e < hi {
			for _, c := range cw {
				if err := c.Flush(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// appendFixed appends rows [lo, hi) of fixed column f to w.vals. Required
// columns need no levels: a zero Value's are 0.
func (w *writer) appendFixed(f, lo, hi int) {
	d := w.d
	switch f {
	case fSort:
		for i := lo; i < hi; i++ {
			w.vals = append(w.vals, parquet.ByteArrayValue(d.Sort.BytesAt(i)))
		}
	case fOrder:
		if d.Order == nil || d.Order.Len() == 0 || len(w.meta.OrderFrom) > 0 {
			w.vals = appendConst(w.vals, parquet.ByteArrayValue(nil), hi-lo)
			return
		}
		for i := lo; i < hi; i++ {
			w.vals = append(w.vals, parquet.ByteArrayValue(d.Order.BytesAt(i)))
		}
	case fGroup:
		w.vals = appendInt32s(w.vals, d.Group, lo, hi)
	case fSeq:
		if w.meta.PositionResidual {
			if cap(w.residQ) < hi-lo {
				w.residQ = make([]uint32, hi-lo)
			}
			w.residQ = w.residQ[:hi-lo]
			residualsPos(groupsOf(d, lo, hi), d.Commit[lo:hi], d.Seq[lo:hi], nil, w.residQ)
			w.vals = appendInt32s(w.vals, w.residQ, 0, hi-lo)
			return
		}
		w.vals = appendInt32s(w.vals, d.Seq, lo, hi)
	case fState:
		w.vals = appendInt32s(w.vals, d.State, lo, hi)
	case fTomb:
		if len(d.Tomb) == 0 {
			w.vals = appendConst(w.vals, parquet.BooleanValue(false), hi-lo)
			return
		}
		for _, x := range d.Tomb[lo:hi] {
			w.vals = append(w.vals, parquet.BooleanValue(x))
		}
	case fCommit:
		if w.meta.PositionResidual {
			if cap(w.resid) < hi-lo {
				w.resid = make([]uint64, hi-lo)
			}
			w.resid = w.resid[:hi-lo] // residualsPos writes every entry
			residualsPos(groupsOf(d, lo, hi), d.Commit[lo:hi], d.Seq[lo:hi], w.resid, nil)
			w.vals = appendInt64s(w.vals, w.resid, 0, hi-lo)
			return
		}
		w.vals = appendInt64s(w.vals, d.Commit, lo, hi)
	case fWonAt, fEndedAt, fSupersededBy:
		if w.meta.Residual {
			w.appendResiduals(f, lo, hi)
			return
		}
		switch f {
		case fWonAt:
			w.vals = appendInt64s(w.vals, d.WonAt, lo, hi)
		case fEndedAt:
			w.vals = appendInt64s(w.vals, d.EndedAt, lo, hi)
		default:
			w.vals = appendInt64s(w.vals, d.SupersededBy, lo, hi)
		}
	}
}

// groupsOf returns rows [lo, hi) of d.Group, nil when d has none (every
// group 0).
func groupsOf(d *Data, lo, hi int) []uint16 {
	if len(d.Group) == 0 {
		return nil
	}
	return d.Group[lo:hi]
}

// appendResiduals appends what format 3 stores of resolution column f
// (resid.go) for rows [lo, hi), one page.
func (w *writer) appendResiduals(f, lo, hi int) {
	d := w.d
	page := func(s []uint64) []uint64 {
		if len(s) == 0 {
			return nil
		}
		return s[lo:hi]
	}
	if cap(w.resid) < hi-lo {
		w.resid = make([]uint64, hi-lo)
	}
	w.resid = w.resid[:hi-lo] // residuals writes every entry
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
	for _, x := range w.resid {
		w.vals = append(w.vals, parquet.Int64Value(int64(x)))
	}
}

// appendConst appends n copies of x.
func appendConst(vals []parquet.Value, x parquet.Value, n int) []parquet.Value {
	for range n {
		vals = append(vals, x)
	}
	return vals
}

// appendInt32s appends rows [lo, hi) of an optional fixed column stored as
// INT32 (zero when s is empty).
func appendInt32s[T ~uint8 | ~uint16 | ~uint32](vals []parquet.Value, s []T, lo, hi int) []parquet.Value {
	if len(s) == 0 {
		return appendConst(vals, parquet.Int32Value(0), hi-lo)
	}
	for _, x := range s[lo:hi] {
		vals = append(vals, parquet.Int32Value(int32(x)))
	}
	return vals
}

// appendInt64s is appendInt32s for columns stored as INT64.
func appendInt64s(vals []parquet.Value, s []uint64, lo, hi int) []parquet.Value {
	if len(s) == 0 {
		return appendConst(vals, parquet.Int64Value(0), hi-lo)
	}
	for _, x := range s[lo:hi] {
		vals = append(vals, parquet.Int64Value(int64(x)))
	}
	return vals
}

// present marks a value of an optional column as not NULL.
func present(v parquet.Value) parquet.Value {
	v.SetDefinitionLevel(1)
	return v
}

// appendColumn appends rows [lo, hi) of table column v to w.vals. Values
// point into v (or into w.wide for wide integers) until WriteRowValues has
// copied them.
func (w *writer) appendColumn(v *types.Vector, p physical, lo, hi int) error {
	null := parquet.NullValue()
	switch v.Type().Kind.Class() {
	case types.ClassInt64:
		xs := v.Int64s()
		for i := lo; i < hi; i++ {
			switch {
			case v.IsNull(i):
				w.vals = append(w.vals, null)
			case p.kind == parquet.Int32:
				if xs[i] < math.MinInt32 || xs[i] > math.MaxInt32 {
					return fmt.Errorf("value %d of %s does not fit its 32-bit column", xs[i], v.Type())
				}
				w.vals = append(w.vals, present(parquet.Int32Value(int32(xs[i]))))
			default:
				w.vals = append(w.vals, present(parquet.Int64Value(xs[i])))
			}
		}
	case types.ClassUint64:
		xs := v.Uint64s()
		for i := lo; i < hi; i++ {
			switch {
			case v.IsNull(i):
				w.vals = append(w.vals, null)
			case p.kind == parquet.Int32:
				w.vals = append(w.vals, present(parquet.Int32Value(int32(uint32(xs[i])))))
			default:
				w.vals = append(w.vals, present(parquet.Int64Value(int64(xs[i]))))
			}
		}
	case types.ClassWide:
		xs := v.Wides()
		// Size the scratch once: values point into it until written.
		if need := (hi - lo) * p.size; cap(w.wide) < need {
			w.wide = make([]byte, need)
		}
		buf := w.wide[:(hi-lo)*p.size]
		for i := lo; i < hi; i++ {
			if v.IsNull(i) {
				w.vals = append(w.vals, null)
				continue
			}
			b := buf[(i-lo)*p.size : (i-lo+1)*p.size]
			x := &xs[i]
			for j := range p.size / 8 {
				binary.BigEndian.PutUint64(b[8*j:], x[p.size/8-1-j])
			}
			w.vals = append(w.vals, present(parquet.FixedLenByteArrayValue(b)))
		}
	case types.ClassFloat64:
		xs := v.Float64s()
		for i := lo; i < hi; i++ {
			switch {
			case v.IsNull(i):
				w.vals = append(w.vals, null)
			case p.kind == parquet.Float:
				w.vals = append(w.vals, present(parquet.FloatValue(float32(xs[i]))))
			default:
				w.vals = append(w.vals, present(parquet.DoubleValue(xs[i])))
			}
		}
	case types.ClassBool:
		xs := v.Bools()
		for i := lo; i < hi; i++ {
			if v.IsNull(i) {
				w.vals = append(w.vals, null)
			} else {
				w.vals = append(w.vals, present(parquet.BooleanValue(xs[i])))
			}
		}
	case types.ClassVarlen:
		for i := lo; i < hi; i++ {
			if v.IsNull(i) {
				w.vals = append(w.vals, null)
			} else {
				w.vals = append(w.vals, present(parquet.ByteArrayValue(v.BytesAt(i))))
			}
		}
	case types.ClassUUID:
		xs := v.UUIDs()
		for i := lo; i < hi; i++ {
			if v.IsNull(i) {
				w.vals = append(w.vals, null)
			} else {
				w.vals = append(w.vals, present(parquet.FixedLenByteArrayValue(xs[i][:])))
			}
		}
	default:
		return fmt.Errorf("type %s cannot be stored", v.Type())
	}
	return nil
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

// sealWriter sits between parquet-go and the file. While blocks are written
// it passes bytes on and folds them into one CRC per stripeSize bytes; once
// endData is called it keeps the tail (page index, footer, trailer) in
// memory so that seal can patch the tail's own CRC into the footer before
// anything of it reaches the file (doc.go, "Checksums").
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
