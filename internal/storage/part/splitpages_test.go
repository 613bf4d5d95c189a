package part

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/holiman/uint256"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// wideCases are the wide types, stored BYTE_STREAM_SPLIT under the
// default (compressing) codecs: 16- and 32-byte, signed and unsigned.
var wideCases = []types.Type{
	types.Of(types.Uint256), types.Of(types.Int256), types.Of(types.Uint128), types.Of(types.Int128),
	dec(76, 10), dec(38, 2),
}

// keyedRows is a part's Data of rows rows with distinct sorted keys,
// rising commits and no table columns.
func keyedRows(rows int) *Data {
	d := &Data{Rows: rows, Sort: types.NewVector(types.Of(types.Bytes), rows)}
	var key []byte
	for i := range rows {
		key = sortKey(key[:0], i)
		d.Sort.AppendBytes(key)
		d.Commit = append(d.Commit, uint64(i+1))
		d.Seq = append(d.Seq, uint32(i))
		d.Tomb = append(d.Tomb, false)
	}
	return d
}

// wideFixture is a part's Data of rows rows with one column per wide
// type: random values of every magnitude, negative ones for the signed,
// and NULL runs of every length (none, isolated, whole pages).
func wideFixture(rows int) (*Data, []ColumnMeta) {
	rng := rand.New(rand.NewPCG(5, 6))
	d := keyedRows(rows)
	var cols []ColumnMeta
	for c, t := range wideCases {
		v := types.NewVector(t, rows)
		for i := range rows {
			// Column c: NULL in every row of page 2 (PageRows 256 below),
			// in every third row of page 4, and nowhere else.
			if page := i / 256; page == 2 || page == 4 && i%3 == 0 {
				v.AppendNull()
				continue
			}
			var x uint256.Int
			for w := range 4 {
				x[w] = rng.Uint64() >> (rng.IntN(8) * 8)
			}
			switch {
			case t.Kind == types.Uint128:
				x[2], x[3] = 0, 0
			case t.Kind == types.Int128 || t.Kind == types.Decimal && t.Precision <= 38:
				// A 128-bit two's complement value, sign-extended.
				x[2], x[3] = 0, 0
				if x[1]>>63 != 0 {
					x[2], x[3] = ^uint64(0), ^uint64(0)
				}
			case t.Kind == types.Decimal:
				x[3] >>= 8 // within 76 digits
			}
			v.AppendWide(&x)
		}
		id := catalog.ColumnID(10 + c)
		d.IDs = append(d.IDs, id)
		d.Cols = append(d.Cols, v)
		cols = append(cols, ColumnMeta{ID: id, Type: t, Codec: catalog.DefaultCodec(t)})
	}
	return d, cols
}

// TestSplitPages: wide columns read through decodeSplitPages (whole
// blocks, as scans and merges read them, and rows by page, as lookups
// do) hold exactly what was written and what parquet-go's decoding gives,
// with ZSTD and with LZ4 pages.
func TestSplitPages(t *testing.T) {
	for _, codec := range []string{"zstd", "lz4"} {
		t.Run(codec, func(t *testing.T) {
			fs := newFS(t)
			rows := 6*256 + 77
			d, cols := wideFixture(rows)
			if codec == "lz4" {
				for i := range cols {
					cols[i].Codec.Compression, cols[i].Codec.Level = catalog.CompressLZ4, 0
				}
			}
			if _, err := Write(fs, "p", d, Meta{Table: 1, Part: 1, Kind: KindDelta, Columns: cols}, WriteOptions{BlockRows: 4*256 + 10, PageRows: 256}); err != nil {
				t.Fatal(err)
			}
			r, err := Open(fs, "p")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// The test means nothing unless the chunks take the new path.
			rg := &r.file.Metadata().RowGroups[0]
			for c, cm := range cols {
				k := r.colIdx[cm.ID]
				m := &rg.Columns[r.leaf[k]].MetaData
				if !ownChunk(m, r.phys[k], types.NewVector(cm.Type, 0)) {
					t.Fatalf("column %d (%s) is not read by decodeOwnPages: encodings %v", c, cm.Type, m.Encoding)
				}
			}
			ids := ids(Meta{Columns: cols})
			got := readAll(t, r, ids)
			if diff := sameData(d, got); diff != "" {
				t.Fatalf("split decoding: %s", diff)
			}
			if codec == "zstd" {
				// (parquet-go's LZ4 reads are TestLZ4Pages' subject.)
				noOwnPages = true
				base := readAll(t, r, ids)
				noOwnPages = false
				if diff := sameData(base, got); diff != "" {
					t.Fatalf("split decoding differs from parquet-go's: %s", diff)
				}
			}
			// Rows by page: ranges within a page, across pages, and pages
			// that are all NULL or partly.
			var part Data
			off := 0
			for bi, b := range r.Blocks() {
				for _, w := range [][2]int{{0, 1}, {255, 257}, {512, 520}, {600, 900}, {1000, b.Rows}, {0, b.Rows}} {
					lo, hi := w[0], min(w[1], b.Rows)
					if lo >= hi {
						continue
					}
					if err := r.ReadRows(bi, lo, hi, 0, ids, &part); err != nil {
						t.Fatalf("block %d rows [%d, %d): %v", bi, lo, hi, err)
					}
					for c := range cols {
						for i := range hi - lo {
							if !sameValue(part.Cols[c], i, d.Cols[c], off+lo+i) {
								t.Fatalf("%s: block %d row %d: %v, want %v", cols[c].Type, bi, lo+i, part.Cols[c].Get(i), d.Cols[c].Get(off+lo+i))
							}
						}
					}
				}
				off += b.Rows
			}
		})
	}
}

// TestLevels1 decodes RLE and bit-packed runs of bit width 1 and refuses
// runs that overrun the levels asked for or the bytes given.
func TestLevels1(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		n    int
		want string // levels as 0/1 characters; "" for an error
	}{
		{[]byte{3 << 1, 1}, 3, "111"},
		{[]byte{2 << 1, 0, 1<<1 | 1, 0b10110101}, 10, "0010101101"},
		{[]byte{1<<1 | 1, 0b00000101}, 3, "101"},      // the group pads past n
		{[]byte{2<<1 | 1, 0xff, 0xff}, 8, ""},         // two groups for eight levels
		{[]byte{4 << 1, 1}, 3, ""},                    // a run past n
		{[]byte{3 << 1, 2}, 3, ""},                    // a level of 2
		{[]byte{3 << 1}, 3, ""},                       // no value byte
		{[]byte{1<<1 | 1}, 3, ""},                     // no group byte
		{[]byte{0}, 3, ""},                            // an empty run
		{[]byte{2 << 1, 1}, 3, ""},                    // levels end early
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80}, 3, ""}, // an unterminated varint
	} {
		got, err := levels1(nil, c.in, c.n)
		var s strings.Builder
		for _, l := range got {
			s.WriteByte('0' + l)
		}
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%x: decoded %q, want an error", c.in, s.String())
		case c.want != "" && (err != nil || s.String() != c.want):
			t.Errorf("%x: %q, %v; want %q", c.in, s.String(), err, c.want)
		}
	}
}

// TestLZ4Pages: columns of every physical form compressed LZ4_RAW, with
// values that compress poorly (random), read back as written, by blocks
// and by pages. parquet-go up to v0.32.1 returned other bytes for such
// pages whenever its decoder outgrew the pooled buffer
// (parquet-go/parquet-go#608): with noOwnPages set this test fails.
func TestLZ4Pages(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	kinds := []types.Type{
		types.Of(types.Int64), types.Of(types.Int32), types.Of(types.Uint64), types.Of(types.Float64),
		types.Of(types.String), types.Of(types.Bytes), types.Of(types.UUID), types.Of(types.Bool),
		types.Of(types.Uint256), types.Of(types.Int128),
	}
	rows := 5*PageRows + 33
	d := keyedRows(rows)
	var cols []ColumnMeta
	for c, typ := range kinds {
		for _, delta := range []bool{false, true} {
			if delta && typ.Kind.Class() != types.ClassInt64 && typ.Kind.Class() != types.ClassUint64 {
				continue
			}
			v := types.NewVector(typ, rows)
			for i := range rows {
				if i%11 == 3 {
					v.AppendNull()
					continue
				}
				switch typ.Kind {
				case types.Int64:
					v.AppendInt64(int64(rng.Uint64()))
				case types.Int32:
					v.AppendInt64(int64(int32(rng.Uint32())))
				case types.Uint64:
					v.AppendUint64(rng.Uint64())
				case types.Float64:
					v.AppendFloat64(rng.NormFloat64())
				case types.String, types.Bytes:
					b := make([]byte, rng.IntN(40))
					for j := range b {
						b[j] = byte(rng.Uint32())
					}
					if typ.Kind == types.String {
						v.AppendString(fmt.Sprintf("%x", b))
					} else {
						v.AppendBytes(b)
					}
				case types.UUID:
					var u [16]byte
					for j := range u {
						u[j] = byte(rng.Uint32())
					}
					v.AppendUUID(u)
				case types.Bool:
					v.AppendBool(rng.IntN(2) == 0)
				case types.Uint256, types.Int128:
					x := uint256.Int{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
					if typ.Kind == types.Int128 {
						x[2], x[3] = 0, 0
						if x[1]>>63 != 0 {
							x[2], x[3] = ^uint64(0), ^uint64(0)
						}
					}
					v.AppendWide(&x)
				}
			}
			id := catalog.ColumnID(10 + 2*c)
			if delta {
				id++
			}
			d.IDs = append(d.IDs, id)
			d.Cols = append(d.Cols, v)
			cols = append(cols, ColumnMeta{ID: id, Type: typ, Codec: catalog.Codec{Compression: catalog.CompressLZ4, Delta: delta}})
		}
	}
	fs := newFS(t)
	if _, err := Write(fs, "p", d, Meta{Table: 1, Part: 1, Kind: KindDelta, Columns: cols}, WriteOptions{BlockRows: 3*PageRows + 5}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(fs, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ids := ids(Meta{Columns: cols})
	if diff := sameData(d, readAll(t, r, ids)); diff != "" {
		t.Fatalf("blocks: %s", diff)
	}
	var part Data
	off := 0
	for bi, b := range r.Blocks() {
		for lo := 0; lo < b.Rows; lo += PageRows / 2 {
			hi := min(lo+3, b.Rows)
			if err := r.ReadRows(bi, lo, hi, 0, ids, &part); err != nil {
				t.Fatalf("block %d rows [%d, %d): %v", bi, lo, hi, err)
			}
			for c := range cols {
				for i := range hi - lo {
					if !sameValue(part.Cols[c], i, d.Cols[c], off+lo+i) {
						t.Fatalf("%s column %d: block %d row %d: %v, want %v", cols[c].Type, cols[c].ID, bi, lo+i, part.Cols[c].Get(i), d.Cols[c].Get(off+lo+i))
					}
				}
			}
		}
		off += b.Rows
	}
	if err := Check(fs, "p"); err != nil {
		t.Fatal(err)
	}
}

// TestOwnFixedDeltaClaims gives decodeOwnFixed a page of a fixed column
// whose DELTA_BINARY_PACKED values claim three million values where its
// header says ten, in blocks of bit width 0 that make the claim cheap to
// write and, unchecked, 24 MB to decode. It must be refused as malformed
// before anything that size is allocated: checkPages checks only the
// headers of pages decoded here, so eachOwnPage checks the values.
func TestOwnFixedDeltaClaims(t *testing.T) {
	const claimed, n = 3_000_000, 10
	body := binary.AppendUvarint(nil, 128) // block size
	body = binary.AppendUvarint(body, 4)   // miniblocks per block
	body = binary.AppendUvarint(body, claimed)
	body = binary.AppendUvarint(body, 0) // first value
	for range (claimed + 127) / 128 {
		body = append(body, 0, 0, 0, 0, 0) // min delta 0, four bit widths of 0
	}
	page := commitPage(t, n, int32(len(body)), false, body)
	var err error
	a := allocated(func() {
		var d Data
		_, err = decodeOwnFixed(page, format.Uncompressed, pageLimits{rows: n, total: int64(len(body))}, parquet.Int64Type, &d, fCommit, n, 0)
	})
	if !errors.Is(err, errPage) || !strings.Contains(err.Error(), "3000000") {
		t.Fatalf("a page claiming %d values in %d: %v", claimed, n, err)
	}
	if a > 8<<20 {
		t.Fatalf("refusing the page allocated %d MiB", a>>20)
	}
}

// commitPage returns a DATA_PAGE_V2 page of a DELTA_BINARY_PACKED fixed
// column: a header stating rows rows and unc uncompressed bytes, then
// body.
func commitPage(t *testing.T, rows, unc int32, compressed bool, body []byte) []byte {
	t.Helper()
	h := format.PageHeader{Type: format.DataPageV2, UncompressedPageSize: unc, CompressedPageSize: int32(len(body))}
	h.DataPageHeaderV2 = thrift.New(format.DataPageHeaderV2{NumValues: rows, NumRows: rows, Encoding: format.DeltaBinaryPacked, IsCompressed: thrift.New(compressed)})
	page, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		t.Fatal(err)
	}
	return append(page, body...)
}

// allocated returns the bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestOwnPageLimits gives decodeOwnFixed pages whose headers claim more
// rows than a page of the part holds, or more uncompressed bytes than the
// chunk's footer says it has (a gigabyte, which it would otherwise have
// allocated to decompress into): both are malformed, found before any
// decompression.
func TestOwnPageLimits(t *testing.T) {
	// 65 commits, well-formed and uncompressed: only the limit refuses
	// them.
	var enc delta.BinaryPackedEncoding
	body, err := enc.EncodeInt64(nil, make([]int64, 65))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		rows, unc  int32
		compressed bool
	}{{"rows", 65, int32(len(body)), false}, {"bytes", 8, 1 << 30, true}} {
		page := commitPage(t, c.rows, c.unc, c.compressed, body)
		a := allocated(func() {
			var d Data
			_, err = decodeOwnFixed(page, format.Zstd, pageLimits{rows: 64, total: 4 << 10}, parquet.Int64Type, &d, fCommit, 64, 0)
		})
		if !errors.Is(err, errPage) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if a > 1<<20 {
			t.Fatalf("%s: refusing the page allocated %d KiB", c.name, a>>10)
		}
	}
}

// TestOwnZstdBomb gives decodeOwnFixed a ZSTD page of 8 KB: one frame that
// states no size, of 2 000 RLE blocks of 128 KiB each, under a header
// claiming 10 bytes. It must be refused before it is decoded (it decoded
// to 256 MiB, 1.3 GiB allocated, before checkZstd ran here too).
func TestOwnZstdBomb(t *testing.T) {
	body := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, (17 - 10) << 3}
	for i := range 2000 {
		h := uint32(128<<10)<<3 | 1<<1 // an RLE block of 128 KiB
		if i == 1999 {
			h |= 1
		}
		body = append(body, byte(h), byte(h>>8), byte(h>>16), 'x')
	}
	page := commitPage(t, 10, 10, true, body)
	var err error
	a := allocated(func() {
		var d Data
		_, err = decodeOwnFixed(page, format.Zstd, pageLimits{rows: 64, total: 4 << 10}, parquet.Int64Type, &d, fCommit, 64, 0)
	})
	if !errors.Is(err, errPage) {
		t.Fatalf("the page was not refused: %v", err)
	}
	if a > 8<<20 {
		t.Fatalf("refusing the page allocated %d MiB", a>>20)
	}
}
