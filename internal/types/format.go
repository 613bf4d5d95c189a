package types

import (
	"math"
	"strconv"
	"time"
)

// AppendText appends v's canonical text (invariant 2), the form the
// conformance scripts print and ParseText reads back: integers in decimal,
// DECIMAL(p,s) with exactly s fractional digits, floats in the shortest form
// that reads back to the same value (PostgreSQL's layout: 'NaN',
// 'Infinity', exponent outside 1e-4 … 1e15), BOOL as true/false, DATE as
// YYYY-MM-DD, DATETIME64 as YYYY-MM-DD HH:MM:SS plus exactly p fractional
// digits in the type's zone without an offset, UUID lowercase 8-4-4-4-12,
// BYTES as \x plus lowercase hex, STRING as is. A NULL appends "NULL"; the
// caller decides how NULL really prints.
func AppendText(dst []byte, v Value) []byte {
	if v.null {
		return append(dst, "NULL"...)
	}
	switch v.t.Kind {
	case Bool:
		if v.Bool() {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Int8, Int16, Int32, Int64:
		return strconv.AppendInt(dst, v.Int64(), 10)
	case Uint8, Uint16, Uint32, Uint64:
		return appendUint(dst, v.n)
	case Int128, Int256, Uint128, Uint256:
		return formatNum(dst, v.num())
	case Decimal:
		return formatDecimal(dst, signedNum(&v.w), v.t.Scale)
	case Float32:
		return appendFloat(dst, v.Float64(), 32)
	case Float64:
		return appendFloat(dst, v.Float64(), 64)
	case String:
		return append(dst, v.s...)
	case Bytes:
		return appendHexBytes(dst, v.b)
	case Date:
		return appendDate(dst, v.Int64())
	case DateTime64:
		return appendDateTime(dst, v.Int64(), v.t)
	case UUID:
		return appendUUID(dst, &v.u)
	case Interval:
		m, d, us := v.Interval()
		return appendInterval(dst, m, d, us)
	}
	return dst
}

// String returns v's canonical text; "NULL" for a NULL.
func (v Value) String() string { return string(AppendText(nil, v)) }

// formatNum appends an exact integer in decimal.
func formatNum(dst []byte, n num) []byte {
	if n.neg {
		dst = append(dst, '-')
	}
	return appendMag(dst, &n.mag)
}

// formatDecimal appends the unscaled integer n with scale fractional digits.
func formatDecimal(dst []byte, n num, scale uint8) []byte {
	if n.neg {
		dst = append(dst, '-')
	}
	if scale == 0 {
		return appendMag(dst, &n.mag)
	}
	var buf [80]byte
	digits := appendMag(buf[:0], &n.mag)
	s := int(scale)
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for i := len(digits); i < s; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-s]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-s:]...)
}

// appendFloat appends f as PostgreSQL's float4out/float8out would with
// extra_float_digits at its default: shortest round-trip digits, exponent
// form when the decimal exponent is below -4 or at least FLT_DIG/DBL_DIG.
func appendFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	var buf [40]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize)
	exp, i := 0, len(e)-1
	for e[i] != 'e' {
		i--
	}
	for _, c := range e[i+2:] {
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		exp = -exp
	}
	limit := 15
	if bitSize == 32 {
		limit = 6
	}
	if exp < -4 || exp >= limit {
		return append(dst, e...)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, bitSize)
}

const hexDigits = "0123456789abcdef"

func appendHexBytes(dst, b []byte) []byte {
	dst = append(dst, '\\', 'x')
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

func appendUUID(dst []byte, u *[16]byte) []byte {
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// appendYMD appends year-month-day, the year zero-padded to four digits.
func appendYMD(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	if y >= 0 && y <= 9999 {
		dst = appendPadded(dst, uint64(y), 4)
	} else {
		dst = strconv.AppendInt(dst, y, 10)
	}
	dst = append(dst, '-')
	dst = appendPadded(dst, uint64(m), 2)
	dst = append(dst, '-')
	return appendPadded(dst, uint64(d), 2)
}

func appendDate(dst []byte, days int64) []byte { return appendYMD(dst, days) }

// appendDateTime appends ticks of type t in t's zone.
func appendDateTime(dst []byte, ticks int64, t Type) []byte {
	p := int(t.Precision)
	sec, frac := splitTicks(ticks, p)
	sec += zoneOffset(t, sec)
	days, sod := floorDiv(sec, 86400)
	dst = appendYMD(dst, days)
	dst = append(dst, ' ')
	dst = appendPadded(dst, uint64(sod/3600), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, uint64(sod/60%60), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, uint64(sod%60), 2)
	if p > 0 {
		dst = append(dst, '.')
		dst = appendPadded(dst, uint64(frac), p)
	}
	return dst
}

// zoneOffset returns the offset in seconds east of UTC of t's zone at the
// instant sec (Unix seconds).
func zoneOffset(t Type, sec int64) int64 {
	if t.TZ == "" || t.TZ == "UTC" {
		return 0
	}
	_, off := time.Unix(sec, 0).In(t.Location()).Zone()
	return int64(off)
}
