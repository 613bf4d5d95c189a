package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// rowsText runs a query and returns its rows as text, one line per row.
func (h *harness) rowsText(sql string) string {
	h.t.Helper()
	res := h.ok(sql)
	var lines []string
	for _, r := range res.Rows {
		var parts []string
		for _, v := range r {
			if v.IsNull() {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(types.AppendText(nil, v)))
			}
		}
		lines = append(lines, strings.Join(parts, " "))
	}
	return strings.Join(lines, "\n")
}

func (h *harness) wantQuery(sql, want string) {
	h.t.Helper()
	if got := h.rowsText(sql); got != want {
		h.t.Errorf("%s:\n got %q\nwant %q", sql, got, want)
	}
}

// TestTxnReadsOwnWrites is the example of the issue: inside BEGIN … COMMIT
// a SELECT, an UPDATE and a DELETE see the transaction's earlier writes,
// and the transaction is still one commit (R5.1).
func TestTxnReadsOwnWrites(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64 NOT NULL, v STRING NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("BEGIN")
	h.ok("INSERT INTO t VALUES (1, 'a')")
	h.wantQuery("SELECT * FROM t", "1 a")
	if res := h.ok("UPDATE t SET v = 'b' WHERE k = 1"); res.Tag != "UPDATE 1" {
		t.Errorf("UPDATE inside the transaction: tag %q, want UPDATE 1", res.Tag)
	}
	h.wantQuery("SELECT v FROM t WHERE k = 1", "b")
	h.ok("INSERT INTO t VALUES (2, 'z')")
	if res := h.ok("DELETE FROM t WHERE v = 'z'"); res.Tag != "DELETE 1" {
		t.Errorf("DELETE inside the transaction: tag %q, want DELETE 1", res.Tag)
	}
	h.wantQuery("SELECT k, v FROM t ORDER BY k", "1 b")
	h.wantQuery("SELECT current_commit()", "1")
	if n := h.eng.LastCommit(); n != 1 {
		t.Fatalf("a statement inside the transaction committed: last commit %d", n)
	}
	res := h.ok("COMMIT")
	if res.Commit != 2 || h.s.LastCommit() != 2 {
		t.Fatalf("COMMIT took %d (last_commit %d), want 2", res.Commit, h.s.LastCommit())
	}
	h.wantRows("t", "1 b")
}

// TestTxnPendingInvisibleToOtherSessions checks the other half of R5.1:
// while a transaction reads its own writes, another session on the same
// engine sees none of them, before COMMIT and after ROLLBACK, and sees all
// of them after COMMIT. A commit of the other session during the
// transaction is seen by the transaction's next statement, under its
// pending writes.
func TestTxnPendingInvisibleToOtherSessions(t *testing.T) {
	h := newHarness(t)
	other := h.peer()
	h.ok("CREATE TABLE t (k INT64 NOT NULL, v STRING NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("INSERT INTO t VALUES (1, 'committed')")

	h.ok("BEGIN")
	h.ok("INSERT INTO t VALUES (2, 'pending')")
	h.ok("UPDATE t SET v = 'changed' WHERE k = 1")
	h.wantQuery("SELECT k, v FROM t ORDER BY k", "1 changed\n2 pending")
	other.wantQuery("SELECT k, v FROM t ORDER BY k", "1 committed")

	// The other session commits meanwhile: the transaction's next read
	// sees that commit, with its own writes on top (the pending view is
	// rebuilt on the newer snapshot).
	other.ok("INSERT INTO t VALUES (3, 'other')")
	h.wantQuery("SELECT k, v FROM t ORDER BY k", "1 changed\n2 pending\n3 other")
	h.wantQuery("SELECT k, v FROM t ORDER BY k", "1 changed\n2 pending\n3 other")
	other.wantQuery("SELECT k, v FROM t ORDER BY k", "1 committed\n3 other")

	h.ok("COMMIT")
	other.wantQuery("SELECT k, v FROM t ORDER BY k", "1 changed\n2 pending\n3 other")

	h.ok("BEGIN")
	h.ok("DELETE FROM t WHERE k = 3")
	h.wantQuery("SELECT count(*) FROM t", "2")
	other.wantQuery("SELECT count(*) FROM t", "3")
	h.ok("ROLLBACK")
	h.wantQuery("SELECT count(*) FROM t", "3")
	other.wantQuery("SELECT count(*) FROM t", "3")
}

// TestTxnReadAfterSchemaChange: a DDL committed by another session after
// the transaction's first write makes its next read fail with 40001 (the
// writes were planned against the old catalog), as its next write and its
// COMMIT already did, and the transaction writes nothing.
func TestTxnReadAfterSchemaChange(t *testing.T) {
	h := newHarness(t)
	other := h.peer()
	h.ok("CREATE TABLE t (k INT64 NOT NULL, v STRING NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("BEGIN")
	h.ok("INSERT INTO t VALUES (1, 'a')")
	other.ok("ALTER TABLE t ADD COLUMN w STRING NULL")
	if _, err := h.run("SELECT * FROM t"); err == nil || !strings.Contains(err.Error(), "schema changed") {
		t.Fatalf("read after a concurrent DDL: %v, want 40001", err)
	}
	h.ok("COMMIT")
	h.wantRows("t")
}

// TestTxnAcrossOtherDDL: DDL that changes no table a transaction wrote
// (CREATE TABLE, a view, an index, an ALTER of another table) leaves it
// going: its next reads, writes and COMMIT succeed, as in PostgreSQL. A
// transformation newly maintaining its table ends it (R12.3).
func TestTxnAcrossOtherDDL(t *testing.T) {
	h := newHarness(t)
	other := h.peer()
	h.ok("CREATE TABLE t (k INT64 NOT NULL, v STRING NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("CREATE TABLE u (k INT64 NOT NULL, v STRING NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("BEGIN")
	h.ok("INSERT INTO t VALUES (1, 'a')")
	other.ok("CREATE TABLE unrelated (k INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.wantQuery("SELECT count(*) FROM t", "1")
	h.ok("INSERT INTO t VALUES (2, 'b')")
	other.ok("ALTER TABLE u ADD COLUMN w STRING NULL")
	other.ok("CREATE VIEW tv AS SELECT k FROM t")
	h.ok("INSERT INTO u VALUES (1, 'x', 'y')")
	other.ok("CREATE INDEX t_v ON t (v)")
	h.ok("COMMIT")
	h.wantQuery("SELECT count(*) FROM t", "2")
	h.wantQuery("SELECT w FROM u", "y")
	h.wantQuery("SELECT k FROM t WHERE v = 'b'", "2")

	// A DDL on a table the transaction wrote still ends it.
	h.ok("BEGIN")
	h.ok("INSERT INTO u VALUES (2, 'x', 'y')")
	other.ok("DROP TABLE unrelated")
	other.ok("ALTER TABLE u ALTER COLUMN v SET DEFAULT 'd'")
	if _, err := h.run("INSERT INTO t VALUES (3, 'c')"); err == nil || !strings.Contains(err.Error(), "schema changed") {
		t.Fatalf("write after an ALTER of a written table: %v, want 40001", err)
	}
	h.ok("ROLLBACK")
	h.wantQuery("SELECT count(*) FROM u", "1")

	// So does a transformation that now maintains it (R12.3).
	h.ok("CREATE TABLE ev (k INT64 NOT NULL, v INT64 NOT NULL) MODE APPEND")
	h.ok("CREATE TABLE tot (k INT64 NOT NULL, n INT64 NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("BEGIN")
	h.ok("INSERT INTO tot VALUES (1, 5)")
	other.ok("CREATE TRANSFORMATION agg INTO tot AS SELECT k, count(*) AS n FROM ev GROUP BY k")
	if _, err := h.run("COMMIT"); err == nil || !strings.Contains(err.Error(), "schema changed") {
		t.Fatalf("COMMIT of a write to a table a transformation now maintains: %v, want 40001", err)
	}
	h.wantRows("tot")
}

// TestTxnPendingViewReused: queries of a transaction that has stopped
// writing reuse one pending view until something commits or the
// transaction writes again; each sees exactly the writes made before it.
func TestTxnPendingViewReused(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64 NOT NULL, v INT64 NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("BEGIN")
	h.ok("INSERT INTO t VALUES (1, 1)")
	h.wantQuery("SELECT sum(v) FROM t", "1")
	first := h.s.tx.view
	h.wantQuery("SELECT sum(v) FROM t", "1")
	if h.s.tx.view != first {
		t.Errorf("a second query with nothing new built a new pending view")
	}
	for i := 2; i <= 4; i++ {
		h.ok(fmt.Sprintf("INSERT INTO t SELECT k + 1, v + 1 FROM t WHERE k = %d", i-1))
		h.wantQuery("SELECT count(*), sum(v) FROM t", fmt.Sprintf("%d %d", i, i*(i+1)/2))
	}
	if h.s.tx.view == first {
		t.Errorf("the pending view was not rebuilt after new writes")
	}
	h.ok("COMMIT")
	if h.s.tx != nil {
		t.Fatal("transaction still open")
	}
	h.wantRows("t", "1 1", "2 2", "3 3", "4 4")
}
