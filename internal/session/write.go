package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// maxReplans bounds how often a write is planned again after a DDL raced it
// (storage.ErrSchemaChanged).
const maxReplans = 5

// cell is one input value of a write: a value as evaluated, or the word
// DEFAULT; pos is where it was written, for errors.
type cell struct {
	v   types.Value
	def bool
	pos int
}

// exclusiveAfter is how many times in a row a read-modify-write statement
// may lose the race for its keys (storage.ErrConflict) before it runs
// with every other commit held off (storage.Engine.Exclusive), which no
// commit can race; maxConflicts bounds the runs all told, a guard that
// only a bug reaches.
const (
	exclusiveAfter = 3
	maxConflicts   = exclusiveAfter + 2
)

// replan runs once until it stops failing with storage.ErrSchemaChanged or
// storage.ErrConflict, each time on a fresh snapshot: outside a
// transaction a statement whose keys another commit wrote since its
// snapshot runs again on a snapshot that has that commit, as PostgreSQL's
// READ COMMITTED re-reads a row updated under it, so no update is lost.
func (st *statement) replan(once func() (*Result, error)) (*Result, error) {
	defer st.release()
	replans, conflicts := 0, 0
	for {
		res, err := once()
		switch {
		case errors.Is(err, storage.ErrConflict) && st.s.tx == nil:
			if conflicts++; conflicts > maxConflicts {
				return nil, sqlerr.New("40001", "could not serialize access due to concurrent update: other commits wrote the statement's keys %d times while it ran; nothing was written, retry it", conflicts)
			}
			st.release()
			switch {
			case conflicts >= exclusiveAfter:
				st.exclusive = true
			case conflicts > 1:
				// Sessions that keep colliding on one key stop doing so
				// in lockstep.
				if err := jitter(st.ctx, 200*time.Microsecond); err != nil {
					return nil, err
				}
			}
		case errors.Is(err, storage.ErrSchemaChanged) && st.s.tx == nil:
			if replans++; replans > maxReplans {
				// As many DDLs as tries raced it: a serialization failure
				// the client may retry, not an internal error.
				return nil, sqlerr.New("40001", "the schema changed %d times while the statement was planned; nothing was written, retry it", maxReplans+1)
			}
			st.release()
		default:
			return res, err
		}
	}
}

// jitter waits a random while up to d, or until ctx ends.
func jitter(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(rand.N(d))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writableTable resolves the table a write names.
func writableTable(cat *catalog.Catalog, name *ast.ObjectName) (*catalog.Table, error) {
	if name.Schema == "system" {
		return nil, sqlerr.New("42809", "system.%s is a system table and cannot be written", name.Name).WithPos(name.Pos())
	}
	if name.Schema != "" && name.Schema != "public" {
		return nil, sqlerr.UndefinedTable(name.Pos(), name.Schema+"."+name.Name)
	}
	t, ok := cat.Table(name.Name)
	if !ok {
		if _, isView := cat.View(name.Name); isView {
			return nil, sqlerr.New("55000", "cannot write to view %s: views are read-only; write to the tables it reads", name.Name).
				WithPos(name.Pos()).WithToken(name.Name)
		}
		return nil, sqlerr.UndefinedTable(name.Pos(), name.Name)
	}
	return t, nil
}

// appendOnly is the error of R1.2.
func appendOnly(t *catalog.Table, what string, pos int) error {
	return sqlerr.New("42809", "table %s is an append table (MODE APPEND) and accepts INSERT only, not %s: corrections belong in a keyed table", t.Name, what).
		WithPos(pos).WithHint("write corrections to a table with a PRIMARY KEY and MODE UPSERT or MODE VERSIONED")
}

// ownedError rejects a direct write to what a transformation maintains (R12.3).
func ownedError(t *catalog.Table, g *catalog.Group, owner string, pos int) error {
	what := "table " + t.Name
	if g != nil {
		what = fmt.Sprintf("attribute group %s of table %s", g.Name, t.Name)
	}
	return sqlerr.New("55006", "%s is maintained by transformation %s and cannot be written directly", what, owner).
		WithPos(pos).WithHint("write to the transformation's source table, or DROP TRANSFORMATION %s first", owner)
}

func appendOwner(cat *catalog.Catalog, t *catalog.Table) string {
	for _, x := range cat.Transformations() {
		if x.Target == t.ID && x.Group == catalog.NoGroup {
			return x.Name
		}
	}
	return ""
}

func (st *statement) insert(n *ast.InsertStmt) (*Result, error) {
	st.watchReads = n.OnConflict != nil
	return st.replan(func() (*Result, error) { return st.insertOnce(n) })
}

func (st *statement) insertOnce(n *ast.InsertStmt) (*Result, error) {
	cat := st.snapshot().Catalog()
	tab, err := writableTable(cat, n.Table)
	if err != nil {
		return nil, err
	}
	verb := "INSERT"
	if n.Upsert {
		verb = "UPSERT"
	}
	if !tab.Keyed() {
		if n.Upsert {
			return nil, appendOnly(tab, "UPSERT", n.Pos())
		}
		if n.Group != nil {
			return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "table %s is an append table and has no attribute groups", tab.Name).WithPos(n.Group.Pos())
		}
		if owner := appendOwner(cat, tab); owner != "" {
			return nil, ownedError(tab, nil, owner, n.Pos())
		}
	}
	if n.OnConflict != nil {
		if err := conflictTarget(tab, n); err != nil {
			return nil, err
		}
	}
	listed, err := listedColumns(tab, n.Columns)
	if err != nil {
		return nil, err
	}
	w := st.valuesWriter(n, tab, listed)
	if w == nil {
		if w, err = st.buildWriter(n, tab, listed); err != nil {
			return nil, err
		}
	}
	if n.OnConflict != nil && tab.Keyed() {
		return st.insertOnConflict(n, tab, w)
	}
	var res Result
	if n.Returning != nil {
		if res.Columns, res.Rows, err = st.returning(n.Span, n.Table, n.Alias, n.Returning, tab, insertedRows(tab, w)); err != nil {
			return nil, err
		}
	}
	txn := w.txn(cat.Commit())
	seq, err := st.commit(txn)
	if err != nil {
		return nil, err
	}
	res.Tag = fmt.Sprintf("UPSERT %d", w.rows)
	if verb == "INSERT" {
		res.Tag = fmt.Sprintf("INSERT 0 %d", w.rows)
	}
	res.RowsAffected, res.Commit = int64(w.rows), seq
	return &res, nil
}

// buildWriter evaluates an INSERT's input rows and casts them into a
// writer, reporting the first error a statement can have in the order
// the checks are made: the rows' shape and values, the column list, the
// attribute group, then each row's casts and NOT NULLs.
func (st *statement) buildWriter(n *ast.InsertStmt, tab *catalog.Table, listed []*catalog.Column) (*writer, error) {
	rows, width, err := st.inputRows(n.Source, listed)
	if err != nil {
		return nil, err
	}
	if n.Columns == nil {
		if width > len(tab.Columns) {
			return nil, sqlerr.New(sqlerr.CodeSyntax, "INSERT has more expressions than target columns: table %s has %d columns, got %d",
				tab.Name, len(tab.Columns), width).WithPos(n.Source.Pos())
		}
		listed = listed[:width]
	} else if width != len(listed) && len(rows) > 0 {
		return nil, sqlerr.New(sqlerr.CodeSyntax, "INSERT has %d target columns but %d expressions", len(listed), width).WithPos(n.Source.Pos())
	}
	var group *catalog.Group
	if n.Group != nil {
		g, ok := tab.Group(n.Group.Name)
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "attribute group %s does not exist in table %s", n.Group.Name, tab.Name).WithPos(n.Group.Pos())
		}
		group = g
	}
	w, err := newWriter(tab, listed, group, len(rows), n.Pos(), st.columnDefault)
	if err != nil {
		return nil, err
	}
	for _, g := range w.groups {
		if g.group != nil && g.group.Owner != "" {
			return nil, ownedError(tab, g.group, g.group.Owner, n.Pos())
		}
	}
	for _, r := range rows {
		if err := w.add(r); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// listedColumns resolves an INSERT's column list; nil means every current
// column in order (R4.4: a positional INSERT lists every column).
func listedColumns(t *catalog.Table, list []*ast.Ident) ([]*catalog.Column, error) {
	if list == nil {
		return t.Columns, nil
	}
	out := make([]*catalog.Column, 0, len(list))
	for _, id := range list {
		c, ok := t.Column(id.Name)
		if !ok {
			if catalog.Reserved(id.Name) {
				return nil, sqlerr.New("428C9", "column %s is a hidden column and cannot be written", id.Name).WithPos(id.Pos())
			}
			return nil, sqlerr.New(sqlerr.CodeUndefinedColumn, "column %q of relation %q does not exist", id.Name, t.Name).WithPos(id.Pos())
		}
		for _, o := range out {
			if o == c {
				return nil, sqlerr.New(sqlerr.CodeDuplicateColumn, "column %q specified more than once", id.Name).WithPos(id.Pos())
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// inputRows evaluates the rows of an INSERT: a plain VALUES list cell by
// cell (DEFAULT allowed), anything else as a query.
// A value that cannot be read at all (a number literal beyond 256 bits) is
// reported against the column it was written for.
func (st *statement) inputRows(src *ast.SelectStmt, listed []*catalog.Column) ([][]cell, int, error) {
	if v, ok := src.Body.(*ast.Values); ok && src.With == nil && src.OrderBy == nil && src.Limit == nil && src.Offset == nil && src.AsOf == nil {
		v = &ast.Values{Span: v.Span, Rows: v.AllRows()}
		rows := make([][]cell, len(v.Rows))
		width := -1
		if len(v.Rows) > 0 {
			width = len(v.Rows[0].Items)
		}
		// One backing array for every cell: no allocation per row.
		all := make([]cell, len(v.Rows)*max(width, 0))
		for i, r := range v.Rows {
			if len(r.Items) != width {
				return nil, 0, sqlerr.New(sqlerr.CodeSyntax, "VALUES lists must all be the same length").WithPos(r.Pos())
			}
			row := all[i*width : (i+1)*width : (i+1)*width]
			for j, e := range r.Items {
				row[j].pos = e.Pos()
				if _, isDef := e.(*ast.DefaultExpr); isDef {
					row[j].def = true
					continue
				}
				x, err := st.evalConst(e)
				if err != nil {
					if j < len(listed) {
						var re *types.RangeError
						if errors.As(err, &re) && re.Value != "" && isNumberLiteral(e) {
							if pv, perr := parseLongLiteral(listed[j].Type, re.Value); perr == nil {
								// More digits than a literal's number
								// holds, yet the column's type takes it:
								// a float its nearest value, an exact
								// type rounded to its scale (PostgreSQL).
								row[j].v = pv
								continue
							} else {
								// Past the column's range too: say so
								// of the column's type.
								err = &types.RangeError{Value: re.Value, Type: listed[j].Type}
							}
						}
						return nil, 0, castError(err, listed[j], e.Pos())
					}
					return nil, 0, err
				}
				row[j].v = x
			}
			rows[i] = row
		}
		if width < 0 {
			width = len(listed)
		}
		return rows, width, nil
	}
	cols, vals, err := st.selectRows(src)
	if err != nil {
		return nil, 0, err
	}
	rows := make([][]cell, len(vals))
	for i, r := range vals {
		row := make([]cell, len(r))
		for j, x := range r {
			row[j] = cell{v: x, pos: src.Pos()}
		}
		rows[i] = row
	}
	return rows, len(cols), nil
}

// evalConst evaluates a constant expression. Literals, negated numbers and
// parameters, which make up nearly every VALUES cell, are evaluated here
// without planning; anything else goes through plan.EvalConst.
func (st *statement) evalConst(e ast.Expr) (types.Value, error) {
	switch x := e.(type) {
	case *ast.NumberLit:
		return literalValue(x.Text, false)
	case *ast.StringLit:
		return types.NewString(x.Value), nil
	case *ast.BoolLit:
		return types.NewBool(x.Value), nil
	case *ast.NullLit:
		return types.Null(types.Of(types.Unknown)), nil
	case *ast.Param:
		if x.Index < 1 || x.Index > len(st.params) {
			return types.Value{}, sqlerr.New("08P01", "there is no parameter $%d: the statement got %d", x.Index, len(st.params)).WithPos(x.Pos())
		}
		return st.params[x.Index-1], nil
	case *ast.UnaryExpr:
		if num, ok := x.X.(*ast.NumberLit); ok && x.Op == token.MINUS {
			return literalValue(num.Text, true)
		}
	}
	return st.planEvalConst(e)
}

// assignable reports whether a write may store v in a column of type t:
// any value the cast takes, except a number in a BOOL column, which
// PostgreSQL refuses in an INSERT or UPDATE (5::BOOL is an explicit cast,
// which it allows).
func assignable(v types.Value, t types.Type) bool {
	return t.Kind != types.Bool || v.IsNull() || !v.Kind().IsNumeric()
}

// literalValue is the value of a number literal written as a value to
// store (a VALUES cell, a DEFAULT), negated when neg: exact as PostgreSQL's
// numeric is, its exponent written out (types.ParseLiteral), so that
// 1.234567890123456789e18 keeps its digits in an INT64 column and 1e76 in
// a UINT256 one. Past every integer type it is a RangeError with the
// number as written (inputRows reads it as a float for a float column).
// In an expression a literal with an exponent stays FLOAT64 (plan), so
// arithmetic on it keeps its magnitude.
func literalValue(text string, neg bool) (types.Value, error) {
	v, err := types.ParseLiteral(text)
	var re *types.RangeError
	if err == nil && neg {
		v, err = types.Neg(v)
		v = types.Narrow(v)
	}
	if err != nil {
		if errors.As(err, &re) {
			// The number as written, sign included.
			written := text
			if neg {
				written = "-" + text
			}
			return v, &types.RangeError{Value: written, Type: re.Type}
		}
		return v, err
	}
	return v, nil
}

// parseLongLiteral reads the text of a number literal with more digits
// than a literal's number holds as a value of t: a float's nearest value
// (an underflow or overflow is out of range), an exact type's rounded past
// its scale (an integer's is 0), as PostgreSQL's numeric assignment does.
func parseLongLiteral(t types.Type, text string) (types.Value, error) {
	if t.Kind.IsInteger() {
		v, err := types.ParseText(types.Type{Kind: types.Decimal, Precision: types.MaxDecimalPrecision}, text)
		if err != nil {
			return v, err
		}
		return types.Cast(v, t)
	}
	return types.ParseText(t, text)
}

// isNumberLiteral reports whether e is a number literal, negated or not.
func isNumberLiteral(e ast.Expr) bool {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.MINUS {
		e = u.X
	}
	_, ok := e.(*ast.NumberLit)
	return ok
}

// groupWrite is the part of a write that goes to one attribute group (or,
// for an append table, to the table).
type groupWrite struct {
	group *catalog.Group
	// cols are the key columns then the group's columns (every current
	// column for an append table); src[i] is the listed position feeding
	// cols[i], -1 when it takes its DEFAULT.
	cols []*catalog.Column
	src  []int
	defs []types.Value
	// perRow[i], when set, gives cols[i]'s DEFAULT for each row instead
	// of defs[i] (a volatile DEFAULT, defaulter).
	perRow  []func() (types.Value, error)
	ordered map[catalog.ColumnID]bool
	batch   *types.Batch
	row     []types.Value
}

// writer turns input rows into the Writes of one statement.
type writer struct {
	tab    *catalog.Table
	listed []*catalog.Column
	groups []*groupWrite
	cast   []types.Value
	rows   int
}

// defaulter gives a column's DEFAULT for one write: a value for every
// row of it, or, for a DEFAULT that calls a volatile function (random(),
// gen_random_uuid()), a function giving each row its own.
type defaulter func(c *catalog.Column) (v types.Value, perRow func() (types.Value, error), err error)

// staticDefaults is the defaulter of writes that evaluate no expression
// (transformations): every column's DEFAULT as the DDL stored it.
func staticDefaults(c *catalog.Column) (types.Value, func() (types.Value, error), error) {
	v, err := defaultValue(c)
	return v, nil, err
}

// columnDefault is the statement's defaulter: a volatile DEFAULT (now(),
// current_commit(), random(), …) is evaluated again for the statement,
// now() being the statement's time as in PostgreSQL, and for each row when
// it calls a function whose every call differs (plan.VolatileFunction);
// any other DEFAULT is the value stored when the DDL ran.
func (st *statement) columnDefault(c *catalog.Column) (types.Value, func() (types.Value, error), error) {
	return evalDefault(c, st.evalConst)
}

// envDefaults is the defaulter of a write that is no statement (a
// transformation's output): volatile DEFAULTs evaluated in env, as
// columnDefault evaluates them in a statement's.
func envDefaults(ctx context.Context, env *plan.Env) defaulter {
	return func(c *catalog.Column) (types.Value, func() (types.Value, error), error) {
		return evalDefault(c, func(e ast.Expr) (types.Value, error) { return plan.EvalConst(ctx, e, env) })
	}
}

// evalDefault gives column c's DEFAULT for one write, evaluating a
// volatile one with evalConst (columnDefault).
func evalDefault(c *catalog.Column, evalConst func(ast.Expr) (types.Value, error)) (types.Value, func() (types.Value, error), error) {
	d := c.Default
	if !volatileDefault(c) {
		return staticDefaults(c)
	}
	e, err := parser.ParseExpr(d.SQL)
	if err != nil {
		return types.Value{}, nil, fmt.Errorf("session: stored DEFAULT of column %s: %w", c.Name, err)
	}
	perRow := false
	ast.Inspect(e, func(n ast.Node) bool {
		if f, ok := n.(*ast.FuncCall); ok && plan.VolatileFunction(f.Name) {
			perRow = true
		}
		return !perRow
	})
	eval := func() (types.Value, error) {
		v, err := evalConst(e)
		if se, ok := sqlerr.As(err); ok {
			// Its position is in the DEFAULT's text, not the statement's.
			return v, sqlerr.New(se.Code, "DEFAULT of column %s: %s", c.Name, se.Message)
		} else if err != nil {
			return v, err
		}
		v, err = types.Cast(v, c.Type)
		if err != nil {
			return v, sqlerr.New(sqlerr.CodeDatatypeMismatch, "DEFAULT of column %s: %s", c.Name, types.WithColumn(err, c.Name).Error())
		}
		return v, nil
	}
	if perRow {
		return types.Null(c.Type), eval, nil
	}
	v, err := eval()
	return v, nil, err
}

// volatileDefault reports whether c's DEFAULT calls a function, so that
// each write evaluates it: as the catalog records it, or, for a column
// defined before it recorded that, as its SQL text says (volatileSQL).
func volatileDefault(c *catalog.Column) bool {
	d := c.Default
	return d != nil && !d.Null && (d.Volatile || volatileSQL(d.SQL))
}

// volatileSQLs caches volatileSQL by text.
var volatileSQLs sync.Map

// volatileSQL reports whether a stored DEFAULT expression calls a function
// (or names CURRENT_TIMESTAMP and the like without parentheses), the rule
// defaultOf records as Default.Volatile.
func volatileSQL(sql string) bool {
	if sql == "" || !strings.ContainsAny(sql, "abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return false
	}
	if v, ok := volatileSQLs.Load(sql); ok {
		return v.(bool)
	}
	e, err := parser.ParseExpr(sql)
	vol := err == nil && volatileExpr(e)
	volatileSQLs.Store(sql, vol)
	return vol
}

// volatileExpr reports whether a DEFAULT expression calls a function
// (now(), current_commit(), random(), …) or names CURRENT_TIMESTAMP and
// the like without parentheses, so that each write evaluates it again.
func volatileExpr(e ast.Expr) bool {
	vol := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncCall, *ast.ColumnRef:
			vol = true
		}
		return !vol
	})
	return vol
}

// lazyDefault gives c's DEFAULT through defaults when first asked for, then
// again each time for one evaluated per row.
func lazyDefault(defaults defaulter, c *catalog.Column) func() (types.Value, error) {
	var v types.Value
	var perRow func() (types.Value, error)
	done := false
	return func() (types.Value, error) {
		if !done {
			var err error
			if v, perRow, err = defaults(c); err != nil {
				return v, err
			}
			done = true
		}
		if perRow != nil {
			return perRow()
		}
		return v, nil
	}
}

func defaultValue(c *catalog.Column) (types.Value, error) {
	if c.Default == nil || c.Default.Null {
		return types.Null(c.Type), nil
	}
	v, err := types.ParseText(c.Type, c.Default.Value)
	if err != nil {
		return v, fmt.Errorf("session: stored DEFAULT of column %s: %w", c.Name, err)
	}
	return v, nil
}

// newWriter decides, before any row is seen, which groups the write touches
// and where each of their columns comes from (R4.3, R4.4), and checks what
// can be checked without rows: key columns given, ordering columns given.
// rows, the number of input rows, sizes the batches.
func newWriter(t *catalog.Table, listed []*catalog.Column, explicit *catalog.Group, rows, pos int, defaults defaulter) (*writer, error) {
	w := &writer{tab: t, listed: listed, cast: make([]types.Value, len(listed))}
	at := make(map[catalog.ColumnID]int, len(listed))
	for i, c := range listed {
		at[c.ID] = i
	}
	if !t.Keyed() {
		g, err := newGroupWrite(nil, t.Columns, at, rows, defaults)
		if err != nil {
			return nil, err
		}
		w.groups = []*groupWrite{g}
		return w, nil
	}
	keys := t.KeyColumns()
	for _, k := range keys {
		if _, ok := at[k.ID]; !ok {
			return nil, sqlerr.New(sqlerr.CodeNotNull, "column %s is part of the primary key of %s and must be given", k.Name, t.Name).WithPos(pos)
		}
	}
	var touched []*catalog.Group
	if explicit != nil {
		for _, c := range listed {
			if c.Group == catalog.NoGroup || c.Group == explicit.ID {
				continue
			}
			other, _ := t.GroupByID(c.Group)
			return nil, sqlerr.New(sqlerr.CodeInvalidDefinition, "column %s belongs to attribute group %s, not %s", c.Name, other.Name, explicit.Name).
				WithPos(pos).WithHint("a write with ATTRIBUTE GROUP %s lists the key and columns of %s only", explicit.Name, explicit.Name)
		}
		touched = []*catalog.Group{explicit}
	} else {
		for _, g := range t.Groups {
			for _, c := range listed {
				if c.Group == g.ID {
					touched = append(touched, g)
					break
				}
			}
		}
		if len(touched) == 0 {
			def, _ := t.GroupByID(catalog.DefaultGroup)
			touched = []*catalog.Group{def}
		}
	}
	for _, g := range touched {
		cols := append([]*catalog.Column(nil), keys...)
		for _, id := range g.Columns {
			if c, ok := t.ColumnByID(id); ok {
				cols = append(cols, c)
			}
		}
		gw, err := newGroupWrite(g, cols, at, rows, defaults)
		if err != nil {
			return nil, err
		}
		for _, id := range append(append([]catalog.ColumnID(nil), g.ValidBy...), g.RevisionBy...) {
			c, _ := t.ColumnByID(id)
			if _, ok := at[id]; !ok && (c.Default == nil || c.Default.Null) {
				if explicit != nil {
					return nil, sqlerr.New(sqlerr.CodeNotNull, "attribute group %s is ordered by column %s, which this write does not give", g.Name, c.Name).
						WithPos(pos).WithHint("every write to %s gives %s (R3.2)", g.Name, c.Name)
				}
				return nil, sqlerr.New(sqlerr.CodeNotNull, "attribute group %s is ordered by column %s, which this write does not give: "+
					"give %s too, list only the columns of the groups you write, or name one group with ATTRIBUTE GROUP", g.Name, c.Name, c.Name).
					WithPos(pos).WithHint("a write touches every group it lists a column of, and each touched group needs its ordering values")
			}
		}
		w.groups = append(w.groups, gw)
	}
	return w, nil
}

func newGroupWrite(g *catalog.Group, cols []*catalog.Column, at map[catalog.ColumnID]int, rows int, defaults defaulter) (*groupWrite, error) {
	gw := &groupWrite{group: g, cols: cols, src: make([]int, len(cols)), defs: make([]types.Value, len(cols)),
		perRow: make([]func() (types.Value, error), len(cols)), row: make([]types.Value, len(cols))}
	typs := make([]types.Type, len(cols))
	if g != nil {
		gw.ordered = map[catalog.ColumnID]bool{}
		for _, id := range g.ValidBy {
			gw.ordered[id] = true
		}
		for _, id := range g.RevisionBy {
			gw.ordered[id] = true
		}
	}
	for i, c := range cols {
		typs[i] = c.Type
		if j, ok := at[c.ID]; ok {
			gw.src[i] = j
		} else {
			gw.src[i] = -1
		}
		if _, listed := at[c.ID]; listed && volatileDefault(c) {
			// Evaluated only if a row says DEFAULT for it, as
			// PostgreSQL evaluates only the defaults it uses.
			gw.defs[i], gw.perRow[i] = types.Null(c.Type), lazyDefault(defaults, c)
			continue
		}
		d, perRow, err := defaults(c)
		if err != nil {
			return nil, err
		}
		gw.defs[i], gw.perRow[i] = d, perRow
	}
	// Sized for every input row: a batch grown by appends copies its
	// columns at each doubling.
	gw.batch = types.NewBatch(typs, max(rows, 1))
	return gw, nil
}

// add casts one input row to the listed columns' types and appends it to
// every group it writes; nothing is kept when it fails.
func (w *writer) add(r []cell) error {
	for i, c := range w.listed {
		if i >= len(r) || r[i].def {
			w.cast[i] = types.Value{}
			continue
		}
		if !assignable(r[i].v, c.Type) {
			return castError(&types.CastError{From: r[i].v.Type(), To: c.Type}, c, r[i].pos)
		}
		v, err := types.Cast(r[i].v, c.Type)
		if err != nil {
			return castError(err, c, r[i].pos)
		}
		w.cast[i] = v
	}
	pos := 0
	if len(r) > 0 {
		pos = r[0].pos
	}
	// Every group's columns start with the key's (newWriter): the key is
	// made once, by the first group, and shared, so that a key DEFAULT
	// evaluated per row (gen_random_uuid()) gives the row one key.
	nk := len(w.tab.Key)
	for gi, g := range w.groups {
		for i, c := range g.cols {
			if gi > 0 && i < nk {
				g.row[i] = w.groups[0].row[i]
				continue
			}
			v := g.defs[i]
			if j := g.src[i]; j >= 0 && j < len(r) && !r[j].def {
				v = w.cast[j]
			} else if f := g.perRow[i]; f != nil {
				var err error
				if v, err = f(); err != nil {
					return err
				}
			}
			if v.IsNull() {
				if err := w.nullError(g, c, pos); err != nil {
					return err
				}
			}
			g.row[i] = v
		}
	}
	for _, g := range w.groups {
		g.batch.AppendRow(g.row)
	}
	w.rows++
	return nil
}

// nullError is the error for a NULL in column c of g's version, or nil when
// NULL is allowed there.
func (w *writer) nullError(g *groupWrite, c *catalog.Column, pos int) error {
	switch {
	case w.tab.IsKey(c.ID):
		return sqlerr.New(sqlerr.CodeNotNull, "null value in column %s violates not-null constraint: it is part of the primary key of %s", c.Name, w.tab.Name).WithPos(pos)
	case g.ordered[c.ID]:
		return sqlerr.New(sqlerr.CodeNotNull, "null value in column %s: attribute group %s is ordered by it, and every write to the group must give it (R3.2)", c.Name, g.group.Name).WithPos(pos)
	case !c.Nullable:
		return sqlerr.NotNull(pos, c.Name)
	}
	return nil
}

// txn returns the statement's commit: one Write per group (or one append).
func (w *writer) txn(catalogCommit uint64) *storage.Txn {
	txn := &storage.Txn{Kind: storage.KindWrite, CatalogVersion: catalogCommit, Tables: []string{w.tab.Name}, Rows: uint64(w.rows)}
	if w.rows == 0 {
		return txn
	}
	for _, g := range w.groups {
		ids := make([]catalog.ColumnID, len(g.cols))
		for i, c := range g.cols {
			ids[i] = c.ID
		}
		wr := storage.Write{Kind: storage.WriteAppend, Table: w.tab.ID, Cols: ids, Batch: g.batch}
		if g.group != nil {
			wr.Kind, wr.Group = storage.WriteVersion, g.group.ID
		}
		txn.Writes = append(txn.Writes, wr)
	}
	return txn
}

// castError reports a value that does not fit column c (R2.3): the
// message names the column, the value and the type.
func castError(err error, c *catalog.Column, pos int) error {
	var ce *types.CastError
	if errors.As(err, &ce) {
		return sqlerr.New(sqlerr.CodeDatatypeMismatch, "column %s is of type %s, and a value of type %s cannot be cast to it", c.Name, c.Type, ce.From).WithPos(pos)
	}
	return positioned(types.WithColumn(err, c.Name), pos)
}

// positioned turns a value error into an *sqlerr.Error at pos.
func positioned(err error, pos int) error {
	var re *types.RangeError
	var pe *types.ParseError
	var ce *types.CastError
	switch {
	case errors.As(err, &re):
		return sqlerr.New(plan.RangeCode(re), "%s", re.Error()).WithPos(pos)
	case errors.As(err, &pe):
		code := sqlerr.CodeInvalidText
		if k := pe.Type.Kind; k == types.Date || k == types.DateTime64 || k == types.Interval {
			code = sqlerr.CodeInvalidDatetime
		}
		return sqlerr.New(code, "%s", pe.Error()).WithPos(pos)
	case errors.As(err, &ce):
		return sqlerr.New(sqlerr.CodeDatatypeMismatch, "%s", ce.Error()).WithPos(pos)
	}
	return err
}

// keyList renders column names for messages.
func keyList(cols []*catalog.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
