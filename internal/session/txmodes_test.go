package session

import (
	"strings"
	"testing"
)

// show returns SHOW name's one value.
func (h *harness) show(name string) string {
	h.t.Helper()
	res := h.ok("SHOW " + name)
	return res.Rows[0][0].Str()
}

func (h *harness) wantShow(name, want string) {
	h.t.Helper()
	if got := h.show(name); got != want {
		h.t.Errorf("SHOW %s = %q, want %q", name, got, want)
	}
}

// TestReadOnlyTransaction: READ ONLY refuses every write and DDL with
// 25006, as PostgreSQL does, and reads still run; COMMIT takes no commit
// (R5.1: a failed statement writes nothing).
func TestReadOnlyTransaction(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k BIGINT, v TEXT, PRIMARY KEY (k))")
	h.ok("INSERT INTO t VALUES (1, 'a')")
	h.ok("BEGIN READ ONLY")
	h.wantShow("transaction_read_only", "on")
	h.fails("INSERT INTO t VALUES (2, 'b')", "25006", "cannot execute INSERT in a read-only transaction")
	h.ok("ROLLBACK")
	h.wantShow("transaction_read_only", "off")

	for _, c := range []struct{ sql, cmd string }{
		{"UPSERT INTO t VALUES (2, 'b')", "UPSERT"},
		{"UPDATE t SET v = 'x' WHERE k = 1", "UPDATE"},
		{"DELETE FROM t WHERE k = 1", "DELETE"},
		{"CREATE TABLE u (k BIGINT, PRIMARY KEY (k))", "CREATE TABLE"},
		{"DROP TABLE t", "DROP TABLE"},
	} {
		h.ok("START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY")
		h.fails(c.sql, "25006", "cannot execute "+c.cmd+" in a read-only transaction")
		h.ok("COMMIT")
	}
	h.wantRows("t", "1 a")

	// SET TRANSACTION READ ONLY after a write is allowed, and then refuses
	// the next one; the buffered write is still committed.
	h.ok("BEGIN READ WRITE")
	h.ok("INSERT INTO t VALUES (3, 'c')")
	h.ok("SET TRANSACTION READ ONLY")
	h.fails("INSERT INTO t VALUES (4, 'd')", "25006", "read-only")
	h.ok("ROLLBACK")
	h.wantRows("t", "1 a")

	h.ok("BEGIN")
	h.ok("SET TRANSACTION READ ONLY")
	h.ok("SET TRANSACTION READ WRITE") // nothing ran yet
	h.ok("INSERT INTO t VALUES (3, 'c')")
	if res := h.ok("COMMIT"); res.Commit == 0 {
		t.Errorf("COMMIT of a READ WRITE transaction took no commit")
	}
	h.wantRows("t", "1 a", "3 c")
}

// TestTransactionModeSettings: the modes show in transaction_* inside the
// transaction and fall back to the session defaults after it; SET SESSION
// CHARACTERISTICS changes the defaults, and default_transaction_read_only
// makes every statement outside a transaction read-only.
func TestTransactionModeSettings(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k BIGINT, PRIMARY KEY (k))")
	def := h.show("transaction_isolation")
	h.ok("BEGIN ISOLATION LEVEL REPEATABLE READ DEFERRABLE")
	h.wantShow("transaction_isolation", "repeatable read")
	h.wantShow("transaction_deferrable", "on")
	h.ok("COMMIT")
	h.wantShow("transaction_isolation", def)
	h.wantShow("transaction_deferrable", "off")

	// SET TRANSACTION outside a transaction has no effect (PostgreSQL
	// warns).
	h.ok("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
	h.wantShow("transaction_isolation", def)

	h.ok("BEGIN")
	h.ok("SET statement_timeout = 0") // takes no snapshot: the level may still change
	h.ok("SHOW transaction_isolation")
	h.ok("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
	h.ok("SELECT 1")
	h.wantShow("transaction_isolation", "read committed")
	h.fails("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "25001", "must be called before any query")
	h.ok("ROLLBACK")

	h.ok("BEGIN READ ONLY")
	h.ok("SELECT 1")
	h.fails("SET TRANSACTION READ WRITE", "25001", "read-write mode must be set before any query")
	h.ok("ROLLBACK")

	h.ok("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY")
	h.wantShow("default_transaction_isolation", "read committed")
	h.wantShow("transaction_isolation", "read committed")
	h.fails("INSERT INTO t VALUES (1)", "25006", "read-only")
	h.ok("BEGIN")
	h.wantShow("transaction_read_only", "on")
	h.ok("ROLLBACK")
	h.ok("BEGIN READ WRITE")
	h.ok("INSERT INTO t VALUES (1)")
	h.ok("COMMIT")
	h.wantRows("t", "1")

	h.ok("SET default_transaction_read_only = off")
	h.ok("INSERT INTO t VALUES (2)")
	h.ok("SET transaction_isolation = 'repeatable read'") // outside a transaction: no effect
	h.wantShow("transaction_isolation", "read committed")
	h.fails("SET default_transaction_isolation = 'snapshot'", "22023", "invalid value")
	h.fails("SET default_transaction_read_only = maybe", "22023", "Boolean")
	h.wantRows("t", "1", "2")
}

// TestSetConfig: set_config is SET [LOCAL] as a function, with SET's
// errors, returning the new value; LOCAL ends with the transaction.
func TestSetConfig(t *testing.T) {
	h := newHarness(t)
	res := h.ok("SELECT set_config('app.x', 'one', false), current_setting('app.x')")
	if got := res.Rows[0][0].Str() + " " + res.Rows[0][1].Str(); got != "one one" {
		t.Errorf("set_config = %q", got)
	}
	h.wantShow("app.x", "one")
	h.ok("BEGIN")
	h.ok("SELECT set_config('app.x', 'two', true)")
	h.wantShow("app.x", "two")
	h.ok("COMMIT")
	h.wantShow("app.x", "one")
	h.ok("SELECT set_config('app.x', NULL, NULL)")
	h.wantShow("app.x", "")
	h.ok("SELECT set_config('transaction_read_only', 'on', false)") // no transaction: no effect
	h.ok("CREATE TABLE t (k BIGINT, PRIMARY KEY (k))")
	h.ok("INSERT INTO t VALUES (1)")
	h.fails("SELECT set_config('nope', 'x', false)", "42704", "unrecognized configuration parameter")
	h.fails("SELECT set_config('server_version', 'x', false)", "55P02", "cannot be changed")
	h.fails("SELECT set_config('statement_timeout', 'soon', false)", "22023", "invalid value")
	h.fails("SELECT set_config(NULL, 'x', false)", "22004", "SET requires parameter name")
	h.fails("SELECT set_config('a.b', 'x')", "42883", "set_config")
}

// TestColumnNames: result columns are named as PostgreSQL names them
// (FigureColname), operators and literals ?column?.
func TestColumnNames(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (n BIGINT, s TEXT, PRIMARY KEY (n))")
	res := h.ok(`SELECT n + 1, n, t.s, (n), -n, 1, 'a', NULL, n IS NULL, upper(s), n::text, 1::int,
		CASE WHEN n > 1 THEN 1 END, EXISTS (SELECT 1), (SELECT max(n) FROM t), (SELECT n AS q FROM t LIMIT 1),
		s ~ 'a', 1 = ANY('{1}'), ('{a}'::text[])[1], s COLLATE "C", DATE '2024-01-01', n AS alias FROM t`)
	var got []string
	for _, c := range res.Columns {
		got = append(got, c.Name)
	}
	want := "?column? n s n ?column? ?column? ?column? ?column? ?column? upper n int4 case exists max q ?column? ?column? text s date alias"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("column names\n got %s\nwant %s", g, want)
	}
}

// TestTimeoutStopsTableFunction checks that statement_timeout stops a
// query over a huge generate_series between its batches (R13.1: cancel
// and timeouts work for every query), where it ran to the end before.
func TestTimeoutStopsTableFunction(t *testing.T) {
	h := newHarness(t)
	h.ok("SET statement_timeout = 100")
	// Without the check between batches this runs for hours.
	h.fails("SELECT count(*) FROM generate_series(1, 100000000000)", "57014", "statement timeout")
}
