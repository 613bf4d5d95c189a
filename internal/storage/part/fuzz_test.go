package part

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/vfs"
)

// fuzzMaxAlloc bounds what FuzzPart's reads of one input may allocate.
const fuzzMaxAlloc = 512 << 20

// fuzzKinds are the part kinds the engine writes, each with the fixed
// columns its writer fills (the others absent, as in a delta or an AS OF
// index part).
var fuzzKinds = []struct {
	kind  Kind
	fixed Fixed
}{
	{KindDelta, FixSort | FixGroup | FixCommit | FixSeq | FixTomb | FixOrder},
	{KindCurrent, FixAll},
	{KindHistory, FixAll},
	{KindAsOf, FixSort | FixGroup | FixCommit | FixSeq | FixWonAt | FixEndedAt},
}

// fuzzPart writes a small part of the given kind (two blocks, several
// pages, a few column types with NULLs) and returns its bytes.
func fuzzPart(t testing.TB, kind Kind, fixed Fixed) []byte {
	fx := makeFixture(t, 40, []typeCase{allTypes[2], allTypes[18], allTypes[15], allTypes[12]}, nil)
	fx.meta.Kind = kind
	d := fx.d
	if fixed&FixTomb == 0 {
		d.Tomb = nil
	}
	if fixed&FixOrder == 0 {
		d.Order = nil
	}
	if fixed&FixWonAt == 0 {
		d.WonAt, d.EndedAt = nil, nil
	}
	if fixed&FixState == 0 {
		d.SupersededBy, d.State = nil, nil
	}
	fsys := newFS(t)
	writeFixture(t, fsys, "parts/seed", fx, WriteOptions{BlockRows: 25, PageRows: 8})
	b, err := vfs.ReadFile(fsys, "parts/seed")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reseal returns a copy of file with its page CRCs, its stripe checksums
// and its seal recomputed where the file still lets them be found, so
// that a fuzzed part reaches what lies past the checksums (the Parquet
// footer, page headers, the decompressors and decoders) instead of
// stopping at the first mismatch.
func reseal(file []byte) []byte {
	b := bytes.Clone(file)
	if len(b) < 12 {
		return b
	}
	recrcPages(b)
	footerStart := len(b) - 8 - int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if footerStart < 4 || footerStart > len(b)-8 {
		return b
	}
	pos, err := sealPos(b[footerStart : len(b)-8])
	if err != nil {
		return b
	}
	pos += footerStart
	dataEnd, err := strconv.ParseUint(string(b[pos-16:pos]), 16, 63)
	if err != nil || dataEnd < 4 || dataEnd > uint64(footerStart) {
		return b
	}
	// The stripe table is base64 in the metadata JSON; the same number of
	// stripes encodes to the same length, so it is patched in place.
	const field = `"stripes":"`
	if i := bytes.Index(b[footerStart:], []byte(field)); i >= 0 {
		i += footerStart + len(field)
		if n := bytes.IndexByte(b[i:], '"'); n >= 0 {
			var crcs []byte
			for s := 0; s < int(dataEnd); s += stripeSize {
				crcs = binary.BigEndian.AppendUint32(crcs, crc32.Checksum(b[s:min(s+stripeSize, int(dataEnd))], castagnoli))
			}
			if enc := base64.StdEncoding.EncodeToString(crcs); len(enc) == n {
				copy(b[i:], enc)
			}
		}
	}
	copy(b[pos:pos+8], "00000000")
	copy(b[pos:pos+8], fmt.Sprintf("%08x", crc32.Checksum(b[dataEnd:], castagnoli)))
	return b
}

// FuzzPart feeds damaged part files of every kind to Check and to a
// reader (Open with a cache, every block read whole, as fixed columns and
// as views, every block's first key looked up): each must give data or an
// error naming the file, never a panic, a hang or an out-of-memory. Every
// input is tried as fuzzed and resealed (reseal, which recomputes page
// CRCs too), which takes it past the checksums into the Parquet footer,
// page headers, the decompressors and the decoder. Besides a part of each
// kind, the seeds hold parts with LZ4 and ZSTD table columns and parts
// whose compressed pages are already damaged (body bytes, uncompressed
// size, value count), from which the fuzzer mutates on.
func FuzzPart(f *testing.F) {
	for _, k := range fuzzKinds {
		f.Add(fuzzPart(f, k.kind, k.fixed))
	}
	for _, comp := range []catalog.Compression{catalog.CompressLZ4, catalog.CompressZSTD} {
		file := lz4Part(f, comp)
		f.Add(file)
		pages := partPages(file)
		for i, p := range pages {
			if p.codec == format.Uncompressed || i%7 != 0 {
				continue
			}
			b := bytes.Clone(file)
			h := p.h
			switch i % 3 {
			case 0:
				b[(p.body+p.end)/2] ^= 0x5a
			case 1:
				h.UncompressedPageSize += int32(i)
			default:
				h.DataPageHeaderV2.V.NumValues += int32(i)
			}
			if setHeader(b, &p, h) {
				f.Add(reseal(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		for _, b := range [][]byte{file, reseal(file)} {
			// What a read allocates is bounded by what the part's pages
			// truly hold (pagecheck.go), a few MiB for these; the input
			// 6144d72780c232a1 made parquet-go allocate 1.4 GB.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			fuzzPartOnce(t, b)
			runtime.ReadMemStats(&after)
			if a := after.TotalAlloc - before.TotalAlloc; a > fuzzMaxAlloc {
				t.Fatalf("reading a part of %d bytes allocated %d MiB", len(b), a>>20)
			}
		}
	})
}

func fuzzPartOnce(t *testing.T, file []byte) {
	const path = "parts/fuzzed.part"
	fsys := newFS(t)
	if err := vfs.WriteFile(fsys, path, file); err != nil {
		t.Fatal(err)
	}
	named := func(what string, err error) bool {
		t.Helper()
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: error not naming the file: %v", what, err)
		}
		return err == nil
	}
	named("Check", Check(fsys, path))
	r, err := OpenCached(fsys, path, NewCache(1<<20))
	if !named("Open", err) {
		return
	}
	defer r.Close()
	ids := make([]catalog.ColumnID, 0, len(r.Meta().Columns)+1)
	for _, c := range r.Meta().Columns {
		ids = append(ids, c.ID)
	}
	ids = append(ids, 1<<20) // a column the part lacks
	var d, v, rows Data
	for bi, blk := range r.Blocks() {
		if !named("ReadBlock", r.ReadBlock(bi, ids, &d)) {
			continue
		}
		named("ReadBlockView", r.ReadBlockView(bi, FixAll, ids, &v))
		if blk.Rows == 0 || d.Rows == 0 {
			continue
		}
		key := d.Sort.BytesAt(0)
		r.MayContain(key)
		lo, hi, err := r.FindKey(bi, key, &rows)
		if !named("FindKey", err) {
			continue
		}
		if lo < 0 || hi < lo || hi > blk.Rows {
			t.Fatalf("FindKey in block %d of %d rows: [%d, %d)", bi, blk.Rows, lo, hi)
		}
		named("ReadRows", r.ReadRows(bi, lo, hi, FixAll, ids, &rows))
	}
}
