package session

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// harness is a session on a fresh engine. Its reads go straight to the
// snapshot, so these tests exercise DDL and writes without the planner.
type harness struct {
	t   *testing.T
	eng *storage.Engine
	s   *Session
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	eng, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return &harness{t: t, eng: eng, s: New(eng, Options{})}
}

func (h *harness) run(sql string, params ...types.Value) (*Result, error) {
	h.t.Helper()
	stmt, err := parser.Parse(sql)
	if err != nil {
		h.t.Fatalf("parse %q: %v", sql, err)
	}
	return h.s.Execute(context.Background(), stmt, sql, params)
}

func (h *harness) ok(sql string, params ...types.Value) *Result {
	h.t.Helper()
	res, err := h.run(sql, params...)
	if err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
	return res
}

// peer returns a harness with a session of its own on h's engine: another
// client beside h's.
func (h *harness) peer() *harness {
	return &harness{t: h.t, eng: h.eng, s: New(h.eng, Options{})}
}

// fails runs sql and checks that it fails with code and a message holding
// every one of words.
func (h *harness) fails(sql, code string, words ...string) *sqlerr.Error {
	h.t.Helper()
	before := h.eng.LastCommit()
	_, err := h.run(sql)
	if err == nil {
		h.t.Fatalf("%s: succeeded, want error %s", sql, code)
	}
	e, ok := sqlerr.As(err)
	if !ok {
		h.t.Fatalf("%s: error %T %v is not an *sqlerr.Error", sql, err, err)
	}
	if code != "" && e.Code != code {
		h.t.Errorf("%s: code %s, want %s (%v)", sql, e.Code, code, err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			h.t.Errorf("%s: error %q does not mention %q", sql, err, w)
		}
	}
	if after := h.eng.LastCommit(); after != before {
		h.t.Errorf("%s: a failed statement took commit %d", sql, after)
	}
	return e
}

// table returns the current rows of a table as canonical text, one line
// per row, values separated by spaces, in the engine's scan order.
func (h *harness) table(name string) []string {
	h.t.Helper()
	snap := h.eng.Snapshot()
	defer snap.Release()
	tab, ok := snap.Catalog().Table(name)
	if !ok {
		h.t.Fatalf("no table %s", name)
	}
	ids := make([]catalog.ColumnID, len(tab.Columns))
	for i, c := range tab.Columns {
		ids[i] = c.ID
	}
	var out []string
	_, err := snap.Scan(context.Background(), storage.ScanSpec{Table: tab.ID, Cols: ids}, func(b *types.Batch) error {
		for i := 0; i < b.Rows; i++ {
			var parts []string
			for _, v := range b.Row(nil, i) {
				if v.IsNull() {
					parts = append(parts, "NULL")
				} else {
					parts = append(parts, string(types.AppendText(nil, v)))
				}
			}
			out = append(out, strings.Join(parts, " "))
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) wantRows(name string, want ...string) {
	h.t.Helper()
	got := h.table(name)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Errorf("table %s:\n got %q\nwant %q", name, got, want)
	}
}

func TestInsertAndGroups(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE TABLE acct (id INT64 NOT NULL, bal INT64, bal_idx INT64, score INT64, score_idx INT64, note STRING,
		PRIMARY KEY (id), ATTRIBUTE GROUP money (bal, bal_idx) VALID BY (bal_idx),
		ATTRIBUTE GROUP risk (score, score_idx) VALID BY (score_idx)) MODE VERSIONED`)
	if r := h.ok(`UPSERT INTO acct (id, bal, bal_idx) VALUES (1, 100, 10) ATTRIBUTE GROUP money`); r.Tag != "UPSERT 1" || r.Commit != 2 {
		t.Errorf("tag %q commit %d", r.Tag, r.Commit)
	}
	h.ok(`UPSERT INTO acct (id, bal, bal_idx) VALUES (1, 50, 9) ATTRIBUTE GROUP money`)
	h.ok(`UPSERT INTO acct (id, score, score_idx) VALUES (1, 8, 6) ATTRIBUTE GROUP risk`)
	h.wantRows("acct", "1 100 10 8 6 NULL")
	h.fails(`UPSERT INTO acct (id, score, score_idx) VALUES (1, 1, 1) ATTRIBUTE GROUP money`, "", "score", "risk")
	h.fails(`UPSERT INTO acct (id, bal) VALUES (1, 5) ATTRIBUTE GROUP money`, "", "bal_idx", "money")
	h.fails(`UPSERT INTO acct (bal, bal_idx) VALUES (5, 1) ATTRIBUTE GROUP money`, "", "id")
	h.fails(`UPSERT INTO acct (id, bal, bal_idx) VALUES (1, 5, 1) ATTRIBUTE GROUP nosuch`, "", "nosuch")
	h.fails(`UPSERT INTO acct (id, bal, bal_idx) VALUES (1, 5, NULL)`, "23502", "bal_idx", "money")
	h.fails(`UPSERT INTO acct (id, bal, score) VALUES (1, 5, 6)`, "23502", "money", "bal_idx", "ATTRIBUTE GROUP")
	// without the clause a write is split by group
	h.ok(`UPSERT INTO acct (id, bal, bal_idx, score, score_idx, note) VALUES (2, 20, 1, 2, 1, 'x')`)
	// a key-only write makes the key exist
	h.ok(`INSERT INTO acct (id) VALUES (3)`)
	h.wantRows("acct", "1 100 10 8 6 NULL", "2 20 1 2 1 x", "3 NULL NULL NULL NULL NULL")
}

func TestInsertCastsAndAtomicity(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE TABLE small (k UINT8 NOT NULL, v STRING, ts DATETIME64(3, 'UTC'), ok BOOL, PRIMARY KEY (k))`)
	h.fails(`INSERT INTO small VALUES (1, 'ok'), (300, 'too big')`, "22003", "300", "UINT8", "k")
	h.fails(`INSERT INTO small (k, ts) VALUES (4, 'yesterday')`, "22007", "ts")
	h.fails(`INSERT INTO small (k, v) VALUES (115792089237316195423570985008687907853269984665640564039457584007913129639936, 'x')`, "22003", "k")
	h.fails(`INSERT INTO small (k, v) VALUES (-115792089237316195423570985008687907853269984665640564039457584007913129639936, 'x')`, "22003", "k")
	h.fails(`INSERT INTO small (k, ok) VALUES (4, 'maybe')`, "", "ok")
	h.fails(`INSERT INTO small (v) VALUES ('x')`, "23502", "k")
	h.fails(`INSERT INTO small (k, nosuch) VALUES (1, 2)`, "42703", "nosuch")
	h.fails(`INSERT INTO small (k, k) VALUES (1, 2)`, "42701")
	h.fails(`INSERT INTO small VALUES (1, 'a', NULL, true, 5)`, "42601")
	h.fails(`INSERT INTO small (k, v) VALUES (1)`, "42601")
	h.wantRows("small")
	if r := h.ok(`INSERT INTO small VALUES (2, 'b', '2026-10-01 12:00:00.5', true), (1, 'a', NULL, DEFAULT)`); r.Tag != "INSERT 0 2" {
		t.Errorf("tag %q", r.Tag)
	}
	h.ok(`INSERT INTO small (k, v) VALUES ($1, $2)`, types.NewInt64(3), types.NewString("c"))
	h.wantRows("small", "1 a NULL NULL", "2 b 2026-10-01 12:00:00.500 true", "3 c NULL NULL")
}

func TestAppendTables(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE TABLE ev (ts INT64 NOT NULL, kind STRING DEFAULT 'login', n INT64) MODE APPEND`)
	h.ok(`INSERT INTO ev (ts) VALUES (1), (1)`)
	h.fails(`UPSERT INTO ev (ts) VALUES (2)`, "42809", "append", "keyed table")
	h.fails(`UPDATE ev SET n = 2`, "42809", "append")
	h.fails(`DELETE FROM ev`, "42809", "append")
	h.fails(`INSERT INTO ev (n) VALUES (2)`, "23502", "ts")
	h.fails(`INSERT INTO ev (ts) VALUES (1) ATTRIBUTE GROUP g`, "42704")
	h.wantRows("ev", "1 login NULL", "1 login NULL")
}

func TestTransactions(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE TABLE kv (k STRING NOT NULL, v INT64, PRIMARY KEY (k))`)
	h.ok(`BEGIN`)
	if r := h.ok(`INSERT INTO kv VALUES ('a', 1)`); r.Commit != 0 {
		t.Errorf("a write inside a transaction took commit %d", r.Commit)
	}
	h.ok(`INSERT INTO kv VALUES ('b', 2)`)
	h.wantRows("kv")
	h.fails(`CREATE TABLE x (a INT64 NOT NULL, PRIMARY KEY (a))`, "0A000", "transaction")
	if _, err := h.run(`INSERT INTO kv VALUES ('c', 3)`); err == nil || sqlerr.CodeOf(err) != "25P02" {
		t.Errorf("after a failure inside a transaction: %v, want 25P02", err)
	}
	if r := h.ok(`COMMIT`); r.Tag != "ROLLBACK" {
		t.Errorf("COMMIT of an aborted transaction: %q", r.Tag)
	}
	h.wantRows("kv")
	h.ok(`BEGIN`)
	h.ok(`INSERT INTO kv VALUES ('a', 1)`)
	h.ok(`INSERT INTO kv VALUES ('b', 2)`)
	r := h.ok(`COMMIT`)
	if r.Commit != 2 || h.s.LastCommit() != 2 {
		t.Errorf("COMMIT took %d, last commit %d; want one commit, 2", r.Commit, h.s.LastCommit())
	}
	h.wantRows("kv", "a 1", "b 2")
	h.ok(`BEGIN`)
	h.ok(`INSERT INTO kv VALUES ('z', 1)`)
	h.ok(`ROLLBACK`)
	h.wantRows("kv", "a 1", "b 2")
	if c := h.eng.LastCommit(); c != 2 {
		t.Errorf("rollback took a commit: %d", c)
	}
}

// Through the real planner: EXPLAIN, last_commit(), INSERT … SELECT with a
// computed column, and a query inside a transaction seeing its own delete.
func TestQueries(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE TABLE kv (k STRING NOT NULL, v INT64, PRIMARY KEY (k))`)
	h.ok(`INSERT INTO kv VALUES ('a', 1), ('b', 2)`)
	r := h.ok(`EXPLAIN SELECT v FROM kv WHERE k = 'a'`)
	if r.Tag != "EXPLAIN" || len(r.Columns) != 1 || r.Columns[0].Name != "QUERY PLAN" || len(r.Rows) == 0 {
		t.Errorf("EXPLAIN: %q %+v %d rows", r.Tag, r.Columns, len(r.Rows))
	}
	r = h.ok(`SELECT last_commit(), current_commit()`)
	if got := string(types.AppendText(nil, r.Rows[0][0])) + " " + string(types.AppendText(nil, r.Rows[0][1])); got != "2 2" {
		t.Errorf("last_commit(), current_commit() = %s", got)
	}
	h.ok(`INSERT INTO kv (k, v) SELECT k || 'x', v * 10 FROM kv`)
	h.ok(`INSERT INTO kv VALUES ('c', 1 + 2), ('d', abs(-4))`)
	h.wantRows("kv", "a 1", "ax 10", "b 2", "bx 20", "c 3", "d 4")
	h.ok(`BEGIN`)
	h.ok(`DELETE FROM kv WHERE v > 5`)
	if r := h.ok(`SELECT count(*) FROM kv`); string(types.AppendText(nil, r.Rows[0][0])) != "4" {
		t.Errorf("a read inside the transaction did not see its pending delete")
	}
	h.ok(`COMMIT`)
	h.wantRows("kv", "a 1", "b 2", "c 3", "d 4")
	h.fails(`SELECT nosuch FROM kv`, "42703", "nosuch")
	h.fails(`INSERT INTO kv VALUES ('e', 1 / 0)`, "22012")
}
