package pgwire

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestTextParameters checks that a parameter sent as text (lib/pq,
// node-postgres, psycopg2 and pgx's exec and simple modes do so) is read
// as PostgreSQL reads an unknown literal: as the integer LIMIT and OFFSET
// need, and as the type of the function parameter it is passed to
// (R13.1: drivers work unchanged).
func TestTextParameters(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	execAll(t, c,
		"CREATE TABLE rp (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))",
		"INSERT INTO rp VALUES (1, 'abcdef'), (2, 'b'), (3, 'c')",
	)
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	for _, mode := range modes {
		for _, tc := range []struct {
			sql  string
			arg  any
			want string
		}{
			{"SELECT count(*)::TEXT FROM (SELECT k FROM rp ORDER BY k LIMIT $1) s", "2", "2"},
			{"SELECT count(*)::TEXT FROM (SELECT k FROM rp ORDER BY k LIMIT $1) s", int64(2), "2"},
			{"SELECT string_agg(k::TEXT, ',') FROM (SELECT k FROM rp ORDER BY k OFFSET $1) s", "1", "2,3"},
			{"SELECT substr(v, $1) FROM rp WHERE k = 1", "3", "cdef"},
			{"SELECT substr(v, $1) FROM rp WHERE k = 1", int64(3), "cdef"},
			{"SELECT round(2.555, $1)::TEXT", "2", "2.56"},
			{"SELECT count(*)::TEXT FROM generate_series(1, $1)", "4", "4"},
		} {
			var got string
			if err := c.QueryRow(ctx, tc.sql, mode, tc.arg).Scan(&got); err != nil {
				t.Fatalf("mode %v, %s with %#v: %v", mode, tc.sql, tc.arg, err)
			}
			if got != tc.want {
				t.Fatalf("mode %v, %s with %#v: %q, want %q", mode, tc.sql, tc.arg, got, tc.want)
			}
		}
		var got string
		if err := c.QueryRow(ctx, "SELECT substr(v, $1) FROM rp WHERE k = 1", mode, "x").Scan(&got); err == nil {
			t.Fatalf("mode %v: substr(v, 'x') gave %q, want an error", mode, got)
		}
	}
	// Text that is not UTF-8, or holds NUL, is refused (22021), as
	// PostgreSQL refuses it for its UTF8 server encoding.
	for _, bad := range []string{"x\xffy", "a\x00b"} {
		_, err := c.Exec(ctx, "INSERT INTO rp VALUES (9, $1)", pgx.QueryExecModeExec, bad)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "22021" {
			t.Fatalf("%q as a text parameter: %v, want 22021", bad, err)
		}
	}
}

// TestInListParametersRerun checks that a prepared `k IN ($1, $2)` read
// through key ranges gives each run its own values' rows (the ranges come
// from the values bound, never from an earlier run's).
func TestInListParametersRerun(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	execAll(t, c,
		"CREATE TABLE ir (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))",
		"INSERT INTO ir VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
		"CHECKPOINT",
	)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		for _, tc := range []struct {
			a, b int64
			want string
		}{{1, 3, "a,c"}, {2, 4, "b,d"}, {4, 9, "d"}} {
			var got string
			if err := c.QueryRow(ctx, "SELECT string_agg(v, ',' ORDER BY v) FROM ir WHERE k IN ($1, $2)", mode, tc.a, tc.b).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("mode %v, k IN (%d, %d): %q, want %q", mode, tc.a, tc.b, got, tc.want)
			}
		}
	}
}
