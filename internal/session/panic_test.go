package session

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// panicQuerier is the default Querier, except that it panics in the
// query it runs while armed (once), as a bug in planning or execution
// would.
type panicQuerier struct{ armed *bool }

func (q panicQuerier) Query(ctx context.Context, stmt ast.Stmt, env *QueryEnv, fn func(*types.Batch) error) ([]Column, error) {
	if *q.armed {
		*q.armed = false
		var xs []int
		_ = xs[len(env.Params)+3] // index out of range
	}
	return defaultQuerier.Query(ctx, stmt, env, fn)
}

func (q panicQuerier) EvalConst(ctx context.Context, e ast.Expr, env *QueryEnv) (types.Value, error) {
	return defaultQuerier.EvalConst(ctx, e, env)
}

// TestPanicIsInternalError: a statement that panics fails with an
// internal error (XX000) saying where, writes nothing, aborts the
// transaction it is in, and leaves the session usable (R13.5).
func TestPanicIsInternalError(t *testing.T) {
	h := newHarness(t)
	armed := false
	h.s.opts.Querier = panicQuerier{armed: &armed}
	h.ok("CREATE TABLE t (k INT64, v INT64, PRIMARY KEY (k)) MODE VERSIONED")
	h.ok("INSERT INTO t VALUES (1, 10)")
	count := func() int {
		t.Helper()
		return len(h.ok("SELECT k FROM t").Rows)
	}
	wantPanic := func(sql string) {
		t.Helper()
		armed = true
		_, err := h.run(sql)
		e, ok := sqlerr.As(err)
		if !ok || e.Code != sqlerr.CodeInternal || !strings.Contains(e.Message, "index out of range") ||
			!strings.Contains(e.Detail, "panicQuerier") {
			t.Fatalf("%s: %v (detail %q), want an internal error naming the panic", sql, err, e.Detail)
		}
		if armed {
			t.Fatalf("%s: the query did not run", sql)
		}
	}
	wantPanic("INSERT INTO t SELECT 2, 20")
	if n := count(); n != 1 {
		t.Fatalf("after the failed INSERT … SELECT: %d rows, want 1", n)
	}
	h.ok("BEGIN")
	h.ok("INSERT INTO t VALUES (3, 30)")
	wantPanic("SELECT k FROM t")
	h.fails("SELECT k FROM t", "25P02", "aborted")
	if res := h.ok("COMMIT"); res.Tag != "ROLLBACK" {
		t.Fatalf("COMMIT of the aborted transaction: %s", res.Tag)
	}
	if n := count(); n != 1 {
		t.Fatalf("after the aborted transaction: %d rows, want 1", n)
	}
	h.ok("INSERT INTO t VALUES (4, 40)")
	if n := count(); n != 2 {
		t.Fatalf("after a later INSERT: %d rows, want 2", n)
	}
}
