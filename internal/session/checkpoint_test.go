package session

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// TestCheckpoint: CHECKPOINT flushes the memtables into parts and merges
// them, takes no commit, and changes no answer, current or AS OF (R5.1);
// it runs inside transactions, read-only ones included, and checkpoint
// stays usable as a name.
func TestCheckpoint(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE TABLE t (k INT64 NOT NULL, v INT64, i UINT64, PRIMARY KEY (k),
		ATTRIBUTE GROUP g (v, i) VALID BY (i)) MODE VERSIONED`)
	for c := 1; c <= 5; c++ {
		h.ok("UPSERT INTO t VALUES (1, $1, $1), (2, $1 * 10, $1)", types.NewInt64(int64(c)))
	}
	h.ok("UPSERT INTO t VALUES (1, 100, 0)") // late: history only
	queries := []string{
		"SELECT k, v, i FROM t ORDER BY k",
		"SELECT k, v, i FROM t AS OF COMMIT 4 ORDER BY k",
		"SELECT count(*) FROM versions(t)",
	}
	var want []string
	for _, q := range queries {
		want = append(want, h.rowsText(q))
	}
	h.wantQuery("SELECT count(*) FROM system.parts WHERE table_name = 't'", "0")
	before := h.eng.LastCommit()

	if res := h.ok("CHECKPOINT"); res.Tag != "CHECKPOINT" {
		t.Errorf("tag %q, want CHECKPOINT", res.Tag)
	}
	if after := h.eng.LastCommit(); after != before {
		t.Errorf("CHECKPOINT took commit %d (last was %d)", after, before)
	}
	if got := h.rowsText("SELECT count(*) FROM system.parts WHERE table_name = 't'"); got == "0" {
		t.Error("no part after CHECKPOINT: the memtable was not flushed")
	}
	for i, q := range queries {
		if got := h.rowsText(q); got != want[i] {
			t.Errorf("%s after CHECKPOINT:\n got %q\nwant %q", q, got, want[i])
		}
	}

	// In a transaction, read-only or not, and with nothing left to do.
	h.ok("BEGIN READ ONLY")
	h.ok("CHECKPOINT")
	// It takes no snapshot: the transaction's modes may still change.
	h.ok("SET TRANSACTION READ WRITE")
	h.ok("COMMIT")
	h.ok("BEGIN")
	h.ok("UPSERT INTO t VALUES (3, 3, 3)")
	h.ok("checkpoint")
	h.ok("COMMIT")
	h.wantQuery("SELECT v FROM t WHERE k = 3", "3")

	// A cancelled statement ends with PostgreSQL's query_canceled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stmt, err := parser.Parse("CHECKPOINT")
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.s.Execute(ctx, stmt, "CHECKPOINT", nil)
	if e, ok := sqlerr.As(err); !ok || e.Code != "57014" {
		t.Errorf("CHECKPOINT with a cancelled context: %v, want 57014 (canceling statement)", err)
	}

	// The word is no keyword: a table may be called checkpoint.
	h.ok("CREATE TABLE checkpoint (k INT64 NOT NULL, PRIMARY KEY (k))")
	h.ok("INSERT INTO checkpoint VALUES (7)")
	h.wantQuery("SELECT k FROM checkpoint", "7")
}

// TestCheckpointSyntax: anything after CHECKPOINT is an error at that
// token, with its line and column.
func TestCheckpointSyntax(t *testing.T) {
	_, err := parser.Parse("CHECKPOINT\n  now")
	if err == nil {
		t.Fatal("CHECKPOINT now parsed")
	}
	if msg := err.Error(); !strings.Contains(msg, `"now"`) || !strings.Contains(msg, "line 2, column 3") {
		t.Errorf("error %q does not name the token and its place", msg)
	}
}
