package types

import (
	"math"
	"math/bits"
	"time"

	"github.com/holiman/uint256"
)

// Class is the physical representation of a kind: which Go type holds its
// values in a Value and which backing slice holds them in a Vector.
type Class uint8

// The physical classes (invariant 4 of the package doc).
const (
	// ClassNone is the class of Invalid and Unknown: no value but NULL.
	ClassNone Class = iota
	// ClassInt64 holds INT8…INT64, DATE (days since 1970-01-01) and
	// DATETIME64 (ticks of 10^-p s since the epoch, UTC).
	ClassInt64
	// ClassUint64 holds UINT8…UINT64.
	ClassUint64
	// ClassWide holds INT128, INT256, UINT128, UINT256 and DECIMAL's
	// unscaled integer; signed ones in two's complement.
	ClassWide
	// ClassFloat64 holds FLOAT32 (rounded to float32) and FLOAT64.
	ClassFloat64
	// ClassBool holds BOOL.
	ClassBool
	// ClassVarlen holds STRING and BYTES.
	ClassVarlen
	// ClassUUID holds UUID as 16 bytes in network order.
	ClassUUID
)

var kindClass = [numKinds]Class{
	Bool: ClassBool,
	Int8: ClassInt64, Int16: ClassInt64, Int32: ClassInt64, Int64: ClassInt64,
	Int128: ClassWide, Int256: ClassWide,
	Uint8: ClassUint64, Uint16: ClassUint64, Uint32: ClassUint64, Uint64: ClassUint64,
	Uint128: ClassWide, Uint256: ClassWide,
	Float32: ClassFloat64, Float64: ClassFloat64,
	Decimal: ClassWide, String: ClassVarlen, Bytes: ClassVarlen,
	Date: ClassInt64, DateTime64: ClassInt64, UUID: ClassUUID, Interval: ClassWide,
}

// Class returns the physical class of k.
func (k Kind) Class() Class {
	if k < numKinds {
		return kindClass[k]
	}
	return ClassNone
}

// Value is one scalar of a column type, or NULL. It holds no interface and
// allocates nothing of its own: numbers up to 64 bits share one word, wide
// numbers sit inline as a uint256.Int. Values are compared with Compare or
// Equal, never with ==.
type Value struct {
	t    Type
	null bool
	// n holds the int64, uint64, float64 bits or bool (0/1) of the narrow
	// classes.
	n uint64
	w uint256.Int
	s string
	b []byte
	u [16]byte
}

// Null returns the NULL of type t.
func Null(t Type) Value { return Value{t: t, null: true} }

// NewBool returns a BOOL.
func NewBool(b bool) Value {
	v := Value{t: Of(Bool)}
	if b {
		v.n = 1
	}
	return v
}

// NewInt64 returns an INT64.
func NewInt64(x int64) Value { return Value{t: Of(Int64), n: uint64(x)} }

// NewUint64 returns a UINT64.
func NewUint64(x uint64) Value { return Value{t: Of(Uint64), n: x} }

// NewFloat64 returns a FLOAT64.
func NewFloat64(f float64) Value { return Value{t: Of(Float64), n: math.Float64bits(f)} }

// NewFloat32 returns a FLOAT32.
func NewFloat32(f float32) Value {
	return Value{t: Of(Float32), n: math.Float64bits(float64(f))}
}

// NewString returns a STRING. It does not check UTF-8; ParseText does.
func NewString(s string) Value { return Value{t: Of(String), s: s} }

// NewBytes returns a BYTES holding b itself, not a copy: the caller must not
// modify b afterwards.
func NewBytes(b []byte) Value { return Value{t: Of(Bytes), b: b} }

// NewUUID returns a UUID.
func NewUUID(u [16]byte) Value { return Value{t: Of(UUID), u: u} }

// NewDate returns the DATE days after 1970-01-01 (before it if negative).
func NewDate(days int64) Value { return Value{t: Of(Date), n: uint64(days)} }

// NewDateTime64 returns the DATETIME64 of type t (which must be of kind
// DateTime64) that is ticks of 10^-t.Precision seconds after the epoch.
func NewDateTime64(t Type, ticks int64) Value { return Value{t: t, n: uint64(ticks)} }

// NewInt returns x as a value of the signed or unsigned integer type t, or a
// RangeError if t does not hold it.
func NewInt(t Type, x int64) (Value, error) {
	return fromNum(t, int64Num(x), nil)
}

// NewUint returns x as a value of the integer type t, or a RangeError.
func NewUint(t Type, x uint64) (Value, error) {
	return fromNum(t, num{mag: uint256.Int{x}}, nil)
}

// NewWide returns the value of a wide type t (INT128, INT256, UINT128,
// UINT256, or DECIMAL whose unscaled integer w is) from its two's complement
// (signed kinds) or plain (unsigned kinds) bits, or a RangeError if t does
// not hold it.
func NewWide(t Type, w uint256.Int) (Value, error) {
	switch {
	case t.Kind == Decimal:
		n := signedNum(&w)
		if !fitsDecimal(t.Precision, &n.mag) {
			return Value{}, &RangeError{Type: t, Value: string(formatDecimal(nil, n, t.Scale))}
		}
		return Value{t: t, w: w}, nil
	case t.Kind.IsUnsigned():
		return fromNum(t, num{mag: w}, nil)
	case t.Kind.IsSigned():
		return fromNum(t, signedNum(&w), nil)
	}
	return Value{}, &CastError{From: Of(Uint256), To: t}
}

// NewDecimal returns the DECIMAL of type t whose unscaled integer is x, i.e.
// x × 10^-t.Scale, or a RangeError if it has more than t.Precision digits.
func NewDecimal(t Type, x int64) (Value, error) {
	n := int64Num(x)
	return NewWide(t, n.twos())
}

// FromTime returns the DATE or DATETIME64 of type t at instant tm, truncated
// to the type's precision. A DATE takes tm's calendar day in tm's own
// location, so callers pick the zone with tm.In.
func FromTime(t Type, tm time.Time) (Value, error) {
	switch t.Kind {
	case Date:
		y, m, d := tm.Date()
		return checkedTime(NewDate(daysFromCivil(int64(y), int(m), d)), "")
	case DateTime64:
		sec := tm.Unix()
		p := int(t.Precision)
		frac := int64(tm.Nanosecond()) / int64(pow10u[9-p])
		ticks, ok := secTicks(sec, p, frac)
		if !ok {
			return Value{}, &RangeError{Type: t, Value: tm.Format("2006-01-02 15:04:05.999999999"), Reason: "timestamp out of range"}
		}
		return checkedTime(NewDateTime64(t, ticks), "")
	}
	return Value{}, &CastError{From: Of(DateTime64), To: t}
}

// secTicks returns sec × 10^p + frac, reporting int64 overflow.
func secTicks(sec int64, p int, frac int64) (int64, bool) {
	m := int64(pow10u[p])
	if sec < 0 && frac > 0 {
		// Borrow a second, so that sec × m is not past the range when
		// the sum is in it (1677-09-21 00:12:43.145224192 at p = 9).
		sec, frac = sec+1, frac-m
	}
	hi, lo := bits.Mul64(uint64(absInt(sec)), uint64(m))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	t := int64(lo)
	if sec < 0 {
		t = -t
	}
	r := t + frac
	if (frac > 0 && r < t) || (frac < 0 && r > t) {
		return 0, false
	}
	return r, true
}

func absInt(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// mkInt, mkUint, mkWide and mkFloat build a non-null value without checks,
// for this package's own use after a range check.
func mkInt(t Type, x int64) Value   { return Value{t: t, n: uint64(x)} }
func mkUint(t Type, x uint64) Value { return Value{t: t, n: x} }
func mkWide(t Type, w uint256.Int) Value {
	return Value{t: t, w: w}
}
func mkFloat(t Type, f float64) Value {
	if t.Kind == Float32 {
		f = float64(float32(f))
	}
	return Value{t: t, n: math.Float64bits(f)}
}

// fromNum returns n as a value of integer type t, or a RangeError naming
// written (or n's digits when written is nil).
func fromNum(t Type, n num, written *string) (Value, error) {
	if !t.Kind.IsInteger() {
		return Value{}, &CastError{From: Of(Int256), To: t}
	}
	if !fitsInt(t.Kind, &n) {
		s := ""
		if written != nil {
			s = *written
		} else {
			s = string(formatNum(nil, n))
		}
		return Value{}, &RangeError{Type: t, Value: s}
	}
	return numValue(t, n), nil
}

// numValue stores n, which fits t, as a value of integer type t.
func numValue(t Type, n num) Value {
	switch t.Kind.Class() {
	case ClassInt64:
		x := int64(n.mag[0])
		if n.neg {
			x = -x
		}
		return mkInt(t, x)
	case ClassUint64:
		return mkUint(t, n.mag[0])
	}
	if t.Kind.IsSigned() {
		return mkWide(t, n.twos())
	}
	return mkWide(t, n.mag)
}

// Type returns the value's type.
func (v Value) Type() Type { return v.t }

// Kind returns the kind of the value's type.
func (v Value) Kind() Kind { return v.t.Kind }

// IsNull reports whether the value is NULL.
func (v Value) IsNull() bool { return v.null }

// Bool returns a BOOL's value.
func (v Value) Bool() bool { return v.n != 0 }

// Int64 returns the value of a ClassInt64 kind: a signed integer of at most
// 64 bits, a DATE's days or a DATETIME64's ticks.
func (v Value) Int64() int64 { return int64(v.n) }

// Uint64 returns the value of an unsigned integer of at most 64 bits.
func (v Value) Uint64() uint64 { return v.n }

// Float64 returns a float's value.
func (v Value) Float64() float64 { return math.Float64frombits(v.n) }

// Wide returns a wide value's bits: INT128/INT256 and DECIMAL's unscaled
// integer in two's complement, UINT128/UINT256 plain.
func (v Value) Wide() uint256.Int { return v.w }

// Str returns a STRING's text.
func (v Value) Str() string { return v.s }

// Bytes returns a BYTES's bytes, shared with the value: do not modify them.
func (v Value) Bytes() []byte { return v.b }

// UUID returns a UUID's 16 bytes.
func (v Value) UUID() [16]byte { return v.u }

// Time returns a DATE (midnight UTC) or DATETIME64 as a time.Time in the
// type's zone.
func (v Value) Time() time.Time {
	switch v.t.Kind {
	case Date:
		return time.Unix(v.Int64()*86400, 0).UTC()
	case DateTime64:
		sec, frac := splitTicks(v.Int64(), int(v.t.Precision))
		return time.Unix(sec, frac*int64(pow10u[9-int(v.t.Precision)])).In(v.t.Location())
	}
	return time.Time{}
}

// splitTicks splits ticks of 10^-p s into whole seconds (floored) and a
// non-negative fraction in ticks.
func splitTicks(ticks int64, p int) (sec, frac int64) {
	m := int64(pow10u[p])
	sec, frac = ticks/m, ticks%m
	if frac < 0 {
		sec--
		frac += m
	}
	return sec, frac
}

// num returns an integer value as a num. The caller has checked the kind.
func (v *Value) num() num {
	switch v.t.Kind.Class() {
	case ClassInt64:
		return int64Num(int64(v.n))
	case ClassUint64:
		return num{mag: uint256.Int{v.n}}
	}
	if v.t.Kind.IsSigned() || v.t.Kind == Decimal {
		return signedNum(&v.w)
	}
	return num{mag: v.w}
}
