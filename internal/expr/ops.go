package expr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// Arith is L op R for + - * / %. The binder has given it the result type of
// types.ResultType; operands of one kind take the typed loops below.
type Arith struct {
	Op   types.Op
	L, R Expr
	T    types.Type
	Pos  int
}

// Type implements Expr.
func (e *Arith) Type() types.Type { return e.T }
func (e *Arith) String() string {
	return "(" + e.L.String() + " " + e.Op.String() + " " + e.R.String() + ")"
}
func (e *Arith) kids() []*Expr { return []*Expr{&e.L, &e.R} }

// ArithError turns an error of types.Arith into the user-visible error: it
// names the operator, the values and the type.
func ArithError(pos int, op string, a, b types.Value, t types.Type, err error) error {
	if errors.Is(err, types.ErrDivisionByZero) {
		return sqlerr.New(sqlerr.CodeDivisionByZero, "division by zero").WithPos(pos)
	}
	var re *types.RangeError
	if errors.As(err, &re) {
		if k := t.Kind; re.Reason != "" && (k == types.Interval || k == types.DateTime64 || k == types.Date) {
			// PostgreSQL's "interval out of range", "timestamp out of
			// range"; with the result when it has one (a date past 9999).
			if re.Value != "" {
				return sqlerr.New(sqlerr.CodeDatetimeOverflow, "%s: %s %s %s is %s", re.Reason, a, op, b, re.Value).WithPos(pos)
			}
			return sqlerr.New(sqlerr.CodeDatetimeOverflow, "%s", re.Reason).WithPos(pos)
		}
		return sqlerr.OutOfRange(pos, "%s overflow: %s %s %s", t, a, op, b)
	}
	var oe *types.OpError
	if errors.As(err, &oe) {
		return sqlerr.New(sqlerr.CodeUndefinedFunction, "%s", oe.Error()).WithPos(pos)
	}
	return sqlerr.New(sqlerr.CodeNumericOutOfRange, "%s", err.Error()).WithPos(pos)
}

// Eval implements Expr.
func (e *Arith) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	l, err := e.L.Eval(c, b)
	if err != nil {
		return nil, err
	}
	r, err := e.R.Eval(c, b)
	if err != nil {
		return nil, err
	}
	n := b.Rows
	out := c.vec(e.T, n)
	lt, rt := l.Type(), r.Type()
	nulls := l.HasNulls() || r.HasNulls()
	if lt == e.T && rt == e.T {
		switch e.T.Kind {
		case types.Int64:
			if err := arithI64(e, l.Int64s(), r.Int64s(), l, r, nulls, out); err == nil {
				return out, nil
			} else if !errors.Is(err, errSlow) {
				return nil, err
			}
			out.Reset()
		case types.Uint64:
			if err := arithU64(e, l.Uint64s(), r.Uint64s(), l, r, nulls, out); err == nil {
				return out, nil
			} else if !errors.Is(err, errSlow) {
				return nil, err
			}
			out.Reset()
		case types.Float64:
			a, bb := l.Float64s(), r.Float64s()
			for i := range n {
				if nulls && (l.IsNull(i) || r.IsNull(i)) {
					out.AppendNull()
					continue
				}
				x, y := a[i], bb[i]
				var z float64
				switch e.Op {
				case types.OpAdd:
					z = x + y
				case types.OpSub:
					z = x - y
				case types.OpMul:
					z = x * y
				case types.OpDiv:
					if y == 0 {
						return nil, sqlerr.New(sqlerr.CodeDivisionByZero, "division by zero").WithPos(e.Pos)
					}
					z = x / y
				case types.OpMod:
					if y == 0 {
						return nil, sqlerr.New(sqlerr.CodeDivisionByZero, "division by zero").WithPos(e.Pos)
					}
					z = math.Mod(x, y)
				}
				out.AppendFloat64(z)
			}
			return out, nil
		}
	}
	for i := range n {
		if nulls && (l.IsNull(i) || r.IsNull(i)) {
			out.AppendNull()
			continue
		}
		x, y := l.Get(i), r.Get(i)
		z, err := types.Arith(e.Op, x, y)
		if err != nil {
			return nil, ArithError(e.Pos, e.Op.String(), x, y, e.T, err)
		}
		if z.Type() != e.T {
			if z, err = types.Cast(z, e.T); err != nil {
				return nil, ArithError(e.Pos, e.Op.String(), x, y, e.T, err)
			}
		}
		out.Append(z)
	}
	return out, nil
}

// errSlow sends a typed loop's batch to the exact per-row path, which names
// the failing values in its error.
var errSlow = errors.New("expr: slow path")

func arithI64(e *Arith, a, b []int64, l, r *types.Vector, nulls bool, out *types.Vector) error {
	for i := range a {
		if nulls && (l.IsNull(i) || r.IsNull(i)) {
			out.AppendNull()
			continue
		}
		x, y := a[i], b[i]
		var z int64
		switch e.Op {
		case types.OpAdd:
			z = x + y
			if (z > x) != (y > 0) {
				return errSlow
			}
		case types.OpSub:
			z = x - y
			if (z < x) != (y > 0) {
				return errSlow
			}
		case types.OpMul:
			if x != 0 {
				hi, lo := bits.Mul64(uint64(absI(x)), uint64(absI(y)))
				if hi != 0 || lo > math.MaxInt64 || x == math.MinInt64 || y == math.MinInt64 {
					return errSlow
				}
				z = x * y
			}
		case types.OpDiv:
			if y == 0 || (x == math.MinInt64 && y == -1) {
				return errSlow
			}
			z = x / y
		case types.OpMod:
			if y == 0 {
				return errSlow
			}
			if y != -1 {
				z = x % y
			}
		}
		out.AppendInt64(z)
	}
	return nil
}

func absI(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func arithU64(e *Arith, a, b []uint64, l, r *types.Vector, nulls bool, out *types.Vector) error {
	for i := range a {
		if nulls && (l.IsNull(i) || r.IsNull(i)) {
			out.AppendNull()
			continue
		}
		x, y := a[i], b[i]
		var z uint64
		var c uint64
		switch e.Op {
		case types.OpAdd:
			z, c = bits.Add64(x, y, 0)
		case types.OpSub:
			z, c = bits.Sub64(x, y, 0)
		case types.OpMul:
			c, z = bits.Mul64(x, y)
		case types.OpDiv:
			if y == 0 {
				return errSlow
			}
			z = x / y
		case types.OpMod:
			if y == 0 {
				return errSlow
			}
			z = x % y
		}
		if c != 0 {
			return errSlow
		}
		out.AppendUint64(z)
	}
	return nil
}

// Neg is -X.
type Neg struct {
	X   Expr
	T   types.Type
	Pos int
}

// Type implements Expr.
func (e *Neg) Type() types.Type { return e.T }
func (e *Neg) String() string   { return "(-" + e.X.String() + ")" }
func (e *Neg) kids() []*Expr    { return []*Expr{&e.X} }

// Eval implements Expr.
func (e *Neg) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	x, err := e.X.Eval(c, b)
	if err != nil {
		return nil, err
	}
	out := c.vec(e.T, b.Rows)
	for i := range b.Rows {
		v := x.Get(i)
		z, err := types.Neg(v)
		if err != nil {
			return nil, sqlerr.OutOfRange(e.Pos, "%s overflow: -%s", e.T, v)
		}
		if z.Type() != e.T {
			if z, err = types.Cast(z, e.T); err != nil {
				return nil, sqlerr.OutOfRange(e.Pos, "%s overflow: -%s", e.T, v)
			}
		}
		out.Append(z)
	}
	return out, nil
}

// CmpOp is a comparison operator.
type CmpOp uint8

// The comparison operators.
const (
	EQ CmpOp = iota
	NE
	LT
	LE
	GT
	GE
)

var cmpNames = [...]string{"=", "<>", "<", "<=", ">", ">="}

func (o CmpOp) String() string { return cmpNames[o] }

// Holds reports whether a comparison result c (-1, 0, 1) satisfies o.
func (o CmpOp) Holds(c int) bool {
	switch o {
	case EQ:
		return c == 0
	case NE:
		return c != 0
	case LT:
		return c < 0
	case LE:
		return c <= 0
	case GT:
		return c > 0
	}
	return c >= 0
}

// Flip returns the operator with its operands swapped (a < b is b > a).
func (o CmpOp) Flip() CmpOp {
	switch o {
	case LT:
		return GT
	case LE:
		return GE
	case GT:
		return LT
	case GE:
		return LE
	}
	return o
}

// Cmp is L op R, three-valued. The binder has cast both operands to one type.
type Cmp struct {
	Op   CmpOp
	L, R Expr
}

// Type implements Expr.
func (e *Cmp) Type() types.Type { return types.Of(types.Bool) }
func (e *Cmp) String() string {
	return e.L.String() + " " + e.Op.String() + " " + e.R.String()
}
func (e *Cmp) kids() []*Expr { return []*Expr{&e.L, &e.R} }

// Eval implements Expr.
func (e *Cmp) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	l, err := e.L.Eval(c, b)
	if err != nil {
		return nil, err
	}
	r, err := e.R.Eval(c, b)
	if err != nil {
		return nil, err
	}
	out := c.vec(types.Of(types.Bool), b.Rows)
	compareVectors(e.Op, l, r, b.Rows, out)
	if l.HasNulls() || r.HasNulls() {
		for i := range b.Rows {
			if l.IsNull(i) || r.IsNull(i) {
				out.SetNull(i)
			}
		}
	}
	return out, nil
}

// compareVectors appends op(l[i], r[i]) for n rows to out, ignoring NULLs
// (the caller marks them).
func compareVectors(op CmpOp, l, r *types.Vector, n int, out *types.Vector) {
	lt, rt := l.Type(), r.Type()
	if lt == rt {
		switch lt.Kind.Class() {
		case types.ClassInt64:
			cmpOrdered(op, l.Int64s()[:n], r.Int64s()[:n], out)
			return
		case types.ClassUint64:
			cmpOrdered(op, l.Uint64s()[:n], r.Uint64s()[:n], out)
			return
		case types.ClassVarlen:
			for i := range n {
				out.AppendBool(op.Holds(bytes.Compare(l.BytesAt(i), r.BytesAt(i))))
			}
			return
		case types.ClassBool:
			a, bb := l.Bools(), r.Bools()
			for i := range n {
				out.AppendBool(op.Holds(cmpBool(a[i], bb[i])))
			}
			return
		case types.ClassFloat64:
			a, bb := l.Float64s(), r.Float64s()
			for i := range n {
				out.AppendBool(op.Holds(CompareFloat(a[i], bb[i])))
			}
			return
		case types.ClassWide:
			if lt.Kind.IsUnsigned() {
				a, bb := l.Wides(), r.Wides()
				for i := range n {
					out.AppendBool(op.Holds(a[i].Cmp(&bb[i])))
				}
				return
			}
		}
	}
	for i := range n {
		if l.IsNull(i) || r.IsNull(i) {
			out.AppendBool(false)
			continue
		}
		out.AppendBool(op.Holds(types.Compare(l.Get(i), r.Get(i))))
	}
}

type ordered interface{ ~int64 | ~uint64 }

func cmpOrdered[T ordered](op CmpOp, a, b []T, out *types.Vector) {
	switch op {
	case EQ:
		for i := range a {
			out.AppendBool(a[i] == b[i])
		}
	case NE:
		for i := range a {
			out.AppendBool(a[i] != b[i])
		}
	case LT:
		for i := range a {
			out.AppendBool(a[i] < b[i])
		}
	case LE:
		for i := range a {
			out.AppendBool(a[i] <= b[i])
		}
	case GT:
		for i := range a {
			out.AppendBool(a[i] > b[i])
		}
	case GE:
		for i := range a {
			out.AppendBool(a[i] >= b[i])
		}
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// CompareFloat orders floats as types.Compare does: NaN after every number
// and equal to itself, -0 equal to 0.
func CompareFloat(a, b float64) int {
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

// Logic is AND or OR over two or more operands, three-valued.
type Logic struct {
	Or   bool
	Args []Expr
}

// Type implements Expr.
func (e *Logic) Type() types.Type { return types.Of(types.Bool) }
func (e *Logic) String() string {
	op := " AND "
	if e.Or {
		op = " OR "
	}
	s := "("
	for i, a := range e.Args {
		if i > 0 {
			s += op
		}
		s += a.String()
	}
	return s + ")"
}
func (e *Logic) kids() []*Expr { return ptrs(e.Args) }

// Eval implements Expr.
func (e *Logic) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	n := b.Rows
	out := c.vec(types.Of(types.Bool), n)
	// acc: the dominant value (false for AND, true for OR) decided, or null.
	dom := e.Or
	vs := make([]*types.Vector, 0, 4)
	for _, a := range e.Args {
		v, err := a.Eval(c, b)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	for i := range n {
		res, null := !dom, false
		for _, v := range vs {
			if v.IsNull(i) {
				null = true
				continue
			}
			if v.Bools()[i] == dom {
				res, null = dom, false
				break
			}
		}
		out.AppendBool(res)
		if null {
			out.SetNull(i)
		}
	}
	return out, nil
}

// Not is NOT X.
type Not struct{ X Expr }

// Type implements Expr.
func (e *Not) Type() types.Type { return types.Of(types.Bool) }
func (e *Not) String() string   { return "NOT " + e.X.String() }
func (e *Not) kids() []*Expr    { return []*Expr{&e.X} }

// Eval implements Expr.
func (e *Not) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	x, err := e.X.Eval(c, b)
	if err != nil {
		return nil, err
	}
	out := c.vec(types.Of(types.Bool), b.Rows)
	bs := x.Bools()
	for i := range b.Rows {
		out.AppendBool(!bs[i])
	}
	if x.HasNulls() {
		for i := range b.Rows {
			if x.IsNull(i) {
				out.SetNull(i)
			}
		}
	}
	return out, nil
}

// IsKind is what an Is node tests.
type IsKind uint8

// The IS tests.
const (
	IsNull IsKind = iota
	IsTrue
	IsFalse
)

// Is is X IS [NOT] NULL | TRUE | FALSE; never NULL itself.
type Is struct {
	X    Expr
	Kind IsKind
	Not  bool
}

// Type implements Expr.
func (e *Is) Type() types.Type { return types.Of(types.Bool) }
func (e *Is) String() string {
	s := e.X.String() + " IS "
	if e.Not {
		s += "NOT "
	}
	return s + [...]string{"NULL", "TRUE", "FALSE"}[e.Kind]
}
func (e *Is) kids() []*Expr { return []*Expr{&e.X} }

// Eval implements Expr.
func (e *Is) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	x, err := e.X.Eval(c, b)
	if err != nil {
		return nil, err
	}
	out := c.vec(types.Of(types.Bool), b.Rows)
	for i := range b.Rows {
		var r bool
		switch e.Kind {
		case IsNull:
			r = x.IsNull(i)
		case IsTrue:
			r = !x.IsNull(i) && x.Bools()[i]
		case IsFalse:
			r = !x.IsNull(i) && !x.Bools()[i]
		}
		out.AppendBool(r != e.Not)
	}
	return out, nil
}

// Distinct is L IS [NOT] DISTINCT FROM R: NULLs compare equal to each other.
type Distinct struct {
	L, R Expr
	Not  bool
}

// Type implements Expr.
func (e *Distinct) Type() types.Type { return types.Of(types.Bool) }
func (e *Distinct) String() string {
	if e.Not {
		return e.L.String() + " IS NOT DISTINCT FROM " + e.R.String()
	}
	return e.L.String() + " IS DISTINCT FROM " + e.R.String()
}
func (e *Distinct) kids() []*Expr { return []*Expr{&e.L, &e.R} }

// Eval implements Expr.
func (e *Distinct) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	l, err := e.L.Eval(c, b)
	if err != nil {
		return nil, err
	}
	r, err := e.R.Eval(c, b)
	if err != nil {
		return nil, err
	}
	out := c.vec(types.Of(types.Bool), b.Rows)
	for i := range b.Rows {
		eq := types.Equal(l.Get(i), r.Get(i))
		out.AppendBool(eq == e.Not)
	}
	return out, nil
}

// Cast is CAST(X AS T).
type Cast struct {
	X   Expr
	T   types.Type
	Pos int
}

// Type implements Expr.
func (e *Cast) Type() types.Type { return e.T }
func (e *Cast) String() string   { return "CAST(" + e.X.String() + " AS " + e.T.String() + ")" }
func (e *Cast) kids() []*Expr    { return []*Expr{&e.X} }

// Eval implements Expr.
func (e *Cast) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	x, err := e.X.Eval(c, b)
	if err != nil {
		return nil, err
	}
	if x.Type() == e.T {
		return x, nil
	}
	out := c.vec(e.T, b.Rows)
	for i := range b.Rows {
		v := x.Get(i)
		z, err := types.Cast(v, e.T)
		if err != nil {
			return nil, CastError(e.Pos, v, e.T, err)
		}
		out.Append(z)
	}
	return out, nil
}

// rangeCode is the SQLSTATE of a value that does not fit its type:
// PostgreSQL's interval_field_overflow for interval input, else
// numeric_value_out_of_range.
func rangeCode(e *types.RangeError) string {
	switch k := e.Type.Kind; {
	case k == types.Interval && e.Value != "":
		return sqlerr.CodeIntervalOverflow
	case k == types.Date || k == types.DateTime64:
		// datetime_field_overflow, as PostgreSQL reports a date or
		// timestamp out of range.
		return sqlerr.CodeDatetimeOverflow
	}
	return sqlerr.CodeNumericOutOfRange
}

// RangeCode is the SQLSTATE of e as CastError reports it.
func RangeCode(e *types.RangeError) string { return rangeCode(e) }

// CastError turns an error of types.Cast into the user-visible error.
func CastError(pos int, v types.Value, t types.Type, err error) error {
	var re *types.RangeError
	if errors.As(err, &re) {
		return sqlerr.New(rangeCode(re), "%s", err.Error()).WithPos(pos)
	}
	var pe *types.ParseError
	if errors.As(err, &pe) {
		code := sqlerr.CodeInvalidText
		if t.Kind == types.Date || t.Kind == types.DateTime64 || t.Kind == types.Interval {
			code = sqlerr.CodeInvalidDatetime
		}
		return sqlerr.New(code, "%s", err.Error()).WithPos(pos)
	}
	var ce *types.CastError
	if errors.As(err, &ce) {
		return sqlerr.New(sqlerr.CodeDatatypeMismatch, "%s", err.Error()).WithPos(pos)
	}
	return sqlerr.New(sqlerr.CodeInvalidText, "cannot cast %s to %s: %v", v, t, err).WithPos(pos)
}

// errorf is a shorthand for internal errors.
func errorf(format string, args ...any) error { return fmt.Errorf("expr: "+format, args...) }
