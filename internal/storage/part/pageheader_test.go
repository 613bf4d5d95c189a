package part

import (
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/catalog"
)

// TestReadPageHeader decodes every page header of parts of every kind
// and codec with readPageHeader and with parquet-go's Thrift decoder, and
// checks they agree on every field eachOwnPage reads and on the header's
// length; then it damages headers at random, which readPageHeader must
// refuse or read within the bytes it was given, never panicking.
func TestReadPageHeader(t *testing.T) {
	var files [][]byte
	for _, k := range fuzzKinds {
		files = append(files, fuzzPart(t, k.kind, k.fixed))
	}
	for _, comp := range []catalog.Compression{catalog.CompressLZ4, catalog.CompressZSTD} {
		files = append(files, lz4Part(t, comp))
	}
	pages := 0
	rng := rand.New(rand.NewPCG(5, 6))
	for _, file := range files {
		for _, p := range partPages(file) {
			b := file[p.hdr:p.end]
			got, n, err := readPageHeader(b)
			if err != nil {
				t.Fatalf("page at %d: %v", p.hdr, err)
			}
			want := p.h
			if n != int(p.body-p.hdr) || got.typ != want.Type || got.unc != want.UncompressedPageSize || got.comp != want.CompressedPageSize ||
				got.v2 != want.DataPageHeaderV2.Valid {
				t.Fatalf("page at %d: read %+v in %d bytes, parquet-go %+v in %d", p.hdr, got, n, want, p.body-p.hdr)
			}
			if v := want.DataPageHeaderV2.V; got.v2 && (got.numValues != v.NumValues || got.numNulls != v.NumNulls || got.numRows != v.NumRows ||
				got.encoding != v.Encoding || got.defLen != v.DefinitionLevelsByteLength || got.repLen != v.RepetitionLevelsByteLength ||
				got.compressed != (!v.IsCompressed.Valid || v.IsCompressed.V)) {
				t.Fatalf("page at %d: read %+v, parquet-go %+v", p.hdr, got, v)
			}
			pages++
			hdr := b[:n]
			for range 50 {
				d := append([]byte(nil), hdr...)
				for range 1 + rng.IntN(3) {
					d[rng.IntN(len(d))] = byte(rng.Uint32())
				}
				d = d[:rng.IntN(len(d)+1)]
				if _, k, err := readPageHeader(d); err == nil && (k <= 0 || k > len(d)) {
					t.Fatalf("a damaged header read as %d bytes of %d", k, len(d))
				}
			}
		}
	}
	if pages < 100 {
		t.Fatalf("only %d pages compared", pages)
	}
	// Fields parquet-go's writer never sets are skipped whatever their
	// type: statistics, a CRC, an unknown field of each kind.
	h := format.PageHeader{Type: format.DataPageV2, UncompressedPageSize: 10, CompressedPageSize: 7, CRC: 12345}
	max := "max"
	h.DataPageHeaderV2 = thrift.New(format.DataPageHeaderV2{NumValues: 3, NumNulls: 1, NumRows: 3, Encoding: format.Plain,
		DefinitionLevelsByteLength: 2, IsCompressed: thrift.New(false),
		Statistics: format.Statistics{MaxValue: []byte(max), MinValue: []byte("a"), NullCount: 1}})
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := readPageHeader(append(b, 1, 2, 3))
	if err != nil || n != len(b) || got.unc != 10 || got.comp != 7 || got.numNulls != 1 || got.defLen != 2 || got.compressed {
		t.Fatalf("a header with statistics and a CRC: %+v, %d of %d bytes, %v", got, n, len(b), err)
	}
	// Nesting deeper than any header is refused, not followed.
	deep := []byte{0x1C} // field 1, a struct
	for range 100 {
		deep = append(deep, 0x1C)
	}
	if _, _, err := readPageHeader(deep); err == nil {
		t.Fatal("a header nested 100 structs deep was read")
	}
}

// FuzzReadPageHeader: any bytes are refused or read within themselves;
// the seeds are a part's real headers.
func FuzzReadPageHeader(f *testing.F) {
	file := lz4Part(f, catalog.CompressZSTD)
	for _, p := range partPages(file) {
		f.Add(file[p.hdr:p.body])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, k, err := readPageHeader(b); err == nil && (k <= 0 || k > len(b)) {
			t.Fatalf("read as %d bytes of %d", k, len(b))
		}
	})
}

// TestReadPageHeaderWrongType checks that a field readPageHeader reads,
// sent with another Thrift type than the format's, is refused rather than
// skipped and read as zero.
func TestReadPageHeaderWrongType(t *testing.T) {
	const stop = 0x00
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		// type i32 0, then uncompressed_page_size as an i64.
		{"uncompressed size as i64", []byte{0x15, 0x00, 0x16, 0xc8, 0x01, stop}},
		// type as a binary.
		{"type as binary", []byte{0x18, 0x01, 'x', stop}},
		// compressed_page_size as a double.
		{"compressed size as double", []byte{0x37, 0, 0, 0, 0, 0, 0, 0, 0, stop}},
		// data_page_header_v2 as an i32.
		{"v2 header as i32", []byte{0x85, 0x02, stop}},
		// v2 header whose encoding is a binary.
		{"v2 encoding as binary", []byte{0x8c, 0x48, 0x01, 'x', stop, stop}},
		// v2 header whose num_values is an i64.
		{"v2 num_values as i64", []byte{0x8c, 0x16, 0x02, stop, stop}},
		// v2 header whose is_compressed is an i32.
		{"v2 is_compressed as i32", []byte{0x8c, 0x75, 0x02, stop, stop}},
	} {
		if h, _, err := readPageHeader(tc.b); err == nil {
			t.Errorf("%s: read as %+v", tc.name, h)
		}
	}
	// The same fields with their own types read.
	ok := []byte{0x15, 0x00, 0x15, 0xc8, 0x01, 0x15, 0x64, 0x5c, 0x15, 0x02, 0x35, 0x02, 0x31, stop, stop}
	h, n, err := readPageHeader(ok)
	if err != nil || n != len(ok) || h.unc != 100 || h.comp != 50 || !h.v2 || h.numValues != 1 || h.encoding != 1 || !h.compressed {
		t.Fatalf("well-typed header: %+v, %d of %d bytes, %v", h, n, len(ok), err)
	}
}
