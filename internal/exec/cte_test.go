package exec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// TestCTEOnce: a WITH query referenced twice is run once for the
// statement, its rows read by both references (EXPLAIN ANALYZE counts the
// definition's scan once, each CTE Scan with all its rows), including a
// reference from a subquery, which runs in a runner of its own.
func TestCTEOnce(t *testing.T) {
	f := newFake(t)
	got, err := query(t, f, "EXPLAIN ANALYZE WITH x AS (SELECT id FROM emp) SELECT count(*) FROM x a, x b WHERE a.id = b.id")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CTE x\n", "Scan emp columns=[id] shards=1 parts=0 (rows=6 ", "CTE Scan x AS a columns=[id] (rows=6 ", "CTE Scan x AS b columns=[id] (rows=6 "} {
		if !strings.Contains(got, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "Scan emp"); n != 1 {
		t.Errorf("the definition's scan shows %d times, want once:\n%s", n, got)
	}
	checkQueries(t, f, []struct{ sql, want string }{
		{"WITH x AS (SELECT id FROM emp) SELECT count(*), (SELECT count(*) FROM x) FROM x", "6 6\n"},
		{"WITH x AS (SELECT id FROM emp WHERE id < 3) SELECT a.id FROM x a WHERE a.id IN (SELECT id FROM x) ORDER BY 1", "1\n2\n"},
		// more rows than one batch of a CTE scan
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3000) SELECT count(*), sum(a.n) FROM r a JOIN r b ON a.n = b.n", "3000 4501500\n"},
	})
}

// TestCTEMemLimit: a materialized WITH query's rows count against the
// query's memory limit, and the error names the query.
func TestCTEMemLimit(t *testing.T) {
	f := newFake(t)
	stmt, _ := parser.Parse("WITH big AS MATERIALIZED (SELECT * FROM emp) SELECT count(*) FROM big")
	env := &plan.Env{Source: f, MemLimit: 64}
	p, err := plan.Build(stmt, env)
	if err != nil {
		t.Fatal(err)
	}
	err = exec.Run(context.Background(), p, env, func(*types.Batch) error { return nil })
	se, ok := sqlerr.As(err)
	if !ok || se.Code != exec.CodeOutOfMemory || !strings.Contains(err.Error(), `WITH query "big"`) {
		t.Errorf("got %v, want a memory limit error (53200) naming big", err)
	}
}
