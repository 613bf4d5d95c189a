package part

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// This file checks page headers before parquet-go reads them.
//
// Stripe and page checksums say that bytes are what a writer wrote, not
// that the writer wrote sense: a part from a buggy writer, from elsewhere,
// or a fuzzer that recomputes the checksums, can hold a page whose header
// claims sizes its bytes do not have. parquet-go trusts those sizes for
// its allocations: it allocates the claimed uncompressed size, a level
// byte and an offset per claimed value, and its LZ4_RAW decoder doubles
// its output buffer for as long as a block fails to decode, so a corrupt
// LZ4 page ended in a fatal out-of-memory no recover catches (FuzzPart).
// checkPages walks the headers of the pages parquet-go is about to read
// and refuses, as corruption naming the page, any whose sizes do not fit:
//
//   - the page lies inside its column chunk and is a data page;
//   - its values and rows are at most the block's rows and the part's
//     PageRows (Write ends every page there);
//   - its uncompressed size is at most the chunk's total uncompressed size
//     (sealed in the footer);
//   - its compressed bytes decode to exactly the uncompressed size: a
//     ZSTD page is one frame stating that size (klauspost's decoder stops
//     a frame that outgrows what it states); an LZ4_RAW block is decoded
//     once into a buffer of that size, which it must fill; UNCOMPRESSED
//     bytes are that size. Snappy and the other codecs Write never uses
//     are refused in checkLayout;
//   - the values of a delta-encoded page claim no more values, and no
//     more bytes, than the page holds (checkDelta, pagedelta.go): for
//     those the values are decompressed here.
//
// So what parquet-go allocates for a page is bounded by sizes the page's
// own bytes bear out. Pages decoded by splitpages.go are checked there,
// as they are decoded, against the same bounds (checkZstd included).
// Reads through ReadBlock check a chunk once per open reader (the
// stripes prove later reads see the same bytes); a lookup checks the
// pages it decodes once per reader too (Reader.pages).

// pageFault describes a page header that does not fit its bytes.
type pageFault struct {
	page   int
	offset int64
	what   string
}

// pageMemo remembers the pages checkPages passed, by the file offsets
// of their start and end.
type pageMemo interface {
	checked(start int64) (end int64, ok bool)
	pass(start, end int64)
}

// lz4Scratch pools the buffers pages are test-decoded into.
var lz4Scratch sync.Pool

// checkPages checks the headers of the pages in buf[from:to) (file
// offsets from base): a whole chunk, or the pages of it a lookup reads,
// the first of which is page page0 of the chunk.
// rows bounds the values and rows of each page; total is the chunk's
// uncompressed size from the footer; codec its compression. seen, when
// not nil, remembers pages checked before: it is asked for the end of
// the page at an offset (ok if that page was checked) and told of each
// page that passes.
func checkPages(buf []byte, base, from, to int64, page0, rows int, total int64, codec format.CompressionCodec, seen pageMemo) (err error) {
	page := page0
	pos := from
	defer func() {
		// The Thrift decoder is parquet-go's; a panic in it is a
		// malformed header, like any other.
		if x := recover(); x != nil {
			err = &pageFault{page: page, offset: pos, what: fmt.Sprintf("malformed page header: %v", x)}
		}
	}()
	fault := func(format string, args ...any) error {
		return &pageFault{page: page, offset: pos, what: fmt.Sprintf(format, args...)}
	}
	if from < base || to > base+int64(len(buf)) || from > to {
		return fault("pages [%d, %d) lie outside the verified bytes", from, to)
	}
	var proto thrift.CompactProtocol
	var sum int64
	for ; pos < to; page++ {
		if seen != nil {
			if end, ok := seen.checked(pos); ok && end > pos && end <= to {
				pos = end
				continue
			}
		}
		b := buf[pos-base : to-base]
		rd := proto.NewReaderFromBytes(b)
		var h format.PageHeader
		if err := thrift.NewDecoder(rd).Decode(&h); err != nil {
			return fault("page header: %v", err)
		}
		hl := int64(rd.BytesRead())
		comp, unc := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
		if comp < 0 || unc < 0 || hl+comp > int64(len(b)) {
			return fault("page of %d bytes (%d uncompressed) after a %d-byte header overruns its chunk's %d bytes", comp, unc, hl, len(b))
		}
		if sum += unc; unc > total || sum > total {
			return fault("page of %d uncompressed bytes exceeds its chunk's %d", unc, total)
		}
		body := b[hl : hl+comp]
		var values, nrows, nulls int64
		var enc format.Encoding
		compressed := codec != format.Uncompressed
		switch {
		case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
			v := &h.DataPageHeaderV2.V
			values, nrows, nulls, enc = int64(v.NumValues), int64(v.NumRows), int64(v.NumNulls), v.Encoding
			levels := int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
			if nulls < 0 || nulls > values || v.RepetitionLevelsByteLength < 0 || v.DefinitionLevelsByteLength < 0 || levels > comp || levels > unc {
				return fault("data page of %d values, %d NULLs and %d bytes of levels in %d bytes", values, nulls, levels, comp)
			}
			body, unc = body[levels:], unc-levels
			if v.IsCompressed.Valid && !v.IsCompressed.V {
				compressed = false
			}
		case h.Type == format.DataPage && h.DataPageHeader.Valid:
			values, enc = int64(h.DataPageHeader.V.NumValues), h.DataPageHeader.V.Encoding
			nrows = values
			if deltaEncoded(enc) {
				// Its levels precede the values in the compressed bytes;
				// Write writes DATA_PAGE_V2 pages only.
				return fault("DATA_PAGE (v1) page encoded %s", enc)
			}
		default:
			return fault("page of type %s; a part holds data pages only", h.Type)
		}
		if values < 0 || nrows < 0 || values > int64(rows) || nrows > values {
			return fault("data page of %d values and %d rows in a page of at most %d rows", values, nrows, rows)
		}
		if err := checkBody(codec, compressed, body, unc, enc, int(values-nulls)); err != nil {
			return fault("%v", err)
		}
		if seen != nil {
			seen.pass(pos, pos+hl+comp)
		}
		pos += hl + comp
	}
	return nil
}

// deltaEncoded reports whether parquet-go sizes what it allocates to
// decode values of encoding enc from the values themselves.
func deltaEncoded(enc format.Encoding) bool {
	return enc == format.DeltaBinaryPacked || enc == format.DeltaByteArray || enc == format.DeltaLengthByteArray
}

// zstdDecoders pools the decoders ZSTD pages are test-decoded with.
var zstdDecoders = sync.Pool{New: func() any {
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	return d
}}

// checkBody checks a page's values: body, compressed with codec when
// compressed, must decode to exactly size bytes (found out allocating at
// most that), and values of a delta encoding must not claim more than
// the page's n values (checkDelta). Only the values of delta-encoded
// pages are decompressed here; a ZSTD frame's size is read from its
// header.
func checkBody(codec format.CompressionCodec, compressed bool, body []byte, size int64, enc format.Encoding, n int) error {
	delta := deltaEncoded(enc)
	if !compressed {
		if int64(len(body)) != size {
			return fmt.Errorf("uncompressed page of %d bytes says it holds %d", len(body), size)
		}
		if delta {
			return checkDelta(enc, body, n)
		}
		return nil
	}
	var p *[]byte
	scratch := func() []byte {
		p, _ = lz4Scratch.Get().(*[]byte)
		if p == nil {
			p = new([]byte)
		}
		if int64(cap(*p)) < size {
			*p = make([]byte, size)
		}
		return (*p)[:size]
	}
	defer func() {
		if p != nil {
			lz4Scratch.Put(p)
		}
	}()
	switch codec {
	case format.Zstd:
		if err := checkZstd(body, size); err != nil {
			return fmt.Errorf("ZSTD page: %v", err)
		}
		if !delta {
			return nil
		}
		d := zstdDecoders.Get().(*zstd.Decoder)
		defer zstdDecoders.Put(d)
		// The frame states size (checkZstd), and the decoder stops a
		// frame that outgrows what it states.
		out, err := d.DecodeAll(body, scratch()[:0])
		if err != nil || int64(len(out)) != size {
			return fmt.Errorf("ZSTD page does not decode to the %d bytes its header says", size)
		}
		return checkDelta(enc, out, n)
	case format.Lz4Raw:
		// An LZ4 block does not say what it decodes to, and decoding it is
		// the only way to know that parquet-go's decoder will stop.
		out := scratch()
		k, err := lz4.UncompressBlock(body, out)
		if err != nil || int64(k) != size {
			return fmt.Errorf("LZ4 page does not decode to the %d bytes its header says", size)
		}
		if delta {
			return checkDelta(enc, out, n)
		}
		return nil
	}
	return fmt.Errorf("pages compressed with %s", codec)
}

// checkZstd checks that b is one ZSTD frame, as klauspost's EncodeAll
// writes a page, that decodes to size bytes. A frame that states its
// content size must state size (the decoder stops a frame that outgrows
// what it states); one that does not (EncodeAll leaves it out below 256
// bytes) must be one block, which decodes to at most 128 KiB.
func checkZstd(b []byte, size int64) error {
	const maxBlock = 128 << 10
	if len(b) < 5 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return fmt.Errorf("no ZSTD frame magic")
	}
	fhd := b[4]
	single := fhd&0x20 != 0
	if fhd&0x08 != 0 {
		return fmt.Errorf("reserved frame header bit set")
	}
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
	fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcsLen == 0 && single {
		fcsLen = 1
	}
	if pos+fcsLen > len(b) {
		return fmt.Errorf("frame header overruns the page")
	}
	var fcs uint64
	switch fcsLen {
	case 1:
		fcs = uint64(b[pos])
	case 2:
		fcs = uint64(binary.LittleEndian.Uint16(b[pos:])) + 256
	case 4:
		fcs = uint64(binary.LittleEndian.Uint32(b[pos:]))
	case 8:
		fcs = binary.LittleEndian.Uint64(b[pos:])
	}
	if fcsLen > 0 && fcs != uint64(size) {
		return fmt.Errorf("frame of %d bytes, the page header says %d", fcs, size)
	}
	pos += fcsLen
	for last := false; !last; {
		if pos+3 > len(b) {
			return fmt.Errorf("block header overruns the page")
		}
		h := uint32(b[pos]) | uint32(b[pos+1])<<8 | uint32(b[pos+2])<<16
		pos += 3
		last = h&1 != 0
		n := int(h >> 3)
		if n > maxBlock {
			return fmt.Errorf("block of %d bytes", n)
		}
		switch h >> 1 & 3 {
		case 0: // raw
			pos += n
		case 1: // RLE
			pos++
		case 2: // compressed
			pos += n
			n = -1
		default:
			return fmt.Errorf("reserved block type")
		}
		if pos > len(b) {
			return fmt.Errorf("block overruns the page")
		}
		if fcsLen == 0 && (!last || n >= 0 && int64(n) != size || size > maxBlock) {
			return fmt.Errorf("frame without a content size is not one block of the page's %d bytes", size)
		}
	}
	if fhd&0x04 != 0 {
		pos += 4 // content checksum
	}
	if pos != len(b) {
		return fmt.Errorf("frame of %d bytes in a page of %d", pos, len(b))
	}
	return nil
}

// Error implements error.
func (f *pageFault) Error() string {
	return fmt.Sprintf("page %d at offset %d: %s", f.page, f.offset, f.what)
}
