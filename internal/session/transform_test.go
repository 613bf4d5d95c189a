package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/types"
)

// insertRows returns an INSERT of n rows (k, v) into table, k cycling
// through 0..3.
func insertRows(table string, n, v int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "INSERT INTO %s VALUES ", table)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d)", i%4, v)
	}
	return sb.String()
}

// TestTransformChunks (R12.2): a transformation created over more source
// rows than one step reads catches up in several commits, each with its
// checkpoint, and counts every row once; one failing in its first chunk
// fails SYNC TRANSFORMATIONS instead of leaving it waiting.
func TestTransformChunks(t *testing.T) {
	// Restored after the harness's engine closes (cleanups run last
	// first), when no runner reads it any more.
	old := maxDeltaRows
	t.Cleanup(func() { maxDeltaRows = old })
	maxDeltaRows = 10
	h := newHarness(t)
	h.ok("CREATE TABLE ev (k INT64 NOT NULL, v INT64 NOT NULL) MODE APPEND")
	h.ok("CREATE TABLE tot (k INT64 NOT NULL, n INT64 NULL, s INT64 NULL, PRIMARY KEY (k)) MODE UPSERT")
	for i := 0; i < 6; i++ {
		h.ok(insertRows("ev", 6, i))
	}
	h.ok("CREATE TRANSFORMATION t INTO tot AS SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k")
	h.ok("SYNC TRANSFORMATIONS")
	// 36 rows: k 0 and 1 get two rows of each commit, k 2 and 3 one.
	h.wantQuery("SELECT k, n, s FROM tot ORDER BY k", "0 12 30\n1 12 30\n2 6 15\n3 6 15")
	// Six-row commits, ten rows a step: one commit a step.
	h.wantQuery("SELECT count(*) FROM system.commits WHERE kind = 'transformation'", "6")

	h.ok("CREATE TABLE ev2 (k INT64 NOT NULL, v INT64 NOT NULL) MODE APPEND")
	h.ok("CREATE TABLE small (k INT64 NOT NULL, s UINT8 NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok(insertRows("ev2", 6, -1)) // the first chunk's sums do not fit UINT8
	h.ok(insertRows("ev2", 6, 1))
	h.ok("CREATE TRANSFORMATION bad INTO small AS SELECT k, sum(v) AS s FROM ev2 GROUP BY k")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const sync = "SYNC TRANSFORMATIONS"
	stmt, err := parser.Parse(sync)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.s.Execute(ctx, stmt, sync, nil)
	if err == nil || !strings.Contains(err.Error(), "transformation bad") || ctx.Err() != nil {
		t.Fatalf("SYNC with a transformation failing in its first chunk: %v (context: %v)", err, ctx.Err())
	}
	h.wantQuery("SELECT status FROM system.transformations WHERE name = 'bad'", "failing")
}

// TestTransformParams: a transformation's query is stored and run without
// the statement's parameters, so a parameter in it is refused.
func TestTransformParams(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE ev (k INT64 NOT NULL, v INT64 NOT NULL) MODE APPEND")
	h.ok("CREATE TABLE cp (k INT64 NOT NULL, v INT64 NOT NULL) MODE APPEND")
	_, err := h.run("CREATE TRANSFORMATION x INTO cp AS SELECT k, v FROM ev WHERE v > $1", types.NewInt64(3))
	if err == nil || !strings.Contains(err.Error(), "parameter $1") {
		t.Fatalf("a parameter in a transformation's query: %v", err)
	}
	h.wantQuery("SELECT count(*) FROM system.transformations", "0")
}

// TestTransformationsProgress: what the metrics read is what
// system.transformations shows.
func TestTransformationsProgress(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE ev (k INT64 NOT NULL, v INT64 NOT NULL) MODE APPEND")
	h.ok("CREATE TABLE cp (k INT64 NOT NULL, v INT64 NOT NULL) MODE APPEND")
	h.ok("CREATE TABLE small (k INT64 NOT NULL, s UINT8 NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("CREATE TRANSFORMATION good INTO cp AS SELECT k, v FROM ev")
	h.ok("CREATE TRANSFORMATION bad INTO small AS SELECT k, sum(v) AS s FROM ev GROUP BY k")
	h.ok(insertRows("ev", 4, -1))
	if _, err := h.run("SYNC TRANSFORMATIONS"); err == nil {
		t.Fatalf("SYNC with a failing transformation succeeded")
	}
	// SYNC fails as soon as bad does; good catches up on the runner's
	// next step.
	var got []TransformationProgress
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got = Transformations(h.eng)
		if len(got) != 2 || got[0].Name != "bad" || got[1].Name != "good" {
			t.Fatalf("Transformations: %+v", got)
		}
		if got[1].Lag == 0 || time.Now().After(deadline) {
			break
		}
	}
	// bad stopped before the INSERT, at a commit that depends on when
	// the runner first saw it: the INSERT is all its lag.
	if !got[0].Failing || got[0].Lag != 1 || got[1].Failing || got[1].Lag != 0 || got[1].Processed < got[0].Processed {
		t.Fatalf("Transformations: %+v", got)
	}
	h.wantQuery("SELECT name, lag, status FROM system.transformations ORDER BY name", "bad 1 failing\ngood 0 running")
}
