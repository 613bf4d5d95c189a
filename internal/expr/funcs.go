package expr

import (
	"context"
	"math"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// rowFunc computes one row of a scalar function from its argument values,
// which the binder has already cast to the function's parameter types.
type rowFunc func(args []types.Value, t types.Type) (types.Value, error)

// Func is a call of a scalar function.
type Func struct {
	Name string
	Args []Expr
	T    types.Type
	Pos  int
	fn   rowFunc
	// vec, when set, computes the whole batch in one typed loop instead of
	// fn's row at a time (mathfuncs.go, strfuncs.go): no Value per row, and
	// no allocation per row for a fixed-size result.
	vec vecFunc
	// strict functions return NULL for any NULL argument without calling fn.
	strict bool
	// effect marks a function that changes the session (set_config): it
	// runs only when a query runs, never when the planner folds constants
	// (which evaluates without a Runner).
	effect bool
}

// Volatile reports whether the function has an effect beyond its result
// (set_config): the planner must not change how often or on which rows
// it runs.
func (e *Func) Volatile() bool { return e.effect }

// Type implements Expr.
func (e *Func) Type() types.Type { return e.T }
func (e *Func) String() string   { return e.Name + "(" + list(e.Args) + ")" }
func (e *Func) kids() []*Expr    { return ptrs(e.Args) }

// Eval implements Expr.
func (e *Func) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	if e.Name == "coalesce" {
		return e.evalCoalesce(c, b)
	}
	if e.effect && c.Runner == nil {
		return nil, sqlerr.NotSupported(e.Pos, "%s() changes the session and runs only in a query", e.Name)
	}
	if e.Name == "pg_sleep" {
		return e.evalSleep(c, b)
	}
	vs := make([]*types.Vector, len(e.Args))
	for i, a := range e.Args {
		v, err := a.Eval(c, b)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	out := c.vec(e.T, b.Rows)
	if e.vec != nil {
		if err := e.vec(vs, b.Rows, out); err != nil {
			if se, ok := sqlerr.As(err); ok && se.Pos < 0 {
				return nil, se.WithPos(e.Pos)
			}
			return nil, err
		}
		return out, nil
	}
	args := make([]types.Value, len(vs))
rows:
	for i := range b.Rows {
		for j, v := range vs {
			if e.strict && v.IsNull(i) {
				out.AppendNull()
				continue rows
			}
			args[j] = v.Get(i)
		}
		z, err := e.fn(args, e.T)
		if err != nil {
			if se, ok := sqlerr.As(err); ok && se.Pos < 0 {
				return nil, se.WithPos(e.Pos)
			}
			return nil, err
		}
		if !z.IsNull() && z.Type() != e.T {
			if z, err = types.Cast(z, e.T); err != nil {
				return nil, CastError(e.Pos, z, e.T, err)
			}
		}
		out.Append(z)
	}
	return out, nil
}

// evalCoalesce evaluates each argument only over the rows for which every
// earlier argument was NULL, as PostgreSQL does: coalesce(-14, 1/0) is -14,
// not a division-by-zero error (the same rule as CASE, invariant 4).
func (e *Func) evalCoalesce(c *Ctx, b *types.Batch) (*types.Vector, error) {
	res := make([]types.Value, b.Rows)
	set := make([]bool, b.Rows)
	remaining := make([]int, b.Rows) // row of b for each row of sub
	for i := range remaining {
		remaining[i] = i
	}
	sub := b
	for _, a := range e.Args {
		if len(remaining) == 0 {
			break
		}
		v, err := a.Eval(c, sub)
		if err != nil {
			return nil, err
		}
		keep := make([]int, 0, len(remaining))
		next := make([]int, 0, len(remaining))
		for j := range sub.Rows {
			if v.IsNull(j) {
				keep = append(keep, j)
				next = append(next, remaining[j])
				continue
			}
			res[remaining[j]], set[remaining[j]] = v.Get(j), true
		}
		if len(keep) < sub.Rows && len(keep) > 0 {
			sub = Gather(nil, sub, keep)
		}
		remaining = next
	}
	out := c.vec(e.T, b.Rows)
	for i, z := range res {
		if !set[i] {
			out.AppendNull()
			continue
		}
		if z.Type() != e.T {
			var err error
			if z, err = types.Cast(z, e.T); err != nil {
				return nil, CastError(e.Pos, z, e.T, err)
			}
		}
		out.Append(z)
	}
	return out, nil
}

// Signature describes how a function takes its arguments: the types to cast
// them to and its result type.
type Signature struct {
	Params []types.Type
	Result types.Type
}

// NewFunc binds a call of the scalar function name to arguments of the given
// types. It returns the function node (whose Args the caller fills with the
// arguments cast to Params) or an error naming the function.
func NewFunc(name string, argTypes []types.Type, pos int) (*Func, Signature, error) {
	bad := func() (*Func, Signature, error) {
		ts := make([]string, len(argTypes))
		for i, t := range argTypes {
			ts[i] = t.String()
		}
		return nil, Signature{}, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).WithPos(pos)
	}
	n := len(argTypes)
	f := &Func{Name: name, Pos: pos, strict: true}
	var sig Signature
	same := func(min int) bool {
		if n < min {
			return false
		}
		t := argTypes[0]
		for _, a := range argTypes[1:] {
			c, ok := types.Common(t, a)
			if !ok {
				return false
			}
			t = c
		}
		if t.Kind == types.Unknown {
			t = types.Of(types.String)
		}
		sig.Params = make([]types.Type, n)
		for i := range sig.Params {
			sig.Params[i] = t
		}
		sig.Result = t
		return true
	}
	str := types.Of(types.String)
	isStr := func(t types.Type) bool { return t.Kind == types.String || t.Kind == types.Unknown }
	switch name {
	case "coalesce":
		if !same(1) {
			return bad()
		}
		f.strict = false
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			for _, v := range a {
				if !v.IsNull() {
					return v, nil
				}
			}
			return types.Null(a[0].Type()), nil
		}
	case "nullif":
		if n != 2 || !same(2) {
			return bad()
		}
		sig.Result = argTypes[0]
		sig.Params[0] = argTypes[0]
		f.strict = false
		f.fn = func(a []types.Value, t types.Type) (types.Value, error) {
			if a[0].IsNull() || a[1].IsNull() {
				return a[0], nil
			}
			// Compared in the second argument's type, the common one:
			// cast to the first's, 1.54 would round to a DECIMAL(2,1)'s 1.5.
			if c, err := types.Cast(a[0], a[1].Type()); err == nil && types.Equal(c, a[1]) {
				return types.Null(t), nil
			}
			return a[0], nil
		}
	case "greatest", "least":
		if !same(1) {
			return bad()
		}
		want := 1
		if name == "least" {
			want = -1
		}
		f.strict = false
		f.fn = func(a []types.Value, t types.Type) (types.Value, error) {
			best := types.Null(t)
			for _, v := range a {
				if v.IsNull() {
					continue
				}
				if best.IsNull() || types.Compare(v, best) == want {
					best = v
				}
			}
			return best, nil
		}
	case "abs":
		if n != 1 || !argTypes[0].Kind.IsNumeric() {
			return bad()
		}
		sig.Params = []types.Type{argTypes[0]}
		sig.Result = argTypes[0]
		if t, ok := types.NegType(argTypes[0]); ok && argTypes[0].Kind.IsSigned() {
			sig.Result = t
		}
		f.fn = func(a []types.Value, t types.Type) (types.Value, error) {
			v := a[0]
			if types.Compare(v, types.NewInt64(0)) >= 0 {
				return v, nil
			}
			z, err := types.Neg(v)
			if err != nil {
				return z, sqlerr.OutOfRange(-1, "%s overflow: abs(%s)", t, v)
			}
			return z, nil
		}
	case "round", "floor", "ceil", "ceiling", "trunc":
		if n < 1 || n > 2 || !argTypes[0].Kind.IsNumeric() || (n == 2 && !argTypes[1].Kind.IsInteger() && argTypes[1].Kind != types.Unknown) {
			return bad()
		}
		t := argTypes[0]
		sig.Params = append([]types.Type{t}, argTypes[1:]...)
		if n == 2 && argTypes[1].Kind == types.Unknown {
			sig.Params[1] = types.Of(types.Int64)
		}
		sig.Result = t
		mode := name
		f.fn = func(a []types.Value, rt types.Type) (types.Value, error) {
			digits := int64(0)
			if len(a) == 2 {
				d, err := types.Cast(a[1], types.Of(types.Int64))
				if err != nil {
					return d, err
				}
				digits = d.Int64()
			}
			return roundValue(mode, a[0], digits)
		}
	case "lower", "upper":
		if n != 1 || !isStr(argTypes[0]) {
			return bad()
		}
		sig.Params, sig.Result = []types.Type{str}, str
		up := name == "upper"
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if up {
				return types.NewString(strings.ToUpper(a[0].Str())), nil
			}
			return types.NewString(strings.ToLower(a[0].Str())), nil
		}
	case "btrim", "ltrim", "rtrim":
		// btrim(s[, chars]): s without the characters of chars (a space
		// by default) at both ends, the start or the end.
		if n < 1 || n > 2 || !isStr(argTypes[0]) || n == 2 && !isStr(argTypes[1]) {
			return bad()
		}
		sig.Params, sig.Result = []types.Type{str, str}[:n], str
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			cut := " "
			if len(a) == 2 {
				cut = a[1].Str()
			}
			switch name {
			case "ltrim":
				return types.NewString(strings.TrimLeft(a[0].Str(), cut)), nil
			case "rtrim":
				return types.NewString(strings.TrimRight(a[0].Str(), cut)), nil
			}
			return types.NewString(strings.Trim(a[0].Str(), cut)), nil
		}
	case "length", "char_length", "character_length", "octet_length":
		if n != 1 || !(isStr(argTypes[0]) || argTypes[0].Kind == types.Bytes) {
			return bad()
		}
		sig.Params, sig.Result = []types.Type{argTypes[0]}, types.Of(types.Int64)
		if argTypes[0].Kind == types.Unknown {
			sig.Params[0] = str
		}
		octets := name == "octet_length"
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			if a[0].Kind() == types.Bytes {
				return types.NewInt64(int64(len(a[0].Bytes()))), nil
			}
			if octets {
				return types.NewInt64(int64(len(a[0].Str()))), nil
			}
			return types.NewInt64(int64(utf8.RuneCountInString(a[0].Str()))), nil
		}
	case "substring", "substr":
		if name == "substring" && n == 2 && isStr(argTypes[0]) && argTypes[1].Kind == types.String {
			// substring(s FROM pattern): the part of s that the regular
			// expression matches, or its first parenthesized group.
			sig.Params, sig.Result = []types.Type{str, str}, str
			var cache regexCache
			f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
				re, err := cache.get(a[1].Str(), false)
				if err != nil {
					return types.Value{}, err
				}
				m := re.FindStringSubmatchIndex(a[0].Str())
				switch {
				case m == nil:
					return types.Null(str), nil
				case len(m) > 2:
					if m[2] < 0 {
						return types.Null(str), nil
					}
					return types.NewString(a[0].Str()[m[2]:m[3]]), nil
				}
				return types.NewString(a[0].Str()[m[0]:m[1]]), nil
			}
			break
		}
		if n < 2 || n > 3 || !isStr(argTypes[0]) {
			return bad()
		}
		for _, t := range argTypes[1:] {
			if !t.Kind.IsInteger() && t.Kind != types.Unknown {
				return bad()
			}
		}
		sig.Params = []types.Type{str, types.Of(types.Int64), types.Of(types.Int64)}[:n]
		sig.Result = str
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			rs := []rune(a[0].Str())
			start := a[1].Int64() - 1 // 0-based, may be negative
			end := int64(len(rs))
			if len(a) == 3 {
				if a[2].Int64() < 0 {
					return types.Value{}, sqlerr.New(codeSubstring, "negative substring length not allowed")
				}
				end = start + a[2].Int64()
			}
			start = max(start, 0)
			end = min(end, int64(len(rs)))
			if start >= end {
				return types.NewString(""), nil
			}
			return types.NewString(string(rs[start:end])), nil
		}
	case "||":
		sig.Params, sig.Result = []types.Type{str, str}, str
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			return types.NewString(a[0].Str() + a[1].Str()), nil
		}
	case "concat":
		sig.Params = make([]types.Type, n)
		for i := range sig.Params {
			sig.Params[i] = str
		}
		sig.Result = str
		f.strict = false
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			var sb strings.Builder
			for _, v := range a {
				if !v.IsNull() {
					sb.WriteString(v.Str())
				}
			}
			return types.NewString(sb.String()), nil
		}
	case "date_trunc":
		if n == 2 && isStr(argTypes[0]) && argTypes[1].Kind == types.Interval {
			sig.Params = []types.Type{str, argTypes[1]}
			sig.Result = argTypes[1]
			f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
				unit := strings.ToLower(a[0].Str())
				v, ok := types.TruncInterval(unit, a[1])
				if !ok {
					return types.Value{}, sqlerr.New(sqlerr.CodeFeatureNotSupported, "unit %q not supported for type interval", unit)
				}
				return v, nil
			}
			break
		}
		if n != 2 || !isStr(argTypes[0]) || (argTypes[1].Kind != types.DateTime64 && argTypes[1].Kind != types.Date) {
			return bad()
		}
		sig.Params = []types.Type{str, argTypes[1]}
		sig.Result = argTypes[1]
		f.fn = func(a []types.Value, t types.Type) (types.Value, error) {
			tm, err := truncTime(strings.ToLower(a[0].Str()), a[1].Time())
			if err != nil {
				return types.Value{}, err
			}
			return types.FromTime(t, tm)
		}
	case "extract", "date_part":
		if n == 2 && isStr(argTypes[0]) && argTypes[1].Kind == types.Interval {
			// An exact number of the field's scale; the binder narrows the
			// result type when the field is a constant (IntervalPartType).
			sig.Params = []types.Type{str, argTypes[1]}
			sig.Result = types.Type{Kind: types.Decimal, Precision: 38, Scale: 6}
			f.fn = func(a []types.Value, t types.Type) (types.Value, error) {
				field := strings.ToLower(a[0].Str())
				text, _, ok := types.IntervalPart(field, a[1])
				if !ok {
					return types.Value{}, sqlerr.New(sqlerr.CodeFeatureNotSupported, "unit %q not supported for type interval", field)
				}
				v, err := types.ParseText(types.Type{Kind: types.Decimal, Precision: 38, Scale: 6}, text)
				if err != nil {
					return types.Value{}, err
				}
				return types.Cast(v, t)
			}
			break
		}
		if n != 2 || !isStr(argTypes[0]) || (argTypes[1].Kind != types.DateTime64 && argTypes[1].Kind != types.Date) {
			return bad()
		}
		sig.Params = []types.Type{str, argTypes[1]}
		sig.Result = types.Of(types.Int64)
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			x, err := extractField(strings.ToLower(a[0].Str()), a[1].Time())
			if err != nil {
				return types.Value{}, err
			}
			return types.NewInt64(x), nil
		}
	default:
		if mathFunc(f, &sig, name, argTypes) || strFunc(f, &sig, name, argTypes) || bytesFunc(f, &sig, name, argTypes) ||
			dateFunc(f, &sig, name, argTypes) || hashFunc(f, &sig, name, argTypes) {
			if f.fn == nil && f.vec == nil {
				return bad()
			}
			break
		}
		return nil, Signature{}, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s does not exist", name).WithPos(pos).WithToken(name)
	}
	f.T = sig.Result
	return f, sig, nil
}

func roundValue(mode string, v types.Value, digits int64) (types.Value, error) {
	t := v.Type()
	switch {
	case t.Kind.IsInteger():
		return v, nil
	case t.Kind.IsFloat():
		x := v.Float64()
		p := math.Pow(10, float64(digits))
		switch mode {
		case "round":
			// A float rounds half to even, as PostgreSQL's round(float8)
			// (rint) does; DECIMAL rounds half away from zero below.
			x = math.RoundToEven(x*p) / p
		case "floor":
			x = math.Floor(x*p) / p
		case "ceil", "ceiling":
			x = math.Ceil(x*p) / p
		default:
			x = math.Trunc(x*p) / p
		}
		return types.NewFloat64(x), nil
	}
	// DECIMAL: round to the wanted scale through a cast (half away from
	// zero), then step towards floor or ceiling when the cast went the
	// wrong way, and widen back to the argument's type.
	if digits < 0 {
		return roundTens(mode, v, -digits)
	}
	if digits >= int64(t.Scale) {
		return v, nil
	}
	nt := types.Type{Kind: types.Decimal, Precision: t.Precision, Scale: uint8(digits)}
	r, err := types.Cast(v, nt)
	if err != nil {
		return r, err
	}
	c := types.Compare(r, v)
	step, err := types.Cast(types.NewInt64(1), nt)
	if err != nil {
		return r, err
	}
	if digits > 0 {
		unit := types.Type{Kind: types.Decimal, Precision: nt.Precision, Scale: nt.Scale}
		s := "0." + strings.Repeat("0", int(digits)-1) + "1"
		if step, err = types.ParseText(unit, s); err != nil {
			return r, err
		}
	}
	switch {
	case (mode == "floor" || (mode == "trunc" && !v.IsNull() && types.Compare(v, types.NewInt64(0)) >= 0)) && c > 0:
		r, err = types.Sub(r, step)
	case (mode == "ceil" || mode == "ceiling" || (mode == "trunc" && types.Compare(v, types.NewInt64(0)) < 0)) && c < 0:
		r, err = types.Add(r, step)
	}
	// Func.Eval casts r to the call's result type: the argument's, or the
	// scale PostgreSQL gives round/trunc with constant digits (the binder's
	// RoundType).
	return r, err
}

// roundTens rounds DECIMAL v to a multiple of 10^k (round(123.456, -1)
// is 120) in exact integer arithmetic on its unscaled digits: v = U /
// 10^s, the quotient of U by 10^(s+k) truncated, then moved by the mode.
func roundTens(mode string, v types.Value, k int64) (types.Value, error) {
	t := v.Type()
	if k > 76 {
		k = 76
	}
	text := v.String()
	neg := strings.HasPrefix(text, "-")
	text = strings.TrimPrefix(text, "-")
	intPart, frac, _ := strings.Cut(text, ".")
	u, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return types.Value{}, errorf("round: bad DECIMAL text %q", v.String())
	}
	if neg {
		u.Neg(u)
	}
	d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))+k), nil)
	q, r := new(big.Int).QuoRem(u, d, new(big.Int))
	switch mode {
	case "round":
		twice := new(big.Int).Abs(r)
		if twice.Lsh(twice, 1).Cmp(d) >= 0 {
			q.Add(q, big.NewInt(int64(r.Sign())))
		}
	case "floor":
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		}
	case "ceil", "ceiling":
		if r.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
	}
	q.Mul(q, new(big.Int).Exp(big.NewInt(10), big.NewInt(k), nil))
	rt := types.Type{Kind: types.Decimal, Precision: uint8(min(int(t.Precision)+1, 76)), Scale: 0}
	out, err := types.ParseText(rt, q.String())
	if err != nil {
		return out, sqlerr.OutOfRange(-1, "%s overflow: %s(%s, %d)", t, mode, v, -k)
	}
	return out, nil
}

// RoundType is the result type of round(x, digits) and trunc(x, digits)
// over DECIMAL x with constant digits: PostgreSQL's result has scale
// max(digits, 0), so round(1.2, 3) is 1.200 and round(2.345, 2) is 2.35;
// the integer part keeps one more digit for a carry (round(9.99, 1) = 10.0).
func RoundType(x types.Type, digits int64) types.Type {
	s := max(min(digits, 76), 0)
	p := int64(x.Precision) - int64(x.Scale) + 1 + s
	p = min(max(p, 1, s), 76)
	return types.Type{Kind: types.Decimal, Precision: uint8(p), Scale: uint8(s)}
}

func truncTime(unit string, t time.Time) (time.Time, error) {
	y, mo, d := t.Date()
	loc := t.Location()
	_, off := t.Zone()
	// wallIn keeps t's own UTC offset where the truncated time has it (the
	// hour of 01:30 on the second pass of a fall-back night is 01:00 of
	// that pass), else reads the wall time as a value written so would be.
	wallIn := func(y int, mo time.Month, d, h, mi, s, ns int, loc *time.Location) time.Time {
		r := time.Date(y, mo, d, h, mi, s, ns, time.UTC).Add(-time.Duration(off) * time.Second).In(loc)
		if _, o := r.Zone(); o == off {
			return r
		}
		return types.WallIn(y, mo, d, h, mi, s, ns, loc)
	}
	switch unit {
	case "year":
		return wallIn(y, 1, 1, 0, 0, 0, 0, loc), nil
	case "quarter":
		return wallIn(y, (mo-1)/3*3+1, 1, 0, 0, 0, 0, loc), nil
	case "month":
		return wallIn(y, mo, 1, 0, 0, 0, 0, loc), nil
	case "week":
		wd := (int(t.Weekday()) + 6) % 7
		return wallIn(y, mo, d-wd, 0, 0, 0, 0, loc), nil
	case "day":
		return wallIn(y, mo, d, 0, 0, 0, 0, loc), nil
	case "hour":
		return wallIn(y, mo, d, t.Hour(), 0, 0, 0, loc), nil
	case "minute":
		return wallIn(y, mo, d, t.Hour(), t.Minute(), 0, 0, loc), nil
	case "second":
		return wallIn(y, mo, d, t.Hour(), t.Minute(), t.Second(), 0, loc), nil
	case "millisecond", "milliseconds":
		return t.Truncate(time.Millisecond), nil
	case "microsecond", "microseconds":
		return t.Truncate(time.Microsecond), nil
	}
	return t, sqlerr.New(sqlerr.CodeInvalidParameter, "date_trunc unit %q is not recognized", unit)
}

func extractField(field string, t time.Time) (int64, error) {
	switch field {
	case "year":
		return int64(t.Year()), nil
	case "quarter":
		return int64(t.Month()-1)/3 + 1, nil
	case "month":
		return int64(t.Month()), nil
	case "day":
		return int64(t.Day()), nil
	case "hour":
		return int64(t.Hour()), nil
	case "minute":
		return int64(t.Minute()), nil
	case "second":
		return int64(t.Second()), nil
	case "millisecond", "milliseconds":
		return int64(t.Second())*1000 + int64(t.Nanosecond())/1e6, nil
	case "microsecond", "microseconds":
		return int64(t.Second())*1e6 + int64(t.Nanosecond())/1e3, nil
	case "dow":
		return int64(t.Weekday()), nil
	case "isodow":
		return int64((int(t.Weekday())+6)%7 + 1), nil
	case "doy":
		return int64(t.YearDay()), nil
	case "epoch":
		return t.Unix(), nil
	case "week":
		_, w := t.ISOWeek()
		return int64(w), nil
	}
	return 0, sqlerr.New(sqlerr.CodeInvalidParameter, "extract field %q is not recognized", field)
}

// IntervalPartType is the type of extract(field FROM interval) for a
// field known when binding: INT64 for the whole-number fields, DECIMAL
// with the field's digits for second, millisecond and epoch, as
// PostgreSQL's numeric result prints them.
func IntervalPartType(field string) types.Type {
	_, scale, ok := types.IntervalPart(strings.ToLower(field), types.Value{})
	if !ok || scale == 0 {
		return types.Of(types.Int64)
	}
	return types.Type{Kind: types.Decimal, Precision: 38, Scale: uint8(scale)}
}

// evalSleep is pg_sleep(seconds): it waits that long for each row (not at
// all for NULL or a number not above zero) and returns NULL. The
// statement's context ends the wait with its error (a cancel, a timeout).
func (e *Func) evalSleep(c *Ctx, b *types.Batch) (*types.Vector, error) {
	secs, err := e.Args[0].Eval(c, b)
	if err != nil {
		return nil, err
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	for i := 0; i < b.Rows; i++ {
		if secs.IsNull(i) {
			continue
		}
		d := time.Duration(secs.Get(i).Float64() * float64(time.Second))
		if d <= 0 {
			continue
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	out := c.vec(e.T, b.Rows)
	for i := 0; i < b.Rows; i++ {
		out.AppendNull()
	}
	return out, nil
}
