package plan

import (
	"slices"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// GROUP BY GROUPING SETS, ROLLUP and CUBE: the GROUP BY list is expanded
// into the grouping sets it stands for (each a list of expressions); the
// Aggregate node groups by the distinct expressions of all of them (Groups)
// and lists each set as positions in Groups (Sets). exec folds every input
// row into each set's groups in one pass; a set's rows show NULL for the
// group columns it leaves out, and grouping(…) tells those NULLs from
// NULLs of the data.

// maxGroupingSets is PostgreSQL's limit on the sets one GROUP BY expands to.
const maxGroupingSets = 4096

// expandGroupBy returns the grouping sets a GROUP BY list stands for, or
// nil when it uses no grouping construct (a plain GROUP BY). Top-level
// items multiply: GROUP BY a, ROLLUP (b, c) is the sets (a, b, c), (a, b)
// and (a).
func expandGroupBy(items []ast.Expr) ([][]ast.Expr, error) {
	plain := true
	for _, it := range items {
		if _, ok := it.(*ast.GroupingSet); ok {
			plain = false
		}
	}
	if plain {
		return nil, nil
	}
	sets := [][]ast.Expr{{}}
	for _, it := range items {
		var each [][]ast.Expr
		if gs, ok := it.(*ast.GroupingSet); ok {
			var err error
			if each, err = expandGrouping(gs); err != nil {
				return nil, err
			}
		} else {
			each = [][]ast.Expr{{it}}
		}
		if len(sets)*len(each) > maxGroupingSets {
			return nil, sqlerr.New(sqlerr.CodeProgramLimitExceeded, "too many grouping sets present (maximum %d)", maxGroupingSets).WithPos(it.Pos())
		}
		next := make([][]ast.Expr, 0, len(sets)*len(each))
		for _, s := range sets {
			for _, e := range each {
				next = append(next, append(slices.Clip(s), e...))
			}
		}
		sets = next
	}
	return sets, nil
}

// unitOf is the column list an item of ROLLUP, CUBE or GROUPING SETS
// stands for: a parenthesised list is one unit of several columns.
func unitOf(e ast.Expr) []ast.Expr {
	switch x := e.(type) {
	case *ast.TupleExpr:
		return x.Items
	case *ast.ParenExpr:
		return unitOf(x.X)
	}
	return []ast.Expr{e}
}

// expandGrouping returns the sets of one grouping construct.
func expandGrouping(gs *ast.GroupingSet) ([][]ast.Expr, error) {
	switch gs.Kind {
	case ast.EmptyGroupingSet:
		return [][]ast.Expr{{}}, nil
	case ast.Rollup:
		// ROLLUP (u1, …, un) is (u1 … un), (u1 … un-1), …, (u1), ().
		var sets [][]ast.Expr
		for k := len(gs.Items); k >= 0; k-- {
			var s []ast.Expr
			for _, it := range gs.Items[:k] {
				s = append(s, unitOf(it)...)
			}
			sets = append(sets, s)
		}
		return sets, nil
	case ast.Cube:
		// CUBE (u1, …, un) is every subset, the whole list first.
		n := len(gs.Items)
		if n > 12 {
			return nil, sqlerr.New(sqlerr.CodeProgramLimitExceeded, "CUBE is limited to 12 elements").WithPos(gs.Pos())
		}
		var sets [][]ast.Expr
		for mask := 1<<n - 1; mask >= 0; mask-- {
			var s []ast.Expr
			for i, it := range gs.Items {
				if mask&(1<<(n-1-i)) != 0 {
					s = append(s, unitOf(it)...)
				}
			}
			sets = append(sets, s)
		}
		return sets, nil
	}
	// GROUPING SETS (…): the sets of each item, one after another.
	var sets [][]ast.Expr
	for _, it := range gs.Items {
		if inner, ok := it.(*ast.GroupingSet); ok {
			sub, err := expandGrouping(inner)
			if err != nil {
				return nil, err
			}
			sets = append(sets, sub...)
		} else {
			sets = append(sets, unitOf(it))
		}
		if len(sets) > maxGroupingSets {
			return nil, sqlerr.New(sqlerr.CodeProgramLimitExceeded, "too many grouping sets present (maximum %d)", maxGroupingSets).WithPos(it.Pos())
		}
	}
	return sets, nil
}

// groupingSets binds the expressions of sets into ag (addGroup binds one
// and returns its position in ag.Groups) and records each set as the
// sorted positions of its distinct expressions. One set of every
// expression is a plain GROUP BY and leaves ag.Sets nil.
func (b *binder) groupingSets(ag *Aggregate, sets [][]ast.Expr, addGroup func(ast.Expr) (int, error)) error {
	for _, s := range sets {
		var set []int
		for _, e := range s {
			i, err := addGroup(e)
			if err != nil {
				return err
			}
			if !slices.Contains(set, i) {
				set = append(set, i)
			}
		}
		slices.Sort(set)
		ag.Sets = append(ag.Sets, set)
	}
	if len(ag.Sets) == 1 && len(ag.Sets[0]) == len(ag.Groups) {
		ag.Sets = nil
	}
	return nil
}

// grouping binds grouping(a, b, …), which is an aggregate call in that it
// is computed by the Aggregate (per grouping set): bit n-1-i of its INT32
// value is set when the i-th argument is not grouped on in the row's set.
// Each argument must be one of the query's GROUP BY expressions.
func (b *binder) grouping(ac *aggCtx, f *ast.FuncCall, key string) (expr.Expr, error) {
	if f.Star || f.Distinct || len(f.OrderBy) > 0 || f.Filter != nil || len(f.Args) == 0 {
		return nil, sqlerr.New(sqlerr.CodeSyntax, "grouping takes one or more GROUP BY expressions").WithPos(f.Pos()).WithToken(f.Name)
	}
	if len(f.Args) > 31 {
		return nil, sqlerr.New("54023", "GROUPING must have fewer than 32 arguments").WithPos(f.Pos())
	}
	call := AggCall{Fn: "grouping", T: types.Of(types.Int32), Pos: -1}
	for _, a := range f.Args {
		c, ok := ac.groups[ast.Format(unparen(a))]
		if !ok {
			if cr, isCol := unparen(a).(*ast.ColumnRef); isCol {
				if e, err := b.resolve(ac.scope, cr); err == nil {
					if col, isCol := e.(*expr.Col); isCol {
						c, ok = ac.byID[col.ID]
					}
				}
			}
		}
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeGrouping, "arguments to GROUPING must be grouping expressions of the associated query level").WithPos(a.Pos())
		}
		call.Grouping = append(call.Grouping, slices.IndexFunc(ac.node.GroupCols, func(g ColRef) bool { return g.ID == c.ID }))
	}
	c := b.newCol(key, call.T)
	ac.node.Aggs = append(ac.node.Aggs, call)
	ac.node.AggCols = append(ac.node.AggCols, c)
	ac.aggs[key] = c
	return colExpr(c), nil
}

// GroupingValue is grouping(…)'s value in the rows of grouping set set
// (positions in the Aggregate's Groups; nil for a plain GROUP BY, which
// groups on every one).
func GroupingValue(a AggCall, set []int, plain bool) int64 {
	var v int64
	for _, g := range a.Grouping {
		v <<= 1
		if !plain && !slices.Contains(set, g) {
			v |= 1
		}
	}
	return v
}
