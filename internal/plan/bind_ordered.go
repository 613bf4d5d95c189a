package plan

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// orderedSetAggs are the ordered-set aggregates: written
// f(direct args) WITHIN GROUP (ORDER BY x), they see each group's x values
// sorted.
// codeWrongObjectType is PostgreSQL's SQLSTATE for WITHIN GROUP on an
// aggregate that is not an ordered-set one (wrong_object_type).
const codeWrongObjectType = "42809"

var orderedSetAggs = map[string]bool{"percentile_cont": true, "percentile_disc": true, "mode": true}

// orderSensitive are the plain aggregates whose result depends on the
// order of their input rows: only they keep a written ORDER BY.
var orderSensitive = map[string]bool{"string_agg": true, "array_agg": true}

// aggOrder binds a plain aggregate's ORDER BY (agg(args ORDER BY …)). Every
// aggregate accepts one, as in PostgreSQL; only the list aggregates keep
// it, the others give the same result in any order. Under DISTINCT the
// keys must be arguments: the rows are deduplicated by the arguments, so
// any other key would have no one value per kept row.
func (b *binder) aggOrder(sc *scope, f *ast.FuncCall, call *AggCall) error {
	if len(f.OrderBy) == 0 {
		return nil
	}
	var keys []SortKey
	for _, o := range f.OrderBy {
		if hasLocalAgg(sc, o.Expr) {
			return sqlerr.New(sqlerr.CodeGrouping, "aggregate function calls cannot be nested").WithPos(o.Expr.Pos())
		}
		if f.Distinct && !isArgument(f.Args, o.Expr) {
			return sqlerr.New(codeInvalidColumnReference, "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list").WithPos(o.Expr.Pos())
		}
		e, err := b.expr(sc, o.Expr)
		if err != nil {
			return err
		}
		keys = append(keys, sortKey(e, o))
	}
	if orderSensitive[call.Fn] {
		call.Order = keys
	}
	return nil
}

// isArgument reports whether e is written as one of args.
func isArgument(args []ast.Expr, e ast.Expr) bool {
	text := ast.Format(unparen(e))
	for _, a := range args {
		if ast.Format(unparen(a)) == text {
			return true
		}
	}
	return false
}

// orderedSetAggregate binds percentile_cont(f), percentile_disc(f) and
// mode() WITHIN GROUP (ORDER BY x): Args are the direct argument (the
// fraction, cast to FLOAT64) and then x, Order sorts by x. key is the
// call's text, its identity in the aggregate context.
func (b *binder) orderedSetAggregate(ac *aggCtx, f *ast.FuncCall, key string) (expr.Expr, error) {
	if !orderedSetAggs[f.Name] {
		return nil, sqlerr.New(codeWrongObjectType, "%s is not an ordered-set aggregate, so it cannot have WITHIN GROUP", f.Name).WithPos(f.Pos()).WithToken(f.Name)
	}
	if !f.WithinGroup {
		return nil, sqlerr.New(codeWrongObjectType, "WITHIN GROUP is required for ordered-set aggregate %s", f.Name).WithPos(f.Pos()).WithToken(f.Name)
	}
	direct := 1
	if f.Name == "mode" {
		direct = 0
	}
	if len(f.Args) != direct || len(f.OrderBy) != 1 || f.Star {
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s takes %d direct argument(s) and one ORDER BY expression", f.Name, direct).WithPos(f.Pos()).WithToken(f.Name)
	}
	call := AggCall{Fn: f.Name, Pos: f.Pos()}
	for _, a := range f.Args {
		if hasLocalAgg(ac.scope, a) {
			return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate function calls cannot be nested").WithPos(a.Pos())
		}
		if c := b.ungroupedColumn(ac, a); c != nil {
			// exec reads the fraction of a group's first row: it must be
			// one value per group.
			return nil, sqlerr.New(sqlerr.CodeGrouping, "column %q must appear in the GROUP BY clause or be used in an aggregate function", qualifiedName(ac.scope, c)).WithPos(c.Pos()).WithToken(c.Name)
		}
		e, err := b.expr(ac.scope, a)
		if err != nil {
			return nil, err
		}
		if k := e.Type().Kind; !k.IsNumeric() && k != types.Unknown {
			return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s(%s) does not exist: the fraction must be a number", f.Name, e.Type()).WithPos(a.Pos())
		}
		if e, err = b.coerce(e, types.Of(types.Float64), a.Pos()); err != nil {
			return nil, err
		}
		call.Args = append(call.Args, e)
	}
	o := f.OrderBy[0]
	if hasLocalAgg(ac.scope, o.Expr) {
		return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate function calls cannot be nested").WithPos(o.Expr.Pos())
	}
	x, err := b.expr(ac.scope, o.Expr)
	if err != nil {
		return nil, err
	}
	call.T = x.Type()
	if call.T.Kind == types.Unknown {
		call.T = types.Of(types.String)
		x = expr.NewConst(types.Null(call.T))
	}
	if f.Name == "percentile_cont" {
		if !x.Type().Kind.IsNumeric() {
			return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "function percentile_cont(%s) does not exist: it interpolates numbers", x.Type()).WithPos(o.Expr.Pos())
		}
		call.T = types.Of(types.Float64)
		if x, err = b.coerce(x, call.T, o.Expr.Pos()); err != nil {
			return nil, err
		}
	}
	call.Args = append(call.Args, x)
	call.Order = []SortKey{sortKey(x, o)}
	if f.Filter != nil {
		if err := b.aggFilter(ac.scope, f, &call); err != nil {
			return nil, err
		}
		// The FILTER's CASE stands for x in the sort as well.
		call.Order[0].E = call.Args[len(call.Args)-1]
	}
	c := b.newCol(key, call.T)
	ac.node.Aggs = append(ac.node.Aggs, call)
	ac.node.AggCols = append(ac.node.AggCols, c)
	ac.aggs[key] = c
	return colExpr(c), nil
}

// ungroupedColumn returns a column of the aggregate's own query that e
// reads (outside subqueries) and that is not one of its GROUP BY
// expressions; nil when there is none.
func (b *binder) ungroupedColumn(ac *aggCtx, e ast.Expr) *ast.ColumnRef {
	var found *ast.ColumnRef
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(ast.Expr); ok {
			if _, grouped := ac.groups[ast.Format(unparen(x))]; grouped {
				return false
			}
		}
		switch x := n.(type) {
		case *ast.SubqueryExpr, *ast.ExistsExpr:
			return false
		case *ast.ColumnRef:
			if found != nil || colLevel(ac.scope, x) != 0 {
				return false
			}
			if _, ok := ac.groups[ast.Format(x)]; ok {
				return false
			}
			if v, err := b.resolve(ac.scope, x); err == nil {
				if col, ok := v.(*expr.Col); ok {
					if _, ok := ac.byID[col.ID]; ok {
						return false
					}
				}
			}
			found = x
		}
		return found == nil
	})
	return found
}
