package part

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/types"
)

// Pages are laid out here rather than by parquet-go's writer. Its only way
// in for values is one parquet.Value per value, 24 bytes that each column
// of each row was turned into and that its column buffers turned back into
// typed slices: ~12 % of the CPU of an ingest at bench/'s medium scale went
// to that plumbing (docs/benchmarks.md, "Parts written page by page"). A
// part's pages are simple and always the same shape, so the writer builds
// them itself from the columns' own slices, with parquet-go's encoders
// (DELTA_BINARY_PACKED, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, PLAIN, the
// RLE levels), its compressors and its Thrift structures:
//
//   - one row group per block, its column chunks in schema order, each a
//     run of DATA_PAGE_V2 pages of exactly PageRows rows (the last of a
//     block shorter), each page header carrying the CRC-32 of its body;
//   - a table column is OPTIONAL: definition levels of bit width 1, RLE
//     encoded and uncompressed as V2 stores them, then the values of the
//     rows that are not NULL; a fixed column is REQUIRED, values only;
//   - after the data, an offset index per column chunk (the page
//     locations readers seek with), then the footer. No column index and
//     no page or chunk minimum and maximum are written: nothing reads them
//     (blocks are skipped by BlockInfo, pages found by BlockInfo.Keys and
//     the offset index), and they were 2 % of a settled table. Each chunk
//     counts its NULLs.
//
// The footer's schema elements, column orders and creator are those
// parquet-go writes for the same schema, taken once per schema from an
// empty file it writes (footerTemplate), so any Parquet reader sees the
// types it always saw.

// leafPlan is how one Parquet column of a part is written.
type leafPlan struct {
	// fixed is the fixed column (fSort…) or -1; col the index in Data.Cols
	// of a table column, or -1.
	fixed, col int
	name       string
	phys       physical
	optional   bool
	enc        encoding.Encoding
	codec      compress.Codec
	// encodings lists what the chunk uses, as ColumnMetaData records it.
	encodings []format.Encoding
}

// planLeaves describes every Parquet column of schema in column order.
func (w *writer) planLeaves(schema *parquet.Schema) ([]leafPlan, error) {
	leaves := make([]leafPlan, len(schema.Columns()))
	for i := range leaves {
		leaves[i].fixed, leaves[i].col = -1, -1
	}
	// Everything a column is written as comes from its schema node
	// (buildSchema): its physical type, encoding and compression.
	set := func(name string, fixed, col int) error {
		lc, ok := schema.Lookup(name)
		if !ok || lc.ColumnIndex < 0 || lc.ColumnIndex >= len(leaves) {
			return fmt.Errorf("part: schema has no column %s", name)
		}
		n := lc.Node
		p := physical{kind: n.Type().Kind()}
		if p.kind == parquet.FixedLenByteArray {
			p.size = n.Type().Length()
		}
		lp := &leaves[lc.ColumnIndex]
		*lp = leafPlan{fixed: fixed, col: col, name: name, phys: p, optional: n.Optional(), enc: n.Encoding(), codec: n.Compression()}
		if lp.enc == nil {
			lp.enc = &parquet.Plain
		}
		if lp.codec == nil {
			lp.codec = &parquet.Uncompressed
		}
		if lp.optional {
			lp.encodings = append(lp.encodings, format.RLE)
		}
		if e := lp.enc.Encoding(); !slices.Contains(lp.encodings, e) {
			lp.encodings = append(lp.encodings, e)
		}
		slices.Sort(lp.encodings)
		return nil
	}
	for f, name := range fixedNames {
		if err := set(name, f, -1); err != nil {
			return nil, err
		}
	}
	for c, col := range w.meta.Columns {
		if err := set(columnName(col.ID), -1, c); err != nil {
			return nil, err
		}
	}
	for i := range leaves {
		if leaves[i].name == "" {
			return nil, fmt.Errorf("part: schema column %d has no source", i)
		}
	}
	// Page headers, offset indexes and the footer are all encoded into
	// ps.hdr by the one encoder.
	w.ps.enc = thrift.NewEncoder(w.ps.proto.NewWriter(&w.ps.hdr))
	return leaves, nil
}

// pageScratch holds what one page is built in, reused from page to page.
type pageScratch struct {
	i32    []int32
	i64    []int64
	f32    []float32
	f64    []float64
	raw    []byte
	offs   []uint32
	levels []byte
	lvl    []byte
	vals   []byte
	comp   []byte
	// front encodes DELTA_BYTE_ARRAY pages (frontcode.go).
	front frontScratch
	hdr   bytes.Buffer
	page  format.PageHeader
	proto thrift.CompactProtocol
	enc   *thrift.Encoder
}

// levelCodec encodes definition levels (bit width 1: NULL or not).
var levelCodec = rle.Encoding{BitWidth: 1}

// writeChunk writes rows [lo, hi) of Parquet column j as one column chunk
// of pages onto sw and returns its metadata and offset index.
func (w *writer) writeChunk(sw *sealWriter, j, lo, hi int) (format.ColumnChunk, format.OffsetIndex, error) {
	lp := &w.leaves[j]
	ps := &w.ps
	cc := format.ColumnChunk{FileOffset: sw.off, MetaData: format.ColumnMetaData{
		Type: format.Type(lp.phys.kind), Encoding: lp.encodings, PathInSchema: []string{lp.name},
		Codec: lp.codec.CompressionCodec(), DataPageOffset: sw.off,
	}}
	m := &cc.MetaData
	var oi format.OffsetIndex
	compressed := m.Codec != format.Uncompressed
	pages := 0
	for s := lo; s < hi; s += w.opts.PageRows {
		e := min(s+w.opts.PageRows, hi)
		n := e - s
		nulls, err := w.pageValues(lp, s, e)
		if err != nil {
			return cc, oi, fmt.Errorf("column %s: %w", lp.name, err)
		}
		if err := w.encodeValues(lp); err != nil {
			return cc, oi, fmt.Errorf("column %s: %w", lp.name, err)
		}
		ps.lvl = ps.lvl[:0]
		if lp.optional {
			if ps.lvl, err = levelCodec.EncodeLevels(ps.lvl, ps.levels[:n]); err != nil {
				return cc, oi, fmt.Errorf("column %s: levels: %w", lp.name, err)
			}
		}
		body := ps.vals
		if compressed {
			if ps.comp, err = lp.codec.Encode(ps.comp[:0], ps.vals); err != nil {
				return cc, oi, fmt.Errorf("column %s: compress: %w", lp.name, err)
			}
			body = ps.comp
		}
		unc, comp := len(ps.lvl)+len(ps.vals), len(ps.lvl)+len(body)
		if unc > math.MaxInt32 || comp > math.MaxInt32 {
			return cc, oi, fmt.Errorf("column %s: a page of %d bytes", lp.name, unc)
		}
		crc := crc32.Update(crc32.ChecksumIEEE(ps.lvl), crc32.IEEETable, body)
		// The header lives in ps: the Thrift encoder takes an interface,
		// to which a local would escape, one allocation per page.
		h := &ps.page
		*h = format.PageHeader{
			Type: format.DataPageV2, UncompressedPageSize: int32(unc), CompressedPageSize: int32(comp), CRC: int32(crc),
		}
		h.DataPageHeaderV2.Valid = true
		h.DataPageHeaderV2.V = format.DataPageHeaderV2{
			NumValues: int32(n), NumNulls: int32(nulls), NumRows: int32(n), Encoding: lp.enc.Encoding(),
			DefinitionLevelsByteLength: int32(len(ps.lvl)), IsCompressed: thrift.New(compressed),
		}
		ps.hdr.Reset()
		if err := ps.enc.Encode(h); err != nil {
			return cc, oi, fmt.Errorf("column %s: page header: %w", lp.name, err)
		}
		hl := ps.hdr.Len()
		oi.PageLocations = append(oi.PageLocations, format.PageLocation{
			Offset: sw.off, CompressedPageSize: int32(hl + comp), FirstRowIndex: int64(s - lo),
		})
		for _, b := range [...][]byte{ps.hdr.Bytes(), ps.lvl, body} {
			if _, err := sw.Write(b); err != nil {
				return cc, oi, err
			}
		}
		m.NumValues += int64(n)
		m.Statistics.NullCount += int64(nulls)
		m.TotalUncompressedSize += int64(hl + unc)
		m.TotalCompressedSize += int64(hl + comp)
		pages++
	}
	m.EncodingStats = []format.PageEncodingStats{{PageType: format.DataPageV2, Encoding: lp.enc.Encoding(), Count: int32(pages)}}
	return cc, oi, nil
}

// pageValues gathers rows [lo, hi) of lp into the scratch slice its
// physical kind encodes from (ps.i32, ps.i64, ps.f32, ps.f64, or ps.raw
// and for byte arrays ps.offs), the values of NULL rows left out, and for
// an optional column the definition levels into ps.levels. It returns the
// number of NULLs.
func (w *writer) pageValues(lp *leafPlan, lo, hi int) (nulls int, err error) {
	ps := &w.ps
	n := hi - lo
	ps.i32, ps.i64, ps.f32, ps.f64 = ps.i32[:0], ps.i64[:0], ps.f32[:0], ps.f64[:0]
	ps.raw, ps.offs = ps.raw[:0], ps.offs[:0]
	if lp.fixed >= 0 {
		w.fixedValues(lp.fixed, lo, hi)
		return 0, nil
	}
	v := w.d.Cols[lp.col]
	ps.levels = slices.Grow(ps.levels[:0], n)[:n]
	for i := range n {
		ps.levels[i] = 1
	}
	if v.HasNulls() {
		for i := lo; i < hi; i++ {
			if v.IsNull(i) {
				ps.levels[i-lo] = 0
				nulls++
			}
		}
	}
	present := func(i int) bool { return nulls == 0 || ps.levels[i-lo] != 0 }
	p := lp.phys
	switch v.Type().Kind.Class() {
	case types.ClassInt64:
		xs := v.Int64s()
		for i := lo; i < hi; i++ {
			if !present(i) {
				continue
			}
			if p.kind == parquet.Int32 {
				if xs[i] < math.MinInt32 || xs[i] > math.MaxInt32 {
					return 0, fmt.Errorf("value %d of %s does not fit its 32-bit column", xs[i], v.Type())
				}
				ps.i32 = append(ps.i32, int32(xs[i]))
			} else {
				ps.i64 = append(ps.i64, xs[i])
			}
		}
	case types.ClassUint64:
		xs := v.Uint64s()
		for i := lo; i < hi; i++ {
			if !present(i) {
				continue
			}
			if p.kind == parquet.Int32 {
				ps.i32 = append(ps.i32, int32(uint32(xs[i])))
			} else {
				ps.i64 = append(ps.i64, int64(xs[i]))
			}
		}
	case types.ClassWide:
		xs := v.Wides()
		ps.raw = slices.Grow(ps.raw, (n-nulls)*p.size)
		for i := lo; i < hi; i++ {
			if !present(i) {
				continue
			}
			x := &xs[i]
			for k := range p.size / 8 {
				ps.raw = binary.BigEndian.AppendUint64(ps.raw, x[p.size/8-1-k])
			}
		}
	case types.ClassFloat64:
		xs := v.Float64s()
		for i := lo; i < hi; i++ {
			if !present(i) {
				continue
			}
			if p.kind == parquet.Float {
				ps.f32 = append(ps.f32, float32(xs[i]))
			} else {
				ps.f64 = append(ps.f64, xs[i])
			}
		}
	case types.ClassBool:
		xs := v.Bools()
		k := 0
		for i := lo; i < hi; i++ {
			if present(i) {
				ps.raw = appendBit(ps.raw, k, xs[i])
				k++
			}
		}
	case types.ClassVarlen:
		// A NULL row is empty in the vector's buffer, so the values of
		// the rows that are not NULL lie back to back there already.
		data, offs := v.Packed(lo, hi)
		base := offs[0]
		ps.raw = append(ps.raw, data[base:offs[n]]...)
		for i := range n {
			if nulls == 0 || ps.levels[i] != 0 {
				ps.offs = append(ps.offs, uint32(offs[i]-base))
			}
		}
		ps.offs = append(ps.offs, uint32(offs[n]-base))
	case types.ClassUUID:
		xs := v.UUIDs()
		for i := lo; i < hi; i++ {
			if present(i) {
				ps.raw = append(ps.raw, xs[i][:]...)
			}
		}
	default:
		return 0, fmt.Errorf("type %s cannot be stored", v.Type())
	}
	return nulls, nil
}

// appendBit sets bit k (least significant first) of a bit-packed slice
// to x, growing it by a byte every eight bits.
func appendBit(b []byte, k int, x bool) []byte {
	if k&7 == 0 {
		b = append(b, 0)
	}
	if x {
		b[k>>3] |= 1 << (k & 7)
	}
	return b
}

// fixedValues gathers rows [lo, hi) of fixed column f (what format 3
// stores of it: residuals where the part has them) into the scratch.
func (w *writer) fixedValues(f, lo, hi int) {
	d, ps := w.d, &w.ps
	n := hi - lo
	switch f {
	case fSort, fOrder:
		v := d.Sort
		if f == fOrder {
			if d.Order == nil || d.Order.Len() == 0 || len(w.meta.OrderFrom) > 0 {
				// Every row's ordering value is empty.
				ps.offs = slices.Grow(ps.offs, n+1)[:n+1]
				clear(ps.offs)
				return
			}
			v = d.Order
		}
		data, offs := v.Packed(lo, hi)
		base := offs[0]
		ps.raw = append(ps.raw, data[base:offs[n]]...)
		for _, o := range offs {
			ps.offs = append(ps.offs, uint32(o-base))
		}
	case fGroup:
		ps.i32 = appendInt32s(ps.i32, d.Group, lo, hi)
	case fSeq:
		if w.meta.PositionResidual {
			w.residQ = slices.Grow(w.residQ[:0], n)[:n]
			residualsPos(groupsOf(d, lo, hi), d.Commit[lo:hi], d.Seq[lo:hi], nil, w.residQ)
			ps.i32 = appendInt32s(ps.i32, w.residQ, 0, n)
			return
		}
		ps.i32 = appendInt32s(ps.i32, d.Seq, lo, hi)
	case fState:
		ps.i32 = appendInt32s(ps.i32, d.State, lo, hi)
	case fTomb:
		for i := range n {
			ps.raw = appendBit(ps.raw, i, len(d.Tomb) > 0 && d.Tomb[lo+i])
		}
	case fCommit:
		if w.meta.PositionResidual {
			w.resid = slices.Grow(w.resid[:0], n)[:n]
			residualsPos(groupsOf(d, lo, hi), d.Commit[lo:hi], d.Seq[lo:hi], w.resid, nil)
			ps.i64 = appendInt64s(ps.i64, w.resid, 0, n)
			return
		}
		ps.i64 = appendInt64s(ps.i64, d.Commit, lo, hi)
	case fWonAt, fEndedAt, fSupersededBy:
		if w.meta.Residual {
			w.residualValues(f, lo, hi)
			ps.i64 = appendInt64s(ps.i64, w.resid, 0, n)
			return
		}
		switch f {
		case fWonAt:
			ps.i64 = appendInt64s(ps.i64, d.WonAt, lo, hi)
		case fEndedAt:
			ps.i64 = appendInt64s(ps.i64, d.EndedAt, lo, hi)
		default:
			ps.i64 = appendInt64s(ps.i64, d.SupersededBy, lo, hi)
		}
	}
}

// appendInt32s appends rows [lo, hi) of an optional fixed column stored as
// INT32 (zero when s is empty).
func appendInt32s[T ~uint8 | ~uint16 | ~uint32](dst []int32, s []T, lo, hi int) []int32 {
	if len(s) == 0 {
		return append(dst, make([]int32, hi-lo)...)
	}
	for _, x := range s[lo:hi] {
		dst = append(dst, int32(x))
	}
	return dst
}

// appendInt64s is appendInt32s for columns stored as INT64.
func appendInt64s(dst []int64, s []uint64, lo, hi int) []int64 {
	if len(s) == 0 {
		return append(dst, make([]int64, hi-lo)...)
	}
	for _, x := range s[lo:hi] {
		dst = append(dst, int64(x))
	}
	return dst
}

// encodeValues encodes the values pageValues gathered into ps.vals.
func (w *writer) encodeValues(lp *leafPlan) (err error) {
	ps := &w.ps
	e := lp.enc
	switch lp.phys.kind {
	case parquet.Int32:
		ps.vals, err = e.EncodeInt32(ps.vals[:0], ps.i32)
	case parquet.Int64:
		ps.vals, err = e.EncodeInt64(ps.vals[:0], ps.i64)
	case parquet.Float:
		ps.vals, err = e.EncodeFloat(ps.vals[:0], ps.f32)
	case parquet.Double:
		ps.vals, err = e.EncodeDouble(ps.vals[:0], ps.f64)
	case parquet.Boolean:
		ps.vals, err = e.EncodeBoolean(ps.vals[:0], ps.raw)
	case parquet.ByteArray:
		if e.Encoding() == format.DeltaByteArray {
			ps.vals, err = ps.front.encode(ps.vals[:0], ps.raw, ps.offs)
			break
		}
		ps.vals, err = e.EncodeByteArray(ps.vals[:0], ps.raw, ps.offs)
	case parquet.FixedLenByteArray:
		ps.vals, err = e.EncodeFixedLenByteArray(ps.vals[:0], ps.raw, lp.phys.size)
	default:
		err = fmt.Errorf("physical type %s", lp.phys.kind)
	}
	return err
}

// writeTail writes, after the data, each column chunk's offset index and
// then the footer with the key/value metadata kv (sorted by key, as
// parquet-go sorts it) and the trailer.
func (w *writer) writeTail(sw *sealWriter, schema *parquet.Schema, groups []format.RowGroup, indexes [][]format.OffsetIndex, kv []format.KeyValue) (*format.FileMetaData, error) {
	tmpl, err := footerTemplate(schema)
	if err != nil {
		return nil, err
	}
	ps := &w.ps
	for i := range groups {
		for j := range groups[i].Columns {
			ps.hdr.Reset()
			if err := ps.enc.Encode(&indexes[i][j]); err != nil {
				return nil, err
			}
			c := &groups[i].Columns[j]
			c.OffsetIndexOffset, c.OffsetIndexLength = sw.off, int32(ps.hdr.Len())
			if _, err := sw.Write(ps.hdr.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	var rows int64
	for i := range groups {
		rows += groups[i].NumRows
	}
	slices.SortFunc(kv, func(a, b format.KeyValue) int { return cmp.Compare(a.Key, b.Key) })
	md := &format.FileMetaData{
		Version: tmpl.Version, Schema: tmpl.Schema, NumRows: rows, RowGroups: groups,
		KeyValueMetadata: kv, CreatedBy: tmpl.CreatedBy, ColumnOrders: tmpl.ColumnOrders,
	}
	ps.hdr.Reset()
	if err := ps.enc.Encode(md); err != nil {
		return nil, err
	}
	footer := ps.hdr.Bytes()
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], uint32(len(footer)))
	copy(trailer[4:], "PAR1")
	for _, b := range [...][]byte{footer, trailer[:]} {
		if _, err := sw.Write(b); err != nil {
			return nil, err
		}
	}
	return md, nil
}

// footerTemplates caches footerTemplate's answer per schema.
var footerTemplates sync.Map // schema text → *format.FileMetaData

// footerTemplate returns the footer parquet-go writes for an empty file of
// schema: its schema elements, column orders, version and creator are
// what Write's footers carry.
func footerTemplate(schema *parquet.Schema) (*format.FileMetaData, error) {
	key := schema.String()
	if v, ok := footerTemplates.Load(key); ok {
		return v.(*format.FileMetaData), nil
	}
	var buf bytes.Buffer
	pw := parquet.NewWriter(&buf, schema, parquet.CreatedBy("strata", strconv.Itoa(FormatVersion), ""))
	if err := pw.Close(); err != nil {
		return nil, fmt.Errorf("part: footer of %s: %w", key, err)
	}
	b := buf.Bytes()
	if len(b) < 12 {
		return nil, fmt.Errorf("part: empty file of %d bytes", len(b))
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > len(b)-12 {
		return nil, fmt.Errorf("part: empty file's footer of %d bytes", n)
	}
	md := new(format.FileMetaData)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[len(b)-8-n:len(b)-8], md); err != nil {
		return nil, fmt.Errorf("part: empty file's footer: %w", err)
	}
	v, _ := footerTemplates.LoadOrStore(key, md)
	return v.(*format.FileMetaData), nil
}
