package types

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/holiman/uint256"
)

// ParseNumber reads an unsigned SQL numeric literal as the scanner gives it:
// digits, an optional '.', an optional exponent (R2.3). An integer takes the
// smallest of INT64, UINT64, INT128, UINT128, INT256 and UINT256 that holds
// it, so 2^256-1 reads exactly and 2^256 is a RangeError. A literal with a
// '.' and no exponent is an exact DECIMAL(p,s) of the digits written (p ≤
// 76); one with an exponent is a FLOAT64. A negative literal is Neg applied
// to the result; Narrow then gives it the smallest literal type again.
func ParseNumber(text string) (Value, error) {
	intPart, frac, hasDot, expAt, ok := scanNumber(text)
	if !ok {
		return Value{}, &ParseError{Value: text, Type: Of(Float64), Detail: "malformed number"}
	}
	if expAt >= 0 {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return Value{}, &RangeError{Value: text, Type: Of(Float64)}
			}
			return Value{}, &ParseError{Value: text, Type: Of(Float64)}
		}
		if f == 0 && !allZero(intPart) || f == 0 && !allZero(frac) {
			// Too small for FLOAT64: PostgreSQL's float input refuses
			// an underflow rather than reading zero.
			return Value{}, &RangeError{Value: text, Type: Of(Float64)}
		}
		return NewFloat64(f), nil
	}
	intPart = trimZeros(intPart)
	if hasDot {
		s := len(frac)
		p := max(len(intPart)+s, 1)
		t := Type{Kind: Decimal, Precision: uint8(min(p, 255)), Scale: uint8(min(s, 255))}
		if p > MaxDecimalPrecision {
			t = Type{Kind: Decimal, Precision: MaxDecimalPrecision, Scale: uint8(min(s, MaxDecimalPrecision))}
			return Value{}, &RangeError{Value: text, Type: t}
		}
		mag, _ := parseMag(intPart + frac) // at most 76 digits: no overflow
		return mkWide(t, mag), nil
	}
	mag, over := parseMag(intPart)
	if over {
		return Value{}, &RangeError{Value: text, Type: Of(Uint256)}
	}
	return narrowNum(num{mag: mag}), nil
}

// ParseLiteral reads a number literal of SQL text as PostgreSQL does: as
// ParseNumber, except that one with an exponent is exact too (PostgreSQL
// reads 1.5e3 as numeric): a DECIMAL with the digits it spells out
// (1.5e-3 is DECIMAL(4,4) 0.0015), an integer literal when it spells a
// whole number of more than 76 digits (1e76, for a UINT256), and FLOAT64
// only beyond those (1e308, 1e-330, where PostgreSQL's numeric would
// still be exact).
func ParseLiteral(text string) (Value, error) {
	intPart, frac, _, expAt, ok := scanNumber(text)
	if !ok || expAt < 0 {
		return ParseNumber(text)
	}
	exp, err := strconv.Atoi(text[expAt+1:])
	if err != nil || exp > 1000 || exp < -1000 {
		return ParseNumber(text)
	}
	digits := trimZeros(intPart + frac)
	if digits == "" {
		return ParseNumber(text) // zero: 0e5 is 0, as a float reads it
	}
	// The value is digits × 10^shift.
	shift := exp - len(frac)
	if shift >= 0 {
		whole := digits + strings.Repeat("0", shift)
		if len(whole) <= MaxDecimalPrecision {
			mag, _ := parseMag(whole)
			return mkWide(Type{Kind: Decimal, Precision: uint8(len(whole))}, mag), nil
		}
		if mag, over := parseMag(whole); !over && len(whole) <= 78 {
			return narrowNum(num{mag: mag}), nil
		}
		return ParseNumber(text)
	}
	scale := -shift
	p := max(len(digits), scale)
	if p > MaxDecimalPrecision {
		return ParseNumber(text)
	}
	mag, _ := parseMag(digits)
	return mkWide(Type{Kind: Decimal, Precision: uint8(p), Scale: uint8(scale)}, mag), nil
}

// literalKinds are the types an integer literal may take, smallest first.
var literalKinds = [...]Kind{Int64, Uint64, Int128, Uint128, Int256, Uint256}

// narrowNum returns n in the first literal kind that holds it. n fits in
// UINT256 or INT256.
func narrowNum(n num) Value {
	for _, k := range literalKinds {
		if fitsInt(k, &n) {
			return numValue(Of(k), n)
		}
	}
	return numValue(Of(Int256), n) // unreachable for valid n
}

// Narrow returns an integer value in the smallest of INT64, UINT64, INT128,
// UINT128, INT256 and UINT256 that holds it, the way ParseNumber types a
// literal; the binder uses it to fold -(literal). Other values, and NULLs,
// are returned unchanged.
func Narrow(v Value) Value {
	if v.null || !v.t.Kind.IsInteger() {
		return v
	}
	return narrowNum(v.num())
}

// scanNumber splits a numeric literal into its integer digits, fraction
// digits and the index of its exponent marker (-1 when none).
func scanNumber(s string) (intPart, frac string, hasDot bool, expAt int, ok bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart = s[:i]
	if i < len(s) && s[i] == '.' {
		hasDot = true
		i++
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[j:i]
	}
	if intPart == "" && frac == "" {
		return "", "", false, -1, false
	}
	expAt = -1
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		expAt = i
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == j {
			return "", "", false, -1, false
		}
	}
	return intPart, frac, hasDot, expAt, i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

func trimZeros(s string) string {
	i := 0
	for i < len(s) && s[i] == '0' {
		i++
	}
	return s[i:]
}

// trimSpace trims ASCII white space, as PostgreSQL does around numbers,
// booleans, dates and UUIDs.
func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// ParseText reads text — a string literal, a COPY field, a wire parameter in
// text format — as a value of column type t (R2.3, R2.4). Numbers are range
// checked; DATE and DATETIME64 are checked against the calendar; a
// DATETIME64 without an offset is in t's zone, and fractional digits past
// the precision round half up; STRING must be valid UTF-8 and fit VARCHAR(n).
// A wrong value is a *ParseError or *RangeError, never a panic.
func ParseText(t Type, s string) (Value, error) {
	switch t.Kind {
	case String:
		if !utf8.ValidString(s) {
			return Value{}, &ParseError{Value: s, Type: t, Detail: "invalid UTF-8"}
		}
		if t.Len > 0 && len(s) > int(t.Len) && utf8.RuneCountInString(s) > int(t.Len) {
			return Value{}, &RangeError{Value: s, Type: t, Reason: "value too long"}
		}
		return Value{t: t, s: s}, nil
	case Bytes:
		return parseBytes(t, s)
	}
	x := trimSpace(s)
	switch {
	case t.Kind.IsInteger():
		return parseInt(t, s, x)
	case t.Kind.IsFloat():
		return parseFloat(t, s, x)
	}
	switch t.Kind {
	case Decimal:
		return parseDecimal(t, s, x)
	case Bool:
		if b, ok := parseBool(x); ok {
			return NewBool(b), nil
		}
	case Date:
		if days, ok := parseDate(x); ok {
			return checkedTime(Value{t: t, n: uint64(days)}, s)
		}
		// A timestamp's text is a date too, its date part (PostgreSQL's
		// date input ignores the time and any offset after it).
		if days, rest, ok := scanDate(x); ok && (rest[0] == ' ' || rest[0] == 'T') {
			if _, err := parseDateTime(Type{Kind: DateTime64, Precision: 6}, s, x); err == nil {
				return checkedTime(Value{t: t, n: uint64(days)}, s)
			}
		}
	case DateTime64:
		return parseDateTime(t, s, x)
	case UUID:
		if u, ok := parseUUID(x); ok {
			return NewUUID(u), nil
		}
	case Interval:
		return ParseInterval(s, NoField)
	}
	return Value{}, &ParseError{Value: s, Type: t}
}

// parseInt reads an optionally signed run of digits as integer type t.
func parseInt(t Type, orig, x string) (Value, error) {
	neg := false
	d := x
	if len(d) > 0 && (d[0] == '+' || d[0] == '-') {
		neg = d[0] == '-'
		d = d[1:]
	}
	if !allDigits(d) {
		return Value{}, &ParseError{Value: orig, Type: t}
	}
	d = trimZeros(d)
	if len(d) <= 18 && t.Kind.Class() == ClassInt64 {
		var u int64
		for i := 0; i < len(d); i++ {
			u = u*10 + int64(d[i]-'0')
		}
		if neg {
			u = -u
		}
		return fromNumInt64(t, u, x)
	}
	mag, over := parseMag(d)
	if over {
		return Value{}, &RangeError{Value: x, Type: t}
	}
	return fromNum(t, num{neg: neg && !mag.IsZero(), mag: mag}, &x)
}

// fromNumInt64 range-checks x for a ClassInt64 integer type.
func fromNumInt64(t Type, x int64, written string) (Value, error) {
	b := t.Kind.Bits()
	if b < 64 {
		lim := int64(1) << (b - 1)
		if x < -lim || x >= lim {
			return Value{}, &RangeError{Value: written, Type: t}
		}
	}
	return mkInt(t, x), nil
}

func parseFloat(t Type, orig, x string) (Value, error) {
	bitSize := 64
	if t.Kind == Float32 {
		bitSize = 32
	}
	f, err := strconv.ParseFloat(x, bitSize)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return Value{}, &RangeError{Value: x, Type: t}
		}
		return Value{}, &ParseError{Value: orig, Type: t}
	}
	if f == 0 && strings.ContainsAny(strings.SplitN(strings.ToLower(x), "e", 2)[0], "123456789") {
		return Value{}, &RangeError{Value: x, Type: t} // an underflow, as PostgreSQL refuses it
	}
	return mkFloat(t, f), nil
}

// parseDecimal reads [sign] digits [. digits] [e [sign] digits] as DECIMAL
// t, rounding digits past the scale half away from zero.
func parseDecimal(t Type, orig, x string) (Value, error) {
	neg := false
	d := x
	if len(d) > 0 && (d[0] == '+' || d[0] == '-') {
		neg = d[0] == '-'
		d = d[1:]
	}
	intPart, frac, _, expAt, ok := scanNumber(d)
	if !ok {
		return Value{}, &ParseError{Value: orig, Type: t}
	}
	exp := 0
	if expAt >= 0 {
		e, err := strconv.Atoi(d[expAt+1:])
		if err != nil || e > 1000 || e < -1000 {
			// Far beyond any DECIMAL: zero digits are still zero.
			if allZero(intPart) && allZero(frac) {
				return mkWide(t, uint256.Int{}), nil
			}
			if err == nil && e < 0 {
				return mkWide(t, uint256.Int{}), nil
			}
			return Value{}, &RangeError{Value: x, Type: t}
		}
		exp = e
	}
	digits := trimZeros(intPart + frac)
	if digits == "" {
		return mkWide(t, uint256.Int{}), nil
	}
	scale := len(frac) - exp // value = digits × 10^-scale
	var mag uint256.Int
	if drop := scale - int(t.Scale); drop > 0 {
		keep := len(digits) - drop
		if keep < 0 {
			return mkWide(t, uint256.Int{}), nil
		}
		if keep > 77 {
			return Value{}, &RangeError{Value: x, Type: t}
		}
		mag, _ = parseMag(digits[:keep])
		if keep < len(digits) && digits[keep] >= '5' {
			mag.AddUint64(&mag, 1)
		}
	} else {
		if len(digits) > 77 {
			return Value{}, &RangeError{Value: x, Type: t}
		}
		var over bool
		mag, _ = parseMag(digits)
		if mag, over = rescaleUp(&mag, -drop); over {
			return Value{}, &RangeError{Value: x, Type: t}
		}
	}
	if !fitsDecimal(t.Precision, &mag) {
		return Value{}, &RangeError{Value: x, Type: t}
	}
	return mkWide(t, num{neg: neg && !mag.IsZero(), mag: mag}.twos()), nil
}

func allZero(s string) bool { return trimZeros(s) == "" }

// parseBool accepts PostgreSQL's spellings, case-insensitively.
func parseBool(s string) (bool, bool) {
	if len(s) > 5 {
		return false, false
	}
	var buf [5]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch string(buf[:len(s)]) {
	case "true", "t", "yes", "y", "on", "1":
		return true, true
	case "false", "f", "no", "n", "off", "0":
		return false, true
	}
	return false, false
}

// parseDate reads YYYY-MM-DD (month and day may have one digit) with real
// calendar checks. The year has four digits or more: a year past 9999 (or
// year 0) is a date, refused by the caller as out of range (CheckTime)
// rather than as text that is no date at all.
func parseDate(s string) (int64, bool) {
	days, rest, ok := scanDate(s)
	return days, ok && rest == ""
}

// scanDate reads a date prefix of s and returns what follows it.
func scanDate(s string) (days int64, rest string, ok bool) {
	y, s, ok1 := scanInt(s, 4, 9)
	if !ok1 || len(s) == 0 || s[0] != '-' {
		return 0, "", false
	}
	m, s, ok2 := scanInt(s[1:], 1, 2)
	if !ok2 || len(s) == 0 || s[0] != '-' {
		return 0, "", false
	}
	d, s, ok3 := scanInt(s[1:], 1, 2)
	if !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(int64(y), m) {
		return 0, "", false
	}
	return daysFromCivil(int64(y), m, d), s, true
}

// scanInt reads between lo and hi digits at the start of s.
func scanInt(s string, lo, hi int) (int, string, bool) {
	n, i := 0, 0
	for i < len(s) && i < hi && isDigit(s[i]) {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, s[i:], i >= lo
}

// ParseDateTimeFast reads the common text of a DATETIME64 in UTC,
// 'YYYY-MM-DD HH:MM:SS[.fraction]' (or with T), as the ticks ParseText
// would store, without building a Value: a bulk INSERT's timestamps, two
// per row of the balances ingest, took ~65 ns each through ParseText and
// take ~24 here (BenchmarkParseDateTime).
// ok is false for any other text, type or zone, and for text ParseText
// would reject: the caller then runs ParseText, which decides and reports.
func ParseDateTimeFast(t Type, s string) (ticks int64, ok bool) {
	if t.Kind != DateTime64 || t.TZ != "" && t.TZ != "UTC" || len(s) < 19 ||
		s[4] != '-' || s[7] != '-' || s[10] != ' ' && s[10] != 'T' && s[10] != 't' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if s[i]-'0' > 9 {
			return 0, false
		}
	}
	d2 := func(i int) int { return int(s[i]-'0')*10 + int(s[i+1]-'0') }
	y := int64(d2(0)*100 + d2(2))
	m, day, hh, mm, ss := d2(5), d2(8), d2(11), d2(14), d2(17)
	if y == 0 || m < 1 || m > 12 || day < 1 || day > daysIn(y, m) || hh > 23 || mm > 59 || ss > 59 {
		return 0, false
	}
	frac := s[19:]
	if frac != "" {
		if len(frac) < 2 || frac[0] != '.' {
			return 0, false
		}
		frac = frac[1:]
		for i := 0; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, false
			}
		}
	}
	p := int(t.Precision)
	ticksFrac := fracTicks(frac, p)
	sec := daysFromCivil(y, m, day)*86400 + int64(hh*3600+mm*60+ss)
	if ticks, ok = secTicks(sec, p, ticksFrac); !ok {
		return 0, false
	}
	// CheckTime's range: years 1 to 9999 are in it, unless rounding the
	// fraction carries the last second of 9999 into year 10000.
	if y == 9999 && m == 12 && day == 31 && hh == 23 && mm == 59 && ss == 59 {
		sec, _ = splitTicks(ticks, p)
		if days, _ := floorDiv(sec, 86400); days > maxDay {
			return 0, false
		}
	}
	return ticks, true
}

// fracTicks is the fraction's digits frac (after the point) in ticks of
// precision p: its first p digits, the next one rounding half up.
func fracTicks(frac string, p int) int64 {
	var ticks int64
	for i := 0; i < p; i++ {
		ticks *= 10
		if i < len(frac) {
			ticks += int64(frac[i] - '0')
		}
	}
	if len(frac) > p && frac[p] >= '5' {
		ticks++
	}
	return ticks
}

// parseDateTime reads 'YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]][Z|±hh[:mm]]'.
func parseDateTime(t Type, orig, x string) (Value, error) {
	bad := func() (Value, error) { return Value{}, &ParseError{Value: orig, Type: t} }
	days, s, ok := scanDate(x)
	if !ok {
		return bad()
	}
	var hh, mm, ss int
	var frac string
	if len(s) > 0 && (s[0] == ' ' || s[0] == 'T' || s[0] == 't') {
		var ok1, ok2 bool
		if hh, s, ok1 = scanInt(s[1:], 2, 2); !ok1 || len(s) == 0 || s[0] != ':' {
			return bad()
		}
		if mm, s, ok2 = scanInt(s[1:], 2, 2); !ok2 {
			return bad()
		}
		if len(s) > 0 && s[0] == ':' {
			var ok3 bool
			if ss, s, ok3 = scanInt(s[1:], 2, 2); !ok3 {
				return bad()
			}
			if len(s) > 0 && s[0] == '.' {
				i := 1
				for i < len(s) && isDigit(s[i]) {
					i++
				}
				frac, s = s[1:i], s[i:]
				if frac == "" {
					return bad()
				}
			}
		}
		if hh > 23 || mm > 59 || ss > 59 {
			return bad()
		}
	}
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	local := days*86400 + int64(hh*3600+mm*60+ss)
	var utc int64
	switch {
	case s == "Z" || s == "z":
		utc = local
	case len(s) > 0 && (s[0] == '+' || s[0] == '-'):
		oh, r, ok1 := scanInt(s[1:], 2, 2)
		om := 0
		if ok1 && len(r) > 0 {
			if r[0] == ':' {
				r = r[1:]
			}
			var ok2 bool
			if om, r, ok2 = scanInt(r, 2, 2); !ok2 {
				return bad()
			}
		}
		if !ok1 || r != "" || oh > 15 || om > 59 {
			return bad()
		}
		off := int64(oh*3600 + om*60)
		if s[0] == '-' {
			off = -off
		}
		utc = local - off
	case s != "":
		return bad()
	case t.TZ == "" || t.TZ == "UTC":
		utc = local
	default:
		y, m, d := civilFromDays(days)
		utc = WallIn(int(y), time.Month(m), d, hh, mm, ss, 0, t.Location()).Unix()
	}
	p := int(t.Precision)
	ticks, ok := secTicks(utc, p, fracTicks(frac, p))
	if !ok {
		return Value{}, &RangeError{Value: orig, Type: t}
	}
	return checkedTime(Value{t: t, n: uint64(ticks)}, orig)
}

// parseUUID reads 8-4-4-4-12 or 32 hex digits, either case, optionally in
// braces.
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	switch len(s) {
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return u, false
		}
	case 32:
	default:
		return u, false
	}
	j := 0
	for i := 0; i < len(s); {
		if len(s) == 36 && (i == 8 || i == 13 || i == 18 || i == 23) {
			i++ // a hyphen, checked above
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseBytes reads PostgreSQL's hex format \x0a0b, or takes the text as the
// bytes themselves.
func parseBytes(t Type, s string) (Value, error) {
	if len(s) < 2 || s[0] != '\\' || (s[1] != 'x' && s[1] != 'X') {
		return Value{t: t, b: []byte(s)}, nil
	}
	h := s[2:]
	b := make([]byte, 0, len(h)/2)
	for i := 0; i < len(h); {
		if isSpace(h[i]) {
			i++
			continue
		}
		if i+1 >= len(h) {
			return Value{}, &ParseError{Value: s, Type: t, Detail: "odd number of hex digits"}
		}
		hi, ok1 := unhex(h[i])
		lo, ok2 := unhex(h[i+1])
		if !ok1 || !ok2 {
			return Value{}, &ParseError{Value: s, Type: t, Detail: "invalid hex digit"}
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return Value{t: t, b: b}, nil
}

// finite reports whether f is neither NaN nor an infinity, for callers that
// reject those.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
