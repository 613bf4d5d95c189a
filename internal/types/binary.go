package types

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/holiman/uint256"
)

// Binary encoding: AppendBinary writes a value compactly for WAL records
// and other places that know the type and need no ordering.
//
//	NULL          0x00
//	non-NULL      0x01 then the body:
//	  INT8…INT64, DATE, DATETIME64   zig-zag varint
//	  UINT8…UINT64                   uvarint
//	  INT128, INT256, DECIMAL        one byte sign<<7 | n, then n bytes of
//	                                 the magnitude, big-endian, no leading zeros
//	  UINT128, UINT256               one byte n, then n magnitude bytes
//	  FLOAT32 / FLOAT64              4 / 8 bytes of IEEE bits, little-endian
//	  BOOL                           0x00 or 0x01
//	  STRING, BYTES                  uvarint length, then the bytes
//	  UUID                           the 16 bytes
//
// Unlike the key encoding it keeps -0 and NaN payloads.

// AppendBinary appends the compact encoding of v.
func AppendBinary(dst []byte, v Value) []byte {
	if v.null {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	k := v.t.Kind
	switch k.Class() {
	case ClassInt64:
		return binary.AppendVarint(dst, int64(v.n))
	case ClassUint64:
		return binary.AppendUvarint(dst, v.n)
	case ClassWide:
		return appendWideBinary(dst, k, &v.w)
	case ClassFloat64:
		if k == Float32 {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v.Float64())))
		}
		return binary.LittleEndian.AppendUint64(dst, v.n)
	case ClassBool:
		return append(dst, byte(v.n))
	case ClassVarlen:
		if k == String {
			dst = binary.AppendUvarint(dst, uint64(len(v.s)))
			return append(dst, v.s...)
		}
		dst = binary.AppendUvarint(dst, uint64(len(v.b)))
		return append(dst, v.b...)
	case ClassUUID:
		return append(dst, v.u[:]...)
	}
	return dst
}

// appendWideBinary appends the body of a wide value's encoding: a header
// byte (sign bit, byte count) and the magnitude's significant bytes.
func appendWideBinary(dst []byte, k Kind, w *uint256.Int) []byte {
	n := num{mag: *w}
	if k.IsSigned() || k == Decimal {
		n = signedNum(w)
	}
	nb := (n.mag.BitLen() + 7) / 8
	hdr := byte(nb)
	if n.neg {
		hdr |= 0x80
	}
	dst = append(dst, hdr)
	var buf [32]byte
	n.mag.WriteToArray32(&buf)
	return append(dst, buf[32-nb:]...)
}

// AppendBinaryColumn appends the AppendBinary encoding of rows [0, n) of
// vec, byte for byte what AppendBinary of each row would append, reading
// the backing slice directly instead of building a Value per row.
func AppendBinaryColumn(dst []byte, vec *Vector, n int) []byte {
	for i := range n {
		dst = AppendBinaryAt(dst, vec, i)
	}
	return dst
}

// AppendBinaryAt appends the AppendBinary encoding of row i of vec.
func AppendBinaryAt(dst []byte, vec *Vector, i int) []byte {
	if vec.IsNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	k := vec.t.Kind
	switch k.Class() {
	case ClassInt64:
		return binary.AppendVarint(dst, vec.i64[i])
	case ClassUint64:
		return binary.AppendUvarint(dst, vec.u64[i])
	case ClassWide:
		return appendWideBinary(dst, k, &vec.wide[i])
	case ClassFloat64:
		if k == Float32 {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(vec.f64[i])))
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(vec.f64[i]))
	case ClassBool:
		if vec.bools[i] {
			return append(dst, 1)
		}
		return append(dst, 0)
	case ClassVarlen:
		b := vec.BytesAt(i)
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	case ClassUUID:
		return append(dst, vec.uuids[i][:]...)
	}
	return dst
}

func corruptBinary(what string, t Type) error {
	return fmt.Errorf("%w: %s value of %s", ErrCorrupt, what, t)
}

// DecodeBinary reads one AppendBinary encoding of type t from the front of b
// and returns the value and the rest. A value that does not fit t, or
// truncated input, is an error wrapping ErrCorrupt.
func DecodeBinary(t Type, b []byte) (Value, []byte, error) {
	if len(b) == 0 {
		return Value{}, nil, corruptBinary("empty", t)
	}
	switch b[0] {
	case 0:
		return Null(t), b[1:], nil
	case 1:
	default:
		return Value{}, nil, corruptBinary("bad marker in", t)
	}
	b = b[1:]
	k := t.Kind
	switch k.Class() {
	case ClassInt64:
		x, n := binary.Varint(b)
		if n <= 0 {
			return Value{}, nil, corruptBinary("bad varint in", t)
		}
		if b := k.Bits(); k.IsInteger() && b < 64 && (x < -1<<(b-1) || x >= 1<<(b-1)) {
			return Value{}, nil, corruptBinary("out-of-range", t)
		}
		return mkInt(t, x), b[n:], nil
	case ClassUint64:
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return Value{}, nil, corruptBinary("bad varint in", t)
		}
		if b := k.Bits(); b < 64 && x>>b != 0 {
			return Value{}, nil, corruptBinary("out-of-range", t)
		}
		return mkUint(t, x), b[n:], nil
	case ClassWide:
		if len(b) == 0 {
			return Value{}, nil, corruptBinary("short", t)
		}
		neg, nb := b[0]&0x80 != 0, int(b[0]&0x7f)
		if nb > 32 || len(b) < 1+nb {
			return Value{}, nil, corruptBinary("short", t)
		}
		var m uint256.Int
		m.SetBytes(b[1 : 1+nb])
		n := num{neg: neg && !m.IsZero(), mag: m}
		rest := b[1+nb:]
		if k == Decimal {
			if n.neg != neg || !fitsDecimal(t.Precision, &m) {
				return Value{}, nil, corruptBinary("out-of-range", t)
			}
			return mkWide(t, n.twos()), rest, nil
		}
		if n.neg != neg || !fitsInt(k, &n) {
			return Value{}, nil, corruptBinary("out-of-range", t)
		}
		return numValue(t, n), rest, nil
	case ClassFloat64:
		if k == Float32 {
			if len(b) < 4 {
				return Value{}, nil, corruptBinary("short", t)
			}
			return mkFloat(t, float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))), b[4:], nil
		}
		if len(b) < 8 {
			return Value{}, nil, corruptBinary("short", t)
		}
		return Value{t: t, n: binary.LittleEndian.Uint64(b)}, b[8:], nil
	case ClassBool:
		if len(b) < 1 || b[0] > 1 {
			return Value{}, nil, corruptBinary("bad", t)
		}
		return Value{t: t, n: uint64(b[0])}, b[1:], nil
	case ClassVarlen:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return Value{}, nil, corruptBinary("short", t)
		}
		body := b[n : n+int(l)]
		if k == String {
			return Value{t: t, s: string(body)}, b[n+int(l):], nil
		}
		return Value{t: t, b: append([]byte(nil), body...)}, b[n+int(l):], nil
	case ClassUUID:
		if len(b) < 16 {
			return Value{}, nil, corruptBinary("short", t)
		}
		var u [16]byte
		copy(u[:], b)
		return Value{t: t, u: u}, b[16:], nil
	}
	return Value{}, nil, corruptBinary("unsupported", t)
}

// DecodeBinaryTo decodes one value of vec's type from b, as DecodeBinary
// does, appends it to vec and returns the rest of b. A STRING or BYTES
// value is copied from b into the vector's buffer directly: going through
// a Value would allocate a string or slice per value, which a flush of
// millions of rows pays for in garbage collection.
func DecodeBinaryTo(vec *Vector, b []byte) ([]byte, error) {
	// The common classes are decoded straight into the backing slice; a
	// value that fails a check goes through DecodeBinary for its error.
	if len(b) > 0 {
		switch b[0] {
		case 0:
			vec.AppendNull()
			return b[1:], nil
		case 1:
			if rest, ok := decodeBinaryFast(vec, b[1:]); ok {
				return rest, nil
			}
		}
	}
	v, rest, err := DecodeBinary(vec.Type(), b)
	if err != nil {
		return nil, err
	}
	vec.Append(v)
	return rest, nil
}

// decodeBinaryFast appends the non-NULL value encoded at the front of b
// to vec when its class has a direct path and the value passes
// DecodeBinary's checks, and reports whether it did.
func decodeBinaryFast(vec *Vector, b []byte) ([]byte, bool) {
	k := vec.t.Kind
	switch k.Class() {
	case ClassInt64:
		x, n := binary.Varint(b)
		if n <= 0 {
			return nil, false
		}
		if bits := k.Bits(); k.IsInteger() && bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
			return nil, false
		}
		vec.AppendInt64(x)
		return b[n:], true
	case ClassUint64:
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, false
		}
		if bits := k.Bits(); bits < 64 && x>>bits != 0 {
			return nil, false
		}
		vec.AppendUint64(x)
		return b[n:], true
	case ClassFloat64:
		if k == Float32 || len(b) < 8 {
			return nil, false
		}
		vec.AppendFloat64(math.Float64frombits(binary.LittleEndian.Uint64(b)))
		return b[8:], true
	case ClassBool:
		if len(b) < 1 || b[0] > 1 {
			return nil, false
		}
		vec.AppendBool(b[0] == 1)
		return b[1:], true
	case ClassVarlen:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, false
		}
		vec.AppendBytes(b[n : n+int(l)])
		return b[n+int(l):], true
	case ClassWide:
		// Non-negative integers only (balances, indexes): a sign bit, a
		// DECIMAL, an INTERVAL or a value out of range takes DecodeBinary's path.
		if len(b) == 0 || b[0]&0x80 != 0 || !k.IsInteger() {
			return nil, false
		}
		nb := int(b[0])
		if nb > 32 || len(b) < 1+nb {
			return nil, false
		}
		var m uint256.Int
		m.SetBytes(b[1 : 1+nb])
		bits := k.Bits()
		if k.IsSigned() {
			bits--
		}
		if bits < 256 && m.BitLen() > bits {
			return nil, false
		}
		vec.AppendWide(&m)
		return b[1+nb:], true
	}
	return nil, false
}
