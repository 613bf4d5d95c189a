package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// predicate binds a condition that must be BOOL.
func (b *binder) predicate(sc *scope, e ast.Expr, what string) (expr.Expr, error) {
	x, err := b.expr(sc, e)
	if err != nil {
		return nil, err
	}
	return b.boolean(x, e.Pos(), what)
}

func (b *binder) boolean(x expr.Expr, pos int, what string) (expr.Expr, error) {
	switch x.Type().Kind {
	case types.Bool:
		return x, nil
	case types.Unknown:
		return expr.NewConst(types.Null(types.Of(types.Bool))), nil
	}
	return nil, sqlerr.New(sqlerr.CodeDatatypeMismatch, "argument of %s must be type BOOL, not type %s", what, x.Type()).WithPos(pos)
}

// hasCol reports whether r has a column named name.
func hasCol(r *rel, name string) bool {
	for i := range r.cols {
		if r.cols[i].name == name {
			return true
		}
	}
	return false
}

// resolve finds a column reference in sc or, through correlation, in an
// enclosing query.
func (b *binder) resolve(sc *scope, c *ast.ColumnRef) (expr.Expr, error) {
	var found *relCol
	var foundRel *rel
	for _, r := range sc.rels {
		if c.Table != "" && r.name != c.Table {
			continue
		}
		for i := range r.cols {
			if r.cols[i].name == c.Name && !(r.cols[i].merged && c.Table == "") {
				if found != nil {
					return nil, sqlerr.New(sqlerr.CodeAmbiguousColumn, "column reference %q is ambiguous", c.Name).WithPos(c.Pos()).WithToken(c.Name)
				}
				found, foundRel = &r.cols[i], r
			}
		}
		if c.Name == "_commit" && r.scan != nil && (found == nil || foundRel != r) && !hasCol(r, "_commit") {
			if found != nil {
				// Every table read has its own _commit (R7.2), as every
				// PostgreSQL table its xmin: unqualified in a join it is
				// as ambiguous as any column two tables share.
				return nil, sqlerr.New(sqlerr.CodeAmbiguousColumn, "column reference %q is ambiguous", c.Name).WithPos(c.Pos()).WithToken(c.Name)
			}
			if !r.scan.Commit {
				r.scan.Commit = true
				r.scan.CommitCol = b.newCol("_commit", types.Of(types.Uint64))
			}
			r.cols = append(r.cols, relCol{name: "_commit", ref: r.scan.CommitCol, hidden: true})
			found, foundRel = &r.cols[len(r.cols)-1], r
		}
	}
	if found != nil {
		_ = foundRel
		if b.agg != nil && b.agg.scope == sc {
			if g, ok := b.agg.groups[ast.Format(c)]; ok {
				return colExpr(g), nil
			}
			if g, ok := b.agg.byID[found.ref.ID]; ok {
				return colExpr(g), nil
			}
			if g, ok := b.agg.groups[c.Name]; ok && c.Table == "" {
				// Only an unqualified name may read a group by its bare
				// name: t.g is not GROUP BY g's merged FULL JOIN column.
				return colExpr(g), nil
			}
			if found.mk != nil {
				// The merged column of a FULL JOIN … USING is coalesce(a.k,
				// b.k): grouped when each column it reads is (GROUP BY a.k,
				// b.k), as PostgreSQL decides after flattening join columns.
				if e, ok := b.regroup(found.value()); ok {
					return e, nil
				}
			}
			return nil, sqlerr.New(sqlerr.CodeGrouping, "column %q must appear in the GROUP BY clause or be used in an aggregate function", c.Name).WithPos(c.Pos()).WithToken(c.Name)
		}
		return found.value(), nil
	}
	if sc.parent != nil && sc.corr != nil {
		// The enclosing query's aggregate context applies to its columns: a
		// correlated reference to a grouped query reads the group's value
		// (or is the grouping error PostgreSQL reports).
		saved := b.agg
		b.agg = sc.corr.agg
		outer, err := b.resolve(sc.parent, c)
		b.agg = saved
		if err == nil {
			slot := len(sc.corr.exprs)
			sc.corr.exprs = append(sc.corr.exprs, outer)
			return &expr.Outer{Slot: slot, Name: c.Name, T: outer.Type()}, nil
		}
		var se *sqlerr.Error
		if errors.As(err, &se) && se.Code == sqlerr.CodeGrouping && se.Pos == c.Pos() {
			// PostgreSQL's wording for an outer column the outer query
			// does not group by.
			return nil, sqlerr.New(sqlerr.CodeGrouping, "subquery uses ungrouped column %q from outer query", qualifiedName(sc.parent, c)).WithPos(c.Pos()).WithToken(c.Name)
		}
		if errors.As(err, &se) && se.Code != sqlerr.CodeUndefinedColumn && se.Code != sqlerr.CodeUndefinedTable {
			return nil, err
		}
	}
	name := c.Name
	if c.Table != "" {
		known := false
		for s := sc; s != nil; s = s.parent {
			for _, r := range s.rels {
				if r.name == c.Table {
					known = true
				}
			}
		}
		if !known {
			return nil, sqlerr.New(sqlerr.CodeUndefinedTable, "missing FROM-clause entry for table %q", c.Table).WithPos(c.Pos()).WithToken(c.Table)
		}
		name = c.Table + "." + c.Name
	}
	return nil, sqlerr.UndefinedColumn(c.Pos(), name).WithToken(c.Name)
}

// coerce casts e to t: constants now, other expressions at run time.
func (b *binder) coerce(e expr.Expr, t types.Type, pos int) (expr.Expr, error) {
	if e.Type() == t {
		return e, nil
	}
	if k, ok := e.(*expr.Const); ok {
		v, err := types.Cast(k.V, t)
		if err != nil {
			return nil, expr.CastError(pos, k.V, t, err)
		}
		return expr.NewConst(v), nil
	}
	return &expr.Cast{X: e, T: t, Pos: pos}, nil
}

// adapt gives a literal the type of the column it meets when it fits: an
// integer or string literal against a column becomes a value of that
// column's type (so UINT256 and DATETIME64 comparisons stay exact), and
// a string literal against a literal of another type takes that type.
func (b *binder) adapt(l, r expr.Expr) (expr.Expr, expr.Expr) {
	try := func(lit, other expr.Expr) expr.Expr {
		k, ok := lit.(*expr.Const)
		if !ok || !b.lits[lit] || k.V.IsNull() {
			return lit
		}
		if b.lits[other] {
			// Between two literals only a quoted one adapts, to the
			// other's type if that is not text: '1' + 1 is 2, as in
			// PostgreSQL, where a quoted literal has no type of its own.
			if o, ok := other.(*expr.Const); !ok || k.V.Kind() != types.String || o.V.IsNull() || o.V.Kind() == types.String {
				return lit
			}
		}
		v, ok := adaptValue(k.V, other.Type())
		if !ok {
			return lit
		}
		c := expr.NewConst(v)
		b.lits[c] = true
		return c
	}
	return try(l, r), try(r, l)
}

// adaptValue is the value literal v takes against an operand of type ot
// (adapt), and false where it keeps its own: an integer or string
// becomes a value of ot when it is one. A point SELECT's plan template
// (template.go) gives a text parameter its key column's type through it,
// as the binder does.
func adaptValue(v types.Value, ot types.Type) (types.Value, bool) {
	if ot.Kind == types.Unknown {
		return v, false
	}
	if v.Kind() != types.String && !(v.Kind().IsInteger() && ot.Kind.IsNumeric()) {
		return v, false
	}
	if v.Kind() == types.String && ot.Kind == types.Decimal {
		// A quoted number meeting a DECIMAL keeps its own digits, as
		// PostgreSQL reads it as numeric without a scale: cast to the
		// other side's scale it would be rounded ('1.25' = 1.3).
		text := strings.TrimSpace(v.Str())
		neg := strings.HasPrefix(text, "-")
		n, err := types.ParseNumber(strings.TrimPrefix(strings.TrimPrefix(text, "-"), "+"))
		if err == nil && neg {
			n, err = types.Neg(n)
		}
		if err != nil || n.Kind() == types.Float64 {
			return v, false
		}
		return n, true
	}
	c, err := types.Cast(v, ot)
	if err != nil {
		return v, false
	}
	if v.Kind() != types.String && types.Compare(c, v) != 0 {
		return v, false
	}
	return c, true
}

// litError is the error of an operator whose quoted literal operand adapt
// could not give the other operand's type: the literal is not a value of
// that type ('abc' against an INT64 column), which PostgreSQL reports as
// such (invalid input syntax for type bigint), not as a missing operator.
func (b *binder) litError(l, r expr.Expr, pos int) error {
	for _, p := range [][2]expr.Expr{{l, r}, {r, l}} {
		k, ok := p[0].(*expr.Const)
		ot := p[1].Type()
		if !ok || !b.lits[p[0]] || k.V.IsNull() || k.V.Kind() != types.String || ot.Kind == types.String || ot.Kind == types.Unknown {
			continue
		}
		if _, err := types.ParseText(ot, strings.TrimSpace(k.V.Str())); err != nil {
			if lp, ok := b.litPos[p[0]]; ok {
				pos = lp // PostgreSQL points at the literal
			}
			return expr.CastError(pos, k.V, ot, err)
		}
	}
	return nil
}

// compare binds l op r with both sides in their common type.
func (b *binder) compare(op expr.CmpOp, l, r expr.Expr, pos int) (expr.Expr, error) {
	l, r = elementTyped(b.adapt(l, r))
	t, ok := types.Common(l.Type(), r.Type())
	if !ok {
		if err := b.litError(l, r, pos); err != nil {
			return nil, err
		}
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.Type(), op, r.Type()).WithPos(pos)
	}
	if t.Kind == types.Unknown {
		t = types.Of(types.String)
	}
	if exactMixed(l.Type(), r.Type(), t) {
		// No type holds both sides (UINT256 against a signed integer,
		// a 78-digit integer against a DECIMAL): they are compared as
		// numbers, exactly (R2.3), each in its own type.
		return &expr.Cmp{Op: op, L: l, R: r}, nil
	}
	var err error
	if l, err = b.coerce(l, t, pos); err != nil {
		return nil, err
	}
	if r, err = b.coerce(r, t, pos); err != nil {
		return nil, err
	}
	return &expr.Cmp{Op: op, L: l, R: r}, nil
}

// exactMixed reports whether a comparison of exact numbers of types a
// and b must compare them as they are because their common type t does
// not hold every value of one of them.
func exactMixed(a, b, t types.Type) bool {
	exact := func(k types.Kind) bool { return k.IsInteger() || k == types.Decimal }
	return exact(a.Kind) && exact(b.Kind) && (!types.HoldsAll(a, t) || !types.HoldsAll(b, t))
}

var cmpOps = map[token.Token]expr.CmpOp{token.EQ: expr.EQ, token.NE: expr.NE, token.LT: expr.LT, token.LE: expr.LE, token.GT: expr.GT, token.GE: expr.GE}
var arithOps = map[token.Token]types.Op{token.PLUS: types.OpAdd, token.MINUS: types.OpSub, token.MUL: types.OpMul, token.DIV: types.OpDiv, token.MOD: types.OpMod}

// expr binds a scalar expression in scope sc.
func (b *binder) expr(sc *scope, e ast.Expr) (expr.Expr, error) {
	if f, ok := e.(*ast.FuncCall); ok {
		if f.Over != nil {
			return b.windowCall(sc, f)
		}
		if _, isWin := windowFuncs[f.Name]; isWin && f.Schema == "" {
			return nil, sqlerr.New("42809", "window function %s requires an OVER clause", f.Name).WithPos(f.Pos()).WithToken(f.Name)
		}
	}
	if f, ok := e.(*ast.FuncCall); ok && f.Schema == "" && aggFuncs[f.Name] {
		if l := aggLevel(sc, f); l > 0 {
			return b.outerAggregate(sc, f, l)
		}
	}
	if b.agg != nil && b.agg.scope == sc {
		if g, ok := b.agg.groups[ast.Format(e)]; ok {
			return colExpr(g), nil
		}
		if f, ok := e.(*ast.FuncCall); ok && f.Schema == "" && aggFuncs[f.Name] {
			return b.aggregate(f)
		}
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return b.expr(sc, x.X)
	case *ast.NumberLit:
		v, err := types.ParseNumber(x.Text)
		if err != nil {
			return nil, sqlerr.OutOfRange(x.Pos(), "%v", err).WithToken(x.Text)
		}
		c := expr.NewConst(v)
		b.lits[c] = true
		return c, nil
	case *ast.StringLit:
		c := expr.NewConst(types.NewString(x.Value))
		b.lits[c] = true
		b.litPos[c] = x.Pos()
		return c, nil
	case *ast.BoolLit:
		return expr.NewConst(types.NewBool(x.Value)), nil
	case *ast.NullLit:
		return expr.NewConst(types.Null(types.Of(types.Unknown))), nil
	case *ast.TypedLit:
		t, err := typeOf(x.Type)
		if err != nil {
			return nil, err
		}
		v, err := types.ParseText(t, x.Value)
		if err != nil {
			return nil, expr.CastError(x.Pos(), types.NewString(x.Value), t, err)
		}
		return expr.NewConst(v), nil
	case *ast.IntervalLit:
		v, err := types.ParseInterval(x.Value, types.IntervalFieldOf(x.Field))
		if err != nil {
			return nil, expr.CastError(x.Pos(), types.NewString(x.Value), types.Of(types.Interval), err)
		}
		return expr.NewConst(v), nil
	case *ast.Param:
		if x.Index < 1 || x.Index > len(b.env.Params) {
			return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "there is no parameter $%d", x.Index).WithPos(x.Pos())
		}
		c := expr.NewConst(b.env.Params[x.Index-1])
		if c.V.Kind() == types.String {
			b.lits[c] = true
		}
		return c, nil
	case *ast.ColumnRef:
		return b.resolve(sc, x)
	case *ast.UnaryExpr:
		v, err := b.expr(sc, x.X)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case token.NOT:
			v, err = b.boolean(v, x.X.Pos(), "NOT")
			if err != nil {
				return nil, err
			}
			return &expr.Not{X: v}, nil
		case token.PLUS:
			return v, nil
		case token.REGEX:
			// Prefix ~ is bitwise NOT, on integers only.
			t := v.Type()
			if t.Kind == types.Unknown {
				t = types.Of(types.Int64)
				v = expr.NewConst(types.Null(t))
			}
			if !t.Kind.IsInteger() {
				return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: ~ %s", t).WithPos(x.Pos())
			}
			return &expr.BitNot{X: v, T: t}, nil
		}
		if k, ok := v.(*expr.Const); ok && b.lits[v] {
			n, err := types.Neg(k.V)
			if err != nil {
				return nil, sqlerr.OutOfRange(x.Pos(), "%v", err)
			}
			c := expr.NewConst(types.Narrow(n))
			b.lits[c] = true
			return c, nil
		}
		t, ok := types.NegType(v.Type())
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: -%s", v.Type()).WithPos(x.Pos())
		}
		return &expr.Neg{X: v, T: t, Pos: x.Pos()}, nil
	case *ast.BinaryExpr:
		return b.binary(sc, x)
	case *ast.IsExpr:
		if tup, ok := unparen(x.X).(*ast.TupleExpr); ok && (x.Kind == ast.IsNull || x.Kind == ast.IsUnknown) {
			// A row IS NULL when every field is, IS NOT NULL when none is
			// (so a row with some NULLs is neither).
			args := make([]expr.Expr, len(tup.Items))
			for i, it := range tup.Items {
				v, err := b.expr(sc, it)
				if err != nil {
					return nil, err
				}
				args[i] = &expr.Is{X: v, Kind: expr.IsNull, Not: x.Not}
			}
			return &expr.Logic{Args: args}, nil
		}
		v, err := b.expr(sc, x.X)
		if err != nil {
			return nil, err
		}
		switch x.Kind {
		case ast.IsNull, ast.IsUnknown:
			return &expr.Is{X: v, Kind: expr.IsNull, Not: x.Not}, nil
		case ast.IsTrue, ast.IsFalse:
			if v, err = b.boolean(v, x.X.Pos(), "IS"); err != nil {
				return nil, err
			}
			k := expr.IsTrue
			if x.Kind == ast.IsFalse {
				k = expr.IsFalse
			}
			return &expr.Is{X: v, Kind: k, Not: x.Not}, nil
		}
		r, err := b.expr(sc, x.From)
		if err != nil {
			return nil, err
		}
		c, err := b.compare(expr.EQ, v, r, x.Pos())
		if err != nil {
			return nil, err
		}
		cc := c.(*expr.Cmp)
		return &expr.Distinct{L: cc.L, R: cc.R, Not: x.Not}, nil
	case *ast.BetweenExpr:
		v, err := b.expr(sc, x.X)
		if err != nil {
			return nil, err
		}
		lo, err := b.expr(sc, x.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.expr(sc, x.Hi)
		if err != nil {
			return nil, err
		}
		c1, err := b.compare(expr.GE, v, lo, x.Pos())
		if err != nil {
			return nil, err
		}
		c2, err := b.compare(expr.LE, v, hi, x.Pos())
		if err != nil {
			return nil, err
		}
		var res expr.Expr = &expr.Logic{Args: []expr.Expr{c1, c2}}
		if x.Symmetric {
			// BETWEEN SYMMETRIC accepts the bounds in either order:
			// (x BETWEEN lo AND hi) OR (x BETWEEN hi AND lo).
			c3, err := b.compare(expr.GE, v, hi, x.Pos())
			if err != nil {
				return nil, err
			}
			c4, err := b.compare(expr.LE, v, lo, x.Pos())
			if err != nil {
				return nil, err
			}
			res = &expr.Logic{Or: true, Args: []expr.Expr{res, &expr.Logic{Args: []expr.Expr{c3, c4}}}}
		}
		if x.Not {
			res = &expr.Not{X: res}
		}
		return res, nil
	case *ast.InExpr:
		return b.in(sc, x)
	case *ast.LikeExpr:
		v, err := b.expr(sc, x.X)
		if err != nil {
			return nil, err
		}
		p, err := b.expr(sc, x.Pattern)
		if err != nil {
			return nil, err
		}
		str := types.Of(types.String)
		if v, err = b.coerce(v, str, x.X.Pos()); err != nil {
			return nil, err
		}
		if p, err = b.coerce(p, str, x.Pattern.Pos()); err != nil {
			return nil, err
		}
		esc := '\\'
		if x.Escape != nil {
			ev, err := b.evalConst(x.Escape)
			if err != nil {
				return nil, err
			}
			rs := []rune(ev.Str())
			switch len(rs) {
			case 0:
				esc = 0
			case 1:
				esc = rs[0]
			default:
				return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "invalid escape string").WithPos(x.Escape.Pos()).WithHint("escape string must be empty or one character")
			}
		}
		return expr.NewLike(v, p, esc, x.ILike, x.Not, x.Pos())
	case *ast.CaseExpr:
		return b.caseExpr(sc, x)
	case *ast.CastExpr:
		v, err := b.expr(sc, x.X)
		if err != nil {
			return nil, err
		}
		t, err := typeOf(x.Type)
		if err != nil {
			return nil, err
		}
		if t.Kind == types.Decimal && len(x.Type.Params) == 0 {
			t = bareDecimal(v, t)
		}
		if v.Type().Kind == types.Unknown {
			return expr.NewConst(types.Null(t)), nil
		}
		return &expr.Cast{X: v, T: t, Pos: x.Pos()}, nil
	case *ast.FuncCall:
		return b.funcCall(sc, x)
	case *ast.SubqueryExpr:
		return b.subquery(sc, x.Query, expr.SubScalar, nil, false, x.Pos())
	case *ast.ExistsExpr:
		return b.subquery(sc, x.Query, expr.SubExists, nil, false, x.Pos())
	case *ast.QuantifiedExpr:
		return b.quantified(sc, x)
	case *ast.TupleExpr:
		return nil, notSupported(e, "a row value %s can be used only in a comparison or IN", ast.Format(e))
	}
	return nil, notSupported(e, "expression %s is not supported", ast.Format(e))
}

// bareScale is the scale a cast to NUMERIC without a precision gives a
// value whose digits are known only when it runs (a float or text
// expression): DECIMAL(76, 15) holds 61 integer digits and 15 decimals,
// about what float8's 15 significant digits (DBL_DIG) need either side
// of the point.
const bareScale = 15

// bareDecimal is the type of a cast to DECIMAL / NUMERIC written without a
// precision. As a column type that is DECIMAL(38,0) (the SQL standard's
// scale 0, as ClickHouse and Snowflake; docs/functions.md), but in an
// expression PostgreSQL's unconstrained numeric keeps every digit of the
// value cast, and idioms such as round(avg(x)::numeric, 2) depend on it:
// a DECIMAL keeps its type, an integer takes the digits its type can
// hold, a constant float or quoted number its own digits (1e-20, '1.25',
// 0.1 from float8 as its shortest text), and any other float or text
// DECIMAL(76, bareScale).
func bareDecimal(v expr.Expr, def types.Type) types.Type {
	st := v.Type()
	wide := types.Type{Kind: types.Decimal, Precision: types.MaxDecimalPrecision, Scale: bareScale}
	c, isConst := fold(v).(*expr.Const) // 1.5::float8 folds to a constant
	isConst = isConst && !c.V.IsNull()
	switch {
	case st.Kind == types.Decimal:
		return st
	case st.Kind.IsInteger():
		return types.Type{Kind: types.Decimal, Precision: uint8(min(types.MaxDecimalPrecision, max(38, intDigits(st))))}
	case st.Kind == types.Float32 || st.Kind == types.Float64:
		if isConst {
			if f, err := types.Cast(c.V, types.Of(types.Float64)); err == nil {
				if t, ok := decimalOfText(strconv.FormatFloat(f.Float64(), 'f', -1, 64)); ok {
					return t
				}
			}
		}
		return wide
	case st.Kind == types.String:
		if isConst {
			if t, ok := decimalOfText(c.V.Str()); ok {
				return t
			}
		}
		return wide
	}
	return def
}

// decimalOfText is the DECIMAL type that holds the number text spells
// exactly, its exponent (1e-20) written out; false when text is no
// finite number or needs more than MaxDecimalPrecision digits.
func decimalOfText(text string) (types.Type, bool) {
	// ParseNumber reads unsigned digits; the sign changes no digit.
	text = strings.TrimLeft(strings.TrimSpace(text), "+-")
	n, err := types.ParseNumber(text)
	if err != nil {
		return types.Type{}, false
	}
	if n.Kind() == types.Float64 {
		f := n.Float64()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return types.Type{}, false
		}
		if n, err = types.ParseNumber(strconv.FormatFloat(f, 'f', -1, 64)); err != nil {
			return types.Type{}, false
		}
	}
	switch {
	case n.Kind() == types.Decimal:
		return n.Type(), true
	case n.Kind().IsInteger():
		return types.Type{Kind: types.Decimal, Precision: 38}, true
	}
	return types.Type{}, false
}

// intDigits is the most decimal digits a value of integer type t has.
func intDigits(t types.Type) int {
	switch t.Kind {
	case types.Int128, types.Uint128:
		return 39
	case types.Int256, types.Uint256:
		return 78
	}
	return 20
}

func typeOf(tn *ast.TypeName) (types.Type, error) {
	ps := make([]types.Param, len(tn.Params))
	for i, p := range tn.Params {
		ps[i] = types.Param{Int: p.Int, Str: p.Str, IsStr: p.IsStr}
	}
	t, err := types.FromName(tn.Name, ps)
	if err != nil {
		return t, sqlerr.New(sqlerr.CodeUndefinedObject, "%v", err).WithPos(tn.Pos())
	}
	return t, nil
}

func (b *binder) binary(sc *scope, x *ast.BinaryExpr) (expr.Expr, error) {
	if op, ok := cmpOps[x.Op]; ok {
		lt, lok := unparen(x.L).(*ast.TupleExpr)
		rt, rok := unparen(x.R).(*ast.TupleExpr)
		if lok || rok {
			if !lok || !rok {
				return nil, notSupported(x, "a row value can be compared only with another row value of the same length")
			}
			return b.rowCompare(sc, op, lt, rt, x.Pos())
		}
	}
	l, err := b.expr(sc, x.L)
	if err != nil {
		return nil, err
	}
	r, err := b.expr(sc, x.R)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case token.AND, token.OR:
		if l, err = b.boolean(l, x.L.Pos(), x.Op.String()); err != nil {
			return nil, err
		}
		if r, err = b.boolean(r, x.R.Pos(), x.Op.String()); err != nil {
			return nil, err
		}
		or := x.Op == token.OR
		var args []expr.Expr
		for _, a := range []expr.Expr{l, r} {
			if lg, ok := a.(*expr.Logic); ok && lg.Or == or {
				args = append(args, lg.Args...)
			} else {
				args = append(args, a)
			}
		}
		return &expr.Logic{Or: or, Args: args}, nil
	case token.CONCAT:
		str := types.Of(types.String)
		f, _, err := expr.NewFunc("||", []types.Type{str, str}, x.Pos())
		if err != nil {
			return nil, err
		}
		if l, err = b.coerce(l, str, x.L.Pos()); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, str, x.R.Pos()); err != nil {
			return nil, err
		}
		f.Args = []expr.Expr{l, r}
		return f, nil
	}
	if op, ok := cmpOps[x.Op]; ok {
		return b.compare(op, l, r, x.Pos())
	}
	switch x.Op {
	case token.CARET:
		// x ^ y is power(x, y): FLOAT64, as PostgreSQL's float8 ^ float8
		// (docs/functions.md says where numeric ^ numeric differs).
		return b.callTyped("power", []expr.Expr{l, r}, []int{x.L.Pos(), x.R.Pos()}, x.Pos())
	case token.AMP, token.BAR, token.HASH, token.SHL, token.SHR:
		return b.bitwise(x.Op, l, r, x.Pos())
	}
	op, ok := arithOps[x.Op]
	if !ok {
		return nil, notSupported(x, "operator %s is not supported", x.Op)
	}
	return b.arith(op, l, r, x.L.Pos(), x.R.Pos(), x.Pos())
}

// arith binds l op r for an arithmetic operator: date and interval
// arithmetic, else both operands in the type of types.ResultType.
func (b *binder) arith(op types.Op, l, r expr.Expr, lpos, rpos, pos int) (expr.Expr, error) {
	tl, tr, t, ok, err := b.timeOperands(op, l, r, lpos, rpos)
	if err != nil {
		return nil, err
	}
	if ok {
		return &expr.Arith{Op: op, L: tl, R: tr, T: t, Pos: pos}, nil
	}
	l, r = b.adapt(l, r)
	lt, rt := l.Type(), r.Type()
	if lt.Kind == types.Unknown {
		lt = rt
	}
	if rt.Kind == types.Unknown {
		rt = lt
	}
	t, ok = types.ResultType(op, lt, rt)
	if !ok {
		if err := b.litError(l, r, pos); err != nil {
			return nil, err
		}
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.Type(), op, r.Type()).WithPos(pos)
	}
	if l.Type().Kind == types.Unknown {
		l = expr.NewConst(types.Null(lt))
	}
	if r.Type().Kind == types.Unknown {
		r = expr.NewConst(types.Null(rt))
	}
	if t.Kind != types.Decimal {
		if l, err = b.coerce(l, t, lpos); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, t, rpos); err != nil {
			return nil, err
		}
	}
	return &expr.Arith{Op: op, L: l, R: r, T: t, Pos: pos}, nil
}

var bitOps = map[token.Token]expr.BitOp{token.AMP: expr.BitAnd, token.BAR: expr.BitOr, token.HASH: expr.BitXor, token.SHL: expr.BitShl, token.SHR: expr.BitShr}

// bitwise binds l op r for PostgreSQL's bitwise operators, defined on
// integers only: & | # in the operands' common integer type, << and >>
// in l's type with an integer shift count (expr.Bitwise).
func (b *binder) bitwise(tok token.Token, l, r expr.Expr, pos int) (expr.Expr, error) {
	op := bitOps[tok]
	if op != expr.BitShl && op != expr.BitShr {
		l, r = b.adapt(l, r)
	}
	lt, rt := l.Type(), r.Type()
	isInt := func(t types.Type) bool { return t.Kind.IsInteger() || t.Kind == types.Unknown }
	if !isInt(lt) || !isInt(rt) {
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: %s %s %s", lt, tok, rt).WithPos(pos).
			WithHint("The bitwise operators take integer operands.")
	}
	var t types.Type
	var err error
	if op == expr.BitShl || op == expr.BitShr {
		t = lt
		if t.Kind == types.Unknown {
			t = types.Of(types.Int64)
		}
		if r, err = b.coerce(r, types.Of(types.Int64), pos); err != nil {
			return nil, err
		}
	} else {
		t, _ = types.Common(lt, rt)
		if t.Kind == types.Unknown {
			t = types.Of(types.Int64)
		}
		if r, err = b.coerce(r, t, pos); err != nil {
			return nil, err
		}
	}
	if l, err = b.coerce(l, t, pos); err != nil {
		return nil, err
	}
	return &expr.Bitwise{Op: op, L: l, R: r, T: t}, nil
}

// shareType gives each quoted literal among es, which are to take one
// type, the common type of the others (those that are not quoted
// literals or untyped NULLs), as PostgreSQL resolves unknown literals
// (greatest(k, '7'), CASE … THEN '1' ELSE 2): the common type, not the
// first one's, so the order of the arms does not change a value.
func (b *binder) shareType(es []expr.Expr) {
	var common types.Type
	found := false
	for _, e := range es {
		if k, ok := e.(*expr.Const); ok && b.lits[e] && !k.V.IsNull() && k.V.Kind() == types.String || e.Type().Kind == types.Unknown {
			continue
		}
		if !found {
			common, found = e.Type(), true
			continue
		}
		c, ok := types.Common(common, e.Type())
		if !ok {
			return // an error the caller reports
		}
		common = c
	}
	if !found {
		return
	}
	ref := expr.NewConst(types.Null(common))
	for i, a := range es {
		if k, ok := a.(*expr.Const); ok && b.lits[a] && !k.V.IsNull() && k.V.Kind() == types.String {
			es[i], _ = b.adapt(a, ref)
		}
	}
}

// sameTypeFuncs are the functions whose arguments all take one type.
var sameTypeFuncs = map[string]bool{"coalesce": true, "greatest": true, "least": true, "nullif": true}

// resolveFunc resolves a function call on args of types ts with resolve.
// A quoted literal or text parameter has no type of its own: as
// PostgreSQL resolves an unknown literal to the parameter type of the
// function it is passed to (substr('abc', '2'), or round(x, $1) from a
// driver that sends text), a call that does not resolve is tried again
// with such arguments untyped; the first error stands if that fails too.
func (b *binder) resolveFunc(args []expr.Expr, ts []types.Type, resolve func([]types.Type) (*expr.Func, expr.Signature, error)) (*expr.Func, expr.Signature, error) {
	fn, sig, err := resolve(ts)
	if err == nil {
		return fn, sig, nil
	}
	var retry []types.Type
	for i, a := range args {
		if k, ok := a.(*expr.Const); ok && b.lits[a] && !k.V.IsNull() && k.V.Kind() == types.String {
			if retry == nil {
				retry = slices.Clone(ts)
			}
			retry[i] = types.Of(types.Unknown)
		}
	}
	if retry == nil {
		return nil, sig, err
	}
	if fn2, sig2, err2 := resolve(retry); err2 == nil {
		return fn2, sig2, nil
	}
	return nil, sig, err
}

// callTyped binds a call of the scalar function name on bound arguments
// (an operator that PostgreSQL defines as a function call, such as ^ for
// power).
func (b *binder) callTyped(name string, args []expr.Expr, poss []int, pos int) (expr.Expr, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	fn, sig, err := b.resolveFunc(args, ts, func(ts []types.Type) (*expr.Func, expr.Signature, error) {
		return expr.NewFunc(name, ts, pos)
	})
	if err != nil {
		return nil, err
	}
	for i := range args {
		if args[i], err = b.coerce(args[i], sig.Params[i], poss[i]); err != nil {
			return nil, err
		}
	}
	fn.Args = args
	return fn, nil
}

func (b *binder) in(sc *scope, x *ast.InExpr) (expr.Expr, error) {
	if tup, ok := unparen(x.X).(*ast.TupleExpr); ok {
		return b.rowIn(sc, x, tup)
	}
	v, err := b.expr(sc, x.X)
	if err != nil {
		return nil, err
	}
	if x.Query != nil {
		return b.subquery(sc, x.Query, expr.SubIn, v, x.Not, x.Pos())
	}
	items := make([]expr.Expr, len(x.List))
	allConst := true
	t := v.Type()
	for i, it := range x.List {
		e, err := b.expr(sc, it)
		if err != nil {
			return nil, err
		}
		_, e = b.adapt(v, e)
		items[i] = e
		if _, ok := e.(*expr.Const); !ok {
			allConst = false
		}
		c, ok := types.Common(t, e.Type())
		if !ok {
			if err := b.litError(v, e, it.Pos()); err != nil {
				return nil, err
			}
			return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: %s = %s", v.Type(), e.Type()).WithPos(it.Pos())
		}
		t = c
	}
	if t.Kind == types.Unknown {
		t = types.Of(types.String)
	}
	mixed := false
	for _, it := range items {
		mixed = mixed || exactMixed(v.Type(), it.Type(), t)
	}
	if vt := v.Type(); allConst && mixed {
		// The common type does not hold every value tested (a UINT256
		// against -1 or 1.5): the list is kept in the tested value's own
		// type, less the numbers that are none of its values, which it
		// can never equal (R2.3).
		vals := make([]types.Value, 0, len(items))
		for _, it := range items {
			k := it.(*expr.Const)
			if k.V.IsNull() {
				vals = append(vals, types.Null(vt))
				continue
			}
			if cv, err := types.Cast(k.V, vt); err == nil && types.Compare(cv, k.V) == 0 {
				vals = append(vals, cv)
			}
		}
		return expr.NewInList(v, vals, x.Not), nil
	}
	if allConst {
		if v, err = b.coerce(v, t, x.X.Pos()); err != nil {
			return nil, err
		}
		vals := make([]types.Value, len(items))
		for i, it := range items {
			c, err := b.coerce(it, t, x.List[i].Pos())
			if err != nil {
				return nil, err
			}
			vals[i] = c.(*expr.Const).V
		}
		return expr.NewInList(v, vals, x.Not), nil
	}
	var ors []expr.Expr
	for i, it := range items {
		c, err := b.compare(expr.EQ, v, it, x.List[i].Pos())
		if err != nil {
			return nil, err
		}
		ors = append(ors, c)
	}
	var res expr.Expr = &expr.Logic{Or: true, Args: ors}
	if x.Not {
		res = &expr.Not{X: res}
	}
	return res, nil
}

func (b *binder) caseExpr(sc *scope, x *ast.CaseExpr) (expr.Expr, error) {
	var operand expr.Expr
	if x.Operand != nil {
		v, err := b.expr(sc, x.Operand)
		if err != nil {
			return nil, err
		}
		operand = v
	}
	c := &expr.Case{}
	var thens []expr.Expr
	t := types.Of(types.Unknown)
	for _, w := range x.Whens {
		cond, err := b.expr(sc, w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = b.compare(expr.EQ, operand, cond, w.Cond.Pos()); err != nil {
				return nil, err
			}
		} else if cond, err = b.boolean(cond, w.Cond.Pos(), "CASE/WHEN"); err != nil {
			return nil, err
		}
		th, err := b.expr(sc, w.Result)
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, expr.When{Cond: cond})
		thens = append(thens, th)
	}
	results, poss := thens, make([]int, 0, len(x.Whens)+1)
	for _, w := range x.Whens {
		poss = append(poss, w.Result.Pos())
	}
	if x.Else != nil {
		el, err := b.expr(sc, x.Else)
		if err != nil {
			return nil, err
		}
		results, poss = append(results, el), append(poss, x.Else.Pos())
	}
	b.shareType(results)
	for i, r := range results {
		nt, ok := types.Common(t, r.Type())
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeDatatypeMismatch, "CASE types %s and %s cannot be matched", t, r.Type()).WithPos(poss[i])
		}
		t = nt
	}
	thens = results[:len(x.Whens)]
	if x.Else != nil {
		c.Else = results[len(x.Whens)]
	}
	if t.Kind == types.Unknown {
		t = types.Of(types.String)
	}
	c.T = t
	for i, th := range thens {
		e, err := b.lazyCoerce(th, t)
		if err != nil {
			return nil, err
		}
		c.Whens[i].Then = e
	}
	if c.Else != nil {
		e, err := b.lazyCoerce(c.Else, t)
		if err != nil {
			return nil, err
		}
		c.Else = e
	}
	return c, nil
}

// lazyCoerce casts a CASE arm at run time only, so an arm that never runs
// raises no cast error.
func (b *binder) lazyCoerce(e expr.Expr, t types.Type) (expr.Expr, error) {
	if e.Type() == t {
		return e, nil
	}
	if k, ok := e.(*expr.Const); ok && k.V.IsNull() {
		return expr.NewConst(types.Null(t)), nil
	}
	return &expr.Cast{X: e, T: t, Pos: -1}, nil
}

func (b *binder) funcCall(sc *scope, f *ast.FuncCall) (expr.Expr, error) {
	if f.Filter != nil && (f.Schema != "" || !aggFuncs[f.Name]) {
		return nil, sqlerr.New(sqlerr.CodeSyntax, "FILTER specified, but %s is not an aggregate function", f.Name).WithPos(f.Pos()).WithToken(f.Name)
	}
	if len(f.OrderBy) > 0 && (f.Schema != "" || !aggFuncs[f.Name]) {
		what := "ORDER BY"
		if f.WithinGroup {
			what = "WITHIN GROUP"
		}
		return nil, sqlerr.New(codeWrongObjectType, "%s specified, but %s is not an aggregate function", what, f.Name).WithPos(f.Pos()).WithToken(f.Name)
	}
	if f.Schema == "" && aggFuncs[f.Name] {
		if b.agg == nil {
			return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate function %s is not allowed here", f.Name).WithPos(f.Pos())
		}
		return b.aggregate(f)
	}
	switch f.Name {
	case "now", "current_timestamp", "localtimestamp", "current_date":
		t := types.Type{Kind: types.DateTime64, Precision: 6}
		if len(f.Args) > 0 {
			// current_timestamp(p), localtimestamp(p): p fractional
			// digits, 0 to 6, as PostgreSQL's.
			p := -1
			if n, ok := f.Args[0].(*ast.NumberLit); ok && len(n.Text) == 1 && n.Text[0] >= '0' && n.Text[0] <= '6' {
				p = int(n.Text[0] - '0')
			}
			if f.Name == "now" || f.Name == "current_date" {
				return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s takes no arguments", f.Name).WithPos(f.Pos()).WithToken(f.Name)
			}
			if len(f.Args) > 1 || p < 0 {
				return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "%s takes one precision, a number from 0 to 6", f.Name).WithPos(f.Args[0].Pos())
			}
			t.Precision = uint8(p)
		}
		if f.Name == "current_date" {
			// The date of now(), in the time zone now() is in.
			t = types.Of(types.Date)
		}
		v, err := types.FromTime(t, b.env.Now)
		if err != nil {
			return nil, err
		}
		return expr.NewConst(v), nil
	case "current_commit":
		if b.env.Source == nil {
			return expr.NewConst(types.Null(types.Of(types.Uint64))), nil
		}
		return expr.NewConst(types.NewUint64(b.env.Source.Commit())), nil
	case "last_commit":
		if b.env.LastCommit == 0 {
			return expr.NewConst(types.Null(types.Of(types.Uint64))), nil
		}
		return expr.NewConst(types.NewUint64(b.env.LastCommit)), nil
	}
	if isSetReturning(f) {
		// PostgreSQL also runs them in a select list, one output row per
		// element; Strata binds them as relations only.
		return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "set-returning function %s is supported only in FROM", f.Name).
			WithPos(f.Pos()).WithToken(f.Name).
			WithHint("read it as a relation: SELECT … FROM %s(…) AS s", f.Name)
	}
	args := make([]expr.Expr, len(f.Args))
	ts := make([]types.Type, len(f.Args))
	for i, a := range f.Args {
		e, err := b.expr(sc, a)
		if err != nil {
			return nil, err
		}
		args[i], ts[i] = e, e.Type()
	}
	poss := make([]int, len(f.Args))
	for i, a := range f.Args {
		poss[i] = a.Pos()
	}
	if f.Schema == "" || f.Schema == "pg_catalog" {
		args, ts, poss = b.pgDefaultArgs(f, args, ts, poss)
	}
	if sameTypeFuncs[f.Name] && (f.Schema == "" || f.Schema == "pg_catalog") {
		// Their arguments share one type (greatest(k, '7')).
		b.shareType(args)
		for i, a := range args {
			ts[i] = a.Type()
		}
	}
	if f.Name == "mod" && (f.Schema == "" || f.Schema == "pg_catalog") && len(args) == 2 {
		// mod(a, b) is a % b, in the operator's types (PostgreSQL's int2,
		// int4, int8 and numeric mod).
		return b.arith(types.OpMod, args[0], args[1], f.Args[0].Pos(), f.Args[1].Pos(), f.Pos())
	}
	fn, sig, err := b.resolveFunc(args, ts, func(ts []types.Type) (*expr.Func, expr.Signature, error) {
		return expr.NewFuncEnv(f.Name, ts, f.Pos(), b.env.PG)
	})
	if err != nil {
		return nil, err
	}
	if volatileFunc(fn) {
		b.volatiles++
	}
	for i := range args {
		if args[i], err = b.coerce(args[i], sig.Params[i], poss[i]); err != nil {
			return nil, err
		}
	}
	fn.Args = args
	if (f.Name == "extract" || f.Name == "date_part") && len(args) == 2 && ts[1].Kind == types.Interval {
		// date_part is double precision, extract an exact number (PostgreSQL).
		if f.Name == "date_part" {
			fn.T = types.Of(types.Float64)
		} else if k, ok := args[0].(*expr.Const); ok && k.V.Kind() == types.String {
			fn.T = expr.IntervalPartType(k.V.Str())
		}
	}
	switch f.Name {
	case "round", "trunc", "floor", "ceil", "ceiling":
		if len(args) == 1 && ts[0].Kind == types.Decimal {
			fn.T = expr.RoundType(ts[0], 0)
		}
	}
	if (f.Name == "round" || f.Name == "trunc") && len(args) == 2 && ts[0].Kind == types.Decimal {
		if k, ok := args[1].(*expr.Const); ok && !k.V.IsNull() {
			if d, err := types.Cast(k.V, types.Of(types.Int64)); err == nil {
				fn.T = expr.RoundType(ts[0], d.Int64())
			}
		}
	}
	return fn, nil
}

// pgDefaultArgs completes the arguments of the calls whose PostgreSQL
// types need what only the binder knows: age(ts) is age(current_date, ts),
// the statement's date at midnight (PostgreSQL defines it so); and an
// integer literal passed to to_hex is an int4 when it fits one, as
// PostgreSQL types it, so that to_hex(-1) is ffffffff, not the 64-bit
// ffffffffffffffff of an INT64.
func (b *binder) pgDefaultArgs(f *ast.FuncCall, args []expr.Expr, ts []types.Type, poss []int) ([]expr.Expr, []types.Type, []int) {
	switch {
	case f.Name == "age" && len(args) == 1:
		today, err := types.FromTime(types.Of(types.Date), b.env.Now)
		if err != nil {
			return args, ts, poss
		}
		return append([]expr.Expr{expr.NewConst(today)}, args...),
			append([]types.Type{today.Type()}, ts...),
			append([]int{f.Pos()}, poss...)
	case f.Name == "to_hex" && len(args) == 1:
		k, ok := args[0].(*expr.Const)
		if !ok || !b.lits[args[0]] || k.V.IsNull() || k.V.Kind() != types.Int64 || k.V.Int64() != int64(int32(k.V.Int64())) {
			break
		}
		if v, err := types.NewInt(types.Of(types.Int32), k.V.Int64()); err == nil {
			args[0], ts[0] = expr.NewConst(v), v.Type()
		}
	}
	return args, ts, poss
}

// subquery binds a subquery used as an expression. Its plan is optimized on
// its own; references to the enclosing query become Outer slots.
func (b *binder) subquery(sc *scope, q *ast.SelectStmt, kind expr.SubKind, x expr.Expr, not bool, pos int) (expr.Expr, error) {
	return b.subqueryRow(sc, q, kind, x, nil, not, pos)
}

// subqueryRow is subquery with, for a row IN ((x1, …, xn) IN (SELECT …)),
// the row's operands in row instead of x.
func (b *binder) subqueryRow(sc *scope, q *ast.SelectStmt, kind expr.SubKind, x expr.Expr, row []expr.Expr, not bool, pos int) (expr.Expr, error) {
	saved := b.agg
	b.agg = nil
	inner := &scope{parent: sc, ctes: sc.ctes}
	// The block binder creates its own scope with sc as parent; the
	// correlation list lives on that scope, so bind through a wrapper.
	vol := b.volatiles
	node, names, corr, err := b.subqueryBody(q, inner, saved)
	b.agg = saved
	if err != nil {
		return nil, err
	}
	_ = names
	out := node.Output()
	s := &expr.Subquery{Kind: kind, Not: not, Pos: pos, Label: "subquery", Volatile: b.volatiles > vol}
	switch kind {
	case expr.SubScalar:
		if len(out) != 1 {
			return nil, sqlerr.New(sqlerr.CodeSyntax, "subquery must return only one column").WithPos(pos)
		}
		s.T = out[0].T
		if s.T.Kind == types.Unknown {
			s.T = types.Of(types.String)
		}
	case expr.SubExists:
		s.T = types.Of(types.Bool)
	case expr.SubIn, expr.SubCmp:
		xs := row
		if xs == nil {
			xs = []expr.Expr{x}
		}
		switch {
		case len(out) > len(xs):
			return nil, sqlerr.New(sqlerr.CodeSyntax, "subquery has too many columns").WithPos(pos)
		case len(out) < len(xs):
			return nil, sqlerr.New(sqlerr.CodeSyntax, "subquery has too few columns").WithPos(pos)
		}
		ts := make([]types.Type, len(xs))
		for i, x := range xs {
			t, ok := types.Common(x.Type(), out[i].T)
			if !ok {
				return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: %s = %s", x.Type(), out[i].T).WithPos(pos)
			}
			if t.Kind == types.Unknown {
				t = types.Of(types.String)
			}
			if xs[i], err = b.coerce(x, t, pos); err != nil {
				return nil, err
			}
			ts[i] = t
		}
		node = b.castOutputs(node, ts)
		if row == nil {
			s.X = xs[0]
		} else {
			s.Row = xs
		}
		s.T = types.Of(types.Bool)
	}
	node = optimize(node, b.env)
	s.Plan = &Plan{Root: node, Outer: len(corr)}
	s.Corr = corr
	return s, nil
}

// quantified binds X op ANY (q) and X op ALL (q). X = ANY is X IN and
// X <> ALL is X NOT IN, in PostgreSQL as in the standard, so they take
// that path (and its semi-join rewrite); the other forms compare X with
// the least or greatest of q's rows (expr.SubCmp).
func (b *binder) quantified(sc *scope, x *ast.QuantifiedExpr) (expr.Expr, error) {
	op, ok := cmpOps[x.Op]
	if !ok {
		return nil, notSupported(x, "operator %s is not supported with ANY or ALL", x.Op)
	}
	v, err := b.expr(sc, x.X)
	if err != nil {
		return nil, err
	}
	switch {
	case op == expr.EQ && !x.All:
		return b.subquery(sc, x.Query, expr.SubIn, v, false, x.Pos())
	case op == expr.NE && x.All:
		return b.subquery(sc, x.Query, expr.SubIn, v, true, x.Pos())
	}
	e, err := b.subquery(sc, x.Query, expr.SubCmp, v, false, x.Pos())
	if err != nil {
		return nil, err
	}
	s := e.(*expr.Subquery)
	s.Op, s.All = op, x.All
	return s, nil
}

// subqueryBody binds q with sc as the enclosing scope and returns the
// outer expressions it reads.
func (b *binder) subqueryBody(q *ast.SelectStmt, sc *scope, outerAgg *aggCtx) (Node, []string, []expr.Expr, error) {
	cl := &corrList{agg: outerAgg}
	b.corrStack = append(b.corrStack, cl)
	n, names, err := b.queryAsOf(q, sc.parent, sc.ctes, b.inheritedAsOf)
	b.corrStack = b.corrStack[:len(b.corrStack)-1]
	return n, names, cl.exprs, err
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// rowCompare binds (l1, …, ln) op (r1, …, rn) as PostgreSQL does: = is
// the AND of the pairs' equalities and <> the OR of their inequalities;
// <, <=, > and >= compare left to right, the first pair that is not equal
// deciding: l1 < r1 OR (l1 = r1 AND (l2, …) < (r2, …)), which is NULL
// exactly when that deciding pair is.
func (b *binder) rowCompare(sc *scope, op expr.CmpOp, l, r *ast.TupleExpr, pos int) (expr.Expr, error) {
	if len(l.Items) != len(r.Items) {
		return nil, sqlerr.New(sqlerr.CodeSyntax, "unequal number of entries in row expressions").WithPos(pos)
	}
	n := len(l.Items)
	ls, rs := make([]expr.Expr, n), make([]expr.Expr, n)
	for i := range n {
		var err error
		if ls[i], err = b.expr(sc, l.Items[i]); err != nil {
			return nil, err
		}
		if rs[i], err = b.expr(sc, r.Items[i]); err != nil {
			return nil, err
		}
	}
	pair := func(op expr.CmpOp, i int) (expr.Expr, error) {
		return b.compare(op, ls[i], rs[i], l.Items[i].Pos())
	}
	if op == expr.EQ || op == expr.NE {
		args := make([]expr.Expr, n)
		for i := range n {
			c, err := pair(op, i)
			if err != nil {
				return nil, err
			}
			args[i] = c
		}
		return &expr.Logic{Or: op == expr.NE, Args: args}, nil
	}
	strict := map[expr.CmpOp]expr.CmpOp{expr.LT: expr.LT, expr.LE: expr.LT, expr.GT: expr.GT, expr.GE: expr.GT}[op]
	res, err := pair(op, n-1)
	if err != nil {
		return nil, err
	}
	for i := n - 2; i >= 0; i-- {
		lt, err := pair(strict, i)
		if err != nil {
			return nil, err
		}
		eq, err := pair(expr.EQ, i)
		if err != nil {
			return nil, err
		}
		res = &expr.Logic{Or: true, Args: []expr.Expr{lt, &expr.Logic{Args: []expr.Expr{eq, res}}}}
	}
	return res, nil
}

// rowIn binds (x1, …, xn) [NOT] IN (list of rows) as the OR of row
// equalities, and (x1, …, xn) [NOT] IN (SELECT c1, …, cn …) as a row
// subquery (expr.Subquery.Row).
func (b *binder) rowIn(sc *scope, x *ast.InExpr, tup *ast.TupleExpr) (expr.Expr, error) {
	if x.Query != nil {
		row := make([]expr.Expr, len(tup.Items))
		for i, it := range tup.Items {
			e, err := b.expr(sc, it)
			if err != nil {
				return nil, err
			}
			row[i] = e
		}
		return b.subqueryRow(sc, x.Query, expr.SubIn, nil, row, x.Not, x.Pos())
	}
	ors := make([]expr.Expr, len(x.List))
	for i, it := range x.List {
		r, ok := unparen(it).(*ast.TupleExpr)
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeSyntax, "IN with a row value needs a list of row values").WithPos(it.Pos())
		}
		c, err := b.rowCompare(sc, expr.EQ, tup, r, it.Pos())
		if err != nil {
			return nil, err
		}
		ors[i] = c
	}
	var res expr.Expr = &expr.Logic{Or: true, Args: ors}
	if x.Not {
		res = &expr.Not{X: res}
	}
	return res, nil
}

// qualifiedName is c as relation.column, the relation being the one of sc
// (or an enclosing scope) that has the column, for messages.
func qualifiedName(sc *scope, c *ast.ColumnRef) string {
	if c.Table != "" {
		return c.Table + "." + c.Name
	}
	for ; sc != nil; sc = sc.parent {
		for _, r := range sc.rels {
			for _, rc := range r.cols {
				if rc.name == c.Name && r.name != "" {
					return r.name + "." + c.Name
				}
			}
		}
	}
	return c.Name
}

// regroup rewrites e, an expression over the grouped query's input
// columns, to read the groups' columns instead; false if e reads a column
// that is not grouped.
func (b *binder) regroup(e expr.Expr) (expr.Expr, bool) {
	if c, ok := e.(*expr.Col); ok {
		g, ok := b.agg.byID[c.ID]
		if !ok {
			return nil, false
		}
		return colExpr(g), true
	}
	for _, k := range expr.Children(e) {
		x, ok := b.regroup(*k)
		if !ok {
			return nil, false
		}
		*k = x
	}
	return e, true
}

// timeOperands binds date, timestamp and interval arithmetic
// (types.TimeType): a string literal meeting a timestamp or interval is
// read as an interval ('1 day'), or, subtracted from a timestamp or
// subtracting one, as a timestamp when it is not an interval, as
// PostgreSQL resolves the unknown literal. ok is false for other operands.
// A literal that is neither, added to or subtracted from one of those, is
// the error of reading it as an interval (PostgreSQL's "invalid input
// syntax for type interval") or, subtracted from a date or timestamp, as
// that type, at lpos or rpos, rather than a missing operator.
func (b *binder) timeOperands(op types.Op, l, r expr.Expr, lpos, rpos int) (expr.Expr, expr.Expr, types.Type, bool, error) {
	isTime := func(k types.Kind) bool {
		return k == types.Date || k == types.DateTime64 || k == types.Interval
	}
	lit := func(e, other expr.Expr, pos int) (expr.Expr, error) {
		k, ok := e.(*expr.Const)
		if !ok || !b.lits[e] || k.V.Kind() != types.String || !isTime(other.Type().Kind) {
			return e, nil
		}
		v, ierr := types.ParseInterval(k.V.Str(), types.NoField)
		if ierr == nil {
			return expr.NewConst(v), nil
		}
		if op == types.OpSub && other.Type().Kind != types.Interval {
			v, err := types.ParseText(other.Type(), k.V.Str())
			if err == nil {
				return expr.NewConst(v), nil
			}
			// PostgreSQL reads it as the other operand's type then.
			return nil, expr.CastError(pos, k.V, other.Type(), err)
		}
		if op == types.OpAdd || op == types.OpSub {
			return nil, expr.CastError(pos, k.V, types.Of(types.Interval), ierr)
		}
		return e, nil
	}
	l, err := lit(l, r, lpos)
	if err != nil {
		return nil, nil, types.Type{}, false, err
	}
	if r, err = lit(r, l, rpos); err != nil {
		return nil, nil, types.Type{}, false, err
	}
	t, ok := types.TimeType(op, l.Type(), r.Type())
	return l, r, t, ok, nil
}
