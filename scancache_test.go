package strata

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestAggregateCachedScan runs the balances aggregate over flushed parts
// again and again: the repeated run is served by the resolved-scan cache
// (EXPLAIN ANALYZE says shards_cached), a commit to the table makes the
// next run read the sources again and see it, a commit to another table
// does not, and AS OF an older commit reads the older answer whatever the
// cache holds.
func TestAggregateCachedScan(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := db.NewSession()
	ctx := context.Background()
	run := func(sql string) string {
		t.Helper()
		r, err := s.Run(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var b strings.Builder
		for _, row := range r.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprint(&b, v)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	run(balancesDDL)
	run("CREATE TABLE other (k INT64 PRIMARY KEY, v INT64)")
	run(upsertSQL(0, 400, 0))
	run(upsertSQL(0, 400, 1))
	if err := db.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	run(upsertSQL(100, 100, 2)) // the memtable touches some keys
	old := s.LastCommit()
	const agg = "SELECT token, count(*), sum(amount) FROM balances GROUP BY token ORDER BY token"
	first := run(agg)
	if got := run(agg); got != first {
		t.Fatalf("the repeated aggregate differs:\n%s\nfirst:\n%s", got, first)
	}
	if plan := run("EXPLAIN ANALYZE " + agg); !strings.Contains(plan, "shards_cached=1") {
		t.Fatalf("the repeated aggregate did not use the cache:\n%s", plan)
	}
	run("INSERT INTO other VALUES (1, 1)")
	if plan := run("EXPLAIN ANALYZE " + agg); !strings.Contains(plan, "shards_cached=1") {
		t.Fatalf("a commit to another table dropped the cached scan:\n%s", plan)
	}
	run(upsertSQL(0, 20, 3))
	if plan := run("EXPLAIN ANALYZE " + agg); strings.Contains(plan, "shards_cached") {
		t.Fatalf("the aggregate after a commit to the table used the cache:\n%s", plan)
	}
	after := run(agg)
	if after == first {
		t.Fatalf("the aggregate does not see the new commit:\n%s", after)
	}
	if got := run(agg + fmt.Sprintf(" AS OF COMMIT %d", old)); got != first {
		t.Fatalf("AS OF %d:\n%s\nwant:\n%s", old, got, first)
	}
	if got := run(agg); got != after {
		t.Fatalf("the current aggregate after AS OF:\n%s\nwant:\n%s", got, after)
	}
}
