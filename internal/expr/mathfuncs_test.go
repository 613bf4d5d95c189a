package expr

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// callFunc binds name on constant arguments (cast to the signature's
// parameters, as the binder does) and evaluates it over one row: the
// result's text ("NULL" for NULL), or the error.
func callFunc(t *testing.T, name string, args ...types.Value) (string, types.Type, error) {
	t.Helper()
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	f, sig, err := NewFunc(name, ts, 7)
	if err != nil {
		return "", types.Type{}, err
	}
	for i, a := range args {
		v, err := types.Cast(a, sig.Params[i])
		if err != nil {
			t.Fatalf("%s: cast %s to %s: %v", name, a, sig.Params[i], err)
		}
		f.Args = append(f.Args, NewConst(v))
	}
	v, err := f.Eval(NewCtx(context.Background(), nil, nil), &types.Batch{Rows: 1})
	if err != nil {
		return "", f.T, err
	}
	if v.Len() != 1 {
		t.Fatalf("%s: %d rows, want 1", name, v.Len())
	}
	if v.IsNull(0) {
		return "NULL", f.T, nil
	}
	return v.Get(0).String(), f.T, nil
}

// num parses a numeric literal, with an optional minus sign, as the
// binder types it (INT64, DECIMAL or FLOAT64).
func num(s string) types.Value {
	v, err := types.ParseNumber(strings.TrimPrefix(s, "-"))
	if err == nil && strings.HasPrefix(s, "-") {
		v, err = types.Neg(v)
	}
	if err != nil {
		panic(err)
	}
	return types.Narrow(v)
}

func str(s string) types.Value { return types.NewString(s) }

var null = types.Null(types.Of(types.Unknown))

type funcCase struct {
	name string
	args []types.Value
	want string // the result's text, or "error CODE regex"
}

func runFuncCases(t *testing.T, cases []funcCase) {
	t.Helper()
	for _, c := range cases {
		got, _, err := callFunc(t, c.name, c.args...)
		call := c.name + "(" + valuesText(c.args) + ")"
		if code, re, ok := strings.Cut(strings.TrimPrefix(c.want, "error "), " "); strings.HasPrefix(c.want, "error ") && ok {
			se, isSQL := sqlerr.As(err)
			switch {
			case err == nil:
				t.Errorf("%s = %s, want error %s", call, got, code)
			case !isSQL || se.Code != code || !regexp.MustCompile(re).MatchString(se.Message):
				t.Errorf("%s: error %v (code %s), want %s matching %q", call, err, sqlerr.CodeOf(err), code, re)
			case se.Pos != 7:
				t.Errorf("%s: error at %d, want the call's position 7", call, se.Pos)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", call, err)
		} else if got != c.want {
			t.Errorf("%s = %q, want %q", call, got, c.want)
		}
	}
}

func valuesText(vs []types.Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}

// TestMathFuncs checks results and errors against PostgreSQL 15's (the
// float8 functions; see docs/functions.md for where numeric differs).
func TestMathFuncs(t *testing.T) {
	inf := types.NewFloat64(math.Inf(1))
	nan := types.NewFloat64(math.NaN())
	runFuncCases(t, []funcCase{
		{"sqrt", []types.Value{num("2")}, "1.4142135623730951"},
		{"sqrt", []types.Value{num("2.0")}, "1.4142135623730951"},
		{"sqrt", []types.Value{num("0")}, "0"},
		{"sqrt", []types.Value{nan}, "NaN"},
		{"sqrt", []types.Value{null}, "NULL"},
		{"sqrt", []types.Value{num("-1")}, "error 2201F ^cannot take square root of a negative number: sqrt\\(-1\\)$"},
		{"cbrt", []types.Value{num("-8")}, "-2"},
		{"exp", []types.Value{num("0")}, "1"},
		{"exp", []types.Value{num("1")}, "2.718281828459045"},
		{"exp", []types.Value{num("1000")}, "error 22003 overflow"},
		{"exp", []types.Value{num("-1000")}, "error 22003 underflow"},
		{"exp", []types.Value{types.NewFloat64(math.Inf(-1))}, "0"},
		{"ln", []types.Value{num("2.0")}, "0.6931471805599453"},
		{"ln", []types.Value{num("0")}, "error 2201E ^cannot take logarithm of zero"},
		{"ln", []types.Value{num("-1")}, "error 2201E ^cannot take logarithm of a negative number: ln\\(-1\\)"},
		{"log", []types.Value{num("100")}, "2"},
		{"log", []types.Value{num("8.0")}, "0.9030899869919435"},
		{"log10", []types.Value{num("1000")}, "3"},
		{"log10", []types.Value{num("-1")}, "error 2201E negative"},
		{"log", []types.Value{num("2"), num("8")}, "3"},
		{"log", []types.Value{num("1"), num("8")}, "error 22012 ^division by zero"},
		{"log", []types.Value{num("0"), num("8")}, "error 2201E of zero"},
		{"log", []types.Value{num("2"), num("-8")}, "error 2201E negative"},
		{"power", []types.Value{num("2"), num("10")}, "1024"},
		{"pow", []types.Value{num("2"), num("-1")}, "0.5"},
		{"power", []types.Value{num("-2"), num("3")}, "-8"},
		{"power", []types.Value{num("0"), num("0")}, "1"},
		{"power", []types.Value{nan, num("0")}, "1"},
		{"power", []types.Value{num("1"), nan}, "1"},
		{"power", []types.Value{inf, num("2")}, "Infinity"},
		{"power", []types.Value{num("0"), num("-1")}, "error 2201F ^zero raised to a negative power is undefined"},
		{"power", []types.Value{num("-1"), num("0.5")}, "error 2201F ^a negative number raised to a non-integer power yields a complex result"},
		{"power", []types.Value{num("10"), num("400")}, "error 22003 ^value out of range: overflow$"},
		{"power", []types.Value{num("10"), num("-400")}, "error 22003 ^value out of range: underflow$"},
		{"power", []types.Value{null, num("2")}, "NULL"},
		{"pi", nil, "3.141592653589793"},
		{"degrees", []types.Value{num("1")}, "57.29577951308232"},
		{"radians", []types.Value{num("180")}, "3.141592653589793"},
		{"degrees", []types.Value{types.NewFloat64(1e308)}, "error 22003 overflow"},
		{"sin", []types.Value{num("0")}, "0"},
		{"cos", []types.Value{num("0")}, "1"},
		{"atan2", []types.Value{num("1"), num("1")}, "0.7853981633974483"},
		{"sin", []types.Value{inf}, "error 22003 ^input is out of range"},
		{"acos", []types.Value{num("2")}, "error 22003 ^input is out of range"},
		{"asin", []types.Value{num("1")}, "1.5707963267948966"},
		{"sign", []types.Value{num("-3")}, "-1"},
		{"sign", []types.Value{num("0")}, "0"},
		{"sign", []types.Value{num("-3.5")}, "-1"},
		{"sign", []types.Value{num("0.00")}, "0"},
		{"sign", []types.Value{nan}, "0"},
		{"div", []types.Value{num("7"), num("2")}, "3"},
		{"div", []types.Value{num("-7"), num("2")}, "-3"},
		{"div", []types.Value{num("7.9"), num("2.1")}, "3"},
		{"div", []types.Value{num("-7.5"), num("2")}, "-3"},
		{"div", []types.Value{num("-9223372036854775808"), num("-1")}, "9223372036854775808"},
		{"div", []types.Value{num("7"), num("0")}, "error 22012 ^division by zero$"},
		{"div", []types.Value{null, num("0")}, "NULL"},
	})
}

// TestMathTypes checks the result types: FLOAT64 but for sign of a
// DECIMAL (DECIMAL(1,0)) and div (a DECIMAL of scale 0).
func TestMathTypes(t *testing.T) {
	for _, c := range []struct {
		name string
		args []types.Value
		want string
	}{
		{"sqrt", []types.Value{num("4")}, "FLOAT64"},
		{"power", []types.Value{num("2.5"), num("2")}, "FLOAT64"},
		{"sign", []types.Value{num("-3")}, "FLOAT64"},
		{"sign", []types.Value{num("-3.25")}, "DECIMAL(1,0)"},
		{"div", []types.Value{num("7"), num("2")}, "DECIMAL(19,0)"},
		{"div", []types.Value{num("7.25"), num("2.5")}, "DECIMAL(2,0)"},
	} {
		if _, got, err := callFunc(t, c.name, c.args...); err != nil || got.String() != c.want {
			t.Errorf("%s(%s): type %s, err %v; want %s", c.name, valuesText(c.args), got, err, c.want)
		}
	}
	for _, bad := range [][]types.Type{{types.Of(types.String)}, {types.Of(types.Bool)}, {types.Of(types.Float64), types.Of(types.Float64)}} {
		if _, _, err := NewFunc("sqrt", bad, 0); sqlerr.CodeOf(err) != sqlerr.CodeUndefinedFunction {
			t.Errorf("sqrt%v: %v, want 42883", bad, err)
		}
	}
}

// TestMathVectorized evaluates over a column with NULLs, checking the
// typed loop row by row, and that it allocates nothing per row.
func TestMathVectorized(t *testing.T) {
	const n = 1024
	in := types.NewVector(tFloat8, n)
	for i := range n {
		if i%7 == 3 {
			in.AppendNull()
		} else {
			in.AppendFloat64(float64(i))
		}
	}
	b := &types.Batch{Cols: []*types.Vector{in}, Rows: n}
	f, _, err := NewFunc("sqrt", []types.Type{tFloat8}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Args = []Expr{&Col{Name: "x", T: tFloat8}}
	c := NewCtx(context.Background(), nil, nil)
	out, err := f.Eval(c, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		switch {
		case i%7 == 3 && !out.IsNull(i):
			t.Fatalf("row %d: %v, want NULL", i, out.Get(i))
		case i%7 != 3 && (out.IsNull(i) || out.Float64s()[i] != math.Sqrt(float64(i))):
			t.Fatalf("row %d: %v, want %v", i, out.Get(i), math.Sqrt(float64(i)))
		}
	}
	allocs := testing.AllocsPerRun(20, func() {
		c.Reset()
		if _, err := f.Eval(c, b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("sqrt over %d rows: %.0f allocations, want at most 2 (none per row)", n, allocs)
	}
}
