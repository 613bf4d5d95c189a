package pgwire

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestAsOfParameter: AS OF COMMIT $1 and AS OF TIMESTAMP $1 (R6.3) work
// through a standard driver in each of its modes. pgx's default mode
// describes the statement before binding (Parse, Describe, then Bind), so
// the AS OF operand is not known when the columns are described; the
// parameter is typed INT8 / timestamptz for the driver to encode, and a
// value sent as text is read in its context.
func TestAsOfParameter(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	execAll(t, c,
		"CREATE TABLE t (k INT64 NOT NULL, v STRING, PRIMARY KEY (k)) MODE VERSIONED", // commit 1
		"INSERT INTO t VALUES (1, 'a')",                                               // commit 2
		"INSERT INTO t VALUES (1, 'b')",                                               // commit 3
	)
	var at2 time.Time
	if err := c.QueryRow(ctx, "SELECT committed_at FROM system.commits WHERE commit = 2").Scan(&at2); err != nil {
		t.Fatal(err)
	}
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	for _, mode := range modes {
		for _, tc := range []struct {
			sql  string
			arg  any
			want string
		}{
			{"SELECT v FROM t AS OF COMMIT $1", int64(2), "a"},
			{"SELECT v FROM t AS OF COMMIT $1", "2", "a"},
			{"SELECT v FROM t WHERE k = 1 AS OF COMMIT $1", 3, "b"},
			{"SELECT v FROM versions(t) AS OF COMMIT $1", int64(2), "a"},
			{"SELECT v FROM t AS OF TIMESTAMP $1", at2, "a"},
		} {
			var got string
			if err := c.QueryRow(ctx, tc.sql, mode, tc.arg).Scan(&got); err != nil {
				t.Fatalf("mode %v, %s with %v: %v", mode, tc.sql, tc.arg, err)
			}
			if got != tc.want {
				t.Fatalf("mode %v, %s with %v: %q, want %q", mode, tc.sql, tc.arg, got, tc.want)
			}
		}
		// A NULL, zero or later commit is still an error once bound.
		for _, arg := range []any{nil, 0, 99} {
			var got string
			err := c.QueryRow(ctx, "SELECT v FROM t AS OF COMMIT $1", mode, arg).Scan(&got)
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "commit") {
				t.Fatalf("mode %v, AS OF COMMIT %v: %v", mode, arg, err)
			}
		}
	}
}
