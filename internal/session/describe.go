package session

import (
	"context"

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
func (s *Session) Describe(ctx context.Context, stmt ast.Stmt, sql string, params []types.Value) ([]Column, error) {
	switch n := stmt.(type) {
	case *ast.SelectStmt, *ast.ExplainStmt:
		if ex, ok := n.(*ast.ExplainStmt); ok && ex.Analyze {
			// EXPLAIN ANALYZE runs the query; its one text column is known.
			return []Column{{Name: "QUERY PLAN", Type: types.Of(types.String)}}, nil
		}
		if s.opts.Querier != nil || defaultQuerier == nil {
			break
		}
		st := &statement{s: s, ctx: ctx, sql: sql, params: params, now: s.opts.Clock()}
		defer st.release()
		p, err := plan.Build(stmt, planEnv(st.env()))
		if err != nil {
			return nil, userError(err, stmt, sql)
		}
		pc := p.Columns()
		cols := make([]Column, len(pc))
		for i, c := range pc {
			cols[i] = Column{Name: c.Name, Type: c.Type}
		}
		return cols, nil
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
