package session

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
)

// TestReturningErrorsPositioned checks that what a RETURNING list may not
// hold is reported at the offending call, with a code, and writes nothing.
func TestReturningErrorsPositioned(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k BIGINT PRIMARY KEY, v TEXT)")
	h.ok("INSERT INTO t VALUES (1, 'a')")
	for _, c := range []struct{ sql, code, at string }{
		{"INSERT INTO t VALUES (2, 'b') RETURNING k, generate_series(1, k)", "0A000", "generate_series"},
		{"UPDATE t SET v = 'c' RETURNING 1 + unnest('{1}')", "0A000", "unnest"},
		{"DELETE FROM t RETURNING row_number() OVER ()", "42P20", "row_number"},
		{"SELECT generate_series(1, 2)", "0A000", "generate_series"},
	} {
		e := h.fails(c.sql, c.code)
		if want := strings.Index(c.sql, c.at); e.Pos != want {
			t.Errorf("%s: error at %d, want %d (%v)", c.sql, e.Pos, want, e)
		}
	}
	if got := h.table("t"); len(got) != 1 || got[0] != "1 a" {
		t.Errorf("rows after failed writes: %q", got)
	}
}

// TestDataModifyingWithDescribeAndReadOnly checks that a statement with a
// data-modifying WITH is described without writing, refused in a READ
// ONLY transaction, and inside a transaction block buffers its writes like
// any write, committing them with the block.
func TestDataModifyingWithDescribeAndReadOnly(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k BIGINT PRIMARY KEY, v TEXT)")
	h.ok("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	sql := "WITH d AS (DELETE FROM t WHERE k = 1 RETURNING k, v) SELECT v, k * 10 AS ten FROM d"
	stmt, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	before := h.eng.LastCommit()
	cols, err := h.s.Describe(context.Background(), stmt, sql, nil)
	if err != nil || len(cols) != 2 || cols[0].Name != "v" || cols[1].Name != "ten" {
		t.Fatalf("Describe: %v %v", cols, err)
	}
	if h.eng.LastCommit() != before || len(h.table("t")) != 2 {
		t.Fatalf("Describe wrote: %q", h.table("t"))
	}
	h.ok("BEGIN READ ONLY")
	h.fails(sql, "25006", "DELETE", "read-only")
	h.ok("ROLLBACK")
	h.ok("BEGIN")
	res := h.ok(sql)
	if len(res.Rows) != 1 || res.Rows[0][0].Str() != "a" {
		t.Fatalf("rows %v", res.Rows)
	}
	if h.eng.LastCommit() != before {
		t.Fatal("a statement inside BEGIN committed")
	}
	h.ok("COMMIT")
	if got := h.table("t"); len(got) != 1 || got[0] != "2 b" {
		t.Fatalf("after COMMIT: %q", got)
	}
}

// TestLiteralErrorsPositioned checks that a quoted literal that is no
// value of the other side's type is reported as such at the literal, as
// PostgreSQL does, in comparisons, arithmetic and IN lists (R13.5).
func TestLiteralErrorsPositioned(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k BIGINT PRIMARY KEY, v TEXT)")
	for _, c := range []struct{ sql, at string }{
		{"SELECT * FROM t WHERE k = 'a'", "'a'"},
		{"SELECT * FROM t WHERE 'x' < k", "'x'"},
		{"SELECT k + 'z' FROM t", "'z'"},
		{"SELECT * FROM t WHERE k IN (1, 'b')", "'b'"},
		{"SELECT * FROM t WHERE k NOT IN ('c', 2)", "'c'"},
	} {
		e := h.fails(c.sql, "22P02", "invalid INT64 value")
		if want := strings.Index(c.sql, c.at); e.Pos != want {
			t.Errorf("%s: error at %d, want %d (%v)", c.sql, e.Pos, want, e)
		}
	}
}

// TestAggregateErrorsPositioned checks that an aggregate's run-time error
// (a sum past UINT256) points at the call (R13.5).
func TestAggregateErrorsPositioned(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE u (k BIGINT PRIMARY KEY, v UINT256)")
	h.ok("INSERT INTO u VALUES (1, 115792089237316195423570985008687907853269984665640564039457584007913129639935), (2, 1)")
	for _, sql := range []string{"SELECT 1, sum(v) FROM u", "SELECT k % 1, sum(v) FROM u GROUP BY k % 1"} {
		e := h.fails(sql, "22003", "overflow in sum()")
		if want := strings.Index(sql, "sum("); e.Pos != want {
			t.Errorf("%s: error at %d, want %d (%v)", sql, e.Pos, want, e)
		}
	}
}
