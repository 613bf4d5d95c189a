package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// TableFunction is a set-returning function in FROM (generate_series,
// unnest). Its arguments read constants, parameters and the enclosing
// query's row (expr.Outer), never a column of its own query, so they are
// evaluated once per run.
type TableFunction struct {
	Fn   *expr.TableFunc
	Args []expr.Expr
	Cols []ColRef // one column
}

// Output implements Node.
func (n *TableFunction) Output() []ColRef { return n.Cols }

// Inputs implements Node.
func (n *TableFunction) Inputs() []Node { return nil }

// String describes the node for EXPLAIN.
func (n *TableFunction) String() string {
	args := make([]string, len(n.Args))
	for i, a := range n.Args {
		args[i] = a.String()
	}
	return fmt.Sprintf("TableFunction %s(%s) columns=[%s]", n.Fn.Name, strings.Join(args, ", "), strings.Join(colNames(n.Cols), ", "))
}

// setReturningFunc binds a set-returning function in FROM. Its one column
// is named by the alias's column list, else by the alias, else by the
// function, as PostgreSQL names it (FROM generate_series(1, 3) s reads
// s).
func (b *binder) setReturningFunc(f *ast.TableFunc, sc *scope) (Node, error) {
	name := f.Name.Name
	if f.Name.Schema != "" && f.Name.Schema != "pg_catalog" {
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "table function %s.%s does not exist", f.Name.Schema, name).WithPos(f.Name.Pos()).WithToken(name)
	}
	if f.AsOf != nil {
		return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "AS OF applies to tables and versions(), not to %s()", name).WithPos(f.AsOf.Pos())
	}
	// The arguments see the enclosing query (a correlated reference, as
	// psql's \d uses). A function in FROM is LATERAL whether written so or
	// not, as in PostgreSQL: arguments that read the FROM items before it
	// are bound again as a lateral item's (lateral.go).
	lateralRels := b.lateralRels
	argScope := &scope{parent: sc.parent, corr: sc.corr, ctes: sc.ctes}
	mark := 0
	if sc.corr != nil {
		mark = len(sc.corr.exprs)
	}
	vol := b.volatiles
	args, ts, err := b.tableFuncArgs(f, argScope)
	var cl *corrList
	if err != nil {
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != sqlerr.CodeUndefinedColumn && se.Code != sqlerr.CodeUndefinedTable || len(lateralRels) == 0 {
			return nil, err
		}
		if sc.corr != nil {
			sc.corr.exprs = sc.corr.exprs[:mark]
		}
		cl = &corrList{}
		args, ts, err = b.tableFuncArgs(f, &scope{parent: lateralScope(sc, lateralRels), corr: cl, ctes: sc.ctes})
		if err != nil {
			return nil, err
		}
	}
	var fn *expr.TableFunc
	if _, _, err = b.resolveFunc(args, ts, func(ts []types.Type) (*expr.Func, expr.Signature, error) {
		fn, err = expr.NewTableFunc(name, ts, f.Name.Pos())
		return nil, expr.Signature{}, err
	}); err != nil {
		return nil, err
	}
	for i := range args {
		if args[i], err = b.coerce(args[i], fn.Params[i], f.Args[i].Pos()); err != nil {
			return nil, err
		}
	}
	alias, cols := aliasOf(f.Alias, name)
	colName := name
	if f.Alias != nil && f.Alias.Name != nil {
		colName = alias
	}
	ref := b.newCol(colName, fn.Result)
	var n Node = &TableFunction{Fn: fn, Args: args, Cols: []ColRef{ref}}
	if cl != nil && len(cl.exprs) > 0 {
		n = b.lateralNode(n, cl.exprs, b.volatiles > vol)
	}
	r := &rel{name: alias, b: b, cols: []relCol{{name: colName, ref: ref}}}
	if err := renameCols(r, cols, f.Pos()); err != nil {
		return nil, err
	}
	return n, b.addRel(sc, r, f.Pos())
}

// tableFuncArgs binds the arguments of a function in FROM in sc.
func (b *binder) tableFuncArgs(f *ast.TableFunc, sc *scope) ([]expr.Expr, []types.Type, error) {
	args := make([]expr.Expr, len(f.Args))
	ts := make([]types.Type, len(f.Args))
	for i, a := range f.Args {
		if hasAgg(a) {
			return nil, nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate functions are not allowed in functions in FROM").WithPos(a.Pos())
		}
		e, err := b.expr(sc, a)
		if err != nil {
			return nil, nil, err
		}
		args[i], ts[i] = e, e.Type()
	}
	return args, ts, nil
}

// elementTyped gives an array element (a[i]) the type of the number it is
// compared with. Strata keeps arrays in their text form, so a[i] is text;
// in PostgreSQL it has the array's element type, and psql compares an
// int2vector's element with attnum (\d's publications footer).
func elementTyped(l, r expr.Expr) (expr.Expr, expr.Expr) {
	isElem := func(e expr.Expr) bool {
		f, ok := e.(*expr.Func)
		return ok && f.Name == "array_element" && f.T.Kind == types.String
	}
	switch {
	case isElem(l) && r.Type().Kind.IsNumeric():
		l = &expr.Cast{X: l, T: r.Type(), Pos: -1}
	case isElem(r) && l.Type().Kind.IsNumeric():
		r = &expr.Cast{X: r, T: l.Type(), Pos: -1}
	}
	return l, r
}

// listAggType types string_agg(text, text) and array_agg(any), both of
// which return text: array_agg's value is the array's PostgreSQL text form,
// which is how Strata keeps arrays. ok is false for other aggregates.
func listAggType(a AggCall) (t types.Type, ok bool, err error) {
	switch a.Fn {
	case "string_agg":
		for _, x := range a.Args {
			if k := x.Type().Kind; k != types.String && k != types.Unknown {
				return t, true, errf("function string_agg(%s, %s) does not exist", a.Args[0].Type(), a.Args[1].Type())
			}
		}
	case "array_agg":
	default:
		return t, false, nil
	}
	return types.Of(types.String), true, nil
}
