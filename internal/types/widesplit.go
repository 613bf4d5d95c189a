package types

import (
	"encoding/binary"
	"math/bits"
)

// Wide integers (INT128, UINT128, UINT256, DECIMAL) are stored in parts
// big-endian and BYTE_STREAM_SPLIT: byte k of every value in stream k, so
// that a column of small amounts is mostly streams of zeros, which
// compress to nothing. Reading one back through a generic decoder first
// gathers each value's bytes one byte at a time, then converts the value
// to the vector's little-endian words: for an 8 192-row page of UINT256
// that was ~0.25 ms, a fifth of a cold AS OF point lookup. AppendWideSplit
// goes from the streams to the words directly, eight values at a time:
// the eight bytes of one stream for eight values are one load, and the
// 8×8 byte transpose that turns eight streams into eight words is three
// rounds of shifts and masks.

// AppendWideSplit appends n rows to a ClassWide vector from the
// BYTE_STREAM_SPLIT form of their non-NULL values: size streams (size is
// 16 or 32) of m bytes each, stream k holding byte k of each value's
// big-endian two's complement encoding, m being the number of non-NULL
// rows. defs, when not nil, holds n definition levels, 0 for a NULL row
// and 1 otherwise; nil means no row is NULL. signed sign-extends 16-byte
// values to 256 bits, as the vector holds INT128 and narrow DECIMALs. It
// reports false, having appended nothing, when v is not wide, size is
// neither 16 nor 32, a level is neither 0 nor 1, or the streams do not
// hold size bytes for each non-NULL row.
func (v *Vector) AppendWideSplit(streams []byte, size int, signed bool, defs []byte, n int) bool {
	if v.t.Kind.Class() != ClassWide || (size != 16 && size != 32) || n < 0 || (defs != nil && len(defs) != n) {
		return false
	}
	m := n
	if defs != nil {
		m = 0
		for _, d := range defs {
			if d > 1 {
				return false
			}
			m += int(d)
		}
	}
	if len(streams) != m*size {
		return false
	}
	base := len(v.wide)
	v.wide = growZero(v.wide, n)
	dst := v.wide[base : base+m]
	words := size / 8
	// A word whose eight streams are zero in every value (the high words
	// of small amounts: three of a UINT256 amount's four) stays as
	// growZero left it; checking costs one 8-byte load per 8 bytes, where
	// transposing costs the shifts and masks of every byte.
	var zero [4]bool
	for w := range words {
		zero[w] = zeroBytes(streams[8*w*m : 8*(w+1)*m])
	}
	j := 0
	for ; j+8 <= m; j += 8 {
		for w := range words {
			if zero[w] {
				continue
			}
			// Streams 8w … 8w+7 hold the bytes of word w counting from the
			// most significant: their eight bytes for values j … j+7 are
			// rows of an 8×8 matrix whose transpose is the eight words.
			var r [8]uint64
			for k := range r {
				s := (8*w + k) * m
				r[k] = binary.LittleEndian.Uint64(streams[s+j : s+j+8])
			}
			transpose8(&r)
			for t := range r {
				// Row t holds value j+t's bytes most significant first:
				// reversed, they are the word.
				dst[j+t][words-1-w] = bits.ReverseBytes64(r[t])
			}
		}
	}
	for ; j < m; j++ {
		for w := range words {
			if zero[w] {
				continue
			}
			var x uint64
			for k := range 8 {
				x = x<<8 | uint64(streams[(8*w+k)*m+j])
			}
			dst[j][words-1-w] = x
		}
	}
	if words == 2 && signed {
		for i := range dst {
			if dst[i][1]>>63 != 0 {
				dst[i][2], dst[i][3] = ^uint64(0), ^uint64(0)
			}
		}
	}
	if defs == nil || m == n {
		v.addValid(n)
		return true
	}
	// Spread the values to their rows, from the back so that none is
	// overwritten before it moves; NULL rows are zero, as AppendNull
	// leaves them.
	rows := v.wide[base : base+n]
	for i, k := n-1, m-1; i >= 0; i-- {
		if defs[i] == 0 {
			rows[i] = [4]uint64{}
			continue
		}
		rows[i] = rows[k]
		k--
	}
	if v.valid == nil {
		v.materialize()
	}
	for _, d := range defs {
		if w := v.n >> 6; w == len(v.valid) {
			v.valid = append(v.valid, 0)
		}
		if d != 0 {
			v.valid[v.n>>6] |= 1 << (uint(v.n) & 63)
		}
		v.n++
	}
	return true
}

// zeroBytes reports whether every byte of b is zero.
func zeroBytes(b []byte) bool {
	for len(b) >= 32 {
		if binary.LittleEndian.Uint64(b)|binary.LittleEndian.Uint64(b[8:])|
			binary.LittleEndian.Uint64(b[16:])|binary.LittleEndian.Uint64(b[24:]) != 0 {
			return false
		}
		b = b[32:]
	}
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// transpose8 transposes the 8×8 byte matrix whose row k is r[k], byte t
// of a row being bits 8t … 8t+7: afterwards byte t of r[k] is what byte k
// of r[t] was. Each round swaps the off-diagonal blocks of the blocks of
// the round before: 4×4, then 2×2, then single bytes.
func transpose8(r *[8]uint64) {
	for k := range 4 {
		x := (r[k]>>32 ^ r[k+4]) & 0x00000000ffffffff
		r[k] ^= x << 32
		r[k+4] ^= x
	}
	for _, k := range [4]int{0, 1, 4, 5} {
		x := (r[k]>>16 ^ r[k+2]) & 0x0000ffff0000ffff
		r[k] ^= x << 16
		r[k+2] ^= x
	}
	for _, k := range [4]int{0, 2, 4, 6} {
		x := (r[k]>>8 ^ r[k+1]) & 0x00ff00ff00ff00ff
		r[k] ^= x << 8
		r[k+1] ^= x
	}
}
