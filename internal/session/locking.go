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
	// The snapshot is taken under the transaction's Watch.
	st.watchReads = tx != nil
	targets, err := st.lockTargets(n, blk, tx != nil)
	if err != nil || !st.watched() || len(targets) == 0 {
		if err != nil {
			st.release()
			return nil, err
		}
		return st.query(n)
	}
	return st.queryLocking(n, blk, targets)
}

// queryLocking runs n with the key columns of targets selected after its
// own items, in the same run (so that the keys are those of the very rows
// returned, whatever random() or ties would pick in another run), hands
// the client its own columns only and keeps the keys as the
// transaction's checks.
func (st *statement) queryLocking(n *ast.SelectStmt, blk *ast.SelectBlock, targets []lockTarget) (*Result, error) {
	b := *blk
	b.Items = append([]*ast.SelectItem(nil), blk.Items...)
	checks := make([]storage.Write, len(targets))
	nk := 0
	for ti, t := range targets {
		keys := t.tab.KeyColumns()
		ids := make([]catalog.ColumnID, len(keys))
		typs := make([]types.Type, len(keys))
		for i, k := range keys {
			// Named so that no ORDER BY of the query's own output names
			// finds them (or finds its name ambiguous).
			it := columnItem(k, blk.Span, t.qual)
			it.Alias = &ast.Ident{Span: blk.Span, Name: fmt.Sprintf("\x00lock%d_%d", ti, i)}
			b.Items = append(b.Items, it)
			ids[i], typs[i] = k.ID, k.Type
		}
		checks[ti] = storage.Write{Kind: storage.WriteDelete, Table: t.tab.ID, Cols: ids, Batch: types.NewBatch(typs, 0)}
		nk += len(keys)
	}
	q := *n
	q.Body, q.Locking = &b, nil
	keep := func(width int) int { return width - nk }
	at := st.snapshot().Commit()
	var res *Result
	var err error
	if inner := st.sink; inner != nil {
		st.sink = &trimSink{inner: inner, keep: keep, got: func(bt *types.Batch) {
			appendKeys(checks, bt.Cols[keep(len(bt.Cols)):], bt.Rows)
		}}
		res, err = st.query(&q)
		st.sink = inner
		if res != nil {
			res.Columns = res.Columns[:keep(len(res.Columns))]
		}
	} else {
		res, err = st.query(&q)
		if res != nil {
			w := keep(len(res.Columns))
			for i, r := range res.Rows {
				appendKeyRow(checks, r[w:])
				res.Rows[i] = r[:w]
			}
			res.Columns = res.Columns[:w]
		}
	}
	if err != nil {
		return nil, err
	}
	for _, c := range checks {
		if c.Batch.Rows > 0 {
			c.ReadAt = at
			st.s.tx.checks = append(st.s.tx.checks, c)
		}
	}
	return res, nil
}

// appendKeys appends rows rows of the key columns cols (the targets' keys,
// one after another) to checks.
func appendKeys(checks []storage.Write, cols []*types.Vector, rows int) {
	for _, c := range checks {
		k := len(c.Batch.Cols)
		for j := range k {
			for r := range rows {
				c.Batch.Cols[j].AppendFrom(cols[j], r)
			}
		}
		c.Batch.Rows += rows
		cols = cols[k:]
	}
}

// appendKeyRow is appendKeys of one row of values.
func appendKeyRow(checks []storage.Write, vals []types.Value) {
	for _, c := range checks {
		k := len(c.Batch.Cols)
		c.Batch.AppendRow(vals[:k])
		vals = vals[k:]
	}
}

// trimSink hands inner the columns a query's client asked for, the first
// keep(width) of every batch, and the rest to got.
type trimSink struct {
	inner RowSink
	keep  func(width int) int
	got   func(*types.Batch)
}

func (t *trimSink) Start(cols []Column) error { return t.inner.Start(cols[:t.keep(len(cols))]) }

func (t *trimSink) Batch(b *types.Batch) error {
	t.got(b)
	return t.inner.Batch(&types.Batch{Cols: b.Cols[:t.keep(len(b.Cols))], Rows: b.Rows})
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
// when it has one, as in PostgreSQL). Append tables are passed over:
// their rows never change. PostgreSQL's errors: an OF name qualified
// (42601), not in FROM (42P01) or naming a WITH query (0A000). Inside a
// transaction a view, subquery or table function to lock is refused
// (0A000), since the rows beneath it would not be checked.
func (st *statement) lockTargets(n *ast.SelectStmt, blk *ast.SelectBlock, inTx bool) ([]lockTarget, error) {
	cat := st.snapshot().Catalog()
	type ref struct {
		name string
		t    *catalog.Table
		what string // why it has no keys to check: "" for a table
		pos  int
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
			r := ref{name: x.Name.Name, pos: x.Pos()}
			if x.Alias != nil {
				r.name = x.Alias.Name.Name
			}
			switch {
			case isWithName(n.With, x.Name):
				r.what = "a WITH query"
			case x.Name.Schema != "" && x.Name.Schema != "public":
				r.what = "a system table"
			default:
				if t, ok := cat.Table(x.Name.Name); ok {
					r.t = t
				} else if _, ok := cat.View(x.Name.Name); ok {
					r.what = "a view"
				}
			}
			refs = append(refs, r)
		case *ast.JoinExpr:
			walk(x.Left)
			walk(x.Right)
		case *ast.ParenTable:
			walk(x.Inner)
		case *ast.TableFunc:
			r := ref{what: "a function in FROM", pos: x.Pos()}
			if x.Alias != nil {
				r.name = x.Alias.Name.Name
			}
			refs = append(refs, r)
		default:
			r := ref{what: "a subquery", pos: te.Pos()}
			if sq, ok := te.(*ast.DerivedTable); ok && sq.Alias != nil {
				r.name = sq.Alias.Name.Name
			}
			refs = append(refs, r)
		}
	}
	for _, te := range blk.From {
		walk(te)
	}
	if asOf != nil {
		return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "%s is not allowed with AS OF: rows of a past commit cannot be locked", n.Locking[0]).WithPos(asOf.Pos())
	}
	var out []lockTarget
	add := func(l *ast.Locking, r ref) error {
		if r.what != "" {
			if r.what == "a WITH query" {
				return sqlerr.New(sqlerr.CodeFeatureNotSupported, "%s cannot be applied to a WITH query", l).WithPos(r.pos)
			}
			if inTx {
				return sqlerr.New(sqlerr.CodeFeatureNotSupported, "%s cannot be applied to %s in Strata: the rows beneath it would not be checked at COMMIT", l, r.what).
					WithPos(r.pos).WithHint("name the tables to lock in FROM, or limit the clause with OF")
			}
			return nil
		}
		if r.t == nil || !r.t.Keyed() {
			return nil
		}
		for _, o := range out {
			if o.qual == r.name {
				return nil
			}
		}
		out = append(out, lockTarget{r.t, r.name})
		return nil
	}
	for _, l := range n.Locking {
		if l.Of == nil {
			for _, r := range refs {
				if err := add(l, r); err != nil {
					return nil, err
				}
			}
			continue
		}
		for _, o := range l.Of {
			if o.Schema != "" {
				return nil, sqlerr.New(sqlerr.CodeSyntax, "%s must specify unqualified relation names", l).WithPos(o.Pos()).WithToken(o.Schema + "." + o.Name)
			}
			found := false
			for _, r := range refs {
				if r.name == o.Name {
					found = true
					if err := add(l, r); err != nil {
						return nil, err
					}
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
