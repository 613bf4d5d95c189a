package session

import (
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// EXPLAIN of INSERT, UPSERT, UPDATE and DELETE (R13.4, R10.2): the plan of
// the query the write runs to find or make its rows (UPDATE's and DELETE's
// match, INSERT … SELECT's source) under one line naming the write, so a
// user sees whether `UPDATE t … WHERE v = 5` reads through an index.
// Nothing is written. EXPLAIN ANALYZE of a write, which would have to run
// it, is refused.

// writeOf returns the write an EXPLAIN wraps, or nil.
func writeOf(stmt ast.Stmt) ast.Stmt {
	ex, ok := stmt.(*ast.ExplainStmt)
	if !ok {
		return nil
	}
	switch ex.Stmt.(type) {
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		return ex.Stmt
	}
	return nil
}

// explainWrite answers EXPLAIN of a write.
func (st *statement) explainWrite(ex *ast.ExplainStmt) (*Result, error) {
	if ex.Analyze {
		return nil, sqlerr.NotSupported(ex.Stmt.Pos(), "EXPLAIN ANALYZE of a write is not supported: it would run the write; EXPLAIN without ANALYZE shows its plan")
	}
	// The write's WITH queries are the query's (a data-modifying one
	// was refused already: explainWrites).
	st.with = withOf(ex.Stmt)
	head, q, err := st.writeQuery(ex.Stmt)
	if err != nil {
		return nil, err
	}
	rows := [][]types.Value{{types.NewString(head)}}
	if q != nil {
		_, plan, err := st.rows(&ast.ExplainStmt{Span: ex.Span, Stmt: q})
		if err != nil {
			return nil, err
		}
		for i, r := range plan {
			prefix := "└─ "
			if i > 0 {
				prefix = "   "
			}
			rows = append(rows, []types.Value{types.NewString(prefix + r[0].Str())})
		}
	}
	return &Result{Tag: "EXPLAIN", Columns: []Column{{Name: "QUERY PLAN", Type: strType}}, Rows: rows, RowsAffected: int64(len(rows))}, nil
}

// writeQuery is the line naming write w and the query it runs (nil for a
// VALUES list, which reads nothing).
func (st *statement) writeQuery(w ast.Stmt) (string, *ast.SelectStmt, error) {
	cat := st.snapshot().Catalog()
	switch n := w.(type) {
	case *ast.InsertStmt:
		tab, err := writableTable(cat, n.Table)
		if err != nil {
			return "", nil, err
		}
		verb := "Insert into "
		if n.Upsert {
			verb = "Upsert into "
		}
		if _, isValues := n.Source.Body.(*ast.Values); isValues {
			return verb + tab.Name + " (VALUES)", nil, nil
		}
		return verb + tab.Name, n.Source, nil
	case *ast.UpdateStmt:
		tab, err := writableTable(cat, n.Table)
		if err != nil {
			return "", nil, err
		}
		if !tab.Keyed() {
			return "", nil, appendOnly(tab, "UPDATE", n.Pos())
		}
		for _, sc := range n.Sets {
			if _, ok := tab.Column(sc.Column.Name); !ok {
				return "", nil, sqlerr.New(sqlerr.CodeUndefinedColumn, "column %q of relation %q does not exist", sc.Column.Name, tab.Name).WithPos(sc.Column.Pos())
			}
		}
		return "Update " + tab.Name, st.matchOf(n.Span, n.Table, n.Alias, n.Where, n.From, tab.Name), nil
	case *ast.DeleteStmt:
		tab, err := writableTable(cat, n.Table)
		if err != nil {
			return "", nil, err
		}
		if !tab.Keyed() {
			return "", nil, appendOnly(tab, "DELETE", n.Pos())
		}
		return "Delete from " + tab.Name, st.matchOf(n.Span, n.Table, n.Alias, n.Where, n.Using, tab.Name), nil
	}
	return "", nil, sqlerr.NotSupported(w.Pos(), "EXPLAIN of this statement is not supported")
}

// matchOf is the match query of an UPDATE or DELETE: its key columns
// where it matches, as the write selects them (matchQuery).
func (st *statement) matchOf(span ast.Span, table *ast.ObjectName, alias *ast.Ident, where ast.Expr, more []ast.TableExpr, name string) *ast.SelectStmt {
	tab, _ := st.snapshot().Catalog().Table(name)
	var items []*ast.SelectItem
	for _, k := range tab.KeyColumns() {
		items = append(items, columnItem(k, table.Span, qualifier(table, alias)))
	}
	return matchQuery(span, table, alias, where, items, more...)
}
