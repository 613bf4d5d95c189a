package part

import (
	"encoding/binary"
	"math/bits"

	"github.com/parquet-go/parquet-go/encoding/delta"
)

// frontScratch encodes DELTA_BYTE_ARRAY pages (the sort keys and ordering
// values of every part) byte for byte as parquet-go's encoder does, but
// finds each value's prefix shared with the value before eight bytes at a
// time: parquet-go compares them a byte at a time, which was most of
// encoding a page of sort keys (which share their first tens of bytes)
// and 2 % of the CPU of bench/'s ingest.
type frontScratch struct {
	prefixes, lengths []int32
	runs              []byte
	enc               delta.BinaryPackedEncoding
}

// encode appends to dst the DELTA_BYTE_ARRAY encoding of the values
// data[offs[i]:offs[i+1]]: the prefix lengths, then the suffix lengths,
// each a DELTA_BINARY_PACKED run, then the suffixes.
func (f *frontScratch) encode(dst, data []byte, offs []uint32) ([]byte, error) {
	f.prefixes, f.lengths = f.prefixes[:0], f.lengths[:0]
	var last []byte
	for i := 1; i < len(offs); i++ {
		v := data[offs[i-1]:offs[i]]
		p := sharedPrefix(last, v)
		f.prefixes = append(f.prefixes, int32(p))
		f.lengths = append(f.lengths, int32(len(v)-p))
		last = v
	}
	var err error
	if f.runs, err = f.enc.EncodeInt32(f.runs[:0], f.prefixes); err != nil {
		return dst, err
	}
	dst = append(dst, f.runs...)
	if f.runs, err = f.enc.EncodeInt32(f.runs[:0], f.lengths); err != nil {
		return dst, err
	}
	dst = append(dst, f.runs...)
	for i, p := range f.prefixes {
		dst = append(dst, data[int(offs[i])+int(p):offs[i+1]]...)
	}
	return dst, nil
}

// sharedPrefix returns how many leading bytes a and b share.
func sharedPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
