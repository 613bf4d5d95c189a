package session

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// INSERT … ON CONFLICT, PostgreSQL's clause (docs/conformance.md, "ON
// CONFLICT"). A keyed table's one constraint is its primary key, so a
// proposed row conflicts when its key has a current row at the
// statement's snapshot (a plain INSERT would write a new version of it,
// R5.2):
//
//   - DO NOTHING writes only the rows whose key has no current row, and
//     of rows proposed twice for one key, the first;
//   - DO UPDATE SET … [WHERE …] writes the rows whose key has no current
//     row as proposed and, for each conflicting row the WHERE passes, what
//     UPDATE t SET … FROM excluded WHERE t's key = excluded's key would
//     (R5.3: per group it sets, the current values with the SET values
//     applied, ordering columns kept unless set); `excluded` names the
//     proposed row. A key proposed twice is an error, as in PostgreSQL.
//
// Both parts are one commit; the command tag counts the rows inserted and
// updated, and RETURNING returns them in the order they were proposed.

// excludedName is the name the proposed rows go by in DO UPDATE.
const excludedName = "excluded"

// ordColumn is the column of the proposed rows' relation that holds each
// row's position; a name no unquoted reference can spell.
const ordColumn = "?proposed?"

// conflictTarget checks the ON CONFLICT target of an INSERT into tab: a
// keyed table's target must be its key (or its key constraint, as
// pg_constraint names it); an append table has no key, so only DO
// NOTHING without a target applies there, and it never conflicts.
func conflictTarget(tab *catalog.Table, n *ast.InsertStmt) error {
	oc := n.OnConflict
	if n.Upsert {
		return sqlerr.New(sqlerr.CodeSyntax, "UPSERT takes no ON CONFLICT clause: it writes every row (R5.2)").WithPos(oc.Pos())
	}
	noMatch := func(pos int) error {
		e := sqlerr.New("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification").WithPos(pos)
		if !tab.Keyed() {
			return e.WithHint("%s is an append table: it has no key, so no row conflicts", tab.Name)
		}
		return e.WithHint("the only constraint of %s is its primary key (%s)", tab.Name, keyList(tab.KeyColumns()))
	}
	if oc.Constraint != nil {
		if !tab.Keyed() || oc.Constraint.Name != tab.Name+"_pkey" {
			return sqlerr.New(sqlerr.CodeUndefinedObject, "constraint %q for table %q does not exist", oc.Constraint.Name, tab.Name).
				WithPos(oc.Constraint.Pos()).WithToken(oc.Constraint.Name)
		}
		return nil
	}
	if oc.Target == nil {
		if oc.Update {
			return sqlerr.New(sqlerr.CodeSyntax, "ON CONFLICT DO UPDATE requires inference specification or constraint name").
				WithPos(oc.Pos()).WithHint("For example, ON CONFLICT (column_name).")
		}
		return nil
	}
	if !tab.Keyed() {
		return noMatch(oc.Target[0].Pos())
	}
	keys := tab.KeyColumns()
	seen := map[string]bool{}
	for _, id := range oc.Target {
		c, ok := tab.Column(id.Name)
		if !ok {
			return sqlerr.New(sqlerr.CodeUndefinedColumn, "column %q does not exist", id.Name).WithPos(id.Pos()).WithToken(id.Name)
		}
		if !tab.IsKey(c.ID) {
			return noMatch(id.Pos())
		}
		seen[c.Name] = true
	}
	if len(seen) != len(keys) {
		return noMatch(oc.Target[0].Pos())
	}
	return nil
}

// insertOnConflict finishes an INSERT … ON CONFLICT into keyed table tab
// whose proposed rows w holds: it drops the rows that conflict, adds the
// DO UPDATE's versions, and commits both as one.
func (st *statement) insertOnConflict(n *ast.InsertStmt, tab *catalog.Table, w *writer) (*Result, error) {
	oc := n.OnConflict
	cat := st.snapshot().Catalog()
	proposed := insertedRows(tab, w)
	keyAt := make([]int, 0, len(tab.Key))
	for i, c := range tab.Columns {
		if tab.IsKey(c.ID) {
			keyAt = append(keyAt, i)
		}
	}
	// A key proposed twice: DO NOTHING keeps the first (the later ones
	// conflict with it), DO UPDATE refuses, as PostgreSQL does.
	skip := make([]bool, proposed.Rows)
	first := make(map[string]int, proposed.Rows)
	var key []byte
	row := make([]types.Value, len(tab.Columns))
	for i := range proposed.Rows {
		row = proposed.Row(row[:0], i)
		key = key[:0]
		for _, j := range keyAt {
			key = types.AppendKey(key, row[j])
		}
		if _, dup := first[string(key)]; dup {
			if oc.Update {
				return nil, sqlerr.New("21000", "ON CONFLICT DO UPDATE command cannot affect row a second time").WithPos(oc.Pos()).
					WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
			}
			skip[i] = true
			continue
		}
		first[string(key)] = i
	}
	// The proposed rows as the relation excluded, each with its position.
	cols := tableColumns(tab)
	rel := &writtenRel{cols: append(slices.Clip(cols), plan.Column{Name: ordColumn, Type: types.Of(types.Int64)})}
	ord := types.NewVector(types.Of(types.Int64), proposed.Rows)
	for i := range proposed.Rows {
		ord.Append(types.NewInt64(int64(i)))
	}
	rel.batch = &types.Batch{Cols: append(slices.Clip(proposed.Cols), ord), Rows: proposed.Rows}
	cte := &ast.CTE{Name: &ast.Ident{Name: excludedName}, Write: n}
	prevWith, prevWritten := st.with, st.written
	defer func() { st.with, st.written = prevWith, prevWritten }()
	with := &ast.With{}
	if prevWith != nil {
		// The statement's own WITH queries stay visible to the SET and
		// WHERE expressions, but excluded names the proposed rows there,
		// as in PostgreSQL, so a WITH query of that name gives way.
		with.Recursive = prevWith.Recursive
		for _, c := range prevWith.CTEs {
			if c.Name.Name != excludedName {
				with.CTEs = append(with.CTEs, c)
			}
		}
	}
	with.CTEs = append(with.CTEs, cte)
	st.with, st.written = with, map[*ast.CTE]plan.Virtual{cte: rel}
	for c, v := range prevWritten {
		st.written[c] = v
	}
	// The proposed rows whose key has a current row: a point lookup of
	// each (the transaction's own writes included, readSnapshot).
	snap, err := st.readSnapshot()
	if err != nil {
		return nil, err
	}
	colAt := make(map[catalog.ColumnID]int, len(tab.Columns))
	for i, c := range tab.Columns {
		colAt[c.ID] = i
	}
	spec := storage.ScanSpec{Table: tab.ID, Cols: []catalog.ColumnID{tab.Key[0]}}
	keyVals := make([]types.Value, len(tab.Key))
	var conflicting []int
	for i := range proposed.Rows {
		if skip[i] {
			continue
		}
		for j, id := range tab.Key {
			keyVals[j] = proposed.Cols[colAt[id]].Get(i)
		}
		_, found, err := snap.Lookup(st.ctx, tab.ID, keyVals, spec)
		if err != nil {
			return nil, err
		}
		if found {
			skip[i] = true
			conflicting = append(conflicting, i)
		}
	}
	span := n.Table.Span
	qual := qualifier(n.Table, n.Alias)
	var on ast.Expr
	for _, c := range tab.KeyColumns() {
		eq := &ast.BinaryExpr{Span: span, Op: token.EQ,
			L: &ast.ColumnRef{Span: span, Table: qual, Name: c.Name},
			R: &ast.ColumnRef{Span: span, Table: excludedName, Name: c.Name}}
		if on == nil {
			on = eq
		} else {
			on = &ast.BinaryExpr{Span: span, Op: token.AND, L: on, R: eq}
		}
	}
	ordItem := &ast.SelectItem{Span: span, Expr: &ast.ColumnRef{Span: span, Table: excludedName, Name: ordColumn}}
	from := &ast.TableRef{Span: span, Name: &ast.ObjectName{Span: span, Name: excludedName}}
	var up *updated
	if oc.Update && len(conflicting) > 0 {
		where := on
		defer func(p []types.Value) { st.params = p }(st.params)
		if in := st.keyIn(tab, qual, span, proposed, colAt, conflicting); in != nil {
			// The conflicting keys' leading column as key ranges, so the
			// update reads those keys, not the whole table.
			where = &ast.BinaryExpr{Span: span, Op: token.AND, L: in, R: where}
		}
		if oc.Where != nil {
			where = &ast.BinaryExpr{Span: span, Op: token.AND, L: where, R: &ast.ParenExpr{Span: ast.Span{Start: oc.Where.Pos(), Stop: oc.Where.End()}, X: oc.Where}}
		}
		u := &ast.UpdateStmt{Span: n.Span, Table: n.Table, Alias: n.Alias, Sets: oc.Sets, From: []ast.TableExpr{from}, Where: where}
		if up, err = st.updateWrites(u, tab, n.Returning != nil, []*ast.SelectItem{ordItem}); err != nil {
			return nil, err
		}
	}
	// The writer keeps the rows that are inserted.
	kept := 0
	for _, g := range w.groups {
		b := types.NewBatch(batchTypes(g.batch), max(proposed.Rows, 1))
		for i := range proposed.Rows {
			if !skip[i] {
				b.AppendFrom(g.batch, i)
			}
		}
		kept = b.Rows
		g.batch = b
	}
	w.rows = kept
	var res Result
	if n.Returning != nil {
		ret := returningBatch(tab, proposed.Rows)
		var updatedAt map[int64]int
		if up != nil {
			updatedAt = make(map[int64]int, up.rows)
			for i, e := range up.extra {
				updatedAt[e[0].Int64()] = i
			}
		}
		for i := range proposed.Rows {
			if !skip[i] {
				ret.AppendFrom(proposed, i)
			} else if j, ok := updatedAt[int64(i)]; ok {
				ret.AppendRow(up.ret[j])
			}
		}
		st.with, st.written = prevWith, prevWritten
		if res.Columns, res.Rows, err = st.returning(n.Span, n.Table, n.Alias, n.Returning, tab, ret); err != nil {
			return nil, err
		}
	}
	txn := w.txn(cat.Commit())
	count := kept
	if up != nil {
		txn.Writes = append(txn.Writes, up.txn.Writes...)
		txn.Rows += up.txn.Rows
		count += up.rows
	}
	st.markReads(txn, true)
	seq, err := st.commit(txn)
	if err != nil {
		return nil, err
	}
	res.Tag = fmt.Sprintf("INSERT 0 %d", count)
	res.RowsAffected, res.Commit = int64(count), seq
	return &res, nil
}

// keyIn is `qual.c IN ($n+1, …)` over the distinct values of tab's leading
// ORDER BY column in the rows rows of proposed, the values appended to the
// statement's parameters (the caller restores them): the planner reads
// an IN list of constants on that column as one key range per value. nil
// when there are more values than the planner makes ranges of.
func (st *statement) keyIn(tab *catalog.Table, qual string, span ast.Span, proposed *types.Batch, colAt map[catalog.ColumnID]int, rows []int) ast.Expr {
	id := tab.OrderBy[0]
	col, _ := tab.ColumnByID(id)
	seen := map[string]bool{}
	var vals []types.Value
	var buf []byte
	for _, i := range rows {
		v := proposed.Cols[colAt[id]].Get(i)
		buf = types.AppendKey(buf[:0], v)
		if !seen[string(buf)] {
			seen[string(buf)] = true
			vals = append(vals, v)
		}
	}
	if len(vals) > maxKeyIn {
		return nil
	}
	params := slices.Clip(st.params)
	list := make([]ast.Expr, len(vals))
	for i, v := range vals {
		params = append(params, v)
		list[i] = &ast.Param{Span: span, Index: len(params)}
	}
	st.params = params
	return &ast.InExpr{Span: span, X: &ast.ColumnRef{Span: span, Table: qual, Name: col.Name}, List: list}
}

// maxKeyIn is the most key values keyIn lists: the planner's limit on an
// IN list it reads as key ranges.
const maxKeyIn = 256

// batchTypes is the column types of b.
func batchTypes(b *types.Batch) []types.Type {
	ts := make([]types.Type, len(b.Cols))
	for i, c := range b.Cols {
		ts[i] = c.Type()
	}
	return ts
}
