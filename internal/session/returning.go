package session

import (
	"context"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// RETURNING (docs/conformance.md, "RETURNING"): a write's RETURNING list is
// bound and run as SELECT items FROM table [alias], with the table
// reference standing for the rows the statement writes, one per row its
// command tag counts (R3.6: accepted rows, winners and losers alike), in
// the table's column order:
//
//   - INSERT and UPSERT: the version written, its columns cast and
//     DEFAULT-filled as stored; a column of an attribute group the write
//     does not touch is NULL, since the statement writes nothing there;
//   - UPDATE: the current row with the SET values applied;
//   - DELETE: the current row as it was before the delete.
//
// The list is evaluated before the commit, so an error in it (a division
// by zero, say) fails the statement and nothing is written.

// returnRel is the relation a RETURNING list reads: the written rows.
type returnRel struct {
	cols  []plan.Column
	batch *types.Batch
}

// Columns implements plan.Virtual.
func (r returnRel) Columns() []plan.Column { return r.cols }

// Rows implements plan.Virtual. The batch is wrapped anew on each call so
// an operator that resets its input cannot touch the write's vectors.
func (r returnRel) Rows(context.Context, plan.Source) (*types.Batch, error) {
	return &types.Batch{Cols: append([]*types.Vector(nil), r.batch.Cols...), Rows: r.batch.Rows}, nil
}

// checkReturning refuses what PostgreSQL refuses in a RETURNING list:
// aggregates and window functions, which have no group or window to run
// over, and set-returning functions, which would make a written row more
// than one returned row.
func checkReturning(items []*ast.SelectItem) error {
	for _, it := range items {
		if it.Expr == nil {
			continue
		}
		if f := plan.WindowCall(it.Expr); f != nil {
			return sqlerr.New("42P20", "window functions are not allowed in RETURNING").WithPos(f.Pos())
		}
		if plan.HasAggregate(it.Expr) {
			return sqlerr.New("42803", "aggregate functions are not allowed in RETURNING").WithPos(it.Pos())
		}
		if f := plan.SetReturningCall(it.Expr); f != nil {
			return sqlerr.New(sqlerr.CodeFeatureNotSupported, "set-returning functions are not allowed in RETURNING").
				WithPos(f.Pos()).WithToken(f.Name)
		}
	}
	return nil
}

// returningBatch is an empty batch of tab's columns, with room for n rows.
func returningBatch(tab *catalog.Table, n int) *types.Batch {
	ts := make([]types.Type, len(tab.Columns))
	for i, c := range tab.Columns {
		ts[i] = c.Type
	}
	return types.NewBatch(ts, n)
}

// returningQuery is a write's RETURNING list as the query that computes
// it, SELECT items FROM table [alias], with the relations that bind its
// table reference to rows (tab's columns in order).
func returningQuery(span ast.Span, table *ast.ObjectName, alias *ast.Ident, items []*ast.SelectItem,
	tab *catalog.Table, rows *types.Batch) (*ast.SelectStmt, map[*ast.TableRef]plan.Virtual, error) {
	if err := checkReturning(items); err != nil {
		return nil, nil, err
	}
	sel := matchQuery(span, table, alias, nil, items)
	ref := sel.Body.(*ast.SelectBlock).From[0].(*ast.TableRef)
	return sel, map[*ast.TableRef]plan.Virtual{ref: returnRel{cols: tableColumns(tab), batch: rows}}, nil
}

// returning evaluates a write's RETURNING list over rows (tab's columns in
// order) and returns its columns and rows.
func (st *statement) returning(span ast.Span, table *ast.ObjectName, alias *ast.Ident, items []*ast.SelectItem,
	tab *catalog.Table, rows *types.Batch) ([]Column, [][]types.Value, error) {
	sel, rels, err := returningQuery(span, table, alias, items, tab, rows)
	if err != nil {
		return nil, nil, err
	}
	q, err := st.querier(span.Pos())
	if err != nil {
		return nil, nil, err
	}
	env, err := st.readEnv()
	if err != nil {
		return nil, nil, err
	}
	env.Relations = rels
	cols, out, err := st.collect(q, sel, env)
	if err != nil {
		return nil, nil, err
	}
	if out == nil {
		// Columns set and Rows empty: the statement returns rows, none.
		out = [][]types.Value{}
	}
	return cols, out, nil
}

// returningColumns describes a write's RETURNING list without writing:
// the list is planned over no rows (Describe).
func (st *statement) returningColumns(stmt ast.Stmt) ([]Column, error) {
	if err := checkJoinedReturning(stmt); err != nil {
		return nil, err
	}
	span, table, alias, items := returningOf(stmt)
	tab, err := writableTable(st.snapshot().Catalog(), table)
	if err != nil {
		return nil, err
	}
	sel, rels, err := returningQuery(span, table, alias, items, tab, returningBatch(tab, 0))
	if err != nil {
		return nil, err
	}
	env := st.env()
	env.Relations = rels
	p, err := plan.Build(sel, planEnv(env))
	if err != nil {
		return nil, err
	}
	pc := p.Columns()
	cols := make([]Column, len(pc))
	for i, c := range pc {
		cols[i] = Column{Name: c.Name, Type: c.Type}
	}
	return cols, nil
}

func tableColumns(tab *catalog.Table) []plan.Column {
	out := make([]plan.Column, len(tab.Columns))
	for i, c := range tab.Columns {
		out[i] = plan.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// insertedRows is the RETURNING relation of an INSERT or UPSERT: each
// table column from the first group that writes it, NULL where none does.
// The vectors are the write's own, not copies.
func insertedRows(tab *catalog.Table, w *writer) *types.Batch {
	out := &types.Batch{Cols: make([]*types.Vector, len(tab.Columns)), Rows: w.rows}
	for i, c := range tab.Columns {
	find:
		for _, g := range w.groups {
			for j, gc := range g.cols {
				if gc.ID == c.ID {
					out.Cols[i] = g.batch.Cols[j]
					break find
				}
			}
		}
		if out.Cols[i] == nil {
			v := types.NewVector(c.Type, w.rows)
			v.AppendNulls(w.rows)
			out.Cols[i] = v
		}
	}
	return out
}

// checkJoinedReturning applies checkReturningJoined to an UPDATE … FROM or
// DELETE … USING with RETURNING; other statements pass.
func checkJoinedReturning(stmt ast.Stmt) error {
	switch n := stmt.(type) {
	case *ast.UpdateStmt:
		if n.Returning != nil && n.From != nil {
			return checkReturningJoined(qualifier(n.Table, n.Alias), n.Returning, n.From)
		}
	case *ast.DeleteStmt:
		if n.Returning != nil && n.Using != nil {
			return checkReturningJoined(qualifier(n.Table, n.Alias), n.Returning, n.Using)
		}
	}
	return nil
}

// checkReturningJoined refuses a RETURNING list of UPDATE … FROM or
// DELETE … USING that names a column of the joined tables (u.x, u.*):
// RETURNING here returns the target's rows alone (docs/conformance.md),
// where PostgreSQL would return the joined row's values too, so the
// statement fails at the reference, before anything is written, rather
// than with a "missing FROM-clause entry" that reads as a typo.
func checkReturningJoined(target string, items []*ast.SelectItem, joined []ast.TableExpr) error {
	names := map[string]bool{}
	var collect func(t ast.TableExpr)
	aliasOr := func(a *ast.Alias, name string) {
		if a != nil {
			name = a.Name.Name
		}
		if name != "" && name != target {
			names[name] = true
		}
	}
	collect = func(t ast.TableExpr) {
		switch x := t.(type) {
		case *ast.TableRef:
			aliasOr(x.Alias, x.Name.Name)
		case *ast.TableFunc:
			aliasOr(x.Alias, x.Name.Name)
		case *ast.DerivedTable:
			aliasOr(x.Alias, "")
		case *ast.ParenTable:
			if x.Alias != nil {
				aliasOr(x.Alias, "")
				return
			}
			collect(x.Inner)
		case *ast.JoinExpr:
			collect(x.Left)
			collect(x.Right)
		}
	}
	for _, t := range joined {
		collect(t)
	}
	var err error
	for _, it := range items {
		ast.Inspect(it, func(n ast.Node) bool {
			if err != nil {
				return false
			}
			var rel string
			switch x := n.(type) {
			case *ast.ColumnRef:
				rel = x.Table
			case *ast.StarExpr:
				rel = x.Table
			case *ast.SelectStmt:
				return false // a subquery's names are its own
			}
			if rel != "" && names[rel] {
				err = sqlerr.New(sqlerr.CodeFeatureNotSupported, "RETURNING cannot name columns of %s, a table the statement joins: it returns the rows of %s", rel, target).
					WithPos(n.Pos()).WithToken(rel).WithHint("join the returned rows to %s in a query: WITH w AS (… RETURNING %s.*) SELECT … FROM w JOIN %s ON …", rel, target, rel)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
