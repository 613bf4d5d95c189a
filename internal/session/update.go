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

// matchQuery builds SELECT items FROM table [alias] WHERE where over the
// statement's snapshot: UPDATE and DELETE find their rows with the same
// planner and executor a query uses, so WHERE means exactly what it means in
// a SELECT.
func matchQuery(span ast.Span, table *ast.ObjectName, alias *ast.Ident, where ast.Expr, items []*ast.SelectItem, more ...ast.TableExpr) *ast.SelectStmt {
	if table.Schema == "" {
		// The statement's target is a table, never a WITH query of the
		// same name (WITH t AS (…) UPDATE t …), as in PostgreSQL: a
		// qualified name skips the WITH queries. Its columns are still
		// t.c (the reference's own name).
		q := *table
		q.Schema = "public"
		table = &q
	}
	ref := &ast.TableRef{Span: table.Span, Name: table}
	if alias != nil {
		ref.Alias = &ast.Alias{Span: alias.Span, Name: alias}
	}
	from := append([]ast.TableExpr{ref}, more...)
	return &ast.SelectStmt{Span: span, Body: &ast.SelectBlock{Span: span, Items: items, From: from, Where: where}}
}

// columnItem selects column c of the statement's table, qualified by the
// name the match query knows it under (its alias, else its name), so that
// a table of UPDATE … FROM or DELETE … USING with a column of the same
// name leaves it unambiguous.
func columnItem(c *catalog.Column, span ast.Span, qual string) *ast.SelectItem {
	return &ast.SelectItem{Span: span, Expr: &ast.ColumnRef{Span: span, Table: qual, Name: c.Name}}
}

// qualifier is the name a DML statement's table goes by in its match
// query.
func qualifier(table *ast.ObjectName, alias *ast.Ident) string {
	if alias != nil {
		return alias.Name
	}
	return table.Name
}

// firstPerKey keeps the first of the rows that share a key (their first
// nk values): a target row that UPDATE … FROM or DELETE … USING joins to
// several rows is updated or deleted once, as in PostgreSQL (which of the
// joined rows sets its values is unspecified there too).
func firstPerKey(rows [][]types.Value, nk int) [][]types.Value {
	seen := make(map[string]bool, len(rows))
	out := rows[:0]
	var key []byte
	for _, r := range rows {
		key = key[:0]
		for _, v := range r[:nk] {
			key = types.AppendKey(key, v)
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		out = append(out, r)
	}
	return out
}

// assignment is one SET column = value of an UPDATE.
type assignment struct {
	col  *catalog.Column
	expr ast.Expr // nil for DEFAULT
	// def is the column's DEFAULT for SET c = DEFAULT; defRow, when set,
	// gives it for each row instead (defaulter).
	def    types.Value
	defRow func() (types.Value, error)
	pos    int
	item   int // index of expr in the match query's select list
}

func (st *statement) update(n *ast.UpdateStmt) (*Result, error) {
	st.watchReads = true
	return st.replan(func() (*Result, error) { return st.updateOnce(n) })
}

// updateOnce writes, per matching current row and per group a SET column
// belongs to, a version holding the group's current values with the SET
// values applied (R5.3). Ordering columns not set keep their values, so in
// an ordered group the update wins its tie by commit order.
func (st *statement) updateOnce(n *ast.UpdateStmt) (*Result, error) {
	cat := st.snapshot().Catalog()
	tab, err := writableTable(cat, n.Table)
	if err != nil {
		return nil, err
	}
	if !tab.Keyed() {
		return nil, appendOnly(tab, "UPDATE", n.Pos())
	}
	if err := checkJoinedReturning(n); err != nil {
		return nil, err
	}
	u, err := st.updateWrites(n, tab, n.Returning != nil, nil)
	if err != nil {
		return nil, err
	}
	res := &Result{Tag: fmt.Sprintf("UPDATE %d", u.rows), RowsAffected: int64(u.rows)}
	if n.Returning != nil {
		b := returningBatch(tab, len(u.ret))
		for _, r := range u.ret {
			b.AppendRow(r)
		}
		if res.Columns, res.Rows, err = st.returning(n.Span, n.Table, n.Alias, n.Returning, tab, b); err != nil {
			return nil, err
		}
	}
	st.markReads(u.txn, false)
	if res.Commit, err = st.commit(u.txn); err != nil {
		return nil, err
	}
	return res, nil
}

// updated is what an UPDATE writes, before it commits.
type updated struct {
	txn  *storage.Txn
	rows int
	// ret holds each updated row as written (tab's columns in order),
	// when asked for.
	ret [][]types.Value
	// extra holds, per updated row, the values of the extra items the
	// caller had the match query select.
	extra [][]types.Value
}

// updateWrites finds the rows UPDATE n matches in tab and builds the
// versions it writes, without committing them; with wantRet it keeps the
// rows as updated, and it selects extra (over the match query's FROM)
// beside each.
func (st *statement) updateWrites(n *ast.UpdateStmt, tab *catalog.Table, wantRet bool, extra []*ast.SelectItem) (*updated, error) {
	cat := st.snapshot().Catalog()
	var err error
	var sets []*assignment
	byGroup := map[catalog.GroupID]bool{}
	for _, sc := range n.Sets {
		c, ok := tab.Column(sc.Column.Name)
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeUndefinedColumn, "column %q of relation %q does not exist", sc.Column.Name, tab.Name).WithPos(sc.Column.Pos())
		}
		if tab.IsKey(c.ID) {
			return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "column %s is part of the primary key of %s and cannot be updated", c.Name, tab.Name).
				WithPos(sc.Column.Pos()).WithHint("DELETE the key and INSERT the row under its new key")
		}
		for _, o := range sets {
			if o.col == c {
				return nil, sqlerr.New(sqlerr.CodeSyntax, "multiple assignments to same column %q", c.Name).WithPos(sc.Column.Pos())
			}
		}
		if f := plan.WindowCall(sc.Value); f != nil {
			return nil, sqlerr.New("42P20", "window functions are not allowed in UPDATE").WithPos(f.Pos())
		}
		a := &assignment{col: c, expr: sc.Value, pos: sc.Value.Pos(), item: -1}
		if _, isDef := sc.Value.(*ast.DefaultExpr); isDef {
			a.expr = nil
			if a.def, a.defRow, err = st.columnDefault(c); err != nil {
				return nil, err
			}
		}
		sets = append(sets, a)
		byGroup[c.Group] = true
	}
	keys := tab.KeyColumns()
	var groups []*catalog.Group
	for _, g := range tab.Groups {
		if byGroup[g.ID] {
			if g.Owner != "" {
				return nil, ownedError(tab, g, g.Owner, n.Pos())
			}
			groups = append(groups, g)
		}
	}
	// The select list: the key, each touched group's current columns, then
	// the SET expressions.
	var items []*ast.SelectItem
	span := n.Table.Span
	qual := qualifier(n.Table, n.Alias)
	for _, k := range keys {
		items = append(items, columnItem(k, span, qual))
	}
	groupAt := make([]int, len(groups))
	for gi, g := range groups {
		groupAt[gi] = len(items)
		for _, id := range g.Columns {
			c, _ := tab.ColumnByID(id)
			items = append(items, columnItem(c, span, qual))
		}
	}
	for _, a := range sets {
		if a.expr != nil {
			a.item = len(items)
			items = append(items, &ast.SelectItem{Span: ast.Span{Start: a.expr.Pos(), Stop: a.expr.End()}, Expr: a.expr})
		}
	}
	// With RETURNING, every column's current value follows, and ret
	// collects each row as updated: the current values with each written
	// group's new version laid over them.
	allAt := len(items)
	if wantRet {
		for _, c := range tab.Columns {
			items = append(items, columnItem(c, span, qual))
		}
	}
	extraAt := len(items)
	items = append(items, extra...)
	_, rows, err := st.selectRows(matchQuery(n.Span, n.Table, n.Alias, n.Where, items, n.From...))
	if err != nil {
		return nil, err
	}
	if n.From != nil {
		rows = firstPerKey(rows, len(keys))
	}
	u := &updated{rows: len(rows)}
	if extra != nil {
		u.extra = make([][]types.Value, len(rows))
		for i, r := range rows {
			u.extra[i] = r[extraAt:]
		}
	}
	var ret [][]types.Value
	colAt := map[catalog.ColumnID]int{}
	if wantRet {
		for j, c := range tab.Columns {
			colAt[c.ID] = j
		}
		ret = make([][]types.Value, len(rows))
		for i, r := range rows {
			ret[i] = r[allAt:extraAt:extraAt]
		}
	}
	u.ret = ret
	txn := &storage.Txn{Kind: storage.KindWrite, CatalogVersion: cat.Commit(), Tables: []string{tab.Name}, Rows: uint64(len(rows))}
	for gi, g := range groups {
		cols := append([]*catalog.Column(nil), keys...)
		ids := make([]catalog.ColumnID, 0, len(keys)+len(g.Columns))
		typs := make([]types.Type, 0, cap(ids))
		for _, k := range keys {
			ids, typs = append(ids, k.ID), append(typs, k.Type)
		}
		for _, id := range g.Columns {
			c, _ := tab.ColumnByID(id)
			cols = append(cols, c)
			ids, typs = append(ids, c.ID), append(typs, c.Type)
		}
		ordered := map[catalog.ColumnID]bool{}
		for _, id := range append(append([]catalog.ColumnID(nil), g.ValidBy...), g.RevisionBy...) {
			ordered[id] = true
		}
		// newVals[i] is where column i of the version comes from.
		type source struct {
			item int
			set  *assignment
		}
		from := make([]source, len(cols))
		for i := range keys {
			from[i] = source{item: i}
		}
		for i := len(keys); i < len(cols); i++ {
			from[i] = source{item: groupAt[gi] + i - len(keys)}
			for _, a := range sets {
				if a.col == cols[i] {
					from[i] = source{item: a.item, set: a}
				}
			}
		}
		batch := types.NewBatch(typs, len(rows))
		out := make([]types.Value, len(cols))
		for ri, r := range rows {
			for i, c := range cols {
				src := from[i]
				var v types.Value
				switch {
				case src.set != nil && src.set.expr == nil:
					v = src.set.def
					if f := src.set.defRow; f != nil {
						if v, err = f(); err != nil {
							return nil, err
						}
					}
				case src.set != nil:
					if !assignable(r[src.item], c.Type) {
						err = &types.CastError{From: r[src.item].Type(), To: c.Type}
					} else {
						v, err = types.Cast(r[src.item], c.Type)
					}
					if err != nil {
						return nil, castError(err, c, src.set.pos)
					}
				default:
					v = r[src.item]
				}
				if v.IsNull() {
					switch {
					case ordered[c.ID] && src.set != nil:
						return nil, sqlerr.New(sqlerr.CodeNotNull,
							"attribute group %s is ordered by column %s, which the UPDATE sets to NULL for key (%s) = (%s): every version of %s needs it (R3.2)",
							g.Name, c.Name, keyList(keys), keyText(r[:len(keys)]), g.Name).WithPos(src.set.pos).WithToken(ast.Format(src.set.expr))
					case ordered[c.ID]:
						return nil, sqlerr.New(sqlerr.CodeNotNull,
							"attribute group %s is ordered by column %s, which is NULL for key (%s) = (%s): set it in the UPDATE",
							g.Name, c.Name, keyList(keys), keyText(r[:len(keys)])).WithPos(n.Pos())
					case !c.Nullable:
						return nil, sqlerr.NotNull(n.Pos(), c.Name)
					}
				}
				out[i] = v
				if ret != nil {
					ret[ri][colAt[c.ID]] = v
				}
			}
			batch.AppendRow(out)
		}
		if len(rows) > 0 {
			txn.Writes = append(txn.Writes, storage.Write{Kind: storage.WriteVersion, Table: tab.ID, Group: g.ID, Cols: ids, Batch: batch})
		}
	}
	u.txn = txn
	return u, nil
}

func keyText(vals []types.Value) string {
	b := make([]byte, 0, 32)
	for i, v := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = types.AppendText(b, v)
	}
	return string(b)
}

func (st *statement) delete(n *ast.DeleteStmt) (*Result, error) {
	st.watchReads = true
	return st.replan(func() (*Result, error) { return st.deleteOnce(n) })
}

// deleteOnce removes every key matching WHERE at the statement's commit
// (R5.4).
func (st *statement) deleteOnce(n *ast.DeleteStmt) (*Result, error) {
	cat := st.snapshot().Catalog()
	tab, err := writableTable(cat, n.Table)
	if err != nil {
		return nil, err
	}
	if !tab.Keyed() {
		return nil, appendOnly(tab, "DELETE", n.Pos())
	}
	if err := checkJoinedReturning(n); err != nil {
		return nil, err
	}
	for _, g := range tab.Groups {
		if g.Owner != "" {
			return nil, ownedError(tab, g, g.Owner, n.Pos())
		}
	}
	keys := tab.KeyColumns()
	var items []*ast.SelectItem
	ids := make([]catalog.ColumnID, len(keys))
	typs := make([]types.Type, len(keys))
	for i, k := range keys {
		items = append(items, columnItem(k, n.Table.Span, qualifier(n.Table, n.Alias)))
		ids[i], typs[i] = k.ID, k.Type
	}
	// With RETURNING, every column's current value follows the key: the
	// rows as they were before the delete.
	if n.Returning != nil {
		for _, c := range tab.Columns {
			items = append(items, columnItem(c, n.Table.Span, qualifier(n.Table, n.Alias)))
		}
	}
	_, rows, err := st.selectRows(matchQuery(n.Span, n.Table, n.Alias, n.Where, items, n.Using...))
	if err != nil {
		return nil, err
	}
	if n.Using != nil {
		rows = firstPerKey(rows, len(keys))
	}
	res := &Result{Tag: fmt.Sprintf("DELETE %d", len(rows)), RowsAffected: int64(len(rows))}
	if n.Returning != nil {
		b := returningBatch(tab, len(rows))
		for _, r := range rows {
			b.AppendRow(r[len(keys):])
		}
		if res.Columns, res.Rows, err = st.returning(n.Span, n.Table, n.Alias, n.Returning, tab, b); err != nil {
			return nil, err
		}
	}
	txn := &storage.Txn{Kind: storage.KindWrite, CatalogVersion: cat.Commit(), Tables: []string{tab.Name}, Rows: uint64(len(rows))}
	if len(rows) > 0 {
		batch := types.NewBatch(typs, len(rows))
		for _, r := range rows {
			batch.AppendRow(r[:len(keys)])
		}
		txn.Writes = []storage.Write{{Kind: storage.WriteDelete, Table: tab.ID, Cols: ids, Batch: batch}}
	}
	st.markReads(txn, false)
	if res.Commit, err = st.commit(txn); err != nil {
		return nil, err
	}
	return res, nil
}
