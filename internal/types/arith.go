package types

import (
	"math"
	"math/bits"

	"github.com/holiman/uint256"
)

// Op is a binary arithmetic operator.
type Op uint8

// The arithmetic operators.
const (
	OpAdd Op = iota
	OpSub
	OpMul
	OpDiv
	OpMod
)

var opNames = [...]string{OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%"}

// String returns the operator's SQL spelling.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "?"
}

// OpError is an operator applied to types it is not defined for.
type OpError struct {
	Op          string
	Left, Right Type
}

// Error returns e.g. `operator does not exist: BOOL + DATE`.
func (e *OpError) Error() string {
	if e.Left.Kind == Invalid {
		return "operator does not exist: " + e.Op + " " + e.Right.String()
	}
	return "operator does not exist: " + e.Left.String() + " " + e.Op + " " + e.Right.String()
}

// decimalOf returns the DECIMAL that holds every value of numeric type t
// other than a float (integers take DECIMAL(d, 0), at most 76 digits).
func decimalOf(t Type) Type {
	if t.Kind == Decimal {
		return t
	}
	return Type{Kind: Decimal, Precision: uint8(min(intDigits(t.Kind), MaxDecimalPrecision))}
}

// ResultType returns the type of a op b (the arithmetic rule of the package
// doc), or false if op is not defined for the operand types. Integers and
// floats compute in Common(a, b); a DECIMAL result's precision and scale
// follow the operator:
//
//	OpAdd, OpSub  scale max(s1, s2), integer digits max(i1, i2) + 1
//	OpMul         scale s1 + s2, integer digits i1 + i2
//	OpDiv         scale max(s1, s2, 6), integer digits i1 + s2
//	OpMod         scale max(s1, s2), integer digits min(i1, i2)
//
// each capped at 76 digits in all (a scale past 76 is rounded to 76).
func ResultType(op Op, a, b Type) (Type, bool) {
	t, ok := Common(a, b)
	if !ok || !t.Kind.IsNumeric() || op > OpMod {
		if ok && t.Kind == Unknown {
			return t, true // NULL op NULL
		}
		return Type{}, false
	}
	if t.Kind != Decimal {
		return t, true
	}
	if a.Kind == Unknown || b.Kind == Unknown {
		return t, true
	}
	da, db := decimalOf(a), decimalOf(b)
	s1, s2 := int(da.Scale), int(db.Scale)
	i1, i2 := int(da.Precision)-s1, int(db.Precision)-s2
	var ip, s int
	switch op {
	case OpAdd, OpSub:
		s, ip = max(s1, s2), max(i1, i2)+1
	case OpMul:
		s, ip = s1+s2, i1+i2
	case OpDiv:
		s, ip = max(s1, s2, 6), i1+s2
	case OpMod:
		s, ip = max(s1, s2), min(i1, i2)
	}
	s = min(s, MaxDecimalPrecision)
	p := min(max(ip+s, s, 1), MaxDecimalPrecision)
	return Type{Kind: Decimal, Precision: uint8(p), Scale: uint8(s)}, true
}

// Add returns a + b. Like Sub, Mul, Div and Mod it widens both operands to
// ResultType, never wraps (overflow is a *RangeError), and returns NULL for
// a NULL operand.
func Add(a, b Value) (Value, error) { return arith(OpAdd, a, b) }

// Sub returns a - b.
func Sub(a, b Value) (Value, error) { return arith(OpSub, a, b) }

// Mul returns a × b.
func Mul(a, b Value) (Value, error) { return arith(OpMul, a, b) }

// Div returns a / b: integer division truncates toward zero (PostgreSQL),
// DECIMAL division rounds half away from zero at the result scale, and a
// zero divisor is ErrDivisionByZero for every kind, floats included.
func Div(a, b Value) (Value, error) { return arith(OpDiv, a, b) }

// Mod returns a % b with the sign of a (PostgreSQL); zero b is
// ErrDivisionByZero.
func Mod(a, b Value) (Value, error) { return arith(OpMod, a, b) }

// Arith applies op to a and b.
func Arith(op Op, a, b Value) (Value, error) { return arith(op, a, b) }

func arith(op Op, a, b Value) (Value, error) {
	if ka, kb := a.t.Kind, b.t.Kind; ka == Interval || kb == Interval || ka == Date || kb == Date || ka == DateTime64 && kb == DateTime64 {
		if t, ok := TimeType(op, a.t, b.t); ok {
			if a.null || b.null {
				return Null(t), nil
			}
			return TimeArith(op, a, b, t)
		}
	}
	if a.t.Kind == b.t.Kind && !a.null && !b.null {
		// Same-kind fast paths: no widening to do.
		switch a.t.Kind.Class() {
		case ClassInt64:
			if a.t.Kind.IsInteger() {
				return arithInt64(op, int64(a.n), int64(b.n), a.t)
			}
		case ClassUint64:
			return arithUint64(op, a.n, b.n, a.t)
		case ClassFloat64:
			return arithFloat(op, a.Float64(), b.Float64(), a.t)
		case ClassWide:
			if a.t.Kind.IsUnsigned() {
				return arithUwide(op, &a.w, &b.w, a.t)
			}
			if a.t.Kind != Decimal && (op == OpAdd || op == OpSub) {
				return addSwide(op, &a.w, &b.w, a.t)
			}
		}
	}
	t, ok := ResultType(op, a.t, b.t)
	if !ok {
		return Value{}, &OpError{Op: op.String(), Left: a.t, Right: b.t}
	}
	if a.null || b.null {
		return Null(t), nil
	}
	if t.Kind == Decimal {
		return arithDecimal(op, a, b, t)
	}
	var err error
	if a.t != t {
		if a, err = Cast(a, t); err != nil {
			return Value{}, err
		}
	}
	if b.t != t {
		if b, err = Cast(b, t); err != nil {
			return Value{}, err
		}
	}
	switch t.Kind.Class() {
	case ClassInt64:
		return arithInt64(op, int64(a.n), int64(b.n), t)
	case ClassUint64:
		return arithUint64(op, a.n, b.n, t)
	case ClassFloat64:
		return arithFloat(op, a.Float64(), b.Float64(), t)
	}
	if t.Kind.IsUnsigned() {
		return arithUwide(op, &a.w, &b.w, t)
	}
	return arithNum(op, signedNum(&a.w), signedNum(&b.w), t)
}

func overflow(t Type) error { return &RangeError{Type: t} }

func arithInt64(op Op, x, y int64, t Type) (Value, error) {
	var r int64
	switch op {
	case OpAdd:
		r = x + y
		if (r > x) != (y > 0) {
			return Value{}, overflow(t)
		}
	case OpSub:
		r = x - y
		if (r < x) != (y > 0) {
			return Value{}, overflow(t)
		}
	case OpMul:
		if x != 0 && y != 0 {
			hi, lo := bits.Mul64(absInt(x), absInt(y))
			neg := (x < 0) != (y < 0)
			if hi != 0 || lo > 1<<63 || (lo == 1<<63 && !neg) {
				return Value{}, overflow(t)
			}
			r = int64(lo)
			if neg {
				r = -r
			}
		}
	case OpDiv, OpMod:
		if y == 0 {
			return Value{}, ErrDivisionByZero
		}
		if y == -1 {
			if op == OpMod {
				return mkInt(t, 0), nil
			}
			if x == math.MinInt64 {
				return Value{}, overflow(t)
			}
			r = -x
		} else if op == OpDiv {
			r = x / y
		} else {
			r = x % y
		}
	}
	if b := t.Kind.Bits(); b < 64 {
		lim := int64(1) << (b - 1)
		if r < -lim || r >= lim {
			return Value{}, overflow(t)
		}
	}
	return mkInt(t, r), nil
}

func arithUint64(op Op, x, y uint64, t Type) (Value, error) {
	var r uint64
	switch op {
	case OpAdd:
		var c uint64
		if r, c = bits.Add64(x, y, 0); c != 0 {
			return Value{}, overflow(t)
		}
	case OpSub:
		var c uint64
		if r, c = bits.Sub64(x, y, 0); c != 0 {
			return Value{}, overflow(t)
		}
	case OpMul:
		var hi uint64
		if hi, r = bits.Mul64(x, y); hi != 0 {
			return Value{}, overflow(t)
		}
	case OpDiv, OpMod:
		if y == 0 {
			return Value{}, ErrDivisionByZero
		}
		if op == OpDiv {
			r = x / y
		} else {
			r = x % y
		}
	}
	if b := t.Kind.Bits(); b < 64 && r >= 1<<b {
		return Value{}, overflow(t)
	}
	return mkUint(t, r), nil
}

func arithUwide(op Op, x, y *uint256.Int, t Type) (Value, error) {
	var z uint256.Int
	over := false
	switch op {
	case OpAdd:
		_, over = z.AddOverflow(x, y)
	case OpSub:
		_, over = z.SubOverflow(x, y)
	case OpMul:
		_, over = z.MulOverflow(x, y)
	case OpDiv, OpMod:
		if y.IsZero() {
			return Value{}, ErrDivisionByZero
		}
		if op == OpDiv {
			z.Div(x, y)
		} else {
			z.Mod(x, y)
		}
	}
	if over || (t.Kind == Uint128 && z.BitLen() > 128) {
		return Value{}, overflow(t)
	}
	return mkWide(t, z), nil
}

// addSwide adds or subtracts two's complement INT128/INT256 values: the
// sum overflowed exactly when its sign differs from that of both addends.
func addSwide(op Op, x, y *uint256.Int, t Type) (Value, error) {
	var z uint256.Int
	var over bool
	if op == OpAdd {
		z.Add(x, y)
		over = wideNeg(x) == wideNeg(y) && wideNeg(&z) != wideNeg(x)
	} else {
		z.Sub(x, y)
		over = wideNeg(x) != wideNeg(y) && wideNeg(&z) != wideNeg(x)
	}
	if t.Kind == Int128 {
		ext := uint64(0)
		if z[1]>>63 != 0 {
			ext = ^uint64(0)
		}
		over = over || z[2] != ext || z[3] != ext
	}
	if over {
		return Value{}, overflow(t)
	}
	return mkWide(t, z), nil
}

// arithNum computes on sign-magnitude integers and range-checks for t.
func arithNum(op Op, x, y num, t Type) (Value, error) {
	r, err := numOp(op, x, y)
	if err != nil {
		return Value{}, err
	}
	if r.over || !fitsInt(t.Kind, &r.n) {
		return Value{}, overflow(t)
	}
	return numValue(t, r.n), nil
}

type numResult struct {
	n    num
	over bool
}

// numOp applies op to exact integers; over reports a magnitude past 2^256.
func numOp(op Op, x, y num) (numResult, error) {
	var r numResult
	switch op {
	case OpSub:
		y.neg = !y.neg && !y.mag.IsZero()
		fallthrough
	case OpAdd:
		if x.neg == y.neg {
			_, r.over = r.n.mag.AddOverflow(&x.mag, &y.mag)
			r.n.neg = x.neg
		} else if x.mag.Lt(&y.mag) {
			r.n.mag.Sub(&y.mag, &x.mag)
			r.n.neg = y.neg
		} else {
			r.n.mag.Sub(&x.mag, &y.mag)
			r.n.neg = x.neg
		}
	case OpMul:
		_, r.over = r.n.mag.MulOverflow(&x.mag, &y.mag)
		r.n.neg = x.neg != y.neg
	case OpDiv, OpMod:
		if y.mag.IsZero() {
			return r, ErrDivisionByZero
		}
		if op == OpDiv {
			r.n.mag.Div(&x.mag, &y.mag)
			r.n.neg = x.neg != y.neg
		} else {
			r.n.mag.Mod(&x.mag, &y.mag)
			r.n.neg = x.neg
		}
	}
	if r.n.mag.IsZero() {
		r.n.neg = false
	}
	return r, nil
}

func arithFloat(op Op, x, y float64, t Type) (Value, error) {
	var r float64
	switch op {
	case OpAdd:
		r = x + y
	case OpSub:
		r = x - y
	case OpMul:
		r = x * y
	case OpDiv, OpMod:
		if y == 0 {
			return Value{}, ErrDivisionByZero
		}
		if op == OpDiv {
			r = x / y
		} else {
			r = math.Mod(x, y)
		}
	}
	if t.Kind == Float32 {
		r = float64(float32(r))
	}
	// PostgreSQL reports overflow of finite operands rather than returning
	// an infinity.
	if math.IsInf(r, 0) && finite(x) && finite(y) {
		return Value{}, overflow(t)
	}
	return mkFloat(t, r), nil
}

// arithDecimal computes exactly on unscaled integers (see ResultType).
func arithDecimal(op Op, a, b Value, t Type) (Value, error) {
	if a.t.Kind.IsFloat() || b.t.Kind.IsFloat() {
		return Value{}, &OpError{Op: op.String(), Left: a.t, Right: b.t}
	}
	x, y := exactOf(&a), exactOf(&b)
	ts := int(t.Scale)
	var r num
	switch op {
	case OpAdd, OpSub, OpMod:
		// A zero divisor is reported before the operands are aligned: the
		// alignment of a large dividend to a fine scale may overflow, and
		// PostgreSQL says division by zero for x % 0 whatever x is.
		if op == OpMod && y.n.mag.IsZero() {
			return Value{}, ErrDivisionByZero
		}
		var over1, over2 bool
		x.n.mag, over1 = rescaleUp(&x.n.mag, ts-x.scale)
		y.n.mag, over2 = rescaleUp(&y.n.mag, ts-y.scale)
		if over1 || over2 {
			return Value{}, overflow(t)
		}
		res, err := numOp(op, x.n, y.n)
		if err != nil {
			return Value{}, err
		}
		if res.over {
			return Value{}, overflow(t)
		}
		r = res.n
	case OpMul:
		// Scales past the result's are rounded off the 512-bit product.
		r.neg = x.n.neg != y.n.neg
		if excess := x.scale + y.scale - ts; excess > 0 {
			q, over := mulDivRound(&x.n.mag, &y.n.mag, &pow10[excess])
			if over {
				return Value{}, overflow(t)
			}
			r.mag = q
		} else if _, over := r.mag.MulOverflow(&x.n.mag, &y.n.mag); over {
			return Value{}, overflow(t)
		}
	case OpDiv:
		if y.n.mag.IsZero() {
			return Value{}, ErrDivisionByZero
		}
		// x/10^sx ÷ y/10^sy = (x × 10^(ts - sx + sy) / y) / 10^ts, and
		// ts ≥ sx (ResultType), so the power is never negative.
		q, over := divPow10Round(&x.n.mag, &y.n.mag, ts-x.scale+y.scale)
		if over {
			return Value{}, overflow(t)
		}
		r = num{neg: x.n.neg != y.n.neg, mag: q}
	}
	if r.mag.IsZero() {
		r.neg = false
	}
	if !fitsDecimal(t.Precision, &r.mag) {
		return Value{}, overflow(t)
	}
	return mkWide(t, r.twos()), nil
}

// NegType returns the type of -x for x of type t: signed kinds, DECIMAL and
// floats keep their type; an unsigned kind of b bits becomes the signed
// kind of 2b bits (INT256 for UINT128 and UINT256), so that -x of every
// UINT64 fits. It returns false for non-numeric types.
func NegType(t Type) (Type, bool) {
	k := t.Kind
	switch {
	case k == Unknown || k.IsSigned() || k.IsFloat() || k == Decimal || k == Interval:
		return t, true
	case k.IsUnsigned():
		return Of(signedFor(min(2*k.Bits(), 256))), true
	}
	return Type{}, false
}

// Neg returns -v in NegType(v.Type()); negating a signed minimum (or a
// UINT256 above 2^255) is a *RangeError. NULL gives NULL.
func Neg(v Value) (Value, error) {
	t, ok := NegType(v.t)
	if !ok {
		return Value{}, &OpError{Op: "-", Right: v.t}
	}
	if v.null {
		return Null(t), nil
	}
	if t.Kind == Interval {
		return NegInterval(v)
	}
	switch v.t.Kind.Class() {
	case ClassFloat64:
		return mkFloat(t, -v.Float64()), nil
	case ClassInt64:
		if int64(v.n) == math.MinInt64 || (t.Kind.Bits() < 64 && int64(v.n) == -1<<(t.Kind.Bits()-1)) {
			return Value{}, overflow(t)
		}
		return mkInt(t, -int64(v.n)), nil
	}
	if t.Kind == Decimal {
		n := signedNum(&v.w)
		n.neg = !n.neg && !n.mag.IsZero()
		return mkWide(t, n.twos()), nil
	}
	n := v.num()
	n.neg = !n.neg && !n.mag.IsZero()
	if !fitsInt(t.Kind, &n) {
		return Value{}, overflow(t)
	}
	return numValue(t, n), nil
}
