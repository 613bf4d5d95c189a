package plan

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// Window functions are bound like aggregates: a call met in the select
// list or ORDER BY of a block becomes a column of the block's Window node,
// which sits between the aggregation (or HAVING) and the select list's
// Project. Their arguments, PARTITION BY and ORDER BY are bound in the
// block's scope with the aggregate context in force, so sum(count(*))
// OVER () reads the Aggregate's output.

// codeWindowing is PostgreSQL's windowing_error.
const codeWindowing = "42P20"

// windowFuncs are the functions that exist only as window functions, with
// their minimum and maximum argument counts.
var windowFuncs = map[string][2]int{
	"row_number": {0, 0}, "rank": {0, 0}, "dense_rank": {0, 0},
	"percent_rank": {0, 0}, "cume_dist": {0, 0}, "ntile": {1, 1},
	"lag": {1, 3}, "lead": {1, 3},
	"first_value": {1, 1}, "last_value": {1, 1}, "nth_value": {2, 2},
}

// winCtx collects the window calls of one block.
type winCtx struct {
	node  *Window
	scope *scope
	defs  map[string]*ast.WindowDef
	cols  map[string]ColRef // bound calls by their SQL text
	// busy says what is being bound inside a window call ("" when
	// nothing): a window call met then is nested.
	busy string
}

// WindowCall returns the first window function call in n outside
// subqueries, or nil: statements whose expressions are bound as a query's
// select list (UPDATE's SET) refuse one with it.
func WindowCall(n ast.Node) *ast.FuncCall { return windowIn(n) }

// windowIn returns the first window call in n outside subqueries, or nil.
func windowIn(n ast.Node) *ast.FuncCall {
	return callIn(n, func(f *ast.FuncCall) bool { return f.Over != nil })
}

// SetReturningCall returns the first call of a set-returning function
// (generate_series, unnest) in n outside subqueries, or nil: those run only
// in FROM, and a RETURNING list refuses one with PostgreSQL's error.
func SetReturningCall(n ast.Node) *ast.FuncCall {
	return callIn(n, func(f *ast.FuncCall) bool { return isSetReturning(f) })
}

// isSetReturning reports whether f calls a set-returning function.
func isSetReturning(f *ast.FuncCall) bool {
	return (f.Schema == "" || f.Schema == "pg_catalog") && f.Over == nil && setReturningFuncs[f.Name]
}

// setReturningFuncs are the functions bound only in FROM (table_func.go).
var setReturningFuncs = map[string]bool{"generate_series": true, "unnest": true}

// callIn returns the first function call in n, outside subqueries, for
// which match holds, or nil.
func callIn(n ast.Node, match func(*ast.FuncCall) bool) *ast.FuncCall {
	var found *ast.FuncCall
	if n == nil {
		return nil
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncCall:
			if match(x) {
				found = x
			}
		case *ast.SubqueryExpr, *ast.ExistsExpr:
			return false
		case *ast.QuantifiedExpr:
			if f := callIn(x.X, match); f != nil {
				found = f
			}
			return false
		case *ast.InExpr:
			if x.Query != nil {
				if f := callIn(x.X, match); f != nil {
					found = f
				}
				return false
			}
		}
		return found == nil
	})
	return found
}

// newWinCtx prepares the window context of a block: its WINDOW clause's
// definitions are checked (names unique, references to earlier ones
// only, PostgreSQL's copying rules).
func (b *binder) newWinCtx(sc *scope, in Node, blk *ast.SelectBlock) (*winCtx, error) {
	w := &winCtx{node: &Window{In: in}, scope: sc, defs: map[string]*ast.WindowDef{}, cols: map[string]ColRef{}}
	for _, d := range blk.Windows {
		if _, dup := w.defs[d.Name.Name]; dup {
			return nil, sqlerr.New(codeWindowing, "window %q is already defined", d.Name.Name).WithPos(d.Name.Pos())
		}
		if _, err := w.resolveSpec(d.Spec, false); err != nil {
			return nil, err
		}
		w.defs[d.Name.Name] = d
	}
	return w, nil
}

// resolveSpec returns spec with its reference to a named window applied:
// the named window's PARTITION BY and ORDER BY, spec's own ORDER BY when
// the named one has none, and spec's frame. over is set for an OVER
// clause (whose refusal to copy a frame comes with a hint).
func (w *winCtx) resolveSpec(spec *ast.WindowSpec, over bool) (*ast.WindowSpec, error) {
	if spec.Name != "" {
		d, ok := w.defs[spec.Name]
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "window %q does not exist", spec.Name).WithPos(spec.Pos())
		}
		return w.resolveSpec(d.Spec, false)
	}
	if spec.Ref == "" {
		return spec, nil
	}
	d, ok := w.defs[spec.Ref]
	if !ok {
		return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "window %q does not exist", spec.Ref).WithPos(spec.Pos())
	}
	base, err := w.resolveSpec(d.Spec, false)
	if err != nil {
		return nil, err
	}
	if len(spec.PartitionBy) > 0 {
		return nil, sqlerr.New(codeWindowing, "cannot override PARTITION BY clause of window %q", spec.Ref).WithPos(spec.PartitionBy[0].Pos())
	}
	if len(spec.OrderBy) > 0 && len(base.OrderBy) > 0 {
		return nil, sqlerr.New(codeWindowing, "cannot override ORDER BY clause of window %q", spec.Ref).WithPos(spec.OrderBy[0].Pos())
	}
	if base.Frame != nil {
		e := sqlerr.New(codeWindowing, "cannot copy window %q because it has a frame clause", spec.Ref).WithPos(spec.Pos())
		if over {
			e = e.WithHint("Omit the parentheses in this OVER clause.")
		}
		return nil, e
	}
	out := &ast.WindowSpec{Span: spec.Span, PartitionBy: base.PartitionBy, OrderBy: base.OrderBy, Frame: spec.Frame}
	if len(spec.OrderBy) > 0 {
		out.OrderBy = spec.OrderBy
	}
	return out, nil
}

// windowCall binds a call with OVER met in scope sc.
func (b *binder) windowCall(sc *scope, f *ast.FuncCall) (expr.Expr, error) {
	w := b.win
	if w == nil || w.scope != sc {
		what := "here"
		if sc.clause != "" {
			what = "in " + sc.clause
		}
		return nil, sqlerr.New(codeWindowing, "window functions are not allowed %s", what).WithPos(f.Pos()).WithToken(f.Name)
	}
	switch w.busy {
	case "args":
		return nil, sqlerr.New(codeWindowing, "window function calls cannot be nested").WithPos(f.Pos()).WithToken(f.Name)
	case "def":
		return nil, sqlerr.New(codeWindowing, "window functions are not allowed in window definitions").WithPos(f.Pos()).WithToken(f.Name)
	}
	key := ast.Format(f)
	if c, ok := w.cols[key]; ok {
		return colExpr(c), nil
	}
	_, isWin := windowFuncs[f.Name]
	isAgg := aggFuncs[f.Name]
	if f.Schema != "" || !isWin && !isAgg {
		return nil, sqlerr.New("42809", "OVER specified, but %s is not a window function nor an aggregate function", f.Name).WithPos(f.Pos()).WithToken(f.Name)
	}
	if f.Distinct {
		return nil, sqlerr.NotSupported(f.Pos(), "DISTINCT is not implemented for window functions")
	}
	if f.Filter != nil && !isAgg {
		return nil, sqlerr.New("0A000", "FILTER is not implemented for non-aggregate window functions").WithPos(f.Pos())
	}
	if f.WithinGroup {
		return nil, sqlerr.New("0A000", "OVER is not supported for ordered-set aggregate %s", f.Name).WithPos(f.Pos()).WithToken(f.Name)
	}
	if len(f.OrderBy) > 0 {
		// The window's ORDER BY orders the frame; an aggregate's own would
		// have to order each frame again (PostgreSQL refuses it too).
		return nil, sqlerr.NotSupported(f.Pos(), "aggregate ORDER BY is not implemented for window functions")
	}
	spec, err := w.resolveSpec(f.Over, true)
	if err != nil {
		return nil, err
	}
	wf := WindowFunc{Fn: f.Name, Star: f.Star, Agg: isAgg && !isWin}
	// Whatever happens below, this call is done with afterwards (a
	// caller that recovers from an error must not see it as still busy).
	defer func() { w.busy = "" }()
	w.busy = "def"
	for _, p := range spec.PartitionBy {
		e, err := b.expr(sc, p)
		if err != nil {
			return nil, err
		}
		wf.Partition = append(wf.Partition, e)
	}
	for _, o := range spec.OrderBy {
		e, err := b.expr(sc, o.Expr)
		if err != nil {
			return nil, err
		}
		wf.Order = append(wf.Order, sortKey(e, o))
	}
	if err := b.frame(sc, spec, &wf); err != nil {
		return nil, err
	}
	w.busy = "args"
	if wf.Agg {
		call := AggCall{Fn: f.Name, Star: f.Star, Pos: f.Pos()}
		if call.Fn == "every" {
			call.Fn = "bool_and"
		}
		for _, a := range f.Args {
			e, err := b.expr(sc, a)
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, e)
		}
		if f.Filter != nil {
			saved := w.busy
			if err := b.aggFilter(sc, f, &call); err != nil {
				return nil, err
			}
			w.busy = saved
		}
		t, err := aggCallType(call, f)
		if err != nil {
			return nil, err
		}
		wf.Fn, wf.Args, wf.Star, wf.T = call.Fn, call.Args, call.Star, t
	} else {
		if err := b.windowArgs(sc, f, &wf); err != nil {
			return nil, err
		}
	}
	c := b.newCol(key, wf.T)
	w.node.Funcs = append(w.node.Funcs, wf)
	w.node.Cols = append(w.node.Cols, c)
	w.cols[key] = c
	return colExpr(c), nil
}

// windowArgs binds the arguments of a ranking or value function and sets
// its result type.
func (b *binder) windowArgs(sc *scope, f *ast.FuncCall, wf *WindowFunc) error {
	n := windowFuncs[f.Name]
	if f.Star || len(f.Args) < n[0] || len(f.Args) > n[1] {
		return sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s with %d arguments does not exist", f.Name, len(f.Args)).WithPos(f.Pos()).WithToken(f.Name).
			WithHint("%s takes %s", f.Name, argCounts(n))
	}
	var args []expr.Expr
	for _, a := range f.Args {
		e, err := b.expr(sc, a)
		if err != nil {
			return err
		}
		args = append(args, e)
	}
	integer := func(i int) error {
		e := args[i]
		if k := e.Type().Kind; !k.IsInteger() && k != types.Unknown && !(k == types.String && b.lits[e]) {
			return sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s does not exist: argument %d must be an integer, not %s", f.Name, i+1, e.Type()).WithPos(f.Args[i].Pos())
		}
		c, err := b.coerce(e, types.Of(types.Int64), f.Args[i].Pos())
		args[i] = c
		return err
	}
	switch f.Name {
	case "row_number", "rank", "dense_rank":
		wf.T = types.Of(types.Int64)
	case "percent_rank", "cume_dist":
		wf.T = types.Of(types.Float64)
	case "ntile":
		if err := integer(0); err != nil {
			return err
		}
		wf.T = types.Of(types.Int32)
	case "first_value", "last_value":
		wf.T = args[0].Type()
	case "nth_value":
		if err := integer(1); err != nil {
			return err
		}
		wf.T = args[0].Type()
	case "lag", "lead":
		t := args[0].Type()
		if len(args) > 1 {
			if err := integer(1); err != nil {
				return err
			}
		}
		if len(args) > 2 {
			d := args[2]
			// A quoted literal default is untyped, as in PostgreSQL:
			// lag(ts, 1, '2024-01-01') reads it as the argument's type.
			untypedLit := b.lits[d] && d.Type().Kind == types.String && t.Kind != types.String && t.Kind != types.Unknown
			if d.Type().Kind != types.Unknown && !untypedLit {
				var ok bool
				if t, ok = types.Common(t, d.Type()); !ok {
					return sqlerr.New(sqlerr.CodeDatatypeMismatch, "%s's default value of type %s does not match its argument of type %s", f.Name, d.Type(), args[0].Type()).WithPos(f.Args[2].Pos())
				}
			}
			if t.Kind == types.Unknown {
				t = types.Of(types.String)
			}
			var err error
			if args[0], err = b.coerce(args[0], t, f.Args[0].Pos()); err != nil {
				return err
			}
			if args[2], err = b.coerce(d, t, f.Args[2].Pos()); err != nil {
				return err
			}
		}
		wf.T = t
	}
	if wf.T.Kind == types.Unknown {
		// first_value(NULL), lag(NULL): no type to return, as in
		// PostgreSQL.
		return sqlerr.New(sqlerr.CodeDatatypeMismatch, "could not determine polymorphic type because input has type unknown").WithPos(f.Args[0].Pos())
	}
	wf.Args = args
	return nil
}

func argCounts(n [2]int) string {
	switch {
	case n[0] == n[1] && n[0] == 0:
		return "no arguments"
	case n[0] == n[1] && n[0] == 1:
		return "one argument"
	case n[0] == n[1]:
		return "two arguments"
	}
	return "one to three arguments"
}

// frame binds a window's frame clause (or its default) into wf.Frame.
func (b *binder) frame(sc *scope, spec *ast.WindowSpec, wf *WindowFunc) error {
	wf.Frame = Frame{Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}
	f := spec.Frame
	if f == nil {
		return nil
	}
	wf.Frame.Mode = FrameMode(f.Mode)
	wf.Frame.Exclude = Exclude(f.Exclude)
	mode := f.Mode.String()
	hasOffset := f.Start.Kind == ast.OffsetPreceding || f.Start.Kind == ast.OffsetFollowing
	if f.End != nil && (f.End.Kind == ast.OffsetPreceding || f.End.Kind == ast.OffsetFollowing) {
		hasOffset = true
	}
	var orderT types.Type
	switch {
	case f.Mode == ast.FrameRange && hasOffset:
		if len(spec.OrderBy) != 1 {
			return sqlerr.New(codeWindowing, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column").WithPos(spec.Pos())
		}
		orderT = wf.Order[0].E.Type()
		if k := orderT.Kind; !k.IsNumeric() && k != types.Date && k != types.DateTime64 && k != types.Interval {
			return sqlerr.New(sqlerr.CodeUndefinedFunction, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", orderT).WithPos(spec.Pos())
		}
	case f.Mode == ast.FrameGroups && len(spec.OrderBy) == 0:
		return sqlerr.New(codeWindowing, "GROUPS mode requires an ORDER BY clause").WithPos(spec.Pos())
	}
	bound := func(ab *ast.FrameBound) (FrameBound, error) {
		fb := FrameBound{Kind: BoundKind(ab.Kind)}
		if ab.Offset == nil {
			return fb, nil
		}
		if id := firstColumn(ab.Offset); id != nil {
			return fb, sqlerr.New("42P10", "argument of %s must not contain variables", mode).WithPos(id.Pos())
		}
		if fc := windowIn(ab.Offset); fc != nil {
			return fb, sqlerr.New(codeWindowing, "window functions are not allowed in window definitions").WithPos(fc.Pos())
		}
		saved := sc.clause
		sc.clause = mode
		e, err := b.expr(sc, ab.Offset)
		sc.clause = saved
		if err != nil {
			return fb, err
		}
		want := types.Of(types.Int64)
		if f.Mode == ast.FrameRange {
			want = orderT
			switch {
			case orderT.Kind.IsFloat():
				want = types.Of(types.Float64)
			case orderT.Kind == types.Decimal:
				want = types.Type{Kind: types.Decimal, Precision: 76, Scale: orderT.Scale}
				if k := e.Type(); k.Kind == types.Decimal && k.Scale > orderT.Scale {
					want.Scale = k.Scale
				}
			case orderT.Kind.IsInteger():
				want = types.Of(types.Int64)
				if orderT.Kind.Bits() > 64 {
					want = orderT
				}
			case orderT.Kind == types.Date || orderT.Kind == types.DateTime64:
				// in_range(timestamp, timestamp, interval); a DATE is
				// compared as its midnight, as PostgreSQL casts it.
				want = types.Of(types.Interval)
			}
			// PostgreSQL's in_range pairs: an integer column takes an
			// integer offset, a DECIMAL one an integer or DECIMAL, a
			// float one any number.
			k := e.Type().Kind
			fits := k == types.Unknown || k == types.String && b.lits[e]
			switch {
			case orderT.Kind.IsFloat():
				fits = fits || k.IsNumeric()
			case orderT.Kind == types.Decimal:
				fits = fits || k.IsInteger() || k == types.Decimal
			case orderT.Kind == types.Date || orderT.Kind == types.DateTime64 || orderT.Kind == types.Interval:
				fits = fits || k == types.Interval
			default:
				fits = fits || k.IsInteger()
			}
			if !fits {
				return fb, sqlerr.NotSupported(ab.Offset.Pos(), "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", orderT, e.Type()).
					WithHint("Cast the offset value to an appropriate type.")
			}
		} else if k := e.Type().Kind; !k.IsInteger() && k != types.Unknown && !(k == types.String && b.lits[e]) {
			return fb, sqlerr.New(sqlerr.CodeDatatypeMismatch, "argument of %s must be type INT64, not type %s", mode, e.Type()).WithPos(ab.Offset.Pos())
		}
		if fb.Offset, err = b.coerce(e, want, ab.Offset.Pos()); err != nil {
			return fb, err
		}
		return fb, nil
	}
	var err error
	if wf.Frame.Start, err = bound(f.Start); err != nil {
		return err
	}
	if f.End != nil {
		if wf.Frame.End, err = bound(f.End); err != nil {
			return err
		}
	}
	return nil
}

// firstColumn returns the first column reference of e outside
// subqueries, or nil.
func firstColumn(e ast.Expr) *ast.ColumnRef {
	var found *ast.ColumnRef
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ColumnRef:
			found = x
		case *ast.SubqueryExpr, *ast.ExistsExpr:
			return false
		}
		return found == nil
	})
	return found
}

// checkWindowDefs binds the expressions of every WINDOW definition once,
// used or not, so that a mistake in one is reported as PostgreSQL reports
// it (an unknown column, an ungrouped one, a window call inside).
func (b *binder) checkWindowDefs(w *winCtx, blk *ast.SelectBlock) error {
	w.busy = "def"
	defer func() { w.busy = "" }()
	for _, d := range blk.Windows {
		for _, e := range d.Spec.PartitionBy {
			if _, err := b.expr(w.scope, e); err != nil {
				return err
			}
		}
		for _, o := range d.Spec.OrderBy {
			if _, err := b.expr(w.scope, o.Expr); err != nil {
				return err
			}
		}
	}
	return nil
}
