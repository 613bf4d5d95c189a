package plan

import (
	"strings"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/types"
)

// colName names a select-list item as PostgreSQL does (FigureColname): the
// alias; a column's name; a function's name; for a cast, what the operand
// is named, else the type's (1::int is int4); for CASE, EXISTS and ARRAY
// (query) those words; for a scalar subquery the name of its one column;
// x COLLATE c and (x) as x; a[i] as a. Anything else, an operator or a
// literal included, is ?column?. bound is the item's bound expression
// (nil inside a subquery), which gives a cast's PostgreSQL type name.
func colName(it *ast.SelectItem, bound expr.Expr) string {
	if it.Alias != nil {
		return it.Alias.Name
	}
	if n := figure(it.Expr, bound); n != "" {
		return n
	}
	return "?column?"
}

// operatorFuncs are the functions the parser writes operators as
// (sql/parser/pgsyntax.go): a call of one that starts where its first
// argument starts was an operator, which PostgreSQL does not name.
var operatorFuncs = map[string]bool{"textregexeq": true, "textregexne": true, "texticregexeq": true,
	"texticregexne": true, "anyarray_op": true, "array_element": true}

func figure(e ast.Expr, bound expr.Expr) string {
	switch x := e.(type) {
	case *ast.ColumnRef:
		return x.Name
	case *ast.FuncCall:
		if x.Name == "anyarray_op" && len(x.Args) > 1 && x.Args[1].Pos() == x.Pos() {
			return "" // x = ANY(a): anyarray_op('=', x, a)
		}
		if operatorFuncs[x.Name] && len(x.Args) > 0 && x.Args[0].Pos() == x.Pos() {
			if x.Name == "array_element" {
				return figure(x.Args[0], nil)
			}
			return ""
		}
		if x.Name == "array" && len(x.Args) == 1 {
			return "array"
		}
		if x.Name == "strpos" && len(x.Args) == 2 && x.Args[0].Pos() > x.Args[1].Pos() {
			// POSITION(a IN b), which the parser writes as strpos(b, a).
			return "position"
		}
		return x.Name
	case *ast.ParenExpr:
		var in expr.Expr
		if bound != nil {
			in = bound
		}
		return figure(x.X, in)
	case *ast.CastExpr:
		var in expr.Expr
		if c, ok := bound.(*expr.Cast); ok {
			in = c.X
		}
		if n := figure(x.X, in); n != "" {
			return n
		}
		if bound != nil {
			return pgTypeName(bound.Type(), x.Type.Name)
		}
		return strings.ToLower(x.Type.Name)
	case *ast.TypedLit:
		if bound != nil {
			return pgTypeName(bound.Type(), x.Type.Name)
		}
		return strings.ToLower(x.Type.Name)
	case *ast.IntervalLit:
		return "interval"
	case *ast.CaseExpr:
		return "case"
	case *ast.ExistsExpr:
		return "exists"
	case *ast.SubqueryExpr:
		if blk, ok := x.Query.Body.(*ast.SelectBlock); ok && len(blk.Items) == 1 {
			it := blk.Items[0]
			if it.Alias != nil {
				return it.Alias.Name
			}
			return figure(it.Expr, nil)
		}
	}
	return ""
}

// pgTypeName is the pg_type name of t (int4 for INT32), or the written
// name lower-cased when PostgreSQL has no type for it.
func pgTypeName(t types.Type, written string) string {
	oid, _ := expr.PGType(t)
	for _, ti := range expr.PGTypes() {
		if ti.OID == oid {
			return ti.Name
		}
	}
	return strings.ToLower(written)
}
