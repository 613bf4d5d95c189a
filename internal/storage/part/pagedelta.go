package part

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go/format"

	"github.com/strata-db/strata/internal/types"
)

// parquet-go sizes what it allocates to decode delta-encoded values from
// the values themselves: DELTA_BINARY_PACKED from the value count in its
// header, DELTA_BYTE_ARRAY and DELTA_LENGTH_BYTE_ARRAY from the sum of the
// lengths they hold. FuzzPart found a _sort page whose lengths added up
// to 700 MB; a page can claim terabytes. checkDelta reads those counts and
// lengths (decoding the length runs, not the values) before parquet-go
// does, so that what it allocates is what the page truly holds.

// maxDeltaBytes bounds the bytes the values of one DELTA_BYTE_ARRAY page
// decode to. Prefixes let a page of n values hold n times its own size;
// no page of sort keys or ordering values Write makes comes near it
// (PageRows keys of 256 KiB each would).
const maxDeltaBytes = 256 << 20

var errDelta = errors.New("malformed DELTA_BINARY_PACKED run")

// deltaScratch pools the lengths deltaLengths decodes.
var deltaScratch = sync.Pool{New: func() any { return new([2][]int32) }}

// checkDelta checks the values of a page of n non-NULL values in encoding
// enc.
func checkDelta(enc format.Encoding, b []byte, n int) error {
	if n == 0 && len(b) == 0 {
		return nil
	}
	if enc == format.DeltaBinaryPacked {
		h, err := deltaHeader(b)
		if err != nil {
			return err
		}
		if h.total > uint64(n) {
			return fmt.Errorf("DELTA_BINARY_PACKED run of %d values in a page of %d", h.total, n)
		}
		return nil
	}
	sc := deltaScratch.Get().(*[2][]int32)
	defer deltaScratch.Put(sc)
	_, _, _, err := deltaLengths(sc, enc, b, n)
	return err
}

// appendDeltaBytes decodes the n values of a page of byte arrays in
// encoding enc (DELTA_BYTE_ARRAY or DELTA_LENGTH_BYTE_ARRAY) straight
// into v, checking them as checkDelta does.
func appendDeltaBytes(v *types.Vector, enc format.Encoding, b []byte, n int) error {
	sc := deltaScratch.Get().(*[2][]int32)
	defer deltaScratch.Put(sc)
	prefixes, suffixes, data, err := deltaLengths(sc, enc, b, n)
	if err != nil {
		return err
	}
	if len(suffixes) != n {
		return fmt.Errorf("%d values in a page of %d", len(suffixes), n)
	}
	if !v.AppendFrontCoded(prefixes, suffixes, data) {
		return fmt.Errorf("values do not fit their lengths")
	}
	return nil
}

// deltaLengths decodes the lengths of a page of at most n byte arrays in
// encoding enc into sc's buffers and checks them: the prefix lengths
// (DELTA_BYTE_ARRAY only; nil otherwise), the suffix lengths, and the
// suffixes' bytes, which they must not overrun, the values adding up to
// at most maxDeltaBytes.
func deltaLengths(sc *[2][]int32, enc format.Encoding, b []byte, n int) (prefixes, suffixes []int32, data []byte, err error) {
	k := 0
	if enc == format.DeltaByteArray {
		if prefixes, k, err = deltaInt32s(sc[0][:0], b, n); err != nil {
			return nil, nil, nil, fmt.Errorf("prefix lengths: %v", err)
		}
		sc[0] = prefixes
	}
	suffixes, m, err := deltaInt32s(sc[1][:0], b[k:], n)
	sc[1] = suffixes
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lengths: %v", err)
	}
	if enc == format.DeltaByteArray && len(prefixes) != len(suffixes) {
		return nil, nil, nil, fmt.Errorf("%d prefix lengths and %d suffix lengths", len(prefixes), len(suffixes))
	}
	var size, total, last int64
	for i, s := range suffixes {
		l := int64(s)
		if s < 0 {
			return nil, nil, nil, fmt.Errorf("value %d has length %d", i, s)
		}
		if enc == format.DeltaByteArray {
			pl := int64(prefixes[i])
			if pl < 0 || pl > last {
				return nil, nil, nil, fmt.Errorf("value %d shares %d bytes with a value of %d", i, pl, last)
			}
			l += pl
		}
		size += int64(s)
		total += l
		last = l
	}
	if size > int64(len(b)-k-m) {
		return nil, nil, nil, fmt.Errorf("values of %d bytes in %d", size, len(b)-k-m)
	}
	if total > maxDeltaBytes {
		return nil, nil, nil, fmt.Errorf("values of %d bytes", total)
	}
	return prefixes, suffixes, b[k+m:], nil
}

// deltaHead is the header of a DELTA_BINARY_PACKED run.
type deltaHead struct {
	blockSize, miniblocks, total uint64
	first                        int64
	// size is the bytes the header takes.
	size int
}

// deltaHeader reads the header of a DELTA_BINARY_PACKED run.
func deltaHeader(b []byte) (deltaHead, error) {
	pos := 0
	var f [4]uint64
	for i := range f {
		x, k := binary.Uvarint(b[pos:])
		if k <= 0 {
			return deltaHead{}, errDelta
		}
		f[i] = x
		pos += k
	}
	h := deltaHead{blockSize: f[0], miniblocks: f[1], total: f[2], first: int64(f[3]>>1) ^ -int64(f[3]&1), size: pos}
	if h.blockSize == 0 || h.blockSize%128 != 0 || h.miniblocks == 0 || h.blockSize%h.miniblocks != 0 ||
		h.blockSize/h.miniblocks%32 != 0 || h.blockSize > 1<<20 {
		return deltaHead{}, fmt.Errorf("DELTA_BINARY_PACKED blocks of %d values in %d miniblocks", h.blockSize, h.miniblocks)
	}
	return h, nil
}

// deltaInt32s decodes a DELTA_BINARY_PACKED run of at most n int32 values
// from b, appending them to dst with int32 arithmetic (as parquet-go
// does); it returns them and the bytes the run takes.
func deltaInt32s(dst []int32, b []byte, n int) ([]int32, int, error) {
	h, err := deltaHeader(b)
	if err != nil {
		return dst, 0, err
	}
	if h.total > uint64(n) {
		return dst, 0, fmt.Errorf("run of %d values in a page of %d", h.total, n)
	}
	pos, total, mbs := h.size, int(h.total), int(h.miniblocks)
	if total == 0 {
		return dst, pos, nil
	}
	// Lengths are int32 values: a first value or a block's minimum delta
	// beyond int32 is no writer's (parquet-go's decoder would wrap it).
	if h.first != int64(int32(h.first)) {
		return dst, 0, fmt.Errorf("DELTA_BINARY_PACKED first value %d beyond int32", h.first)
	}
	per := int(h.blockSize) / mbs
	v := int32(h.first)
	// The values are written by index into room made once: total is at
	// most n, the page's value count, which its caller bounds.
	start := len(dst)
	dst = slices.Grow(dst, total)[:start+total]
	out := dst[start:]
	out[0] = v
	got := 1
	for got < total {
		minDelta, k := binary.Varint(b[pos:])
		if k <= 0 || pos+k+mbs > len(b) || minDelta != int64(int32(minDelta)) {
			return dst[:start], 0, errDelta
		}
		pos += k
		widths := b[pos : pos+mbs]
		pos += mbs
		for _, w := range widths {
			if got >= total {
				break
			}
			if w > 32 {
				return dst[:start], 0, fmt.Errorf("miniblock of %d-bit deltas", w)
			}
			size := per * int(w) / 8
			if pos+size > len(b) {
				return dst[:start], 0, errDelta
			}
			md, mask := int32(minDelta), uint64(1)<<w-1
			m := min(per, total-got)
			vals := out[got : got+m]
			// The loads read up to 7 bytes past the miniblock where b
			// goes on (the bits past it are masked off): only a run's
			// last bytes take the slow path, where a miniblock of narrow
			// deltas, 8 bytes of 2-bit ones, took it for every value.
			mb := b[pos:]
			fast := 0 // the values whose 8-byte load lies within b
			switch {
			case w == 0:
				// Every delta is the minimum.
				for i := range vals {
					v += md
					vals[i] = v
				}
				got += m
				continue
			case len(mb) >= 8:
				fast = min(len(vals), (len(mb)-8)*8/int(w)+1)
			}
			for i := range vals[:fast] {
				off := i * int(w)
				// w ≤ 32 bits from a bit offset under 8 fit in one load.
				v += md + int32(binary.LittleEndian.Uint64(mb[off>>3:])>>(off&7)&mask)
				vals[i] = v
			}
			for i := fast; i < len(vals); i++ {
				v += md + int32(bitsAt(mb[:size], i*int(w), int(w)))
				vals[i] = v
			}
			got += m
			pos += size
		}
	}
	return dst, pos, nil
}

// bitsAt returns the w-bit little-endian value at bit offset off of b.
func bitsAt(b []byte, off, w int) uint64 {
	var x uint64
	for got := 0; got < w; {
		i, sh := (off+got)/8, (off+got)%8
		take := min(8-sh, w-got)
		x |= uint64(b[i]>>sh&(1<<take-1)) << got
		got += take
	}
	return x
}
