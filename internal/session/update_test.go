package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// scanQuerier is a Querier for the queries UPDATE and DELETE build: one
// table, items that are columns, literals or column + literal, and a WHERE
// that is absent or column = literal. It lets these tests pin the write
// rules of R5.3 and R5.4 without the planner.
type scanQuerier struct{}

func (scanQuerier) EvalConst(ctx context.Context, e ast.Expr, q *QueryEnv) (types.Value, error) {
	return types.Value{}, fmt.Errorf("scanQuerier: EvalConst of %s", ast.Format(e))
}

func (scanQuerier) Query(ctx context.Context, stmt ast.Stmt, q *QueryEnv, fn func(*types.Batch) error) ([]Column, error) {
	blk := stmt.(*ast.SelectStmt).Body.(*ast.SelectBlock)
	tab, _ := q.Snapshot.Catalog().Table(blk.From[0].(*ast.TableRef).Name.Name)
	ids := make([]catalog.ColumnID, len(tab.Columns))
	for i, c := range tab.Columns {
		ids[i] = c.ID
	}
	col := func(name string) int {
		for i, c := range tab.Columns {
			if c.Name == name {
				return i
			}
		}
		panic("no column " + name)
	}
	lit := func(e ast.Expr) types.Value {
		switch x := e.(type) {
		case *ast.NumberLit:
			v, _ := types.ParseNumber(x.Text)
			return v
		case *ast.StringLit:
			return types.NewString(x.Value)
		}
		panic("not a literal: " + ast.Format(e))
	}
	eval := func(e ast.Expr, row []types.Value) types.Value {
		switch x := e.(type) {
		case *ast.ColumnRef:
			return row[col(x.Name)]
		case *ast.BinaryExpr:
			v, err := types.Add(row[col(x.L.(*ast.ColumnRef).Name)], lit(x.R))
			if err != nil {
				panic(err)
			}
			return v
		}
		return lit(e)
	}
	var cols []Column
	typs := make([]types.Type, len(blk.Items))
	for i, it := range blk.Items {
		cols = append(cols, Column{Name: fmt.Sprint(i)})
		switch x := it.Expr.(type) {
		case *ast.ColumnRef:
			typs[i] = tab.Columns[col(x.Name)].Type
		case *ast.BinaryExpr:
			typs[i] = types.Of(types.Int64)
		default:
			typs[i] = lit(x).Type()
		}
	}
	_, err := q.Snapshot.Scan(ctx, storage.ScanSpec{Table: tab.ID, Cols: ids}, func(b *types.Batch) error {
		out := types.NewBatch(typs, b.Rows)
		for i := 0; i < b.Rows; i++ {
			row := b.Row(nil, i)
			if w, ok := blk.Where.(*ast.BinaryExpr); ok && w.Op == token.EQ {
				l := row[col(w.L.(*ast.ColumnRef).Name)]
				r, err := types.Cast(lit(w.R), l.Type())
				if err != nil || !types.Equal(l, r) {
					continue
				}
			}
			vals := make([]types.Value, len(blk.Items))
			for j, it := range blk.Items {
				v, err := types.Cast(eval(it.Expr, row), typs[j])
				if err != nil {
					return err
				}
				vals[j] = v
			}
			out.AppendRow(vals)
		}
		return fn(out)
	})
	return cols, err
}

func TestUpdateAndDelete(t *testing.T) {
	h := newHarness(t)
	h.s.opts.Querier = scanQuerier{}
	h.ok(`CREATE TABLE b (k INT64 NOT NULL, v STRING, idx INT64, n INT64 DEFAULT 4, PRIMARY KEY (k),
		ATTRIBUTE GROUP g (v, idx) VALID BY (idx)) MODE VERSIONED`)
	h.ok(`INSERT INTO b VALUES (1, 'one', 10, 1), (2, 'two', 20, 2)`)
	// ordering columns not set keep their values: the update wins by commit
	if r := h.ok(`UPDATE b SET v = 'ONE' WHERE k = 1`); r.Tag != "UPDATE 1" || r.Commit != 3 {
		t.Errorf("UPDATE: %q commit %d", r.Tag, r.Commit)
	}
	h.wantRows("b", "1 ONE 10 1", "2 two 20 2")
	// an earlier ordering value loses
	h.ok(`UPDATE b SET idx = 5, v = 'old' WHERE k = 1`)
	h.wantRows("b", "1 ONE 10 1", "2 two 20 2")
	// SET reads the current row; DEFAULT takes the column's
	h.ok(`UPDATE b SET n = n + 10 WHERE k = 2`)
	h.ok(`UPDATE b SET n = DEFAULT WHERE k = 1`)
	h.wantRows("b", "1 ONE 10 4", "2 two 20 12")
	h.fails(`UPDATE b SET k = 3`, "0A000", "k", "key")
	h.fails(`UPDATE b SET nosuch = 3`, "42703", "nosuch")
	h.fails(`UPDATE b SET n = 1, n = 2`, "42601", "n")
	h.fails(`UPDATE b SET n = 99999999999999999999`, "22003", "n")
	// a matching nothing UPDATE is a commit with no rows
	if r := h.ok(`UPDATE b SET n = 0 WHERE k = 99`); r.Tag != "UPDATE 0" || r.Commit == 0 {
		t.Errorf("empty UPDATE: %q commit %d", r.Tag, r.Commit)
	}
	if r := h.ok(`DELETE FROM b WHERE k = 2`); r.Tag != "DELETE 1" {
		t.Errorf("DELETE: %q", r.Tag)
	}
	h.wantRows("b", "1 ONE 10 4")
	// a key that exists only in group default: g has no version, so an
	// UPDATE of g must set its ordering column
	h.ok(`INSERT INTO b (k, n) VALUES (3, 7)`)
	h.fails(`UPDATE b SET v = 'x' WHERE k = 3`, "23502", "idx", "g")
	h.ok(`UPDATE b SET v = 'x', idx = 1 WHERE k = 3`)
	h.wantRows("b", "1 ONE 10 4", "3 x 1 7")
	h.ok(`DELETE FROM b`)
	h.wantRows("b")
	// inside a transaction the writes wait for COMMIT
	h.ok(`INSERT INTO b (k, n) VALUES (5, 1)`)
	h.ok(`BEGIN`)
	h.ok(`UPDATE b SET n = 2 WHERE k = 5`)
	h.ok(`DELETE FROM b WHERE k = 5`)
	h.wantRows("b", "5 NULL NULL 1")
	h.ok(`COMMIT`)
	h.wantRows("b")
}

// racingQuerier commits a DDL on its engine the first time it runs a
// query, between the moment a write is planned and the moment it commits.
type racingQuerier struct {
	scanQuerier
	eng   *storage.Engine
	raced *int
}

func (r racingQuerier) Query(ctx context.Context, stmt ast.Stmt, q *QueryEnv, fn func(*types.Batch) error) ([]Column, error) {
	if *r.raced == 0 {
		*r.raced = 1
		_, err := r.eng.Commit(ctx, &storage.Txn{Kind: storage.KindDDL, DDL: func(c *catalog.Catalog, commit uint64) error {
			_, err := c.AddColumn(catalog.AddColumnSpec{Table: "b", Column: catalog.ColumnSpec{Name: "extra", Type: types.Of(types.Int64)}}, commit)
			return err
		}})
		if err != nil {
			return nil, err
		}
	}
	*r.raced++
	return r.scanQuerier.Query(ctx, stmt, q, fn)
}

// A DDL that commits while a write is planned makes the engine refuse the
// write (storage.ErrSchemaChanged); the statement is planned again on the
// new catalog and commits once.
func TestWritePlannedAgainAfterDDL(t *testing.T) {
	h := newHarness(t)
	raced := 0
	h.s.opts.Querier = racingQuerier{eng: h.eng, raced: &raced}
	h.ok(`CREATE TABLE b (k INT64 NOT NULL, n INT64, PRIMARY KEY (k))`)
	h.ok(`INSERT INTO b VALUES (1, 1)`)
	r := h.ok(`UPDATE b SET n = 2 WHERE k = 1`)
	if raced != 3 || r.Commit != 4 {
		t.Errorf("queries run %d (want 2: planned twice), commit %d (want 4, after the DDL's 3)", raced-1, r.Commit)
	}
	h.wantRows("b", "1 2 NULL")
}
