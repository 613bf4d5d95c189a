package session

import (
	"strings"
	"testing"
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
