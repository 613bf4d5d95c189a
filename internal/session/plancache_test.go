package session

import (
	"context"
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/types"
)

// A point SELECT's tree gets a template on its second run, not its first
// (a tree parsed anew per run would only churn the cache); a run whose
// values the template leaves to Build (a NULL key) keeps the template; a
// refused shape is not derived again.
func TestPlanCacheLifecycle(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("INSERT INTO t VALUES (1, 10), (2, 20)")
	point, err := parser.Parse("SELECT v FROM t WHERE k = $1")
	if err != nil {
		t.Fatal(err)
	}
	run := func(k types.Value) *Result {
		t.Helper()
		res, err := h.s.Execute(context.Background(), point, "SELECT v FROM t WHERE k = $1", []types.Value{k})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tmpl := func() bool { e := h.s.plans.m[point]; return e != nil && e.tmpl != nil }
	if run(types.NewInt64(1)); tmpl() {
		t.Fatal("a template after the tree's first run")
	}
	if run(types.NewInt64(2)); !tmpl() {
		t.Fatal("no template after the tree's second run")
	}
	if res := run(types.Null(types.Of(types.Int64))); len(res.Rows) != 0 {
		t.Fatalf("k = NULL: %v", res.Rows)
	}
	if !tmpl() {
		t.Fatal("a NULL key retired the template")
	}
	if res := run(types.NewInt64(1)); len(res.Rows) != 1 || res.Rows[0][0].String() != "10" {
		t.Fatalf("k = 1 through the template: %v", res.Rows)
	}

	scan, err := parser.Parse("SELECT v FROM t WHERE v > $1")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := h.s.Execute(context.Background(), scan, "SELECT v FROM t WHERE v > $1", []types.Value{types.NewInt64(0)}); err != nil {
			t.Fatal(err)
		}
	}
	if e := h.s.plans.m[scan]; e == nil || e.tmpl != nil || !e.tried {
		t.Fatalf("not a point SELECT: entry %+v, want refused", e)
	}
}
