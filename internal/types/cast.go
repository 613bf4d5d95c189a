package types

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/holiman/uint256"
)

// signedKinds lists the signed integer kinds by width.
var signedKinds = [...]Kind{Int8, Int16, Int32, Int64, Int128, Int256}

// signedFor returns the smallest signed kind of at least b bits, Invalid if
// none.
func signedFor(b int) Kind {
	for _, k := range signedKinds {
		if k.Bits() >= b {
			return k
		}
	}
	return Invalid
}

// intDigits returns how many decimal digits an integer kind's values may
// have, for the DECIMAL that holds them.
func intDigits(k Kind) int {
	switch k {
	case Int8, Uint8:
		return 3
	case Int16, Uint16:
		return 5
	case Int32, Uint32:
		return 10
	case Int64:
		return 19
	case Uint64:
		return 20
	case Int128, Uint128:
		return 39
	}
	return 78
}

// Common returns the smallest type that holds every value of a and of b,
// the type both operands of an operator or both sides of a comparison,
// UNION or CASE are widened to (the widening rule of the package doc).
// Where no type holds both — UINT256 with a signed type, INT256 with
// UINT256, a DECIMAL wider than 76 digits — it returns the nearest type
// (UINT256, INT256, DECIMAL(76, s)) and values that do not fit are range
// errors at run time. It returns false for types with no common type, such
// as BOOL and DATE.
func Common(a, b Type) (Type, bool) {
	if a == b {
		return a, a.Kind != Invalid
	}
	ka, kb := a.Kind, b.Kind
	switch {
	case ka == Unknown:
		return b, kb != Invalid
	case kb == Unknown:
		return a, ka != Invalid
	case ka == kb:
		switch ka {
		case Decimal:
			return commonDecimal(a, b), true
		case DateTime64:
			return Type{Kind: DateTime64, Precision: max(a.Precision, b.Precision), TZ: a.TZ}, true
		case String:
			if a.Len == 0 || b.Len == 0 {
				return Of(String), true
			}
			return Type{Kind: String, Len: max(a.Len, b.Len)}, true
		}
		return a, ka != Invalid
	case ka.IsInteger() && kb.IsInteger():
		return Of(commonInt(ka, kb)), true
	case ka.IsFloat() && kb.IsFloat():
		return Of(Float64), true
	case ka.IsNumeric() && kb.IsNumeric():
		if ka.IsFloat() || kb.IsFloat() {
			return Of(Float64), true
		}
		if ka == Decimal {
			return commonDecimal(a, Type{Kind: Decimal, Precision: uint8(min(intDigits(kb), 76))}), true
		}
		return commonDecimal(Type{Kind: Decimal, Precision: uint8(min(intDigits(ka), 76))}, b), true
	case ka == Date && kb == DateTime64:
		return b, true
	case ka == DateTime64 && kb == Date:
		return a, true
	}
	return Type{}, false
}

func commonInt(a, b Kind) Kind {
	if a.IsSigned() == b.IsSigned() {
		if a.Bits() >= b.Bits() {
			return a
		}
		return b
	}
	s, u := a, b
	if a.IsUnsigned() {
		s, u = b, a
	}
	if u == Uint256 {
		if s == Int256 {
			return Int256
		}
		return Uint256
	}
	return signedFor(max(2*u.Bits(), s.Bits()))
}

// commonDecimal keeps the larger integer part and the larger scale, at most
// 76 digits in all.
func commonDecimal(a, b Type) Type {
	s := max(int(a.Scale), int(b.Scale))
	ip := max(int(a.Precision)-int(a.Scale), int(b.Precision)-int(b.Scale))
	p := min(ip+s, MaxDecimalPrecision)
	return Type{Kind: Decimal, Precision: uint8(max(p, 1)), Scale: uint8(min(s, p))}
}

// Cast converts v to type to, as CAST and the implicit widening do:
// numbers to numbers with range checks (a DECIMAL or float rounds half away
// from zero when the target holds fewer fractional digits), BOOL to and
// from integers, anything to STRING through its canonical text (checked
// against a VARCHAR(n) length, never truncated), STRING to
// anything through ParseText, DATE and DATETIME64 into each other in the
// DATETIME64's zone, DATETIME64 to another precision (rounding half up) or
// zone (the instant is kept), BYTES of 16 to UUID and back. A NULL casts to
// the NULL of to. A conversion no value could make is a *CastError naming
// both types.
func Cast(v Value, to Type) (Value, error) {
	from := v.t
	if from == to {
		return v, nil
	}
	if !castable(from.Kind, to.Kind) {
		return Value{}, &CastError{From: from, To: to}
	}
	if v.null {
		return Null(to), nil
	}
	switch {
	case to.Kind == String:
		return castToString(v, to)
	case from.Kind == String:
		return ParseText(to, v.s)
	case from.Kind.IsNumeric() && to.Kind.IsNumeric():
		return castNumeric(v, to)
	}
	switch to.Kind {
	case Bool:
		n := v.num()
		return NewBool(!n.mag.IsZero()), nil
	case Date:
		if from.Kind == DateTime64 {
			sec, _ := splitTicks(v.Int64(), int(from.Precision))
			days, _ := floorDiv(sec+zoneOffset(from, sec), 86400)
			return checkedTime(NewDate(days), v.String())
		}
	case DateTime64:
		// Another zone shows another date, and rounding to a lower
		// precision may reach the next day: the result is checked.
		var r Value
		var err error
		if from.Kind == Date {
			sec := v.Int64() * 86400
			sec -= zoneOffset(to, sec-zoneOffset(to, sec))
			r, err = tickValue(v, to, sec, 0)
		} else {
			sec, frac := splitTicks(v.Int64(), int(from.Precision))
			r, err = tickValue(v, to, sec, frac*int64(pow10u[9-int(from.Precision)]))
		}
		if err != nil {
			return Value{}, err
		}
		return checkedTime(r, v.String())
	case UUID:
		if len(v.b) == 16 {
			var u [16]byte
			copy(u[:], v.b)
			return NewUUID(u), nil
		}
		return Value{}, &RangeError{Value: v.String(), Type: to, Reason: "not 16 bytes"}
	case Bytes:
		return Value{t: to, b: append([]byte(nil), v.u[:]...)}, nil
	}
	if from.Kind == Bool && to.Kind.IsInteger() {
		return numValue(to, num{mag: uint256.Int{v.n}}), nil
	}
	return Value{}, &CastError{From: from, To: to}
}

// CanCast reports whether Cast converts some values of type from to type
// to, so that the binder can reject CAST(x AS t) before running it.
func CanCast(from, to Type) bool { return castable(from.Kind, to.Kind) }

// castable reports whether some value of kind from converts to kind to.
func castable(from, to Kind) bool {
	switch {
	case from == Invalid || to == Invalid || to == Unknown:
		return false
	case from == Unknown || from == to || from == String || to == String:
		return true
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from == Bool && to.IsInteger(), from.IsInteger() && to == Bool:
		return true
	case (from == Date || from == DateTime64) && (to == Date || to == DateTime64):
		return true
	case from == Bytes && to == UUID, from == UUID && to == Bytes:
		return true
	}
	return false
}

// tickValue builds the DATETIME64 of type to at sec plus nanoseconds ns,
// rounding the nanoseconds half up to to's precision.
func tickValue(v Value, to Type, sec, ns int64) (Value, error) {
	p := int(to.Precision)
	div := int64(pow10u[9-p])
	frac := ns / div
	if ns%div*2 >= div {
		frac++
	}
	ticks, ok := secTicks(sec, p, frac)
	if !ok {
		return Value{}, &RangeError{Value: v.String(), Type: to}
	}
	return NewDateTime64(to, ticks), nil
}

// castToString formats v canonically. A text longer than VARCHAR(n) is a
// RangeError rather than truncated: Cast also serves assignments (INSERT of
// an expression into a VARCHAR column), where PostgreSQL refuses too.
func castToString(v Value, to Type) (Value, error) {
	s := v.s
	if v.t.Kind != String {
		s = string(AppendText(nil, v))
	}
	if !utf8.ValidString(s) {
		return Value{}, &ParseError{Value: s, Type: to, Detail: "invalid UTF-8"}
	}
	if to.Len > 0 && len(s) > int(to.Len) && utf8.RuneCountInString(s) > int(to.Len) {
		return Value{}, &RangeError{Value: s, Type: to, Reason: "value too long"}
	}
	return Value{t: to, s: s}, nil
}

// castNumeric converts between numeric kinds exactly where the target can,
// rounding half away from zero where it holds fewer fractional digits.
func castNumeric(v Value, to Type) (Value, error) {
	fk, tk := v.t.Kind, to.Kind
	switch {
	case tk.IsFloat():
		f := v.Float64()
		if !fk.IsFloat() {
			f = exactFloat(exactOf(&v))
		}
		r := mkFloat(to, f)
		// A finite value past FLOAT32's range is an error, as in
		// PostgreSQL, not an infinity.
		if finite(f) && !finite(r.Float64()) || f != 0 && r.Float64() == 0 {
			return Value{}, &RangeError{Value: v.String(), Type: to}
		}
		return r, nil
	case fk.IsFloat():
		return floatToExact(v, to)
	}
	e := exactOf(&v)
	if tk == Decimal {
		return exactToDecimal(v, e, to)
	}
	// To an integer: round away the fraction.
	n := e.n
	if e.scale > 0 {
		n.mag = rescaleDown(&n.mag, e.scale)
		n.neg = n.neg && !n.mag.IsZero()
	}
	if !fitsInt(tk, &n) {
		return Value{}, &RangeError{Value: v.String(), Type: to}
	}
	return numValue(to, n), nil
}

func exactToDecimal(v Value, e exact, to Type) (Value, error) {
	mag := e.n.mag
	if d := e.scale - int(to.Scale); d > 0 {
		mag = rescaleDown(&mag, d)
	} else if d < 0 {
		var over bool
		if mag, over = rescaleUp(&mag, -d); over {
			return Value{}, &RangeError{Value: v.String(), Type: to}
		}
	}
	if !fitsDecimal(to.Precision, &mag) {
		return Value{}, &RangeError{Value: v.String(), Type: to}
	}
	return mkWide(to, num{neg: e.n.neg && !mag.IsZero(), mag: mag}.twos()), nil
}

// exactFloat returns the float64 nearest to e: exactly when the digits and
// the power of ten are both exact in float64 (one correctly rounded
// division), through the decimal text otherwise.
func exactFloat(e exact) float64 {
	var f float64
	if e.n.mag.IsUint64() && e.n.mag[0] < 1<<53 && e.scale <= 22 {
		f = float64(e.n.mag[0]) / math.Pow(10, float64(e.scale))
	} else if e.scale == 0 {
		f = magFloat(&e.n.mag)
	} else {
		var buf [90]byte
		f, _ = strconv.ParseFloat(string(formatDecimal(buf[:0], num{mag: e.n.mag}, uint8(e.scale))), 64)
	}
	if e.n.neg {
		f = -f
	}
	return f
}

// floatToExact converts a float to an integer or DECIMAL: NaN and the
// infinities are range errors; integers round half away from zero; a
// DECIMAL takes the float's shortest decimal text, rounded to its scale.
func floatToExact(v Value, to Type) (Value, error) {
	f := v.Float64()
	if !finite(f) {
		return Value{}, &RangeError{Value: v.String(), Type: to}
	}
	if to.Kind == Decimal {
		var buf [40]byte
		txt := strconv.AppendFloat(buf[:0], f, 'e', -1, v.t.Kind.Bits())
		r, err := parseDecimal(to, string(txt), string(txt))
		if err != nil {
			return Value{}, &RangeError{Value: v.String(), Type: to}
		}
		return r, nil
	}
	r := math.Round(f)
	mag, ok := floatMag(math.Abs(r))
	n := num{neg: r < 0, mag: mag}
	if !ok || !fitsInt(to.Kind, &n) {
		return Value{}, &RangeError{Value: v.String(), Type: to}
	}
	return numValue(to, n), nil
}

// magFloat returns the float64 nearest to m (ties to even), which
// uint256.Int.Float64 does not promise: the top 64 bits with a sticky bit
// for the rest round exactly as the whole number would.
func magFloat(m *uint256.Int) float64 {
	bl := m.BitLen()
	if bl <= 64 {
		return float64(m[0])
	}
	sh := uint(bl - 64)
	var top, back uint256.Int
	top.Rsh(m, sh)
	back.Lsh(&top, sh)
	x := top[0]
	if !back.Eq(m) {
		x |= 1
	}
	return math.Ldexp(float64(x), int(sh))
}
