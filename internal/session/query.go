package session

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// Querier plans and runs queries for a session. The production one is
// built on packages plan and exec (planner.go); tests of the write and DDL
// paths may pass their own, so the seam is an interface.
type Querier interface {
	// Query plans stmt (SELECT, VALUES, a set operation or EXPLAIN) against
	// env.Snapshot, runs it and hands its batches to fn. It returns the
	// output columns.
	Query(ctx context.Context, stmt ast.Stmt, env *QueryEnv, fn func(*types.Batch) error) ([]Column, error)
	// EvalConst evaluates a constant expression: a DEFAULT, a VALUES cell
	// that is not a plain literal.
	EvalConst(ctx context.Context, e ast.Expr, env *QueryEnv) (types.Value, error)
}

// QueryEnv is what one statement's query sees.
type QueryEnv struct {
	// Snapshot is the statement's one snapshot (R6.6); inside a
	// transaction that has written, with its writes pending on it
	// (storage.Snapshot.WithPending).
	Snapshot *storage.Snapshot
	// Params are $1, $2, … typed by the caller.
	Params []types.Value
	// Now is now() for the whole statement.
	Now time.Time
	// LastCommit is last_commit() (R5.5); 0 reads as NULL.
	LastCommit uint64
	// MemLimit bounds buffering operators; 0 is the planner's default.
	MemLimit int64
	// Settings are the session's settings (read only), for pg_settings and
	// current_setting().
	Settings map[string]string
	// Set runs SET [LOCAL] name = value for set_config(); nil where a
	// statement cannot change settings.
	Set func(name, value string, local bool) error
	// Plans, when set, caches point-SELECT plan templates
	// (PlanCache); only a top-level query sets it, because the queries
	// inside writes are parsed anew each time and would only churn it.
	Plans *PlanCache
	// Relations binds table references of the statement to fixed rows
	// (plan.Env.Relations): a RETURNING list's table.
	Relations map[*ast.TableRef]plan.Virtual
	// With holds the WITH definitions of a write statement (plan.Env.With).
	With *ast.With
	// Written holds the rows of the data-modifying WITH definitions run
	// for the statement (plan.Env.Written).
	Written map[*ast.CTE]plan.Virtual
	// Start, when set, is called with the output columns once the query is
	// planned and before its first batch; a Querier must call it. Rows
	// streamed to a client need their description sent first.
	Start func([]Column) error
}

// defaultQuerier is the Querier of sessions whose Options name none: the
// plan and exec one, registered by planner.go.
var defaultQuerier Querier

// env is the environment of planning only (Describe): the statement's
// snapshot, whose catalog is the one a transaction's pending view has too.
func (st *statement) env() *QueryEnv {
	return st.envOn(st.snapshot())
}

// readEnv is the environment of a query that runs: on readSnapshot, so
// that inside a transaction it sees the transaction's writes.
func (st *statement) readEnv() (*QueryEnv, error) {
	snap, err := st.readSnapshot()
	if err != nil {
		return nil, err
	}
	return st.envOn(snap), nil
}

func (st *statement) envOn(snap *storage.Snapshot) *QueryEnv {
	return &QueryEnv{Snapshot: snap, Params: st.params, Now: st.now, LastCommit: st.s.lastCommit, MemLimit: st.s.opts.MemLimit,
		Settings: st.s.settings.values, Set: st.s.setFn, With: st.with, Written: st.written}
}

func (st *statement) querier(pos int) (Querier, error) {
	if st.s.opts.Querier != nil {
		return st.s.opts.Querier, nil
	}
	if defaultQuerier == nil {
		return nil, sqlerr.NotSupported(pos, "this build has no query engine")
	}
	return defaultQuerier, nil
}

// query runs a statement that returns rows.
func (st *statement) query(stmt ast.Stmt) (*Result, error) {
	defer st.release()
	if st.sink != nil {
		return st.stream(stmt)
	}
	cols, rows, err := st.rowsCached(stmt, &st.s.plans)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: queryTag(stmt, len(rows)), Columns: cols, Rows: rows, RowsAffected: int64(len(rows))}, nil
}

// queryTag is the command tag of query stmt that returned n rows.
func queryTag(stmt ast.Stmt, n int) string {
	if _, ok := stmt.(*ast.ExplainStmt); ok {
		return "EXPLAIN"
	}
	return selectTag(n)
}

// stream runs query stmt handing its batches to st.sink as they come.
func (st *statement) stream(stmt ast.Stmt) (*Result, error) {
	q, env, err := st.queryEnv(stmt, &st.s.plans)
	if err != nil {
		return nil, err
	}
	sink, started, n := st.sink, false, 0
	var announced []Column
	env.Start = func(cols []Column) error {
		started, announced = true, cols
		return sink.Start(cols)
	}
	cols, err := q.Query(st.ctx, stmt, env, func(b *types.Batch) error {
		if !started {
			return sqlerr.Internal(errors.New("session: the querier produced rows before announcing its columns"))
		}
		n += b.Rows
		if err := sink.Batch(b); err != nil {
			return err
		}
		return st.ctx.Err()
	})
	if errors.Is(err, ErrStop) {
		// Stopped by the sink: the querier returned no columns.
		err, cols = nil, announced
	}
	if err != nil {
		return nil, err
	}
	if !started {
		// A querier that ran nothing still owes the client a description.
		if err := sink.Start(cols); err != nil && !errors.Is(err, ErrStop) {
			return nil, err
		}
	}
	// n counts the rows handed to the sink; one that stopped early may
	// have used fewer and says so itself.
	return &Result{Tag: queryTag(stmt, n), Columns: cols, RowsAffected: int64(n)}, nil
}

// selectTag is the command tag of a query that returned n rows; a point
// SELECT's "SELECT 0" and "SELECT 1" are constants, not built per run.
func selectTag(n int) string {
	switch n {
	case 0:
		return "SELECT 0"
	case 1:
		return "SELECT 1"
	}
	return "SELECT " + strconv.Itoa(n)
}

// selectRows runs a query a write statement is built on (INSERT … SELECT,
// the rows UPDATE and DELETE match).
func (st *statement) selectRows(sel *ast.SelectStmt) ([]Column, [][]types.Value, error) {
	return st.rows(sel)
}

func (st *statement) rows(stmt ast.Stmt) ([]Column, [][]types.Value, error) {
	return st.rowsCached(stmt, nil)
}

// rowsCached is rows with the plans of stmt cached in plans (nil: none).
func (st *statement) rowsCached(stmt ast.Stmt, plans *PlanCache) ([]Column, [][]types.Value, error) {
	q, env, err := st.queryEnv(stmt, plans)
	if err != nil {
		return nil, nil, err
	}
	return st.collect(q, stmt, env)
}

// queryEnv returns the querier and the environment query stmt runs in,
// its plans cached in plans (nil: none).
func (st *statement) queryEnv(stmt ast.Stmt, plans *PlanCache) (Querier, *QueryEnv, error) {
	q, err := st.querier(stmt.Pos())
	if err != nil {
		return nil, nil, err
	}
	env, err := st.readEnv()
	if err != nil {
		return nil, nil, err
	}
	env.Plans = plans
	return q, env, nil
}

// collect runs stmt on env and gathers its rows.
func (st *statement) collect(q Querier, stmt ast.Stmt, env *QueryEnv) ([]Column, [][]types.Value, error) {
	var rows [][]types.Value
	cols, err := q.Query(st.ctx, stmt, env, func(b *types.Batch) error {
		rows = b.AppendRows(rows, 0)
		return st.ctx.Err()
	})
	if err != nil {
		return nil, nil, err
	}
	return cols, rows, nil
}

// planEvalConst evaluates what evalConst's literal fast path does not.
func (st *statement) planEvalConst(e ast.Expr) (types.Value, error) {
	q, err := st.querier(e.Pos())
	if err != nil {
		return types.Value{}, err
	}
	env, err := st.readEnv()
	if err != nil {
		return types.Value{}, err
	}
	return q.EvalConst(st.ctx, e, env)
}
