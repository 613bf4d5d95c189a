package plan

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
)

// An aggregate call written inside a subquery may belong to an enclosing
// query, as in PostgreSQL: when its arguments read columns of enclosing
// queries only, it is an aggregate of the nearest of those queries, computed
// over that query's groups, and the subquery reads its value like any other
// correlated reference (an Outer slot filled from the enclosing query's
// Aggregate output). One that reads a column of its own query, or no column
// at all (count(*), sum(1)), is its own query's.

// colLevel is how many query levels above sc the column c is found: 0 for
// sc's own relations, 1 for the enclosing query, and so on; -1 when no
// level has it (binding then reports the error). It follows the same path
// resolve does, but has no side effects.
func colLevel(sc *scope, c *ast.ColumnRef) int {
	for l := 0; sc != nil; l++ {
		for _, r := range sc.rels {
			if c.Table != "" && r.name != c.Table {
				continue
			}
			for i := range r.cols {
				if r.cols[i].name == c.Name && !(r.cols[i].merged && c.Table == "") {
					return l
				}
			}
			if c.Name == "_commit" && r.scan != nil {
				return l
			}
		}
		if sc.parent == nil || sc.corr == nil {
			return -1
		}
		sc = sc.parent
	}
	return -1
}

// aggLevel is the query level, counted up from sc, that the aggregate call
// f belongs to: the nearest level any column of its arguments comes from,
// or 0 when they read no column that resolves. Columns inside a subquery of
// the arguments are not counted.
func aggLevel(sc *scope, f *ast.FuncCall) int {
	level := -1
	for _, a := range f.Args {
		minLevel(sc, a, &level)
	}
	if f.Filter != nil {
		minLevel(sc, f.Filter, &level)
	}
	for _, o := range f.OrderBy {
		minLevel(sc, o.Expr, &level)
	}
	if level < 0 {
		return 0
	}
	return level
}

// minLevel lowers *level to the level of each column n reads outside its
// subqueries (the left operand of IN or a quantified comparison is read
// here, not in the subquery).
func minLevel(sc *scope, n ast.Node, level *int) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ColumnRef:
			if l := colLevel(sc, x); l >= 0 && (*level < 0 || l < *level) {
				*level = l
			}
		case *ast.SubqueryExpr, *ast.ExistsExpr:
			return false
		case *ast.QuantifiedExpr:
			minLevel(sc, x.X, level)
			return false
		case *ast.InExpr:
			if x.Query != nil {
				minLevel(sc, x.X, level)
				return false
			}
		}
		return *level != 0
	})
}

// hasLocalAgg reports whether e calls an aggregate that belongs to the query
// of scope sc itself (not to an enclosing one, and not inside a subquery).
func hasLocalAgg(sc *scope, e ast.Node) bool {
	found := false
	if e == nil {
		return false
	}
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncCall:
			if x.Schema == "" && aggFuncs[x.Name] && x.Over == nil {
				if aggLevel(sc, x) == 0 {
					found = true
				}
				return false
			}
		case *ast.SubqueryExpr, *ast.ExistsExpr:
			return false
		case *ast.QuantifiedExpr:
			if hasLocalAgg(sc, x.X) {
				found = true
			}
			return false
		case *ast.InExpr:
			if x.Query != nil {
				if hasLocalAgg(sc, x.X) {
					found = true
				}
				return false
			}
		}
		return !found
	})
	return found
}

// needAgg is returned while binding a query block that did not look
// aggregated when an aggregate of a subquery turns out to belong to it: the
// block is bound again, aggregated (block).
type needAgg struct{ sc *scope }

func (e *needAgg) Error() string { return "plan: query block must be bound again as an aggregate" }

// outerAggregate binds the aggregate call f, found in scope sc, as an
// aggregate of the query level levels above sc: the call is bound in that
// query's aggregate context and every level in between reads its value as
// a correlated reference.
func (b *binder) outerAggregate(sc *scope, f *ast.FuncCall, levels int) (expr.Expr, error) {
	if levels == 0 {
		if b.agg == nil || b.agg.scope != sc {
			switch {
			case sc.clause != "":
				return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate functions are not allowed in %s", sc.clause).WithPos(f.Pos()).WithToken(f.Name)
			case sc.block:
				return nil, &needAgg{sc: sc}
			}
			return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate function %s is not allowed here", f.Name).WithPos(f.Pos()).WithToken(f.Name)
		}
		return b.aggregate(f)
	}
	saved := b.agg
	b.agg = sc.corr.agg
	e, err := b.outerAggregate(sc.parent, f, levels-1)
	b.agg = saved
	if err != nil {
		return nil, err
	}
	slot := len(sc.corr.exprs)
	sc.corr.exprs = append(sc.corr.exprs, e)
	return &expr.Outer{Slot: slot, Name: ast.Format(f), T: e.Type()}, nil
}
