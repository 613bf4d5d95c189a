package strata_test

import (
	"context"
	"fmt"
	"testing"

	strata "github.com/strata-db/strata"
)

// A session keeps the parse and the plan template of a point SELECT it
// runs again (strata.Session.parse, session.PlanCache, plan.Template).
// These tests run the same text again and again in one session and
// compare every answer, error included, with a fresh session's, which
// parses and plans from scratch.

// render is a result or an error as text, for comparisons.
func render(r *strata.Result, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	s := fmt.Sprint(r.Tag, " ")
	for _, c := range r.Columns {
		s += c.Name + ":" + c.Type + " "
	}
	for _, row := range r.Rows {
		s += fmt.Sprint(row) + ";"
	}
	return s
}

// runBoth runs q in s (cached) and in a fresh session and fails when the
// answers differ; it returns the answer.
func runBoth(t *testing.T, db *strata.DB, s *strata.Session, q string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	got := render(s.Run(ctx, q, args...))
	want := render(db.NewSession().Run(ctx, q, args...))
	if got != want {
		t.Fatalf("%s %v:\ncached: %s\nfresh:  %s", q, args, got, want)
	}
	return got
}

func mustRun(t *testing.T, s *strata.Session, q string, args ...any) *strata.Result {
	t.Helper()
	r, err := s.Run(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

const pointQ = `SELECT v FROM b WHERE c = $1::UINT16 AND a = $2`

func pointTable(t *testing.T, s *strata.Session) {
	t.Helper()
	mustRun(t, s, `CREATE TABLE b (c UINT16 NOT NULL, a STRING NOT NULL, v INT64 NULL, w STRING NULL, PRIMARY KEY (c, a)) MODE VERSIONED`)
	mustRun(t, s, `INSERT INTO b VALUES (1, 'x', 10, 'p'), (2, 'x', 20, 'q'), (2, 'y', 21, NULL)`)
}

// TestPlanCacheValues: new values, missing keys, parameters of other Go
// types, NULL, values the cast rejects, and a literal form.
func TestPlanCacheValues(t *testing.T) {
	db, s := openDB(t)
	pointTable(t, s)
	for _, args := range [][]any{
		{1, "x"}, {2, "x"}, {2, "y"}, {3, "x"}, {2, "z"},
		{uint8(2), "y"}, {int64(1), "x"}, {"2", "x"}, {"two", "x"}, {70000, "x"}, {-1, "x"},
		{nil, "x"}, {1, nil}, {1, 5}, {1.5, "x"}, {2, "x"},
		{1}, {1, "x", 3}, {2, "y"},
	} {
		runBoth(t, db, s, pointQ, args...)
	}
	for i := 0; i < 3; i++ {
		runBoth(t, db, s, `SELECT * FROM b WHERE a = 'y' AND c = 2`)
		runBoth(t, db, s, `SELECT w, c FROM b WHERE a = $1 AND c = $2`, "x", i)
		runBoth(t, db, s, `SELECT v FROM b WHERE c = $1 AND a = $2`, i, "x")
		mustRun(t, s, `UPSERT INTO b VALUES (2, 'y', $1, 'r')`, 100+i)
	}
}

// TestPlanCacheDDL: a template is not used on another catalog.
func TestPlanCacheDDL(t *testing.T) {
	db, s := openDB(t)
	pointTable(t, s)
	star := `SELECT * FROM b WHERE c = $1::UINT16 AND a = $2`
	for _, k := range []string{"x", "y", "x"} {
		runBoth(t, db, s, star, 2, k)
		runBoth(t, db, s, pointQ, 2, k)
	}
	mustRun(t, s, `ALTER TABLE b ADD COLUMN z INT64 DEFAULT 7`)
	runBoth(t, db, s, star, 2, "y")
	if got := runBoth(t, db, s, star, 2, "x"); got != "SELECT 1 c:UINT16 a:STRING v:INT64 w:STRING z:INT64 [2 x 20 q 7];" {
		t.Fatalf("after ADD COLUMN: %s", got)
	}
	mustRun(t, s, `ALTER TABLE b DROP COLUMN v`)
	runBoth(t, db, s, pointQ, 2, "x")
	runBoth(t, db, s, star, 2, "x")
	mustRun(t, s, `DROP TABLE b`)
	runBoth(t, db, s, pointQ, 2, "x")
	mustRun(t, s, `CREATE TABLE b (c INT64 NOT NULL, a STRING NOT NULL, v STRING NULL, PRIMARY KEY (a, c)) MODE UPSERT`)
	mustRun(t, s, `INSERT INTO b VALUES (2, 'x', 'new')`)
	runBoth(t, db, s, pointQ, 2, "x")
	if got := runBoth(t, db, s, pointQ, 2, "x"); got != "SELECT 1 v:STRING [new];" {
		t.Fatalf("after CREATE TABLE: %s", got)
	}
}

// TestPlanCacheAsOf: AS OF COMMIT as a parameter and as a number, at
// every commit, and the values Build rejects.
func TestPlanCacheAsOf(t *testing.T) {
	db, s := openDB(t)
	pointTable(t, s)
	first := s.LastCommit()
	for i := 0; i < 4; i++ {
		mustRun(t, s, `UPSERT INTO b VALUES (2, 'x', $1, NULL)`, 30+i)
	}
	last := s.LastCommit()
	for _, q := range []string{
		`SELECT v FROM b AS OF COMMIT $3 WHERE c = $1::UINT16 AND a = $2`,
		`SELECT v FROM b WHERE c = $1::UINT16 AND a = $2 AS OF COMMIT $3`,
	} {
		for n := first - 1; n <= last+1; n++ {
			runBoth(t, db, s, q, 2, "x", n)
		}
		for _, at := range []any{0, -1, nil, "3", int64(last), uint16(first)} {
			runBoth(t, db, s, q, 2, "x", at)
		}
	}
	for n := first - 1; n <= last+1; n++ {
		q := fmt.Sprintf(`SELECT v FROM b AS OF COMMIT %d WHERE c = $1::UINT16 AND a = $2`, n)
		for _, k := range []string{"x", "y", "x", "z"} {
			runBoth(t, db, s, q, 2, k)
		}
	}
	if got := runBoth(t, db, s, `SELECT v FROM b AS OF COMMIT $3 WHERE c = $1::UINT16 AND a = $2`, 2, "x", first); got != "SELECT 1 v:INT64 [20];" {
		t.Fatalf("AS OF COMMIT %d: %s", first, got)
	}
}

// TestPlanCacheTransaction: inside BEGIN … COMMIT a cached point SELECT
// reads the transaction's own writes; after ROLLBACK it does not.
func TestPlanCacheTransaction(t *testing.T) {
	_, s := openDB(t)
	pointTable(t, s)
	get := func() string {
		t.Helper()
		r := mustRun(t, s, pointQ, 2, "x")
		return fmt.Sprint(r.Rows)
	}
	if got := get(); got != "[[20]]" {
		t.Fatalf("before: %s", got)
	}
	mustRun(t, s, `BEGIN`)
	if got := get(); got != "[[20]]" {
		t.Fatalf("in the transaction before writing: %s", got)
	}
	mustRun(t, s, `UPSERT INTO b VALUES (2, 'x', 99, NULL)`)
	if got := get(); got != "[[99]]" {
		t.Fatalf("after its own write: %s", got)
	}
	mustRun(t, s, `DELETE FROM b WHERE c = 2 AND a = 'x'`)
	if got := get(); got != "[]" {
		t.Fatalf("after its own delete: %s", got)
	}
	mustRun(t, s, `ROLLBACK`)
	if got := get(); got != "[[20]]" {
		t.Fatalf("after ROLLBACK: %s", got)
	}
	mustRun(t, s, `BEGIN`)
	mustRun(t, s, `UPSERT INTO b VALUES (2, 'x', 77, NULL)`)
	mustRun(t, s, `COMMIT`)
	if got := get(); got != "[[77]]" {
		t.Fatalf("after COMMIT: %s", got)
	}
}

// TestPlanCacheVersions: the versions of one key (a Versions template):
// new values, missing keys, other Go types, NULL, a cast that fails, a
// literal form, and new versions written between runs.
func TestPlanCacheVersions(t *testing.T) {
	db, s := openDB(t)
	pointTable(t, s)
	const q = `SELECT v, _commit, _state FROM versions(b) WHERE c = $1::UINT16 AND a = $2`
	for i := 0; i < 3; i++ {
		for _, args := range [][]any{
			{1, "x"}, {2, "x"}, {2, "y"}, {3, "x"}, {2, "z"},
			{uint8(2), "y"}, {"2", "x"}, {"two", "x"}, {70000, "x"}, {-1, "x"},
			{nil, "x"}, {1, nil}, {1, 5}, {2, "y"}, {1},
		} {
			runBoth(t, db, s, q, args...)
		}
		runBoth(t, db, s, `SELECT * FROM versions(b) WHERE a = 'y' AND c = 2`)
		runBoth(t, db, s, `SELECT w, c FROM versions(b) WHERE a = $1 AND c = $2`, "y", 2)
		runBoth(t, db, s, `SELECT v FROM versions(b) WHERE c = $1 AND a = $2 AND v > 20`, 2, "y")
		runBoth(t, db, s, `SELECT v FROM versions(b) AS OF COMMIT 1 WHERE c = $1 AND a = $2`, 2, "y")
		mustRun(t, s, `UPSERT INTO b VALUES (2, 'y', $1, 'r')`, 100+i)
		mustRun(t, s, `DELETE FROM b WHERE c = 1 AND a = 'x'`)
		mustRun(t, s, `INSERT INTO b VALUES (1, 'x', $1, 'p')`, i)
	}
}
