package types

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/holiman/uint256"
)

// Key encoding (invariant 8): AppendKey writes a value so that
// bytes.Compare of two encodings of one type agrees with Compare. Storage
// sorts rows by these keys, and the version rules compare ordering values
// through them. A composite key is the concatenation of its columns'
// encodings: every encoding is self-delimiting, so the concatenation sorts
// column by column.
//
//	NULL        0x02                      (after every value, as in Compare)
//	non-NULL    0x01 then the body:
//	  INTn, UINTn  one length byte, then the value's significant bytes
//	            big-endian: x ≥ 0 is 0x80+n then the n bytes of x without
//	            leading zeros (0 is 0x80 alone); x < 0 is 0x7f-n then the
//	            low n bytes of x's two's complement, n the fewest that
//	            hold ^x (−1 is 0x7f alone). The encoding depends on the
//	            value only, not on the width of the type, so widening a
//	            key, SHARD BY or ordering column (R8.1, INT32 → INT64,
//	            UINT64 → UINT128, UINT32 → INT64) leaves every stored key
//	            valid, ordered and placed in the same shard.
//	  DECIMAL   32 bytes, the unscaled two's complement, sign bit flipped
//	  DATE      8 bytes, days as INT64
//	  DATETIME64 8 bytes, ticks as INT64
//	  FLOAT32/64 8 bytes of the value's IEEE FLOAT64 bits (a FLOAT32 is
//	            widened exactly, for the same reason as integers);
//	            negatives inverted, others with the sign bit set; -0 is
//	            written as 0 and every NaN as one NaN, above +Infinity
//	  BOOL      0x00 or 0x01
//	  STRING, BYTES  the bytes with 0x00 written 0x00 0xff, then 0x00 0x01
//	  UUID      the 16 bytes
const (
	keyValue byte = 0x01
	keyNull  byte = 0x02
)

// AppendKey appends the order-preserving encoding of v.
func AppendKey(dst []byte, v Value) []byte {
	if v.null {
		return append(dst, keyNull)
	}
	dst = append(dst, keyValue)
	k := v.t.Kind
	switch k.Class() {
	case ClassInt64:
		if !k.IsInteger() {
			return appendBE(dst, v.n^1<<63, 8)
		}
		return appendIntKey(dst, int64(v.n))
	case ClassUint64:
		return appendUintKey(dst, v.n)
	case ClassWide:
		if k == Interval {
			return appendSpanKey(dst, v.w[0], v.w[1], v.w[2], v.w[3])
		}
		if k == Decimal {
			w := v.w
			w[3] ^= 1 << 63
			for i := 3; i >= 0; i-- {
				dst = binary.BigEndian.AppendUint64(dst, w[i])
			}
			return dst
		}
		return appendWideKey(dst, &v.w, k.IsSigned())
	case ClassFloat64:
		return binary.BigEndian.AppendUint64(dst, floatKey64(v.Float64()))
	case ClassBool:
		return append(dst, byte(v.n))
	case ClassVarlen:
		if k == String {
			return appendEscapedString(dst, v.s)
		}
		return appendEscaped(dst, v.b)
	case ClassUUID:
		return append(dst, v.u[:]...)
	}
	return dst
}

// AppendKeyAt appends the AppendKey encoding of row i of vec, byte for
// byte what AppendKey of the row's Value would append, read from the
// backing slice directly instead of through a Value.
func AppendKeyAt(dst []byte, vec *Vector, i int) []byte {
	if vec.IsNull(i) {
		return append(dst, keyNull)
	}
	dst = append(dst, keyValue)
	k := vec.t.Kind
	switch k.Class() {
	case ClassInt64:
		if !k.IsInteger() {
			return appendBE(dst, uint64(vec.i64[i])^1<<63, 8)
		}
		return appendIntKey(dst, vec.i64[i])
	case ClassUint64:
		return appendUintKey(dst, vec.u64[i])
	case ClassWide:
		if k == Interval {
			w := &vec.wide[i]
			return appendSpanKey(dst, w[0], w[1], w[2], w[3])
		}
		if k == Decimal {
			w := vec.wide[i]
			w[3] ^= 1 << 63
			for j := 3; j >= 0; j-- {
				dst = binary.BigEndian.AppendUint64(dst, w[j])
			}
			return dst
		}
		return appendWideKey(dst, &vec.wide[i], k.IsSigned())
	case ClassFloat64:
		return binary.BigEndian.AppendUint64(dst, floatKey64(vec.f64[i]))
	case ClassBool:
		if vec.bools[i] {
			return append(dst, 1)
		}
		return append(dst, 0)
	case ClassVarlen:
		return appendEscaped(dst, vec.BytesAt(i))
	case ClassUUID:
		return append(dst, vec.uuids[i][:]...)
	}
	return dst
}

// Length bytes of the integer encoding: keyIntZero+n for a non-negative
// value of n significant bytes, keyIntMinus1-n for a negative one.
const (
	keyIntZero   byte = 0x80
	keyIntMinus1 byte = 0x7f
	maxIntBytes       = 32
)

// appendIntKey appends the integer encoding of x.
func appendIntKey(dst []byte, x int64) []byte {
	if x >= 0 {
		return appendUintKey(dst, uint64(x))
	}
	n := (bits.Len64(^uint64(x)) + 7) / 8
	dst = append(dst, keyIntMinus1-byte(n))
	return appendBE(dst, uint64(x)<<(64-8*n), n)
}

// appendUintKey appends the integer encoding of a non-negative x.
func appendUintKey(dst []byte, x uint64) []byte {
	n := (bits.Len64(x) + 7) / 8
	dst = append(dst, keyIntZero+byte(n))
	return appendBE(dst, x<<(64-8*n), n)
}

// appendWideKey appends the integer encoding of a 128- or 256-bit value
// (two's complement, sign-extended to 256 bits, when signed).
func appendWideKey(dst []byte, w *uint256.Int, signed bool) []byte {
	if w[1]|w[2]|w[3] == 0 {
		// Non-negative and below 2^64, as most stored values are (the
		// bench/ balances' UINT128 ordering column): the encoding is
		// appendUintKey's, without the byte loop.
		return appendUintKey(dst, w[0])
	}
	neg := signed && wideNeg(w)
	m := *w
	if neg {
		m.Not(w)
	}
	n := (m.BitLen() + 7) / 8
	if neg {
		dst = append(dst, keyIntMinus1-byte(n))
	} else {
		dst = append(dst, keyIntZero+byte(n))
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(w[i/8]>>(8*(i%8))))
	}
	return dst
}

// decodeIntKey reads the integer encoding from the front of b as a num
// and checks that it is canonical (the fewest bytes), so that two
// encodings are equal exactly when the values are.
func decodeIntKey(b []byte) (n num, rest []byte, ok bool) {
	if len(b) == 0 {
		return num{}, nil, false
	}
	h := b[0]
	b = b[1:]
	var neg bool
	var cnt int
	switch {
	case h >= keyIntZero && h <= keyIntZero+maxIntBytes:
		cnt = int(h - keyIntZero)
	case h <= keyIntMinus1 && h >= keyIntMinus1-maxIntBytes:
		neg, cnt = true, int(keyIntMinus1-h)
	default:
		return num{}, nil, false
	}
	if len(b) < cnt {
		return num{}, nil, false
	}
	if cnt > 0 && ((!neg && b[0] == 0) || (neg && b[0] == 0xff)) {
		return num{}, nil, false
	}
	var w uint256.Int
	for i := 0; i < cnt; i++ {
		j := cnt - 1 - i
		w[j/8] |= uint64(b[i]) << (8 * (j % 8))
	}
	if !neg {
		return num{mag: w}, b[cnt:], true
	}
	// x = -(m+1) where m is the complement of the n bytes: |x| = m+1.
	var m uint256.Int
	for i := 0; i < cnt; i++ {
		j := cnt - 1 - i
		m[j/8] |= uint64(^b[i]) << (8 * (j % 8))
	}
	m.AddUint64(&m, 1)
	return num{neg: true, mag: m}, b[cnt:], true
}

// appendBE appends the top n bytes of x, most significant first.
func appendBE(dst []byte, x uint64, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, byte(x>>(56-8*i)))
	}
	return dst
}

func floatKey64(f float64) uint64 {
	switch {
	case f == 0:
		f = 0
	case f != f:
		f = math.NaN()
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// appendEscaped appends s with each zero byte doubled as 0x00 0xff and the
// terminator 0x00 0x01. Keys are mostly text without zero bytes: the runs
// between zeros are found with IndexByte and copied whole, not a byte at a
// time (a key column of hex addresses was 2 % of an ingest's CPU).
func appendEscaped(dst, s []byte) []byte {
	dst = slices.Grow(dst, len(s)+2)
	for {
		i := bytes.IndexByte(s, 0)
		if i < 0 {
			dst = append(dst, s...)
			return append(dst, 0, 1)
		}
		dst = append(append(dst, s[:i]...), 0, 0xff)
		s = s[i+1:]
	}
}

// appendEscapedString is appendEscaped of a string.
func appendEscapedString(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+2)
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			dst = append(dst, s...)
			return append(dst, 0, 1)
		}
		dst = append(append(dst, s[:i]...), 0, 0xff)
		s = s[i+1:]
	}
}

func corrupt(what string, t Type) error {
	return fmt.Errorf("%w: %s key of %s", ErrCorrupt, what, t)
}

// DecodeKey reads one AppendKey encoding of type t from the front of b and
// returns the value and the bytes after it. Malformed input is an error
// wrapping ErrCorrupt. A FLOAT -0 decodes as 0 (the key does not keep it).
func DecodeKey(t Type, b []byte) (Value, []byte, error) {
	if len(b) == 0 {
		return Value{}, nil, corrupt("empty", t)
	}
	switch b[0] {
	case keyNull:
		return Null(t), b[1:], nil
	case keyValue:
	default:
		return Value{}, nil, corrupt("bad marker in", t)
	}
	b = b[1:]
	k := t.Kind
	need := func(n int) bool { return len(b) >= n }
	switch k.Class() {
	case ClassInt64, ClassUint64:
		if k.Class() == ClassInt64 && !k.IsInteger() {
			if !need(8) {
				return Value{}, nil, corrupt("short", t)
			}
			return mkInt(t, int64(readBE(b, 8)^1<<63)), b[8:], nil
		}
		n, rest, ok := decodeIntKey(b)
		if !ok {
			return Value{}, nil, corrupt("bad integer in", t)
		}
		if !fitsInt(k, &n) {
			return Value{}, nil, corrupt("out-of-range", t)
		}
		if n.neg {
			return mkInt(t, -int64(n.mag[0]-1)-1), rest, nil
		}
		return Value{t: t, n: n.mag[0]}, rest, nil
	case ClassWide:
		if k != Decimal {
			n, rest, ok := decodeIntKey(b)
			if !ok {
				return Value{}, nil, corrupt("bad integer in", t)
			}
			if !fitsInt(k, &n) {
				return Value{}, nil, corrupt("out-of-range", t)
			}
			return mkWide(t, n.twos()), rest, nil
		}
		if !need(32) {
			return Value{}, nil, corrupt("short", t)
		}
		var w uint256.Int
		for i := 0; i < 4; i++ {
			w[3-i] = binary.BigEndian.Uint64(b[8*i:])
		}
		w[3] ^= 1 << 63
		dn := signedNum(&w)
		if !fitsDecimal(t.Precision, &dn.mag) {
			return Value{}, nil, corrupt("out-of-range", t)
		}
		return mkWide(t, w), b[32:], nil
	case ClassFloat64:
		if !need(8) {
			return Value{}, nil, corrupt("short", t)
		}
		x := binary.BigEndian.Uint64(b)
		if x>>63 != 0 {
			x &^= 1 << 63
		} else {
			x = ^x
		}
		f := math.Float64frombits(x)
		if k == Float32 && f == f && float64(float32(f)) != f {
			return Value{}, nil, corrupt("out-of-range", t)
		}
		return mkFloat(t, f), b[8:], nil
	case ClassBool:
		if !need(1) || b[0] > 1 {
			return Value{}, nil, corrupt("bad", t)
		}
		return Value{t: t, n: uint64(b[0])}, b[1:], nil
	case ClassVarlen:
		out, rest, ok := unescape(b)
		if !ok {
			return Value{}, nil, corrupt("unterminated", t)
		}
		if k == String {
			return Value{t: t, s: string(out)}, rest, nil
		}
		return Value{t: t, b: out}, rest, nil
	case ClassUUID:
		if !need(16) {
			return Value{}, nil, corrupt("short", t)
		}
		var u [16]byte
		copy(u[:], b)
		return Value{t: t, u: u}, b[16:], nil
	}
	return Value{}, nil, corrupt("unsupported", t)
}

// readBE reads n big-endian bytes.
func readBE(b []byte, n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// unescape reads an escaped byte string up to its 0x00 0x01 terminator.
func unescape(b []byte) (out, rest []byte, ok bool) {
	out = make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			return nil, nil, false
		}
		switch b[i+1] {
		case 0xff:
			out = append(out, 0)
			i++
		case 0x01:
			return out, b[i+2:], true
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}
