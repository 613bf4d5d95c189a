package part

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/strata-db/strata/internal/types"
)

// Some columns' pages are decoded here rather than by parquet-go:
//
//   - Every fixed column's (the sort key, positions, resolution and
//     ordering values; decodeOwnFixed). Every fixed column but the tomb
//     is delta-encoded, and checkPages decompresses a delta-encoded page
//     to check its values before parquet-go decompresses it again to
//     decode them: here each page is decompressed once, its values
//     checked, then decoded (the sort keys and ordering values straight
//     into their vectors). A cold read of the bench part
//     (BenchmarkReadCold) took 28 % less CPU with ZSTD table columns and
//     41 % less with LZ4 ones, and allocated 45 % less.
//
//   - Wide integer columns (INT128, UINT128, UINT256, DECIMAL), written
//     BYTE_STREAM_SPLIT whenever their codec compresses (encodingOf).
//     Through parquet-go a page's values were first gathered from the
//     streams one byte at a time into fixed-length byte arrays, then
//     converted one by one into the vector's words: at 8 192 rows of
//     UINT256 that was most of decoding the page, and the largest single
//     cost of a cold AS OF point lookup (bench/ R4) after decompression.
//     Here the streams go straight into the vector's words
//     (types.Vector.AppendWideSplit).
//   - Every column compressed LZ4_RAW (CODEC(LZ4)). parquet-go up to
//     v0.32.1 loses a page's values when its LZ4 decoder outgrows the
//     pooled buffer it was given (it reserves three times the compressed
//     size), which depends on how well the page compressed and on what the
//     pool held: reads returned another page's bytes, silently
//     (parquet-go/parquet-go#608; TestLZ4Pages). Here the page is
//     decompressed by the lz4 package itself and the values decoded with
//     parquet-go's encodings, which get no compressed bytes.
//
// Such pages are simple (DATA_PAGE V2, definition levels of bit width 1,
// the values after them): the levels are read by a small RLE/bit-packed
// reader. checkPages does not see these chunks: eachOwnPage checks each
// page's header against the same bounds before it uses the page (its rows
// against the page size, its bytes against the chunk's size in the
// footer), decompresses it once into a buffer of the size thus bounded,
// checks delta-encoded values as checkBody would, and checks every size
// again as it is used: a malformed page is an error, never a panic or an
// allocation its bytes do not bear out.

// ownChunk reports whether a table column's chunk m, of physical ph read
// into v, is decoded by decodeOwnPages: it is compressed LZ4_RAW, or it is
// a wide integer chunk whose values are BYTE_STREAM_SPLIT (its metadata
// names no other value encoding) read into a wide vector.
func ownChunk(m *format.ColumnMetaData, ph physical, v *types.Vector) bool {
	if v == nil || noOwnPages {
		return false
	}
	return m.Codec == format.Lz4Raw || splitWide(m, ph, v)
}

// ownTask reports whether task t's chunk m is decoded by decodeOwnFixed
// (every fixed column's) or decodeOwnPages (ownChunk).
func ownTask(m *format.ColumnMetaData, t *chunkTask) bool {
	if t.fixed >= 0 {
		return !noOwnPages
	}
	return ownChunk(m, t.ph, t.v)
}

// splitWide reports whether chunk m's values are wide integers stored
// BYTE_STREAM_SPLIT, read into a wide vector.
func splitWide(m *format.ColumnMetaData, ph physical, v *types.Vector) bool {
	if ph.kind != parquet.FixedLenByteArray || (ph.size != 16 && ph.size != 32) || v.Type().Kind.Class() != types.ClassWide {
		return false
	}
	split := false
	for _, e := range m.Encoding {
		switch e {
		case format.ByteStreamSplit:
			split = true
		case format.RLE, format.BitPacked:
			// The levels'.
		default:
			return false
		}
	}
	return split
}

// noOwnPages makes reads decode every page through parquet-go: tests
// compare the two.
var noOwnPages bool

// splitScratch pools the buffers pages are decompressed and levels
// decoded into.
var splitScratch = sync.Pool{New: func() any { return new(splitBufs) }}

type splitBufs struct {
	vals, defs, out []byte
	offs            []uint32
}

var errPage = errors.New("malformed data page")

// decodeOwnPages appends to v the rows of the pages in b, which holds
// whole pages back to back (each with its header) of a table column's
// chunk compressed with codec, of physical ph and Parquet type typ. It
// stops after maxRows rows' pages (a page is appended whole) and returns
// the rows appended. page0 is the number of b's first page in its chunk,
// which errors name.
func decodeOwnPages(b []byte, codec format.CompressionCodec, lim pageLimits, ph physical, typ parquet.Type, v *types.Vector, maxRows, page0 int) (rows int, err error) {
	return eachOwnPage(b, codec, lim, maxRows, page0, false, func(bufs *splitBufs, enc format.Encoding, vals, defs []byte, n, nulls int) error {
		if enc == format.ByteStreamSplit && ph.kind == parquet.FixedLenByteArray && v.Type().Kind.Class() == types.ClassWide {
			if !v.AppendWideSplit(vals, ph.size, wideSigned(v.Type()), defs, n) {
				return fmt.Errorf("%w: %d value bytes for %d rows of %d bytes, %d of them NULL", errPage, len(vals), n, ph.size, nulls)
			}
			return nil
		}
		pd, err := bufs.decode(typ, enc, vals, n-nulls)
		if err != nil {
			return err
		}
		if defs == nil {
			defs = slices.Grow(bufs.defs[:0], n)[:n]
			for i := range defs {
				defs[i] = 1
			}
			bufs.defs = defs
		}
		return appendValues(v, ph, n, defs, pd)
	})
}

// decodeOwnFixed is decodeOwnPages for fixed column f (fSort …) of d,
// whose chunk's Parquet type is typ. A fixed column's pages were decoded
// by parquet-go after checkPages had decompressed each delta-encoded one
// to check its values (every fixed column but the tomb is delta-encoded):
// two decompressions per page, a fifth of a cold block read's CPU. Here
// a page is decompressed once, checked, and decoded.
//
// The sort keys and ordering values, DELTA_BYTE_ARRAY, are decoded
// straight into their vectors (appendDeltaBytes), their lengths decoded
// once to check and build them: through parquet-go they were decoded
// into a page buffer and copied again, and their lengths decoded twice.
func decodeOwnFixed(b []byte, codec format.CompressionCodec, lim pageLimits, typ parquet.Type, d *Data, f, maxRows, page0 int) (rows int, err error) {
	bytesCol := f == fSort || f == fOrder
	return eachOwnPage(b, codec, lim, maxRows, page0, bytesCol, func(bufs *splitBufs, enc format.Encoding, vals, defs []byte, n, nulls int) error {
		if defs != nil || nulls != 0 {
			return fmt.Errorf("%w: fixed column %s has NULLs", errPage, fixedNames[f])
		}
		// Only the encodings Write uses for fixed columns: others (RLE,
		// dictionary indexes) let a few bytes claim billions of values.
		switch enc {
		case format.Plain, format.DeltaBinaryPacked, format.DeltaByteArray, format.DeltaLengthByteArray:
		default:
			return fmt.Errorf("%w: fixed column %s encoded %s", errPage, fixedNames[f], enc)
		}
		if byteDelta(enc) && bytesCol {
			v := d.Sort
			if f == fOrder {
				v = d.Order
			}
			if v == nil {
				return fmt.Errorf("%w: no vector for fixed column %s", errPage, fixedNames[f])
			}
			if err := appendDeltaBytes(v, enc, vals, n); err != nil {
				return fmt.Errorf("%w: %v", errPage, err)
			}
			return nil
		}
		pd, err := bufs.decode(typ, enc, vals, n)
		if err != nil {
			return err
		}
		return appendFixedValues(d, f, pd, n)
	})
}

// eachOwnPage walks the pages in b as decodeOwnPages describes, handing
// page's rows to fn: n rows, nulls of them NULL, their definition levels
// defs (nil when none is NULL) and their values vals, decompressed, in
// encoding enc. Delta-encoded values are checked (checkDelta) before fn
// sees them, as checkPages would have.
//
// With ownBytes, byte arrays in a delta encoding are left to fn to check:
// it decodes them with appendDeltaBytes, which checks them as it does.
//
// eachOwnPage checks each header as checkPages would, against lim, so
// the chunk needs no pass of checkPages first: a page's rows against the
// block's and the part's page size, its uncompressed bytes, and all of
// them together, against the chunk's size in the footer.
func eachOwnPage(b []byte, codec format.CompressionCodec, lim pageLimits, maxRows, page0 int, ownBytes bool, fn func(bufs *splitBufs, enc format.Encoding, vals, defs []byte, n, nulls int) error) (rows int, err error) {
	page := page0
	defer func() {
		if err != nil {
			err = fmt.Errorf("page %d: %w", page, err)
		}
	}()
	defer func() {
		// A page is input: whatever in decoding it panics (a bug, then)
		// reports the page malformed rather than ending the process.
		if x := recover(); x != nil {
			err = fmt.Errorf("%w: %v", errPage, x)
		}
	}()
	bufs := splitScratch.Get().(*splitBufs)
	defer splitScratch.Put(bufs)
	var sum int64
	for len(b) > 0 && rows < maxRows {
		h, k, err := readPageHeader(b)
		if err != nil {
			return rows, fmt.Errorf("%w: header: %v", errPage, err)
		}
		hl := int64(k)
		comp, unc := int64(h.comp), int64(h.unc)
		if h.typ != format.DataPageV2 || !h.v2 || comp < 0 || unc < 0 || hl+comp > int64(len(b)) {
			return rows, fmt.Errorf("%w: a %s page of %d bytes in %d", errPage, h.typ, comp, int64(len(b))-hl)
		}
		n, nulls := int(h.numRows), int(h.numNulls)
		dl := int64(h.defLen)
		if h.repLen != 0 || n < 0 || int(h.numValues) != n || n > lim.rows ||
			nulls < 0 || nulls > n || dl < 0 || dl > comp || dl > unc {
			return rows, fmt.Errorf("%w: %d rows, %d NULLs, %d bytes of levels, encoded %s", errPage, n, nulls, dl, h.encoding)
		}
		if sum += unc; unc > lim.total || sum > lim.total {
			return rows, fmt.Errorf("%w: page of %d uncompressed bytes exceeds its chunk's %d", errPage, unc, lim.total)
		}
		body := b[hl : hl+comp]
		var defs []byte
		if dl > 0 {
			if bufs.defs, err = levels1(bufs.defs, body[:dl], n); err != nil {
				return rows, err
			}
			defs = bufs.defs
		} else if nulls > 0 {
			return rows, fmt.Errorf("%w: %d NULLs without levels", errPage, nulls)
		}
		want := unc - dl
		vals := body[dl:]
		if codec != format.Uncompressed && h.compressed {
			if vals, err = decompress(bufs, codec, vals, want); err != nil {
				return rows, err
			}
		}
		if int64(len(vals)) != want {
			return rows, fmt.Errorf("%w: %d value bytes, the header says %d", errPage, len(vals), want)
		}
		if deltaEncoded(h.encoding) && !(ownBytes && byteDelta(h.encoding)) {
			if err := checkDelta(h.encoding, vals, n-nulls); err != nil {
				return rows, fmt.Errorf("%w: %v", errPage, err)
			}
		}
		if err := fn(bufs, h.encoding, vals, defs, n, nulls); err != nil {
			return rows, err
		}
		rows += n
		b = b[hl+comp:]
		page++
	}
	return rows, nil
}

// pageLimits bound the pages of one chunk: the rows of a page (the
// block's, and the part's PageRows) and the chunk's uncompressed bytes
// (from the footer, which the seal covers).
type pageLimits struct {
	rows  int
	total int64
}

// pageLimits returns the limits of the pages of Parquet column col in
// block blk.
func (r *Reader) pageLimits(blk, col int) pageLimits {
	rows := r.blocks[blk].Rows
	if r.meta.PageRows > 0 {
		rows = min(rows, r.meta.PageRows)
	}
	return pageLimits{rows: rows, total: r.file.Metadata().RowGroups[blk].Columns[col].MetaData.TotalUncompressedSize}
}

// byteDelta reports whether enc is a delta encoding of byte arrays.
func byteDelta(enc format.Encoding) bool {
	return enc == format.DeltaByteArray || enc == format.DeltaLengthByteArray
}

// decode decodes present values in encoding enc from vals with
// parquet-go's encoding for typ, into bufs.
func (bufs *splitBufs) decode(typ parquet.Type, enc format.Encoding, vals []byte, present int) (encoding.Values, error) {
	// LookupEncoding stands an "unsupported" encoding in for one it
	// lacks, which names itself differently.
	e := parquet.LookupEncoding(enc)
	if e.Encoding() != enc {
		return encoding.Values{}, fmt.Errorf("%w: values encoded %s", errPage, enc)
	}
	size := typ.EstimateDecodeSize(present, vals, e)
	if size < 0 || size > maxDeltaBytes {
		return encoding.Values{}, fmt.Errorf("%w: %d values decode to %d bytes", errPage, present, size)
	}
	// The delta decoders write whole blocks past the last value: room for
	// them, and the buffers kept at whatever a decoder grew them to, so
	// that a chunk's pages, and the next chunk's, allocate nothing.
	bufs.out = slices.Grow(bufs.out[:0], size+2048)
	bufs.out = bufs.out[:cap(bufs.out)]
	var offs []uint32
	if typ.Kind() == parquet.ByteArray {
		bufs.offs = slices.Grow(bufs.offs[:0], present+1)
		offs = bufs.offs[:present+1]
	}
	pd, err := decodeValues(typ, typ.NewValues(bufs.out, offs), vals, e)
	if err != nil {
		return encoding.Values{}, fmt.Errorf("%w: %v", errPage, err)
	}
	data, o := pd.Data()
	if cap(data) > cap(bufs.out) {
		bufs.out = data[:cap(data)]
	}
	if cap(o) > cap(bufs.offs) {
		bufs.offs = o[:0]
	}
	return pd, nil
}

// decodeValues is typ.Decode, a panic in which is an error about the
// page's bytes.
func decodeValues(typ parquet.Type, dst encoding.Values, src []byte, e encoding.Encoding) (out encoding.Values, err error) {
	defer unpanic(&err)
	return typ.Decode(dst, src, e)
}

// decompress returns body, compressed with codec, decompressed into
// bufs.vals; it must decode to exactly size bytes.
func decompress(bufs *splitBufs, codec format.CompressionCodec, body []byte, size int64) ([]byte, error) {
	if int64(cap(bufs.vals)) < size {
		bufs.vals = make([]byte, size)
	}
	out := bufs.vals[:size]
	switch codec {
	case format.Zstd:
		// One frame stating this size (or one small block): without the
		// check a page of a few KB of frames stating no size, or of many
		// frames, decodes to gigabytes before its size is compared. The
		// decoder stops a frame that outgrows what it states.
		if err := checkZstd(body, size); err != nil {
			return nil, fmt.Errorf("%w: ZSTD page: %v", errPage, err)
		}
		d := zstdDecoders.Get().(*zstd.Decoder)
		defer zstdDecoders.Put(d)
		got, err := d.DecodeAll(body, out[:0])
		if err != nil || int64(len(got)) != size {
			return nil, fmt.Errorf("%w: ZSTD values do not decode to %d bytes", errPage, size)
		}
		return got, nil
	case format.Lz4Raw:
		k, err := lz4.UncompressBlock(body, out)
		if err != nil || int64(k) != size {
			return nil, fmt.Errorf("%w: LZ4 values do not decode to %d bytes", errPage, size)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: values compressed with %s", errPage, codec)
}

// levels1 decodes n definition levels of bit width 1 from b, a
// RLE/bit-packed hybrid run list without its length prefix (as DATA_PAGE
// V2 stores levels), into dst's memory.
func levels1(dst, b []byte, n int) ([]byte, error) {
	dst = slices.Grow(dst[:0], n)
	for len(dst) < n {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("%w: levels end after %d of %d", errPage, len(dst), n)
		}
		b = b[k:]
		left := n - len(dst)
		if h&1 == 0 {
			// A run of one value, in one byte.
			count := h >> 1
			if count == 0 || count > uint64(left) || len(b) < 1 || b[0] > 1 {
				return nil, fmt.Errorf("%w: a level run of %d in %d levels left", errPage, count, left)
			}
			for range count {
				dst = append(dst, b[0])
			}
			b = b[1:]
			continue
		}
		// Groups of eight levels bit-packed, one byte each, least
		// significant bit first; the last group may pad past n.
		groups := h >> 1
		if groups == 0 || groups > uint64(len(b)) || groups*8 >= uint64(left)+8 {
			return nil, fmt.Errorf("%w: %d bit-packed level groups for %d levels left", errPage, groups, left)
		}
		for _, x := range b[:groups] {
			for bit := 0; bit < 8 && len(dst) < n; bit++ {
				dst = append(dst, x>>bit&1)
			}
		}
		b = b[groups:]
	}
	return dst, nil
}
