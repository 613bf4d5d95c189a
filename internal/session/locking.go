package session

import (
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// SELECT … FOR UPDATE / FOR SHARE. Strata takes no locks: nothing waits
// and nothing is skipped. Inside a transaction the keys of the rows the
// query returns, of each table it locks, are checked at COMMIT as the
// keys an UPDATE wrote are (storage.Txn.Checks): if another commit wrote
// one of them after the query's snapshot, COMMIT fails with 40001 and
// writes nothing. So the read-modify-write a PostgreSQL application
// writes as SELECT … FOR UPDATE, compute, UPDATE … SET v = $computed,
// COMMIT loses no update, the loser retrying as under REPEATABLE READ
// (docs/conformance.md "Concurrent writers"). Outside a transaction a
// lock would end with the statement, so the clause only has its errors.

// lockingQuery runs SELECT n, which has locking clauses.
func (st *statement) lockingQuery(n *ast.SelectStmt) (*Result, error) {
	blk, err := lockableBlock(n)
	if err != nil {
		return nil, err
	}
	tx := st.s.tx
	// The keys are read first, on the snapshot the rows are then read on:
	// the statement has one (R6.6), taken under the transaction's Watch.
	st.watchReads = tx != nil
	targets, err := st.lockTargets(n, blk)
	if err != nil || tx == nil || tx.watch == nil {
		if err != nil {
			st.release()
			return nil, err
		}
		return st.query(n)
	}
	for _, t := range targets {
		w, err := st.lockedKeys(n, blk, t)
		if err != nil {
			st.release()
			return nil, err
		}
		if w.Batch.Rows > 0 {
			tx.checks = append(tx.checks, w)
		}
	}
	return st.query(n)
}

// lockTarget is one table a locking clause locks: a keyed table of the
// FROM clause and the name its columns go by there.
type lockTarget struct {
	tab  *catalog.Table
	qual string
}

// lockableBlock returns the SELECT block of a query with locking clauses,
// or PostgreSQL's error for a query whose rows are not rows of tables.
func lockableBlock(n *ast.SelectStmt) (*ast.SelectBlock, error) {
	l := n.Locking[0]
	notAllowed := func(pos int, what string) error {
		return sqlerr.New(sqlerr.CodeFeatureNotSupported, "%s is not allowed with %s", l, what).WithPos(pos)
	}
	if n.AsOf != nil {
		return nil, notAllowed(n.AsOf.Pos(), "AS OF: rows of a past commit cannot be locked")
	}
	blk, ok := n.Body.(*ast.SelectBlock)
	if !ok {
		if _, isSet := n.Body.(*ast.SetOp); isSet {
			return nil, notAllowed(l.Pos(), "UNION/INTERSECT/EXCEPT")
		}
		return nil, notAllowed(l.Pos(), "VALUES")
	}
	switch {
	case blk.Distinct:
		return nil, notAllowed(l.Pos(), "DISTINCT clause")
	case len(blk.GroupBy) > 0:
		return nil, notAllowed(l.Pos(), "GROUP BY clause")
	case blk.Having != nil:
		return nil, notAllowed(l.Pos(), "HAVING clause")
	}
	for _, it := range blk.Items {
		if it.Expr == nil {
			continue
		}
		if f := plan.WindowCall(it.Expr); f != nil {
			return nil, notAllowed(f.Pos(), "window functions")
		}
		if plan.HasAggregate(it.Expr) {
			return nil, notAllowed(it.Pos(), "aggregate functions")
		}
	}
	return blk, nil
}

// lockTargets returns the tables n's locking clauses lock: every keyed
// table named in its FROM clause, or those an OF list names (by alias
// when it has one, as in PostgreSQL); an OF name not in FROM is 42P01.
// Append tables, views, WITH queries, subqueries and versions() have no
// keys to check and are passed over.
func (st *statement) lockTargets(n *ast.SelectStmt, blk *ast.SelectBlock) ([]lockTarget, error) {
	cat := st.snapshot().Catalog()
	type ref struct {
		name string
		t    *catalog.Table
	}
	var refs []ref
	var asOf *ast.AsOf
	var walk func(te ast.TableExpr)
	walk = func(te ast.TableExpr) {
		switch x := te.(type) {
		case *ast.TableRef:
			if x.AsOf != nil && asOf == nil {
				asOf = x.AsOf
			}
			name := x.Name.Name
			if x.Alias != nil {
				name = x.Alias.Name.Name
			}
			var t *catalog.Table
			if x.Name.Schema == "" || x.Name.Schema == "public" {
				if !isWithName(n.With, x.Name) {
					t, _ = cat.Table(x.Name.Name)
				}
			}
			refs = append(refs, ref{name, t})
		case *ast.JoinExpr:
			walk(x.Left)
			walk(x.Right)
		}
	}
	for _, te := range blk.From {
		walk(te)
	}
	if asOf != nil {
		return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "%s is not allowed with AS OF: rows of a past commit cannot be locked", n.Locking[0]).WithPos(asOf.Pos())
	}
	var out []lockTarget
	add := func(r ref) {
		if r.t == nil || !r.t.Keyed() {
			return
		}
		for _, o := range out {
			if o.qual == r.name {
				return
			}
		}
		out = append(out, lockTarget{r.t, r.name})
	}
	for _, l := range n.Locking {
		if l.Of == nil {
			for _, r := range refs {
				add(r)
			}
			continue
		}
		for _, o := range l.Of {
			found := false
			for _, r := range refs {
				if r.name == o.Name {
					found = true
					add(r)
				}
			}
			if !found {
				return nil, sqlerr.New("42P01", "relation %q in %s clause not found in FROM clause", o.Name, l).
					WithPos(o.Pos()).WithToken(o.Name)
			}
		}
	}
	return out, nil
}

// isWithName reports whether name is one of with's definitions.
func isWithName(with *ast.With, name *ast.ObjectName) bool {
	if with == nil || name.Schema != "" {
		return false
	}
	for _, c := range with.CTEs {
		if c.Name.Name == name.Name {
			return true
		}
	}
	return false
}

// lockedKeys reads the keys of t's rows among the rows n returns: n with
// t's key columns selected after its own items (so that ORDER BY by
// position or output name, LIMIT and OFFSET pick the same rows), as a
// check of the transaction's COMMIT.
func (st *statement) lockedKeys(n *ast.SelectStmt, blk *ast.SelectBlock, t lockTarget) (storage.Write, error) {
	keys := t.tab.KeyColumns()
	b := *blk
	b.Items = append([]*ast.SelectItem(nil), blk.Items...)
	ids := make([]catalog.ColumnID, len(keys))
	typs := make([]types.Type, len(keys))
	for i, k := range keys {
		// Named so that no ORDER BY of the query's own output names
		// finds them (or finds its name ambiguous).
		it := columnItem(k, blk.Span, t.qual)
		it.Alias = &ast.Ident{Span: blk.Span, Name: fmt.Sprintf("\x00lock%d", i)}
		b.Items = append(b.Items, it)
		ids[i], typs[i] = k.ID, k.Type
	}
	q := *n
	q.Body, q.Locking = &b, nil
	_, rows, err := st.selectRows(&q)
	if err != nil {
		return storage.Write{}, err
	}
	batch := types.NewBatch(typs, len(rows))
	for _, r := range rows {
		batch.AppendRow(r[len(r)-len(keys):])
	}
	return storage.Write{Kind: storage.WriteDelete, Table: t.tab.ID, Cols: ids, Batch: batch, ReadAt: st.snapshot().Commit()}, nil
}
