package plan

import (
	"errors"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
)

// maxViewDepth bounds views read through views. The catalog refuses a view
// that reads itself, so only a damaged catalog could reach it.
const maxViewDepth = 64

// viewDeps collects what a query reads while BuildView binds it.
type viewDeps struct {
	scans []boundScan
	views []string
}

// boundScan is a table a view's query reads with the columns it had when
// bound: rewrites later drop columns they find unneeded (an unused WINDOW,
// a semi join's select list, an aggregate's ignored ORDER BY), but the
// stored text still names them, so the view depends on them all.
type boundScan struct {
	table *catalog.Table
	cols  []catalog.ColumnID
}

// Deps is what a view's query reads: the tables (through other views
// too), the columns of them it refers to, and the views it names.
type Deps struct {
	Tables []*catalog.Table
	Reads  []catalog.ColumnRef
	Views  []string
}

// BuildView binds and optimizes a view's query as Build does and also
// returns what it reads, for the catalog's dependency checks: every column
// of every table the query binds (so a view depends on whole tables, more
// than PostgreSQL's per-column dependencies, but never less than its text
// names).
func BuildView(q *ast.SelectStmt, env *Env) (*Plan, Deps, error) {
	b := newBinder(env)
	b.deps = &viewDeps{}
	root, names, err := b.query(q, nil, nil)
	if err != nil {
		return nil, Deps{}, err
	}
	root = optimize(root, env)
	p := &Plan{Root: root}
	for i, c := range root.Output() {
		p.cols = append(p.cols, Column{Name: names[i], Type: c.T})
	}
	var d Deps
	seenTable := map[catalog.TableID]bool{}
	seenRead := map[catalog.ColumnKey]bool{}
	for _, s := range b.deps.scans {
		if !seenTable[s.table.ID] {
			seenTable[s.table.ID] = true
			d.Tables = append(d.Tables, s.table)
		}
		for _, id := range s.cols {
			k := catalog.ColumnKey{Table: s.table.ID, Column: id}
			if col, ok := s.table.ColumnByID(id); ok && !seenRead[k] {
				seenRead[k] = true
				d.Reads = append(d.Reads, catalog.ColumnRef{Table: s.table.Name, Column: col.Name})
			}
		}
	}
	for _, v := range b.deps.views {
		if !slices.Contains(d.Views, v) {
			d.Views = append(d.Views, v)
		}
	}
	return p, d, nil
}

// viewRef binds a reference to view v: its stored query, bound afresh
// under the current schema (R6.5) and the AS OF in force at the reference
// (R6.2), outside every enclosing scope (a view sees no outer column),
// with the view's column names.
func (b *binder) viewRef(t *ast.TableRef, v *catalog.View, sc *scope, own *asOf, alias string, cols []*ast.Ident) (Node, error) {
	if b.deps != nil {
		b.deps.views = append(b.deps.views, v.Name)
	}
	b.viewDepth++
	defer func() { b.viewDepth-- }()
	if b.viewDepth > maxViewDepth {
		return nil, sqlerr.New(sqlerr.CodeInternal, "view %s reads views more than %d deep", v.Name, maxViewDepth).WithPos(t.Pos())
	}
	q, err := parsedView(v)
	if err != nil {
		return nil, viewError(v, t, err)
	}
	n, _, err := b.queryAsOf(q, nil, nil, own)
	if err != nil {
		return nil, viewError(v, t, err)
	}
	out := n.Output()
	if len(out) < len(v.Columns) {
		return nil, sqlerr.New(sqlerr.CodeInternal, "view %s returns %d columns, not its %d", v.Name, len(out), len(v.Columns)).WithPos(t.Pos())
	}
	if len(out) > len(v.Columns) || !sameTypes(out, v) {
		// A view over t.* keeps the columns t had when it was created (a
		// column added since is not the view's), as in PostgreSQL.
		p := &Project{In: n}
		for i, c := range out[:len(v.Columns)] {
			var e expr.Expr = colExpr(c)
			if c.T != v.Types[i] {
				e = &expr.Cast{X: e, T: v.Types[i], Pos: t.Pos()}
			}
			p.Exprs = append(p.Exprs, e)
			p.Cols = append(p.Cols, b.newCol(v.Columns[i], v.Types[i]))
		}
		n, out = p, p.Cols
	}
	r := &rel{name: alias, b: b}
	for i, c := range out {
		r.cols = append(r.cols, relCol{name: v.Columns[i], ref: c})
	}
	if err := renameCols(r, cols, t.Pos()); err != nil {
		return nil, err
	}
	return n, b.addRel(sc, r, t.Pos())
}

// parsedView is v's stored query parsed, once per view definition
// (catalog.View.Parsed): the binder only reads the tree, so every
// statement referencing the view shares it.
func parsedView(v *catalog.View) (*ast.SelectStmt, error) {
	if q, ok := v.Parsed().(*ast.SelectStmt); ok {
		return q, nil
	}
	stmt, err := parser.Parse(v.Select)
	if err != nil {
		return nil, err
	}
	q, ok := stmt.(*ast.SelectStmt)
	if !ok {
		return nil, sqlerr.New(sqlerr.CodeInternal, "view %s does not hold a query", v.Name)
	}
	v.SetParsed(q)
	return q, nil
}

func sameTypes(out []ColRef, v *catalog.View) bool {
	for i := range v.Types {
		if out[i].T != v.Types[i] {
			return false
		}
	}
	return true
}

// viewError reports an error binding a view's stored query at the
// reference to the view: the stored text is not the statement's, so its
// positions would point at the wrong place.
func viewError(v *catalog.View, t *ast.TableRef, err error) error {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return sqlerr.New(se.Code, "view %s: %s", v.Name, se.Message).WithPos(t.Pos()).WithToken(t.Name.Name)
	}
	return sqlerr.New(sqlerr.CodeInternal, "view %s: %v", v.Name, err).WithPos(t.Pos()).WithToken(t.Name.Name)
}
