package session

import (
	"context"
	"fmt"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// PostgreSQL's data-modifying WITH (docs/conformance.md, "RETURNING"):
//
//	WITH moved AS (DELETE FROM a WHERE … RETURNING *) INSERT INTO b SELECT * FROM moved
//
// Each INSERT, UPSERT, UPDATE or DELETE of the WITH runs once, in order,
// on the statement's one snapshot, before the statement's own query or
// write; a reference to its name reads its RETURNING rows. Every write
// of the statement is collected (statement.deferred) and committed as one
// commit at the end, so the statement writes all or nothing (R5.1). As in
// PostgreSQL, no part of the statement sees another part's writes: each
// reads the snapshot as the statement found it.

// withOf returns the WITH of a statement (nil when it has none).
func withOf(stmt ast.Stmt) *ast.With {
	switch n := stmt.(type) {
	case *ast.SelectStmt:
		return n.With
	case *ast.InsertStmt:
		return n.With
	case *ast.UpdateStmt:
		return n.With
	case *ast.DeleteStmt:
		return n.With
	}
	return nil
}

// writingWith returns the WITH of stmt when it holds a data-modifying
// definition, else nil.
func writingWith(stmt ast.Stmt) *ast.With {
	w := withOf(stmt)
	if w == nil {
		return nil
	}
	for _, c := range w.CTEs {
		if c.Write != nil {
			return w
		}
	}
	return nil
}

// writtenRel is the relation of a data-modifying definition: its
// RETURNING rows.
type writtenRel struct {
	cols  []plan.Column
	batch *types.Batch
}

// Columns implements plan.Virtual.
func (r writtenRel) Columns() []plan.Column { return r.cols }

// Rows implements plan.Virtual, on a fresh wrapper each time so that no
// operator touches another reference's vectors.
func (r writtenRel) Rows(context.Context, plan.Source) (*types.Batch, error) {
	return &types.Batch{Cols: append([]*types.Vector(nil), r.batch.Cols...), Rows: r.batch.Rows}, nil
}

func newWrittenRel(cols []Column, rows [][]types.Value) writtenRel {
	r := writtenRel{cols: make([]plan.Column, len(cols))}
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		r.cols[i] = plan.Column{Name: c.Name, Type: c.Type}
		ts[i] = c.Type
	}
	r.batch = types.NewBatch(ts, len(rows))
	for _, row := range rows {
		r.batch.AppendRow(row)
	}
	return r
}

// withWrites runs stmt, whose WITH w holds data-modifying definitions, as
// one commit, again on a newer snapshot if a DDL or a concurrent commit of
// its keys raced it (replan).
func (st *statement) withWrites(stmt ast.Stmt, w *ast.With) (*Result, error) {
	st.watchReads = true
	return st.replan(func() (*Result, error) { return st.withWritesOnce(stmt, w) })
}

func (st *statement) withWritesOnce(stmt ast.Stmt, w *ast.With) (*Result, error) {
	st.deferred = &storage.Txn{Kind: storage.KindWrite, CatalogVersion: st.snapshot().Catalog().Commit()}
	st.written = map[*ast.CTE]plan.Virtual{}
	for i, c := range w.CTEs {
		if c.Write == nil {
			continue
		}
		// The definition's queries see the definitions before it.
		st.with = &ast.With{Span: w.Span, Recursive: w.Recursive, CTEs: w.CTEs[:i]}
		res, err := st.writeOnce(c.Write)
		if err != nil {
			return nil, err
		}
		var v plan.Virtual
		if res.Columns != nil {
			v = newWrittenRel(res.Columns, res.Rows)
		}
		st.written[c] = v
	}
	st.with = w
	var res *Result
	var err error
	if _, isQuery := stmt.(*ast.SelectStmt); isQuery {
		// The query carries its WITH itself.
		st.with = nil
		var cols []Column
		var rows [][]types.Value
		if cols, rows, err = st.rows(stmt); err == nil {
			res = &Result{Tag: fmt.Sprintf("SELECT %d", len(rows)), Columns: cols, Rows: rows, RowsAffected: int64(len(rows))}
		}
	} else {
		res, err = st.writeOnce(stmt)
	}
	if err != nil {
		return nil, err
	}
	txn := st.deferred
	st.deferred = nil
	if len(txn.Writes) == 0 && txn.Rows == 0 {
		return res, nil
	}
	if res.Commit, err = st.commit(txn); err != nil {
		return nil, err
	}
	return res, nil
}

// explainWrites refuses EXPLAIN of a statement with a data-modifying WITH:
// planning it would mean running its writes.
func explainWrites(stmt ast.Stmt) error {
	if ex, ok := stmt.(*ast.ExplainStmt); ok && writingWith(ex.Stmt) != nil {
		return sqlerr.NotSupported(ex.Stmt.Pos(), "EXPLAIN of a statement with a data-modifying WITH is not supported")
	}
	return nil
}

// writeOnce runs one INSERT, UPSERT, UPDATE or DELETE of a statement with
// a data-modifying WITH, its commit deferred.
func (st *statement) writeOnce(stmt ast.Stmt) (*Result, error) {
	switch n := stmt.(type) {
	case *ast.InsertStmt:
		return st.insertOnce(n)
	case *ast.UpdateStmt:
		return st.updateOnce(n)
	case *ast.DeleteStmt:
		return st.deleteOnce(n)
	}
	return nil, sqlerr.NotSupported(stmt.Pos(), "not a data-modifying statement")
}

// returningOf returns what a write's RETURNING list is planned with; items
// is nil without RETURNING.
func returningOf(stmt ast.Stmt) (span ast.Span, table *ast.ObjectName, alias *ast.Ident, items []*ast.SelectItem) {
	switch n := stmt.(type) {
	case *ast.InsertStmt:
		return n.Span, n.Table, n.Alias, n.Returning
	case *ast.UpdateStmt:
		return n.Span, n.Table, n.Alias, n.Returning
	case *ast.DeleteStmt:
		return n.Span, n.Table, n.Alias, n.Returning
	}
	return ast.Span{}, nil, nil, nil
}

// describeWritten gives the data-modifying definitions of w the columns
// their RETURNING lists would have, with no rows, so that the statement
// can be planned without writing (Describe).
func (st *statement) describeWritten(w *ast.With) error {
	st.written = map[*ast.CTE]plan.Virtual{}
	for i, c := range w.CTEs {
		if c.Write == nil {
			continue
		}
		st.with = &ast.With{Span: w.Span, Recursive: w.Recursive, CTEs: w.CTEs[:i]}
		var v plan.Virtual
		if _, _, _, items := returningOf(c.Write); items != nil {
			cols, err := st.returningColumns(c.Write)
			if err != nil {
				return err
			}
			v = newWrittenRel(cols, nil)
		}
		st.written[c] = v
	}
	st.with = nil
	return nil
}
