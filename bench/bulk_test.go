package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestBulkLoadMatchesIngest checks that -bulk duckdb builds exactly the
// tables W1's batch-by-batch ingest leaves: both peers' current and
// history tables are compared row by row, with the late versions and
// re-deliveries of the workload in them.
func TestBulkLoadMatchesIngest(t *testing.T) {
	ctx := context.Background()
	sc := Scale{Name: "test", Keys: 300, Versions: 6_000}
	open := func() *sqlPeer {
		p := newDuckDB(7)
		if err := p.Open(ctx, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() }) //nolint:errcheck
		return p
	}
	ing, bulk := open(), open()
	g := NewGenerator(sc, 7)
	mid := g.Batches() / 2
	var rows []Row
	var midCommit uint64
	for i := 1; ; i++ {
		if rows = g.NextBatch(rows); len(rows) == 0 {
			break
		}
		c, err := ing.Ingest(ctx, rows, i)
		if err != nil {
			t.Fatal(err)
		}
		if i == mid {
			midCommit = c
		}
	}
	got, err := bulk.BulkLoad(ctx, NewGenerator(sc, 7), mid)
	if err != nil {
		t.Fatal(err)
	}
	if got != midCommit {
		t.Errorf("middle commit %d, ingest's %d", got, midCommit)
	}
	for _, q := range []string{
		"SELECT * FROM balances ORDER BY chain_id, address, token",
		"SELECT * FROM history ORDER BY chain_id, address, token, balance_index, balance_version",
	} {
		a, b := dump(t, ing.db, q), dump(t, bulk.db, q)
		if len(a) < 100 {
			t.Fatalf("%s: only %d rows", q, len(a))
		}
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%s: ingest has %d rows, bulk load %d, and they differ", q, len(a), len(b))
		}
	}
}

// dump returns q's rows, each formatted as one string.
func dump(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rs, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDuckDBCheckpointThreshold checks that the DuckDB peer runs with the
// WAL budget of duckdbCheckpointThreshold rather than DuckDB's 16 MB
// default, under which its ingest slowed tenfold at medium scale.
func TestDuckDBCheckpointThreshold(t *testing.T) {
	ctx := context.Background()
	p := newDuckDB(1)
	if err := p.Open(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer p.Close() //nolint:errcheck
	var got string
	if err := p.db.QueryRowContext(ctx, "SELECT current_setting('checkpoint_threshold')").Scan(&got); err != nil {
		t.Fatal(err)
	}
	// DuckDB shows sizes in binary units: 1GB (10^9 bytes) is 953.6 MiB.
	if got != "953.6 MiB" {
		t.Errorf("checkpoint_threshold is %q, want %s", got, duckdbCheckpointThreshold)
	}
}
