package plan

import (
	"context"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// Source is the one narrow interface through which execution reaches
// storage. *storage.Snapshot implements it.
type Source interface {
	// Commit is the snapshot's commit: the newest visible.
	Commit() uint64
	Catalog() *catalog.Catalog
	// Scan hands fn the table's rows in batches. fn may keep a batch and
	// read it after returning (a parallel aggregate's helpers do): the
	// source never modifies a batch it has handed on.
	Scan(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error)
	Versions(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error)
	// LookupInto reads the row of one key of a keyed table (the key
	// columns' values in primary key order) at spec.AsOf, spec.Cols (and
	// _commit) as Scan would return them, and appends it to dst, a batch
	// of those columns' types; false when the key has no row.
	LookupInto(ctx context.Context, table catalog.TableID, key []types.Value, spec storage.ScanSpec, dst *types.Batch) (bool, error)
	// CommitAt returns the newest commit at or before t (AS OF TIMESTAMP,
	// R6.7); false when t is before the first commit.
	CommitAt(t time.Time) (uint64, bool)
	// Retention says what table t's retention policy expires for this
	// statement (R9.3): reads before its horizon are refused, rows it
	// expires by a column are filtered out.
	Retention(t catalog.TableID) storage.Retention
	Shards(t catalog.TableID) []storage.ShardInfo // EXPLAIN
	Parts(t catalog.TableID) []storage.PartInfo
}

// Virtual is a relation computed on demand (system.tables, system.commits,
// …); the session layer implements them. Rows is called once per scan, with
// the statement's Source, and returns a batch with one vector per Columns
// entry.
type Virtual interface {
	Columns() []Column
	Rows(ctx context.Context, src Source) (*types.Batch, error)
}

// Column is an output column of a plan or a virtual relation.
type Column struct {
	Name string
	Type types.Type
}

// Env is everything a statement is planned and run against.
type Env struct {
	Source Source
	// Virtual resolves schema-qualified virtual relations: ("system",
	// "commits"). nil means there are none.
	Virtual func(schema, name string) (Virtual, bool)
	// Params are the values of $1 … (typed by the caller).
	Params []types.Value
	// Describing says the statement is planned only for the columns it
	// returns (the wire protocol's Describe, before any Bind): a
	// parameter's value is not known yet, and an AS OF operand that is one
	// reads as the newest commit, which gives the same columns (R6.5).
	Describing bool
	// Now is now(): one value per statement.
	Now time.Time
	// LastCommit is last_commit() (R5.5); 0 gives NULL.
	LastCommit uint64
	// MemLimit caps the bytes buffering operators hold; 0 means 1 GiB.
	MemLimit int64
	// PG is what the PostgreSQL compatibility functions (current_user,
	// pg_get_indexdef, regclass, …) read; nil makes them fail cleanly.
	PG expr.PGEnv
	// Relations binds the table references it holds (compared by pointer,
	// not by name) to a fixed relation instead of what their name names: a
	// write's RETURNING list is bound as SELECT items FROM table with the
	// table standing for the rows the write accepted, so a subquery of
	// the list that names the table still reads the table.
	Relations map[*ast.TableRef]Virtual
	// With holds the WITH definitions written before an INSERT, UPSERT,
	// UPDATE or DELETE: every query and constant the statement builds
	// (its source, WHERE, SET values, RETURNING list) sees them, as an
	// enclosing WITH. nil for none.
	With *ast.With
	// Written holds the rows of the data-modifying WITH definitions
	// (WITH x AS (INSERT … RETURNING …)) the session has run for the
	// statement: a reference to x reads them. A definition ran without
	// RETURNING maps to nil. A data-modifying definition not in the map
	// was not run (it is not at the statement's top level) and is an
	// error.
	Written map[*ast.CTE]Virtual
}

// Limit returns the memory limit in bytes.
func (e *Env) Limit() int64 {
	if e.MemLimit <= 0 {
		return 1 << 30
	}
	return e.MemLimit
}

// Plan is a bound, optimized query, ready for exec.Run.
type Plan struct {
	// Root is the tree of operators.
	Root Node
	// Explain and Analyze mark EXPLAIN [ANALYZE]: exec prints Root (after
	// running it, for ANALYZE) instead of returning its rows.
	Explain, Analyze bool
	// Outer is the number of outer values a correlated subquery plan reads
	// (expr.Outer slots).
	Outer int
	cols  []Column
}

// Columns returns the names and types of the plan's output columns.
func (p *Plan) Columns() []Column {
	if p.Explain {
		return []Column{{Name: "QUERY PLAN", Type: types.Of(types.String)}}
	}
	return p.cols
}

// executor evaluates expressions that need a Runner (AS OF operands with a
// subquery, EvalConst): package exec registers it at init, because exec
// imports plan and not the reverse.
var executor func(ctx context.Context, env *Env) expr.Runner

// RegisterExecutor is called by package exec at init to let the binder run
// constant subqueries.
func RegisterExecutor(f func(ctx context.Context, env *Env) expr.Runner) { executor = f }

// Build binds and optimizes a SELECT, VALUES, set operation or EXPLAIN
// [ANALYZE] of one of those.
func Build(stmt ast.Stmt, env *Env) (*Plan, error) {
	b := newBinder(env)
	explain, analyze := false, false
	if ex, ok := stmt.(*ast.ExplainStmt); ok {
		explain, analyze = true, ex.Analyze
		stmt = ex.Stmt
	}
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok {
		return nil, notSupported(stmt, "plan: statement is not a query")
	}
	ctes, err := b.withDefs(env.With, nil, nil, nil, env.With, sel)
	if err != nil {
		return nil, err
	}
	root, names, err := b.query(sel, nil, ctes)
	if err != nil {
		return nil, err
	}
	root = optimize(root, env)
	p := &Plan{Root: root, Explain: explain, Analyze: analyze}
	out := root.Output()
	for i, c := range out {
		p.cols = append(p.cols, Column{Name: names[i], Type: c.T})
	}
	return p, nil
}

// EvalConst evaluates a constant expression: a DEFAULT, a VALUES cell, an
// AS OF operand, LIMIT. It may hold parameters, now(), and uncorrelated
// scalar subqueries; a column reference is an error.
func EvalConst(ctx context.Context, e ast.Expr, env *Env) (types.Value, error) {
	b := newBinder(env)
	b.ctx = ctx
	return b.evalConst(e)
}

// RangeCode is the SQLSTATE of a value that does not fit its type, as
// expressions report it (expr.RangeCode), for the session's writes, which
// reach expr only through plan.
func RangeCode(e *types.RangeError) string { return expr.RangeCode(e) }
