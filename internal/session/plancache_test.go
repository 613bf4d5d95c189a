package session

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/ast"
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
	for range maxRefusals + 3 {
		if _, err := h.s.Execute(context.Background(), scan, "SELECT v FROM t WHERE v > $1", []types.Value{types.NewInt64(0)}); err != nil {
			t.Fatal(err)
		}
	}
	if e := h.s.plans.m[scan]; e == nil || e.tmpl != nil || e.refusals != maxRefusals {
		t.Fatalf("not a point SELECT: entry %+v, want refused %d times and no more", e, maxRefusals)
	}

	// A NULL on the run that derives does not cost a fresh tree its
	// template: a later usual value derives one.
	fresh, err := parser.Parse("SELECT v FROM t WHERE k = $1")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []types.Value{types.NewInt64(1), types.Null(types.Of(types.Int64)), types.NewInt64(1)} {
		if _, err := h.s.Execute(context.Background(), fresh, "SELECT v FROM t WHERE k = $1", []types.Value{v}); err != nil {
			t.Fatal(err)
		}
	}
	if e := h.s.plans.m[fresh]; e == nil || e.tmpl == nil {
		t.Fatalf("a NULL on the deriving run: entry %+v, want a template after a usual value", e)
	}
}

// TestPlanCacheTextParams: a parameter sent as text (every value of the
// wire's text format: libpq's PQexecPrepared, pgbench -M prepared) gets a
// template for an integer key, the string adapted to the key column's
// type as the binder adapts it; one the type does not read is left to
// Build, whose error it keeps.
func TestPlanCacheTextParams(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("INSERT INTO t VALUES (1, 10), (2, 20)")
	const q = "SELECT v FROM t WHERE k = $1"
	point, err := parser.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	run := func(k string) (*Result, error) {
		return h.s.Execute(context.Background(), point, q, []types.Value{types.NewString(k)})
	}
	for _, k := range []string{"1", "2"} {
		if _, err := run(k); err != nil {
			t.Fatal(err)
		}
	}
	if e := h.s.plans.m[point]; e == nil || e.tmpl == nil {
		t.Fatalf("text parameters: entry %+v, want a template", e)
	}
	for k, want := range map[string]string{"2": "20", " 1 ": "10", "+1": "10", "3": ""} {
		res, err := run(k)
		if err != nil {
			t.Fatalf("k = %q: %v", k, err)
		}
		got := ""
		if len(res.Rows) == 1 {
			got = res.Rows[0][0].String()
		}
		if got != want || len(res.Rows) > 1 {
			t.Fatalf("k = %q: %v, want %q", k, res.Rows, want)
		}
	}
	if _, err := run("two"); err == nil || !strings.Contains(err.Error(), "two") {
		t.Fatalf("k = 'two': %v, want Build's error naming the value", err)
	}
	if e := h.s.plans.m[point]; e == nil || e.tmpl == nil {
		t.Fatal("a value Build refused retired the template")
	}
}

// TestPlanCacheVersionsTemplate: the versions of one full key get a
// template (plan.Template over Versions) that answers as Build's plan
// does; versions of a key prefix, or with AS OF, do not.
func TestPlanCacheVersionsTemplate(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64 NOT NULL, j STRING NOT NULL, v INT64, PRIMARY KEY (k, j)) MODE VERSIONED")
	h.ok("INSERT INTO t VALUES (1, 'a', 10), (2, 'a', 20), (2, 'b', 21)")
	h.ok("UPSERT INTO t VALUES (1, 'a', 11)")
	exec := func(q string, args ...types.Value) (*Result, bool) {
		t.Helper()
		stmt, err := parser.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		var res *Result
		for range 3 {
			if res, err = h.s.Execute(context.Background(), stmt, q, args); err != nil {
				t.Fatal(err)
			}
		}
		e := h.s.plans.m[stmt]
		return res, e != nil && e.tmpl != nil
	}
	res, ok := exec("SELECT v, _commit FROM versions(t) WHERE k = $1 AND j = $2", types.NewInt64(1), types.NewString("a"))
	if !ok || len(res.Rows) != 2 || res.Rows[0][0].String() != "10" || res.Rows[1][0].String() != "11" {
		t.Fatalf("versions of (1, 'a'): template %v, rows %v", ok, res.Rows)
	}
	if _, ok := exec("SELECT v FROM versions(t) WHERE k = $1", types.NewInt64(2)); ok {
		t.Fatal("a template for the versions of a key prefix")
	}
	if _, ok := exec("SELECT v FROM versions(t) AS OF COMMIT 2 WHERE k = $1 AND j = $2", types.NewInt64(2), types.NewString("a")); ok {
		t.Fatal("a template for versions(t) AS OF")
	}
}

// TestPlanCacheCastTemplate: a point SELECT whose outputs are columns cast
// to a type (col::STRING, CAST(col AS T)), a column twice, _commit cast, or
// * beside a cast gets a template; one tree run with new keys answers as a
// fresh plan would, after a write too, and through the template (a run
// allocates far less than planning anew); an output that is another
// expression (a parameter in it) gets none.
func TestPlanCacheCastTemplate(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64 NOT NULL, j STRING NOT NULL, v UINT256, PRIMARY KEY (k, j)) MODE VERSIONED")
	h.ok("INSERT INTO t VALUES (1, 'a', 12345678901234567890123), (2, 'a', 20), (2, 'b', NULL)")
	parse := func(q string) ast.Stmt {
		t.Helper()
		stmt, err := parser.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		return stmt
	}
	run := func(stmt ast.Stmt, q string, args ...types.Value) (*Result, bool) {
		t.Helper()
		res, err := h.s.Execute(context.Background(), stmt, q, args)
		if err != nil {
			t.Fatal(err)
		}
		e := h.s.plans.m[stmt]
		return res, e != nil && e.tmpl != nil
	}
	key := func(k int64, j string) []types.Value { return []types.Value{types.NewInt64(k), types.NewString(j)} }
	const q = "SELECT v::STRING, CAST(k AS STRING), (j)::STRING::BYTES FROM t WHERE k = $1::INT64 AND j = $2"
	stmt := parse(q)
	run(stmt, q, key(2, "b")...)
	if _, ok := run(stmt, q, key(2, "b")...); !ok {
		t.Fatal("no template after the second run")
	}
	cases := []struct {
		k    int64
		j    string
		want string
	}{{1, "a", `[12345678901234567890123 1 \x61]`}, {2, "a", `[20 2 \x61]`}, {2, "b", `[NULL 2 \x62]`}, {3, "a", ""}, {1, "a", `[12345678901234567890123 1 \x61]`}}
	for _, c := range cases {
		res, ok := run(stmt, q, key(c.k, c.j)...)
		got := ""
		if len(res.Rows) == 1 {
			got = fmt.Sprint(res.Rows[0])
		}
		if !ok || got != c.want || len(res.Rows) > 1 {
			t.Fatalf("(%d, %q): template %v, rows %v, want %s", c.k, c.j, ok, res.Rows, c.want)
		}
		if res.Columns[0].Type.Kind != types.String || res.Columns[2].Type.Kind != types.Bytes {
			t.Fatalf("(%d, %q): columns %+v", c.k, c.j, res.Columns)
		}
	}
	// Through the template, not Build: a fresh tree per run plans anew.
	i := 0
	cached := testing.AllocsPerRun(50, func() { i++; run(stmt, q, key(int64(1+i%3), "a")...) })
	fresh := testing.AllocsPerRun(50, func() { i++; run(parse(q), q, key(int64(1+i%3), "a")...) })
	if cached > fresh/2 {
		t.Fatalf("%.0f allocations a run through the template, %.0f planning anew: the template did not serve", cached, fresh)
	}
	h.ok("UPSERT INTO t VALUES (1, 'a', 7)")
	if res, _ := run(stmt, q, key(1, "a")...); len(res.Rows) != 1 || res.Rows[0][0].String() != "7" {
		t.Fatalf("after the upsert: %v", res.Rows)
	}
	// A column twice, _commit cast (alone: a scan of no table column), and
	// * beside a cast: each a template answering as a fresh plan does.
	for _, q := range []string{
		"SELECT v::STRING, v, _commit::STRING FROM t WHERE k = $1 AND j = $2",
		"SELECT *, v::STRING FROM t WHERE k = $1 AND j = $2",
		"SELECT _commit::STRING FROM t WHERE k = $1 AND j = $2",
	} {
		stmt := parse(q)
		run(stmt, q, key(2, "a")...)
		for _, c := range cases {
			res, ok := run(stmt, q, key(c.k, c.j)...)
			want, err := h.s.Execute(context.Background(), parse(q), q, key(c.k, c.j))
			if err != nil {
				t.Fatal(err)
			}
			if !ok || fmt.Sprint(res.Rows) != fmt.Sprint(want.Rows) {
				t.Fatalf("%s (%d, %q): template %v, rows %v, want %v", q, c.k, c.j, ok, res.Rows, want.Rows)
			}
		}
	}
	q2 := "SELECT v + $3::UINT256 FROM t WHERE k = $1 AND j = $2"
	stmt2 := parse(q2)
	for range 3 {
		if _, ok := run(stmt2, q2, types.NewInt64(1), types.NewString("a"), types.NewInt64(1)); ok {
			t.Fatal("a template for an output holding a parameter")
		}
	}
}
