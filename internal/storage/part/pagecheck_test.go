package part

import (
	"bytes"
	"errors"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// pageSpan is one page of a part file: the file offsets of its header,
// its body and its end, its chunk's codec and its header.
type pageSpan struct {
	hdr, body, end int64
	blk, col       int
	codec          format.CompressionCodec
	h              format.PageHeader
}

// partPages lists the pages of every column chunk of file, found through
// its footer without any of Reader's checks; nil when the footer does not
// parse. A chunk's walk stops at the first header that does not.
func partPages(file []byte) (pages []pageSpan) {
	defer func() {
		if recover() != nil {
			pages = nil
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)),
		parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil
	}
	var proto thrift.CompactProtocol
	for i, rg := range f.Metadata().RowGroups {
		for j := range rg.Columns {
			start, end := chunkRange(&rg, j)
			if start < 0 || end > int64(len(file)) || end < start {
				continue
			}
			for pos := start; pos < end; {
				rd := proto.NewReaderFromBytes(file[pos:end])
				var h format.PageHeader
				if thrift.NewDecoder(rd).Decode(&h) != nil {
					break
				}
				body := pos + int64(rd.BytesRead())
				if h.CompressedPageSize < 0 || body+int64(h.CompressedPageSize) > end {
					break
				}
				p := pageSpan{hdr: pos, body: body, end: body + int64(h.CompressedPageSize), blk: i, col: j, codec: rg.Columns[j].MetaData.Codec, h: h}
				pages = append(pages, p)
				pos = p.end
			}
		}
	}
	return pages
}

// setHeader writes h as page p's header, with the CRC of the page's body,
// in place; it reports false (and changes nothing) when h does not encode
// to the length of the header it replaces.
func setHeader(file []byte, p *pageSpan, h format.PageHeader) bool {
	if h.CRC != 0 {
		h.CRC = int32(crc32.ChecksumIEEE(file[p.body:p.end]))
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil || int64(len(b)) != p.body-p.hdr {
		return false
	}
	copy(file[p.hdr:], b)
	p.h = h
	return true
}

// recrcPages recomputes the CRC of every page of file whose header keeps
// its length, so that a fuzzed page body reaches the decompressor.
func recrcPages(file []byte) {
	for _, p := range partPages(file) {
		setHeader(file, &p, p.h)
	}
}

// lz4Part writes a small part whose table columns are LZ4- or
// ZSTD-compressed (two blocks of three pages, compressible) and returns
// its bytes.
func lz4Part(t testing.TB, comp catalog.Compression) []byte {
	fx := makeFixture(t, 300, []typeCase{allTypes[3], {types.Of(types.String), []string{strings.Repeat("abcdefgh", 8), "NULL", strings.Repeat("xyz", 9)}}},
		func(types.Type) catalog.Codec {
			c := catalog.Codec{Compression: comp}
			if comp == catalog.CompressZSTD {
				c.Level = 1
			}
			return c
		})
	fsys := newFS(t)
	writeFixture(t, fsys, "parts/seed", fx, WriteOptions{BlockRows: 150, PageRows: 64})
	b, err := vfs.ReadFile(fsys, "parts/seed")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCorruptCompressedPage damages a compressed page of a table column
// (its body, or its header's sizes and counts), recomputes the page CRC,
// the stripes and the seal, and reads the part every way there is: each
// must report corruption naming the file, the column and the page. Before
// checkPages, the LZ4 body made parquet-go's decoder double its buffer
// until the process died of out-of-memory.
func TestCorruptCompressedPage(t *testing.T) {
	type damage struct {
		name string
		// apply damages page p of file in place; false if it cannot.
		apply func(file []byte, p *pageSpan) bool
	}
	damages := []damage{
		{"body", func(file []byte, p *pageSpan) bool {
			// 0xFF tokens claim literal runs far past the body.
			mid := p.body + (p.end-p.body)/2
			for i := mid; i < p.end; i++ {
				file[i] = 0xFF
			}
			return setHeader(file, p, p.h)
		}},
		{"uncompressed size", func(file []byte, p *pageSpan) bool {
			h := p.h
			h.UncompressedPageSize += 3
			return setHeader(file, p, h)
		}},
		{"uncompressed size short", func(file []byte, p *pageSpan) bool {
			h := p.h
			h.UncompressedPageSize -= 3
			return setHeader(file, p, h)
		}},
		{"values", func(file []byte, p *pageSpan) bool {
			h := p.h
			h.DataPageHeaderV2.V.NumValues += 65
			h.DataPageHeaderV2.V.NumRows += 65
			return setHeader(file, p, h)
		}},
	}
	for _, comp := range []catalog.Compression{catalog.CompressLZ4, catalog.CompressZSTD} {
		orig := lz4Part(t, comp)
		names := partColumnNames(t, orig)
		// The string column c11, and two fixed columns (ZSTD whatever
		// the table columns' codec, delta-encoded, decoded by
		// decodeOwnFixed): each must be refused as corrupt.
		for _, target := range []string{"c11", colCommit, colSort} {
			for _, dm := range damages {
				t.Run(map[catalog.Compression]string{catalog.CompressLZ4: "LZ4", catalog.CompressZSTD: "ZSTD"}[comp]+"/"+target+"/"+dm.name, func(t *testing.T) {
					testCorruptPage(t, orig, slices.Index(names, target), target, dm.apply)
				})
			}
		}
	}
}

// partColumnNames returns the Parquet column names of a part file, by
// column index.
func partColumnNames(t *testing.T, file []byte) []string {
	f, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range f.Schema().Columns() {
		names = append(names, path[0])
	}
	return names
}

// testCorruptPage damages with apply the second page of column col (named
// name) in block 1 of orig, reseals the file and reads it every way.
func testCorruptPage(t *testing.T, orig []byte, col int, name string, apply func(file []byte, p *pageSpan) bool) {
	file := bytes.Clone(orig)
	var hit *pageSpan
	seen := 0
	for _, p := range partPages(file) {
		// The column's second page on, in block 1.
		if p.blk == 1 && p.col == col && p.h.DataPageHeaderV2.Valid {
			if seen++; seen > 1 && apply(file, &p) {
				hit = &p
				break
			}
		}
	}
	if hit == nil || hit.codec == format.Uncompressed {
		t.Fatalf("no compressed page of column %s in block 1 could be damaged", name)
	}
	file = reseal(file)
	const path = "parts/bad.parquet"
	fsys := newFS(t)
	if err := vfs.WriteFile(fsys, path, file); err != nil {
		t.Fatal(err)
	}
	want := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) ||
			!strings.Contains(err.Error(), "column "+name) || !strings.Contains(err.Error(), "page ") {
			t.Fatalf("%s: %v", what, err)
		}
	}
	want("read", readEverything(fsys, path))
	want("Check", Check(fsys, path))
	r, err := OpenCached(fsys, path, NewCache(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A lookup decodes only the pages that hold the rows.
	var rows Data
	lo, hi := 0, r.Blocks()[1].Rows
	if name == "c11" {
		want("ReadRows", r.ReadRows(1, lo, hi, FixAll, []catalog.ColumnID{11}, &rows))
		if err := r.ReadRows(1, lo, hi, FixAll, []catalog.ColumnID{10}, &rows); err != nil {
			t.Fatalf("ReadRows of an intact column: %v", err)
		}
	} else {
		want("ReadRows", r.ReadRows(1, lo, hi, FixAll, nil, &rows))
	}
}
