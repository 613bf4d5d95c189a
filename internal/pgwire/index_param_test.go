package pgwire

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestIndexOverWire: a query with its value as a bind parameter reads
// through the index as one with a literal does (R10.2, R13.1): the
// parameter is a constant by the time the statement is planned, in every
// pgx mode, and the rows are the same.
func TestIndexOverWire(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	execAll(t, c,
		"CREATE TABLE t (id INT64 NOT NULL, v INT64, PRIMARY KEY (id)) MODE VERSIONED",
		"CREATE INDEX t_v ON t (v)",
		"INSERT INTO t VALUES (1, 10), (2, 20), (3, 10)",
		"CHECKPOINT",
		"INSERT INTO t VALUES (3, 30)",
	)
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	for _, mode := range modes {
		var plan []string
		rows, err := c.Query(ctx, "EXPLAIN SELECT id FROM t WHERE v = $1", mode, 10)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "index t_v (v) scope current values=[10]") {
			t.Fatalf("mode %v: the plan does not read through t_v:\n%s", mode, p)
		}
		var ids []int64
		rows, err = c.Query(ctx, "SELECT id FROM t WHERE v = $1 ORDER BY id", mode, 10)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil || len(ids) != 1 || ids[0] != 1 {
			t.Fatalf("mode %v: ids %v, %v; want [1] (key 3 moved to 30)", mode, ids, err)
		}
	}
}
