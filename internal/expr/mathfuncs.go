package expr

import (
	"math"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// The mathematical functions of PostgreSQL (docs/functions.md, "Math"):
// sqrt, cbrt, exp, ln, log, log10, power, pi, degrees, radians, the
// trigonometric functions, sign and div. All but sign and div take and
// return FLOAT64, as PostgreSQL's float8 versions do; an exact argument
// (integer, DECIMAL) is cast to FLOAT64 first. PostgreSQL also has
// numeric versions of sqrt, exp, ln, log and power whose result scale
// depends on the value; DECIMAL's scale is fixed by the type, so Strata
// computes those in FLOAT64 too (the difference docs/functions.md names).
// Each runs as one typed loop over the batch (vecFunc): no Value and no
// allocation per row.

// vecFunc computes a function over a batch: vs are the evaluated
// arguments, already of the Signature's parameter types; it appends n
// values to out. Errors carry no position (Func.Eval adds the call's).
type vecFunc func(vs []*types.Vector, n int, out *types.Vector) error

// The SQLSTATEs of the math and string functions that package sqlerr
// does not name.
const (
	codeInvalidLog       = "2201E" // invalid_argument_for_logarithm
	codeInvalidPower     = "2201F" // invalid_argument_for_power_function
	codeSubstring        = "22011" // substring_error
	codeProgramLimit     = "54000" // program_limit_exceeded
	codeInvalidRegex     = "2201B" // invalid_regular_expression
	codeUntranslatable   = "22P05" // untranslatable_character
	codeCharNotPermitted = codeProgramLimit
)

var tFloat8 = types.Of(types.Float64)

// anyNull reports whether row i of any of vs is NULL.
func anyNull(vs []*types.Vector, i int) bool {
	for _, v := range vs {
		if v.IsNull(i) {
			return true
		}
	}
	return false
}

// hasNulls reports whether any of vs may hold a NULL.
func hasNulls(vs []*types.Vector) bool {
	for _, v := range vs {
		if v.HasNulls() {
			return true
		}
	}
	return false
}

// float1 is the vecFunc of a strict FLOAT64 → FLOAT64 function.
func float1(f func(x float64) (float64, error)) vecFunc {
	return func(vs []*types.Vector, n int, out *types.Vector) error {
		v := vs[0]
		xs, nulls := v.Float64s(), v.HasNulls()
		for i := range n {
			if nulls && v.IsNull(i) {
				out.AppendNull()
				continue
			}
			z, err := f(xs[i])
			if err != nil {
				return err
			}
			out.AppendFloat64(z)
		}
		return nil
	}
}

// float2 is the vecFunc of a strict (FLOAT64, FLOAT64) → FLOAT64 function.
func float2(f func(x, y float64) (float64, error)) vecFunc {
	return func(vs []*types.Vector, n int, out *types.Vector) error {
		xs, ys, nulls := vs[0].Float64s(), vs[1].Float64s(), hasNulls(vs)
		for i := range n {
			if nulls && anyNull(vs, i) {
				out.AppendNull()
				continue
			}
			z, err := f(xs[i], ys[i])
			if err != nil {
				return err
			}
			out.AppendFloat64(z)
		}
		return nil
	}
}

// fl renders a float for an error message as Strata prints it.
func fl(x float64) string { return types.NewFloat64(x).String() }

func overflowErr() error {
	return sqlerr.New(sqlerr.CodeNumericOutOfRange, "value out of range: overflow")
}

func underflowErr() error {
	return sqlerr.New(sqlerr.CodeNumericOutOfRange, "value out of range: underflow")
}

// logArg checks the argument of a logarithm as PostgreSQL's dlog1,
// dlog10 and log_var do: zero and negative numbers are 2201E.
func logArg(fn string, x float64) error {
	switch {
	case x == 0:
		return sqlerr.New(codeInvalidLog, "cannot take logarithm of zero: %s(%s)", fn, fl(x))
	case x < 0:
		return sqlerr.New(codeInvalidLog, "cannot take logarithm of a negative number: %s(%s)", fn, fl(x))
	}
	return nil
}

// power is PostgreSQL's dpow: POSIX pow with NaN and infinities as C99
// has them, 2201F for 0 to a negative power and a negative number to a
// non-integer one, 22003 when a finite result does not fit.
func power(x, y float64) (float64, error) {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.Pow(x, y), nil // 1 for pow(1, NaN) and pow(NaN, 0)
	}
	if x == 0 && y < 0 {
		return 0, sqlerr.New(codeInvalidPower, "zero raised to a negative power is undefined: power(%s, %s)", fl(x), fl(y))
	}
	if x < 0 && math.Floor(y) != y {
		return 0, sqlerr.New(codeInvalidPower, "a negative number raised to a non-integer power yields a complex result: power(%s, %s)", fl(x), fl(y))
	}
	z := math.Pow(x, y)
	if !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		if math.IsInf(z, 0) {
			return 0, overflowErr()
		}
		if z == 0 && x != 0 {
			return 0, underflowErr()
		}
	}
	return z, nil
}

// trigArg is PostgreSQL's check of sin, cos, tan and cot: an infinity is
// out of their domain.
func trigArg(x float64) error {
	if math.IsInf(x, 0) {
		return sqlerr.New(sqlerr.CodeNumericOutOfRange, "input is out of range: %s", fl(x))
	}
	return nil
}

// radiansPerDegree is PostgreSQL's RADIANS_PER_DEGREE.
const radiansPerDegree = 0.0174532925199432957692

// mathFuncs are the FLOAT64 functions of one argument.
var mathFuncs = map[string]func(x float64) (float64, error){
	"sqrt": func(x float64) (float64, error) {
		if x < 0 {
			return 0, sqlerr.New(codeInvalidPower, "cannot take square root of a negative number: sqrt(%s)", fl(x))
		}
		return math.Sqrt(x), nil
	},
	"cbrt": func(x float64) (float64, error) { return math.Cbrt(x), nil },
	"exp": func(x float64) (float64, error) {
		z := math.Exp(x)
		switch {
		case math.IsInf(z, 0) && !math.IsInf(x, 0):
			return 0, overflowErr()
		case z == 0 && !math.IsInf(x, 0):
			return 0, underflowErr()
		}
		return z, nil
	},
	"ln": func(x float64) (float64, error) {
		if err := logArg("ln", x); err != nil {
			return 0, err
		}
		return math.Log(x), nil
	},
	"log10": func(x float64) (float64, error) {
		if err := logArg("log10", x); err != nil {
			return 0, err
		}
		return math.Log10(x), nil
	},
	"sin": func(x float64) (float64, error) { return math.Sin(x), trigArg(x) },
	"cos": func(x float64) (float64, error) { return math.Cos(x), trigArg(x) },
	"tan": func(x float64) (float64, error) { return math.Tan(x), trigArg(x) },
	"cot": func(x float64) (float64, error) { return 1 / math.Tan(x), trigArg(x) },
	"asin": func(x float64) (float64, error) {
		if x < -1 || x > 1 {
			return 0, sqlerr.New(sqlerr.CodeNumericOutOfRange, "input is out of range: asin(%s)", fl(x))
		}
		return math.Asin(x), nil
	},
	"acos": func(x float64) (float64, error) {
		if x < -1 || x > 1 {
			return 0, sqlerr.New(sqlerr.CodeNumericOutOfRange, "input is out of range: acos(%s)", fl(x))
		}
		return math.Acos(x), nil
	},
	"atan": func(x float64) (float64, error) { return math.Atan(x), nil },
	"degrees": func(x float64) (float64, error) {
		z := x / radiansPerDegree
		if math.IsInf(z, 0) && !math.IsInf(x, 0) {
			return 0, overflowErr()
		}
		return z, nil
	},
	"radians": func(x float64) (float64, error) {
		z := x * radiansPerDegree
		if z == 0 && x != 0 {
			return 0, underflowErr()
		}
		return z, nil
	},
}

// logBase is log(b, x) = ln(x) / ln(b), checked as PostgreSQL's
// log(numeric, numeric) is: the base first, then x, and a base of 1 is a
// division by zero.
func logBase(b, x float64) (float64, error) {
	if err := logArg("log", b); err != nil {
		return 0, err
	}
	if err := logArg("log", x); err != nil {
		return 0, err
	}
	d := math.Log(b)
	if d == 0 {
		return 0, sqlerr.New(sqlerr.CodeDivisionByZero, "division by zero: log(%s, %s)", fl(b), fl(x))
	}
	return math.Log(x) / d, nil
}

// mathFunc binds the math functions; ok is false for another name. It
// leaves f.fn and f.vec nil when the arguments do not fit (NewFunc then
// reports the function as not existing for those types).
func mathFunc(f *Func, sig *Signature, name string, argTypes []types.Type) bool {
	n := len(argTypes)
	num := func() bool {
		for _, t := range argTypes {
			if !t.Kind.IsNumeric() && t.Kind != types.Unknown {
				return false
			}
		}
		return true
	}
	floats := func(k int) bool {
		if n != k || !num() {
			return false
		}
		sig.Params = make([]types.Type, n)
		for i := range sig.Params {
			sig.Params[i] = tFloat8
		}
		sig.Result = tFloat8
		return true
	}
	if g, ok := mathFuncs[name]; ok {
		if floats(1) {
			f.vec = float1(g)
		}
		return true
	}
	switch name {
	case "log":
		switch {
		case floats(1):
			f.vec = float1(mathFuncs["log10"])
		case floats(2):
			f.vec = float2(logBase)
		}
	case "power", "pow":
		if floats(2) {
			f.vec = float2(power)
		}
	case "atan2":
		if floats(2) {
			f.vec = float2(func(y, x float64) (float64, error) { return math.Atan2(y, x), nil })
		}
	case "pi":
		if n == 0 {
			sig.Result = tFloat8
			f.vec = func(_ []*types.Vector, n int, out *types.Vector) error {
				for range n {
					out.AppendFloat64(math.Pi)
				}
				return nil
			}
		}
	case "sign":
		if n != 1 || !num() {
			break
		}
		if argTypes[0].Kind == types.Decimal {
			// sign(numeric) is numeric in PostgreSQL: -1, 0 or 1.
			sig.Params = []types.Type{argTypes[0]}
			sig.Result = types.Type{Kind: types.Decimal, Precision: 1}
			f.fn = func(a []types.Value, t types.Type) (types.Value, error) {
				return types.NewDecimal(t, int64(types.Compare(a[0], types.NewInt64(0))))
			}
			break
		}
		floats(1)
		f.vec = float1(func(x float64) (float64, error) {
			switch {
			case x > 0:
				return 1, nil
			case x < 0:
				return -1, nil
			}
			return 0, nil // PostgreSQL's dsign: NaN and ±0 are 0
		})
	case "div":
		bindDiv(f, sig, argTypes)
	case "mod":
		// The binder makes mod(a, b) the % operator; any other argument
		// count is no function.
	default:
		return false
	}
	return true
}

// bindDiv binds div(a, b), PostgreSQL's integer quotient of numerics: a /
// b truncated toward zero, as a DECIMAL of scale 0 (PostgreSQL's result is
// numeric for integer arguments too). It is computed exactly as (a - a %
// b) / b, which divides without a remainder.
func bindDiv(f *Func, sig *Signature, argTypes []types.Type) {
	if len(argTypes) != 2 {
		return
	}
	dec := func(t types.Type) (types.Type, bool) {
		switch {
		case t.Kind == types.Decimal:
			return t, true
		case t.Kind.IsInteger():
			return types.Common(t, types.Type{Kind: types.Decimal, Precision: 1})
		case t.Kind == types.Unknown:
			return types.Type{Kind: types.Decimal, Precision: 1}, true
		}
		return types.Type{}, false
	}
	a, ok1 := dec(argTypes[0])
	b, ok2 := dec(argTypes[1])
	if !ok1 || !ok2 {
		return
	}
	q, ok := types.ResultType(types.OpDiv, a, b)
	if !ok {
		return
	}
	sig.Params = []types.Type{a, b}
	sig.Result = types.Type{Kind: types.Decimal, Precision: uint8(max(int(q.Precision)-int(q.Scale), 1))}
	f.fn = func(v []types.Value, t types.Type) (types.Value, error) {
		r, err := types.Mod(v[0], v[1])
		if err == nil {
			if r, err = types.Sub(v[0], r); err == nil {
				r, err = types.Div(r, v[1])
			}
		}
		if err != nil {
			return r, ArithError(-1, "div", v[0], v[1], t, err)
		}
		return r, nil
	}
}
