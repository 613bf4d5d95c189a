package session

import (
	"context"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/types"
)

// What the wire protocol's extended query mode needs from a session: the
// result columns of a prepared statement before it runs (Describe), how
// many parameters it takes, and the transaction status ReadyForQuery
// reports.

// Describe returns the columns stmt returns, nil for a statement that
// returns no rows. A query is planned against a fresh snapshot but not
// run; params may be NULLs of type Unknown when the values are not known
// yet, so a column typed by a parameter alone reads as Unknown. SHOW and
// the other read-only statements that return rows are run, which is cheap
// and changes nothing.
//
// A panic while planning is returned as an internal error, as in Execute.
func (s *Session) Describe(ctx context.Context, stmt ast.Stmt, sql string, params []types.Value) (cols []Column, err error) {
	defer func() {
		if r := recover(); r != nil {
			cols, err = nil, panicError(r, sql)
			s.failTx(stmt)
		}
	}()
	switch n := stmt.(type) {
	case *ast.SelectStmt, *ast.ExplainStmt:
		if ex, ok := n.(*ast.ExplainStmt); ok && (ex.Analyze || writeOf(ex) != nil) {
			// EXPLAIN ANALYZE runs the query; its one text column is known.
			return []Column{{Name: "QUERY PLAN", Type: types.Of(types.String)}}, nil
		}
		if s.opts.Querier != nil || defaultQuerier == nil {
			break
		}
		st := &statement{s: s, ctx: ctx, sql: sql, params: params, now: s.opts.Clock()}
		defer st.release()
		err := explainWrites(stmt)
		if w := writingWith(stmt); w != nil && err == nil {
			err = st.describeWritten(w)
		}
		var p *plan.Plan
		if err == nil {
			env := planEnv(st.env())
			env.Describing = true
			p, err = plan.Build(stmt, env)
		}
		if err != nil {
			if s.tx != nil {
				// As in PostgreSQL, an error in any message of a
				// transaction aborts it, Parse and Describe included.
				s.tx.aborted = true
			}
			return nil, userError(err, stmt, sql)
		}
		pc := p.Columns()
		cols := make([]Column, len(pc))
		for i, c := range pc {
			cols[i] = Column{Name: c.Name, Type: c.Type}
		}
		return cols, nil
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		return s.describeReturning(ctx, stmt, sql, params)
	case *ast.ShowStmt, *ast.ShowTablesStmt, *ast.DescribeStmt, *ast.ShowCreateTableStmt:
	default:
		return nil, nil
	}
	res, err := s.Execute(ctx, stmt, sql, params)
	if err != nil {
		return nil, err
	}
	return res.Columns, nil
}

// Schema returns the engine's current catalog (inside a transaction the
// session may plan against the transaction's own). Every DDL commit installs a new catalog, so a caller that remembers it
// when describing a statement knows, by comparing pointers, whether that
// description may be stale: the wire server describes a prepared
// statement again only then, not on every Execute.
func (s *Session) Schema() *catalog.Catalog { return s.eng.Catalog() }

// ParamCount returns the highest $n that stmt uses: the number of values a
// Bind must supply.
func ParamCount(stmt ast.Stmt) int {
	n := 0
	ast.Inspect(stmt, func(x ast.Node) bool {
		if p, ok := x.(*ast.Param); ok && p.Index > n {
			n = p.Index
		}
		return true
	})
	return n
}

// TxStatus is the transaction status of ReadyForQuery: 'I' idle, 'T' in a
// transaction block, 'E' in a failed one (commands ignored until its end).
func (s *Session) TxStatus() byte {
	switch {
	case s.tx == nil:
		return 'I'
	case s.tx.aborted:
		return 'E'
	}
	return 'T'
}

// ParamTypes returns the type the context of each of stmt's n parameters
// gives it, Unknown where it gives none: the column an INSERT value, an
// UPDATE SET or a comparison with a column names, a CAST's type, LIMIT and
// OFFSET (INT64). The wire server reports them in ParameterDescription so
// a driver encodes each value for its column; the binder still coerces
// whatever arrives, so a wrong guess costs a cast, not a wrong result.
func (s *Session) ParamTypes(stmt ast.Stmt, n int) []types.Type {
	out := make([]types.Type, n)
	for i := range out {
		out[i] = types.Of(types.Unknown)
	}
	if n == 0 {
		return out
	}
	cat := s.eng.Catalog()
	set := func(e ast.Expr, t types.Type) {
		if p, ok := e.(*ast.Param); ok && p.Index >= 1 && p.Index <= n && out[p.Index-1].Kind == types.Unknown {
			out[p.Index-1] = t
		}
	}
	// The tables the statement names, for its unqualified column names.
	var tables []*catalog.Table
	addTable := func(name *ast.ObjectName) {
		if name == nil || name.Schema != "" && name.Schema != "public" {
			return
		}
		if t, ok := cat.Table(name.Name); ok {
			tables = append(tables, t)
		}
	}
	switch x := stmt.(type) {
	case *ast.InsertStmt:
		addTable(x.Table)
	case *ast.UpdateStmt:
		addTable(x.Table)
	case *ast.DeleteStmt:
		addTable(x.Table)
	}
	ast.Inspect(stmt, func(nd ast.Node) bool {
		if r, ok := nd.(*ast.TableRef); ok {
			addTable(r.Name)
		}
		return true
	})
	column := func(e ast.Expr) (types.Type, bool) {
		ref, ok := e.(*ast.ColumnRef)
		if !ok || ref.Schema != "" {
			return types.Type{}, false
		}
		var found *catalog.Column
		for _, t := range tables {
			if ref.Table != "" && ref.Table != t.Name {
				continue
			}
			for _, c := range t.Columns {
				if c.Name == ref.Name {
					if found != nil {
						return types.Type{}, false // ambiguous: leave it to the binder
					}
					found = c
				}
			}
		}
		if found == nil {
			return types.Type{}, false
		}
		return found.Type, true
	}
	switch x := stmt.(type) {
	case *ast.InsertStmt:
		if t, ok := cat.Table(x.Table.Name); ok && x.Source != nil {
			if v, ok := x.Source.Body.(*ast.Values); ok {
				cols := t.Columns
				if x.Columns != nil {
					cols = nil
					for _, id := range x.Columns {
						for _, c := range t.Columns {
							if c.Name == id.Name {
								cols = append(cols, c)
							}
						}
					}
					if len(cols) != len(x.Columns) {
						cols = nil
					}
				}
				// Compact rows (v.Lits) are literals only, with no
				// parameter to type.
				for _, row := range v.Rows {
					for i, e := range row.Items {
						if i < len(cols) {
							set(e, cols[i].Type)
						}
					}
				}
			}
		}
	case *ast.UpdateStmt:
		for _, sc := range x.Sets {
			if t, ok := column(&ast.ColumnRef{Name: sc.Column.Name}); ok {
				set(sc.Value, t)
			}
		}
	}
	ast.Inspect(stmt, func(nd ast.Node) bool {
		switch e := nd.(type) {
		case *ast.CastExpr:
			if t, err := typeOf(e.Type); err == nil {
				set(e.X, t)
			}
		case *ast.BinaryExpr:
			if t, ok := column(e.L); ok {
				set(e.R, t)
			}
			if t, ok := column(e.R); ok {
				set(e.L, t)
			}
		case *ast.BetweenExpr:
			if t, ok := column(e.X); ok {
				set(e.Lo, t)
				set(e.Hi, t)
			}
		case *ast.InExpr:
			if t, ok := column(e.X); ok {
				for _, x := range e.List {
					set(x, t)
				}
			}
		case *ast.SelectStmt:
			set(e.Limit, types.Of(types.Int64))
			set(e.Offset, types.Of(types.Int64))
		case *ast.AsOf:
			// R6.3: AS OF COMMIT $1 is a commit, AS OF TIMESTAMP $1 a
			// timestamptz.
			if e.Kind == ast.AsOfTimestamp {
				set(e.Expr, types.Type{Kind: types.DateTime64, Precision: 6, TZ: "UTC"})
			} else {
				set(e.Expr, types.Of(types.Int64))
			}
		}
		return true
	})
	return out
}

// FailTransaction marks an open transaction failed, as an error of any
// statement inside it does in PostgreSQL: the wire server calls it for the
// errors it finds before Execute (a statement that does not parse, a
// Describe that does not bind), so later statements fail until ROLLBACK.
func (s *Session) FailTransaction() {
	if s.tx != nil {
		s.tx.aborted = true
	}
}

// describeReturning describes a write: nil without RETURNING, else the
// columns of its RETURNING list, planned and not run.
func (s *Session) describeReturning(ctx context.Context, stmt ast.Stmt, sql string, params []types.Value) ([]Column, error) {
	if _, _, _, items := returningOf(stmt); items == nil || s.opts.Querier != nil || defaultQuerier == nil {
		return nil, nil
	}
	st := &statement{s: s, ctx: ctx, sql: sql, params: params, now: s.opts.Clock()}
	defer st.release()
	var err error
	if w := writingWith(stmt); w != nil {
		err = st.describeWritten(w)
	}
	st.with = withOf(stmt)
	var cols []Column
	if err == nil {
		cols, err = st.returningColumns(stmt)
	}
	if err != nil {
		if s.tx != nil {
			s.tx.aborted = true
		}
		return nil, userError(err, stmt, sql)
	}
	return cols, nil
}
