package types

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strings"

	"github.com/holiman/uint256"
)

// Compare orders two values (invariant 5): -1 if a sorts before b, 0 if
// they are equal, +1 after. NULL sorts after every non-null value and equals
// NULL (PostgreSQL's ASC default). Values of one type compare by their
// natural order: numbers numerically, strings and bytes bytewise, BOOL false
// first, UUIDs by their bytes. Numbers of different kinds compare exactly —
// an INT64 against a UINT256, a DECIMAL against an integer or a DECIMAL of
// another scale — never through float64 (only a non-integral float against
// a DECIMAL compares the fractional parts in float64). For floats NaN is
// greater than every number and equal to itself, and -0 equals 0. A DATE
// against a DATETIME64 compares as midnight in the DATETIME64's zone.
// Values of unrelated kinds (a BOOL and a STRING) order by kind, so that the
// order stays total; the binder never asks for that.
func Compare(a, b Value) int {
	if a.null || b.null {
		switch {
		case a.null && b.null:
			return 0
		case a.null:
			return 1
		}
		return -1
	}
	if a.t.Kind == b.t.Kind {
		switch a.t.Kind.Class() {
		case ClassInt64:
			if a.t.Kind != DateTime64 || a.t.Precision == b.t.Precision {
				return cmpInt64(int64(a.n), int64(b.n))
			}
		case ClassUint64:
			return cmpUint64(a.n, b.n)
		case ClassWide:
			switch {
			case a.t.Kind == Interval:
				return cmpSpan(&a, &b)
			case a.t.Kind.IsUnsigned():
				return a.w.Cmp(&b.w)
			case a.t.Kind != Decimal || a.t.Scale == b.t.Scale:
				return cmpSigned(&a.w, &b.w)
			}
		case ClassFloat64:
			return cmpFloat(a.Float64(), b.Float64())
		case ClassBool:
			return cmpUint64(a.n, b.n)
		case ClassVarlen:
			if a.t.Kind == String {
				return strings.Compare(a.s, b.s)
			}
			return bytes.Compare(a.b, b.b)
		case ClassUUID:
			return bytes.Compare(a.u[:], b.u[:])
		}
	}
	return compareMixed(&a, &b)
}

// Equal reports whether Compare(a, b) == 0. Two NULLs are equal here (IS
// NOT DISTINCT FROM, what GROUP BY and DISTINCT need); joins and = test for
// NULL themselves.
func Equal(a, b Value) bool { return Compare(a, b) == 0 }

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpSigned orders two's complement 256-bit integers.
func cmpSigned(a, b *uint256.Int) int {
	const sign = 1 << 63
	if a[3] != b[3] {
		return cmpUint64(a[3]^sign, b[3]^sign)
	}
	return a.Cmp(b)
}

// cmpFloat orders floats with NaN last and equal to itself.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	}
	return -1
}

// compareMixed handles everything but two values of one kind and layout.
func compareMixed(a, b *Value) int {
	ka, kb := a.t.Kind, b.t.Kind
	switch {
	case ka.IsNumeric() && kb.IsNumeric():
		return compareNumeric(a, b)
	case (ka == Date || ka == DateTime64) && (kb == Date || kb == DateTime64):
		at, bt := timeParts(a, b), timeParts(b, a)
		if c := cmpInt64(at.sec, bt.sec); c != 0 {
			return c
		}
		return cmpInt64(at.frac, bt.frac)
	}
	return cmpInt64(int64(ka), int64(kb))
}

type timePart struct{ sec, frac int64 }

// timeParts returns v as seconds and nanoseconds; a DATE is midnight in the
// zone of other when other is a DATETIME64.
func timeParts(v, other *Value) timePart {
	if v.t.Kind == Date {
		sec := int64(v.n) * 86400
		if other.t.Kind == DateTime64 {
			sec -= zoneOffset(other.t, sec)
		}
		return timePart{sec: sec}
	}
	p := int(v.t.Precision)
	sec, frac := splitTicks(int64(v.n), p)
	return timePart{sec: sec, frac: frac * int64(pow10u[9-p])}
}

// exact is a number as sign, magnitude and decimal scale.
type exact struct {
	n     num
	scale int
}

func exactOf(v *Value) exact {
	if v.t.Kind == Decimal {
		return exact{n: signedNum(&v.w), scale: int(v.t.Scale)}
	}
	return exact{n: v.num()}
}

func compareNumeric(a, b *Value) int {
	af, bf := a.t.Kind.IsFloat(), b.t.Kind.IsFloat()
	switch {
	case af && bf:
		return cmpFloat(a.Float64(), b.Float64())
	case af:
		return cmpFloatExact(a.Float64(), exactOf(b))
	case bf:
		return -cmpFloatExact(b.Float64(), exactOf(a))
	}
	if a.t.Kind != Decimal && b.t.Kind != Decimal {
		an, bn := a.num(), b.num()
		return cmpNum(&an, &bn)
	}
	return cmpExact(exactOf(a), exactOf(b))
}

// cmpExact orders two scaled numbers exactly: integer parts first, then the
// fractions aligned to the larger scale (both below 10^76, so no overflow).
func cmpExact(a, b exact) int {
	if a.n.neg != b.n.neg {
		if a.n.neg {
			return -1
		}
		return 1
	}
	c := cmpMagScaled(&a.n.mag, a.scale, &b.n.mag, b.scale)
	if a.n.neg {
		return -c
	}
	return c
}

func cmpMagScaled(a *uint256.Int, as int, b *uint256.Int, bs int) int {
	if as == bs {
		return a.Cmp(b)
	}
	var qa, ra, qb, rb uint256.Int
	qa.DivMod(a, &pow10[as], &ra)
	qb.DivMod(b, &pow10[bs], &rb)
	if c := qa.Cmp(&qb); c != 0 {
		return c
	}
	s := max(as, bs)
	ra.Mul(&ra, &pow10[s-as])
	rb.Mul(&rb, &pow10[s-bs])
	return ra.Cmp(&rb)
}

// cmpFloatExact orders a float against an exact number: the integer parts
// exactly, the fractional parts in float64.
func cmpFloatExact(f float64, e exact) int {
	if math.IsNaN(f) {
		return 1
	}
	if f == 0 {
		f = 0 // -0 is zero
	}
	fneg := f < 0
	if fneg != e.n.neg {
		if fneg {
			return -1
		}
		if f == 0 && e.n.mag.IsZero() {
			return 0
		}
		return 1
	}
	c := cmpMagFloat(math.Abs(f), &e.n.mag, e.scale)
	if fneg {
		return -c
	}
	return c
}

func cmpMagFloat(f float64, mag *uint256.Int, scale int) int {
	if math.IsInf(f, 0) {
		return 1
	}
	ip := math.Trunc(f)
	fm, ok := floatMag(ip)
	if !ok {
		return 1
	}
	var q, r uint256.Int
	q.DivMod(mag, &pow10[scale], &r)
	if c := fm.Cmp(&q); c != 0 {
		return c
	}
	ff := f - ip
	rf := 0.0
	if scale > 0 {
		rf = magFloat(&r) / math.Pow(10, float64(scale))
	}
	return cmpFloat(ff, rf)
}

// floatMag returns the integral, non-negative float f exactly as a
// magnitude, or false if it is 2^256 or more.
func floatMag(f float64) (uint256.Int, bool) {
	if f < 1<<63 {
		return uint256.Int{uint64(f)}, true
	}
	b := math.Float64bits(f)
	e := int((b>>52)&0x7ff) - 1075
	m := b&(1<<52-1) | 1<<52
	if 53+e > 256 {
		return uint256.Int{}, false
	}
	var z uint256.Int
	z.Lsh(&uint256.Int{m}, uint(e))
	return z, true
}

// Hash returns a hash of v consistent with Equal (invariant 6): equal values
// of one type hash alike, and so do equal integral numbers of any numeric
// kinds (INT64 5, UINT256 5, DECIMAL 5.00 and FLOAT64 5.0). Non-integral
// DECIMAL and float values, and DATE against DATETIME64, hash alike only
// within one type; operators cast both sides to their Common type first.
func Hash(seed uint64, v Value) uint64 {
	if v.null {
		return fmix(seed ^ 0x6e756c6c)
	}
	switch v.t.Kind.Class() {
	case ClassInt64:
		switch v.t.Kind {
		case Date:
			return fmix(mix(seed^tagDate, v.n))
		case DateTime64:
			sec, frac := splitTicks(int64(v.n), int(v.t.Precision))
			return fmix(mix(mix(seed^tagTime, uint64(sec)), uint64(frac)*pow10u[9-int(v.t.Precision)]))
		}
		return hashInt64(seed, int64(v.n))
	case ClassUint64:
		if v.n < 1<<63 {
			return hashInt64(seed, int64(v.n))
		}
		return hashNum(seed, num{mag: uint256.Int{v.n}})
	case ClassWide:
		if v.t.Kind == Interval {
			return fmix(mix(mix(seed^tagInterval, v.w[2]), v.w[3]))
		}
		if v.t.Kind == Decimal {
			return hashDecimal(seed, signedNum(&v.w), int(v.t.Scale))
		}
		if v.t.Kind.IsUnsigned() {
			return hashMag(seed, false, &v.w)
		}
		n := signedNum(&v.w)
		return hashMag(seed, n.neg, &n.mag)
	case ClassFloat64:
		return hashFloat(seed, v.Float64())
	case ClassBool:
		return fmix(mix(seed^tagBool, v.n))
	case ClassVarlen:
		if v.t.Kind == String {
			return hashString(seed^tagString, v.s)
		}
		return hashBytes(seed^tagBytes, v.b)
	case ClassUUID:
		return fmix(mix(mix(seed^tagUUID, binary.LittleEndian.Uint64(v.u[:8])), binary.LittleEndian.Uint64(v.u[8:])))
	}
	return fmix(seed)
}

const (
	tagInt      = 0x1f3a5c7e9b2d4f61
	tagBig      = 0x2b4d6f8192a3c5e7
	tagDec      = 0x3c5e7091b2d4f617
	tagFloat    = 0x4d6f8193a4c5e7f9
	tagBool     = 0x5e7f91a3b5c7d9eb
	tagString   = 0x6f8193a5b7c9dbed
	tagBytes    = 0x7f91a3b5c7d9ebfd
	tagUUID     = 0x81a3b5c7d9ebfd0f
	tagDate     = 0x93b5c7d9ebfd0f21
	tagInterval = 0x5f1c3a7e9b2d4c61
	tagTime     = 0xa5c7d9ebfd0f2133
)

// mix folds one word into h (a multiply-rotate step in the style of
// wyhash/FNV); fmix is murmur3's finalizer, so every input bit reaches every
// output bit.
func mix(h, x uint64) uint64 {
	h ^= x
	h *= 0x9e3779b97f4a7c15
	return bits.RotateLeft64(h, 31) * 0xbf58476d1ce4e5b9
}

func fmix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func hashInt64(seed uint64, x int64) uint64 { return fmix(mix(seed^tagInt, uint64(x))) }

// hashNum hashes an exact integer; ones that fit an int64 hash as hashInt64.
func hashNum(seed uint64, n num) uint64 { return hashMag(seed, n.neg, &n.mag) }

func hashMag(seed uint64, neg bool, m *uint256.Int) uint64 {
	if m[1]|m[2]|m[3] == 0 {
		if !neg && m[0] < 1<<63 {
			return hashInt64(seed, int64(m[0]))
		}
		if neg && m[0] <= 1<<63 {
			return hashInt64(seed, -int64(m[0]))
		}
	}
	h := seed ^ tagBig
	if neg {
		h = ^h
	}
	h = mix(mix(mix(mix(h, m[0]), m[1]), m[2]), m[3])
	return fmix(h)
}

// hashDecimal hashes an integral DECIMAL as its integer, any other with
// trailing zeros stripped so that 1.50 (scale 2) and 1.5 (scale 1) agree.
func hashDecimal(seed uint64, n num, scale int) uint64 {
	if scale == 0 {
		return hashNum(seed, n)
	}
	var q, r uint256.Int
	q.DivMod(&n.mag, &pow10[scale], &r)
	if r.IsZero() {
		return hashNum(seed, num{neg: n.neg && !q.IsZero(), mag: q})
	}
	m := n.mag
	for scale > 0 {
		d, rem := divmod64(&m, 10)
		if rem != 0 {
			break
		}
		m = d
		scale--
	}
	h := mix(seed^tagDec, uint64(scale))
	if n.neg {
		h = ^h
	}
	for _, w := range m {
		h = mix(h, w)
	}
	return fmix(h)
}

func hashFloat(seed uint64, f float64) uint64 {
	switch {
	case math.IsNaN(f):
		return fmix(seed ^ tagFloat ^ 0x7ff8)
	case f == math.Trunc(f) && !math.IsInf(f, 0):
		if f >= -(1<<63) && f < 1<<63 {
			return hashInt64(seed, int64(f))
		}
		if m, ok := floatMag(math.Abs(f)); ok {
			return hashNum(seed, num{neg: f < 0, mag: m})
		}
	}
	return fmix(mix(seed^tagFloat, math.Float64bits(f)))
}

func hashString(h uint64, s string) uint64 {
	n := uint64(len(s))
	for len(s) >= 8 {
		h = mix(h, uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24|
			uint64(s[4])<<32|uint64(s[5])<<40|uint64(s[6])<<48|uint64(s[7])<<56)
		s = s[8:]
	}
	var t uint64
	for i := 0; i < len(s); i++ {
		t |= uint64(s[i]) << (8 * i)
	}
	return fmix(mix(mix(h, t), n))
}

func hashBytes(h uint64, b []byte) uint64 {
	n := uint64(len(b))
	for len(b) >= 8 {
		h = mix(h, binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	var t uint64
	for i := 0; i < len(b); i++ {
		t |= uint64(b[i]) << (8 * i)
	}
	return fmix(mix(mix(h, t), n))
}
