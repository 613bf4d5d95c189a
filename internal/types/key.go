package types

import (
	"encoding/binary"
	"fmt"
	"math"

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
//	  INTn      n/8 bytes big-endian, sign bit flipped
//	  UINTn     n/8 bytes big-endian
//	  DECIMAL   32 bytes, the unscaled two's complement, sign bit flipped
//	  DATE      8 bytes, days as INT64
//	  DATETIME64 8 bytes, ticks as INT64
//	  FLOAT32/64 4/8 bytes of IEEE bits; negatives inverted, others with
//	            the sign bit set; -0 is written as 0 and every NaN as one
//	            NaN, above +Infinity
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
		b := 8
		if k.IsInteger() {
			b = k.Bits() / 8
		}
		x := v.n ^ 1<<(8*b-1)
		return appendBE(dst, x<<(64-8*b), b)
	case ClassUint64:
		b := k.Bits() / 8
		return appendBE(dst, v.n<<(64-8*b), b)
	case ClassWide:
		w := v.w
		words := 4
		if k.Bits() == 128 {
			words = 2
		}
		if k.IsSigned() || k == Decimal {
			w[words-1] ^= 1 << 63
		}
		for i := words - 1; i >= 0; i-- {
			dst = binary.BigEndian.AppendUint64(dst, w[i])
		}
		return dst
	case ClassFloat64:
		f := v.Float64()
		if k == Float32 {
			return binary.BigEndian.AppendUint32(dst, floatKey32(float32(f)))
		}
		return binary.BigEndian.AppendUint64(dst, floatKey64(f))
	case ClassBool:
		return append(dst, byte(v.n))
	case ClassVarlen:
		if k == String {
			return appendEscaped(dst, v.s)
		}
		return appendEscaped(dst, v.b)
	case ClassUUID:
		return append(dst, v.u[:]...)
	}
	return dst
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

func floatKey32(f float32) uint32 {
	switch {
	case f == 0:
		f = 0
	case f != f:
		f = float32(math.NaN())
	}
	b := math.Float32bits(f)
	if b>>31 != 0 {
		return ^b
	}
	return b | 1<<31
}

func appendEscaped[S string | []byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xff)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
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
	case ClassInt64:
		n := 8
		if k.IsInteger() {
			n = k.Bits() / 8
		}
		if !need(n) {
			return Value{}, nil, corrupt("short", t)
		}
		x := readBE(b, n) ^ 1<<(8*n-1)
		// Sign-extend from 8n bits.
		sh := 64 - 8*n
		return mkInt(t, int64(x<<sh)>>sh), b[n:], nil
	case ClassUint64:
		n := k.Bits() / 8
		if !need(n) {
			return Value{}, nil, corrupt("short", t)
		}
		return mkUint(t, readBE(b, n)), b[n:], nil
	case ClassWide:
		words := 4
		if k.Bits() == 128 {
			words = 2
		}
		if !need(8 * words) {
			return Value{}, nil, corrupt("short", t)
		}
		var w uint256.Int
		for i := 0; i < words; i++ {
			w[words-1-i] = binary.BigEndian.Uint64(b[8*i:])
		}
		if k.IsSigned() || k == Decimal {
			w[words-1] ^= 1 << 63
			if words == 2 && wideNeg128(&w) {
				w[2], w[3] = ^uint64(0), ^uint64(0)
			}
		}
		if k == Decimal {
			n := signedNum(&w)
			if !fitsDecimal(t.Precision, &n.mag) {
				return Value{}, nil, corrupt("out-of-range", t)
			}
		}
		return mkWide(t, w), b[8*words:], nil
	case ClassFloat64:
		if k == Float32 {
			if !need(4) {
				return Value{}, nil, corrupt("short", t)
			}
			x := binary.BigEndian.Uint32(b)
			if x>>31 != 0 {
				x &^= 1 << 31
			} else {
				x = ^x
			}
			return mkFloat(t, float64(math.Float32frombits(x))), b[4:], nil
		}
		if !need(8) {
			return Value{}, nil, corrupt("short", t)
		}
		x := binary.BigEndian.Uint64(b)
		if x>>63 != 0 {
			x &^= 1 << 63
		} else {
			x = ^x
		}
		return mkFloat(t, math.Float64frombits(x)), b[8:], nil
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

func wideNeg128(w *uint256.Int) bool { return w[1]>>63 != 0 }

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
