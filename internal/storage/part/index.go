package part

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// A secondary index (R10.1, docs/indexes.md) asks a part which rows may
// hold one of a few values of a column that is not its sort key. Its
// answer is an IndexFilter: for each indexed column, per granule of rows,
// a split-block Bloom filter (the KeyFilter scheme) over the xxhash64 of
// types.AppendKeyAt of the granule's non-NULL values. It is written with
// the part, in the footer entry "strata.index", so the seal's CRC covers
// it; parts without the entry (written before the index existed, or of a
// kind its scope does not cover) have no index data and every granule may
// hold any value.
//
// A granule is one page: rows [g·PageRows, (g+1)·PageRows) of a block.
// Pages are what Reader.ReadRows decodes, one per column, so a granule
// the filter lets through costs exactly one page of the sort key and one
// of the column; a finer granule would decode the same page for several
// granules, a coarser one would decode pages that cannot match.
//
// The value is binary, little-endian words, varints elsewhere:
//
//	version     1 byte (indexFormat)
//	columns     uvarint
//	per column: id uvarint, type (kind uvarint, precision, scale bytes,
//	            len uvarint, tz uvarint length + bytes), granules uvarint,
//	            one uvarint per granule: its filter's 32-byte blocks (0:
//	            the granule holds no non-NULL value), then every
//	            granule's filter words, 8 per block, in granule order.
//
// The column's type at write time is kept so that a reader can tell a
// part written before a type widening (R8.1): the key encoding of an
// integer or a float does not depend on its width (types.AppendKey), so
// such a filter still answers for the wider type; any other change and
// the reader treats the part as having no filter for the column.

// indexKey is the footer entry of a part's index filters.
const indexKey = "strata.index"

// indexFormat is the version byte of the indexKey value.
const indexFormat = 1

// IndexFilterBits is the filter bits a granule spends per distinct value:
// about 1 % false positives, so that a probe for a value a granule does
// not hold decodes its pages about once in a hundred granules, for 1.25
// bytes per distinct value per granule.
const IndexFilterBits = 10

// IndexFilter is one column's per-granule value filters in one part.
type IndexFilter struct {
	// Col and Type are the column and its type when the part was written.
	Col  catalog.ColumnID
	Type types.Type
	// GranuleRows is the rows of a granule (the part's PageRows).
	GranuleRows int
	// first[b] is the index of block b's first granule; first[len] the
	// number of granules.
	first []int
	// offs[g] is the first word of granule g's filter, offs[g+1] its end.
	offs  []int
	words []uint32
}

// IndexHash is the hash an index filter is built and probed with: of a
// value's key encoding (types.AppendKey).
func IndexHash(key []byte) uint64 { return xxhash.Sum64(key) }

// Granules returns the number of granules of block b.
func (f *IndexFilter) Granules(b int) int { return f.first[b+1] - f.first[b] }

// Bytes is the size of the filter's words.
func (f *IndexFilter) Bytes() int { return 4 * len(f.words) }

// MayHold reports whether granule g of block b may hold a value whose
// IndexHash is one of hashes: false only when it holds none of them.
func (f *IndexFilter) MayHold(b, g int, hashes []uint64) bool {
	i := f.first[b] + g
	w := f.words[f.offs[i]:f.offs[i+1]]
	if len(w) == 0 {
		return false // no non-NULL value: an equality never matches
	}
	kf := KeyFilter{words: w}
	for _, h := range hashes {
		if kf.mayContainHash(h) {
			return true
		}
	}
	return false
}

// SameKeys reports whether values of type a and b have the same key
// encodings (types.AppendKey), so that a filter built under one answers
// for the other: the same type, or two integer or two float types, whose
// encodings do not depend on the width.
func SameKeys(a, b types.Type) bool {
	if a == b {
		return true
	}
	if a.Kind.IsInteger() && b.Kind.IsInteger() {
		return true
	}
	fl := func(k types.Kind) bool { return k == types.Float32 || k == types.Float64 }
	return fl(a.Kind) && fl(b.Kind)
}

// IndexFilter returns the part's filter of column col, nil when it has
// none (written before the index existed, or of a kind the index's scope
// does not cover).
func (r *Reader) IndexFilter(col catalog.ColumnID) *IndexFilter {
	for i := range r.index {
		if r.index[i].Col == col {
			return &r.index[i]
		}
	}
	return nil
}

// buildIndex returns the indexKey value for columns cols of d (those the
// part holds), whose blocks are rows [ends[i-1], ends[i]), granules of
// pageRows rows; empty when no column is held.
func buildIndex(d *Data, meta *Meta, cols []catalog.ColumnID, ends []int, pageRows int) []byte {
	var out []byte
	n := 0
	var body []byte
	var key []byte
	seen := map[uint64]struct{}{}
	var hs []uint64
	for _, id := range cols {
		j := meta.Column(id)
		if j < 0 || d.Cols[j] == nil {
			continue
		}
		vec := d.Cols[j]
		t := meta.Columns[j].Type
		n++
		body = binary.AppendUvarint(body, uint64(id))
		body = appendType(body, t)
		var sizes []int
		var words []uint32
		lo := 0
		for _, hi := range ends {
			for g := lo; g < hi; g += pageRows {
				clear(seen)
				hs = hs[:0]
				for i := g; i < min(g+pageRows, hi); i++ {
					if vec.IsNull(i) {
						continue
					}
					key = types.AppendKeyAt(key[:0], vec, i)
					h := IndexHash(key)
					if _, ok := seen[h]; !ok {
						seen[h] = struct{}{}
						hs = append(hs, h)
					}
				}
				if len(hs) == 0 {
					sizes = append(sizes, 0)
					continue
				}
				blocks := (len(hs)*IndexFilterBits + 8*filterBlock - 1) / (8 * filterBlock)
				f := KeyFilter{words: make([]uint32, 8*blocks)}
				for _, h := range hs {
					f.add(h)
				}
				sizes = append(sizes, blocks)
				words = append(words, f.words...)
			}
			lo = hi
		}
		body = binary.AppendUvarint(body, uint64(len(sizes)))
		for _, s := range sizes {
			body = binary.AppendUvarint(body, uint64(s))
		}
		for _, w := range words {
			body = binary.LittleEndian.AppendUint32(body, w)
		}
	}
	if n == 0 {
		return nil
	}
	out = append(out, indexFormat)
	out = binary.AppendUvarint(out, uint64(n))
	return append(out, body...)
}

// appendType appends the fields of t.
func appendType(b []byte, t types.Type) []byte {
	b = binary.AppendUvarint(b, uint64(t.Kind))
	b = append(b, t.Precision, t.Scale)
	b = binary.AppendUvarint(b, uint64(uint32(t.Len)))
	b = binary.AppendUvarint(b, uint64(len(t.TZ)))
	return append(b, t.TZ...)
}

// errIndex is the cause of every decodeIndex failure.
var errIndex = errors.New("malformed index filter")

// decodeIndex reads the indexKey value of a part whose blocks are blocks,
// granules of pageRows rows. It checks every count against the bytes
// left and the blocks, so that garbage (a buggy writer, a fuzzer) is an
// error, never a panic or an allocation larger than the value.
func decodeIndex(b []byte, blocks []BlockInfo, pageRows int) ([]IndexFilter, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != indexFormat {
		return nil, fmt.Errorf("%s: %w: version %d", indexKey, errIndex, b[0])
	}
	if pageRows <= 0 {
		return nil, fmt.Errorf("%s: %w: the part has no page size", indexKey, errIndex)
	}
	first := make([]int, len(blocks)+1)
	for i, bl := range blocks {
		first[i+1] = first[i] + (bl.Rows+pageRows-1)/pageRows
	}
	granules := first[len(blocks)]
	p := b[1:]
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, fmt.Errorf("%s: %w: truncated", indexKey, errIndex)
		}
		p = p[n:]
		return v, nil
	}
	ncols, err := uv()
	if err != nil {
		return nil, err
	}
	if ncols > uint64(len(p)) {
		return nil, fmt.Errorf("%s: %w: %d columns in %d bytes", indexKey, errIndex, ncols, len(p))
	}
	out := make([]IndexFilter, 0, ncols)
	for range ncols {
		id, err := uv()
		if err != nil {
			return nil, err
		}
		kind, err := uv()
		if err != nil {
			return nil, err
		}
		if len(p) < 2 {
			return nil, fmt.Errorf("%s: %w: truncated", indexKey, errIndex)
		}
		t := types.Type{Kind: types.Kind(kind), Precision: p[0], Scale: p[1]}
		p = p[2:]
		l, err := uv()
		if err != nil {
			return nil, err
		}
		tz, err := uv()
		if err != nil {
			return nil, err
		}
		if kind > 255 || id > uint64(^uint32(0)) || l > uint64(^uint32(0)) || tz > uint64(len(p)) {
			return nil, fmt.Errorf("%s: %w: column %d", indexKey, errIndex, id)
		}
		t.Len, t.TZ = int32(uint32(l)), string(p[:tz])
		p = p[tz:]
		ng, err := uv()
		if err != nil {
			return nil, err
		}
		if ng != uint64(granules) {
			return nil, fmt.Errorf("%s: %w: column %d has %d granules, the blocks %d", indexKey, errIndex, id, ng, granules)
		}
		offs := make([]int, granules+1)
		for g := range granules {
			s, err := uv()
			if err != nil {
				return nil, err
			}
			if s > uint64(len(p)) {
				return nil, fmt.Errorf("%s: %w: granule %d of %d blocks", indexKey, errIndex, g, s)
			}
			offs[g+1] = offs[g] + 8*int(s)
		}
		nw := offs[granules]
		if 4*nw > len(p) {
			return nil, fmt.Errorf("%s: %w: column %d needs %d words, %d bytes are left", indexKey, errIndex, id, nw, len(p))
		}
		words := make([]uint32, nw)
		for i := range words {
			words[i] = binary.LittleEndian.Uint32(p[4*i:])
		}
		p = p[4*nw:]
		for _, f := range out {
			if f.Col == catalog.ColumnID(id) {
				return nil, fmt.Errorf("%s: %w: column %d twice", indexKey, errIndex, id)
			}
		}
		out = append(out, IndexFilter{Col: catalog.ColumnID(id), Type: t, GranuleRows: pageRows, first: first, offs: offs, words: words})
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%s: %w: %d bytes after the last column", indexKey, errIndex, len(p))
	}
	return out, nil
}

// indexHook, set by tests, replaces the index value Write stores.
var indexHook func([]byte) []byte

// checkIndex checks that every index filter holds every non-NULL value of
// block i, which d holds with every table column.
func (r *Reader) checkIndex(i int, d *Data) error {
	var key []byte
	for fi := range r.index {
		f := &r.index[fi]
		j := -1
		for k, id := range d.IDs {
			if id == f.Col {
				j = k
			}
		}
		if j < 0 || d.Cols[j] == nil {
			return r.corrupt("block %d: an index filter names column %d, which the part does not hold", i, f.Col)
		}
		vec := d.Cols[j]
		if vec.Type() != f.Type {
			return r.corrupt("block %d: the index filter of column %d says type %s, the part %s", i, f.Col, f.Type, vec.Type())
		}
		for row := range d.Rows {
			if vec.IsNull(row) {
				continue
			}
			key = types.AppendKeyAt(key[:0], vec, row)
			if !f.MayHold(i, row/f.GranuleRows, []uint64{IndexHash(key)}) {
				return r.corrupt("block %d: the index filter of column %d does not hold the value of row %d", i, f.Col, row)
			}
		}
	}
	return nil
}
