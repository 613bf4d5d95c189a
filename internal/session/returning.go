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
func (st *statement) returningColumns(span ast.Span, table *ast.ObjectName, alias *ast.Ident, items []*ast.SelectItem) ([]Column, error) {
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
