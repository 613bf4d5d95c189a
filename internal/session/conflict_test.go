package session

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// concurrently runs each of sqls n times in its own session, all at once,
// and fails the test on any error.
func concurrently(h *harness, n int, sqls ...string) {
	h.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(sqls))
	for _, sql := range sqls {
		other := &harness{t: h.t, eng: h.eng, s: New(h.eng, Options{})}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := other.run(sql); err != nil {
					errs <- fmt.Errorf("%s: %w", sql, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		h.t.Error(err)
	}
}

// TestConcurrentUpdatesLoseNothing: sessions incrementing one key at once
// each see the others' commits (no lost update), whatever the group's
// ordering (R5.3): the statement that lost the race runs again.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE ctr (k INT64 NOT NULL, v INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("CREATE TABLE vctr (k INT64 NOT NULL, v INT64 NOT NULL, ix INT64 NOT NULL, PRIMARY KEY (k), ATTRIBUTE GROUP g (v, ix) VALID BY (ix)) MODE VERSIONED")
	h.ok("INSERT INTO ctr VALUES (1, 0), (2, 0)")
	h.ok("INSERT INTO vctr VALUES (1, 0, 0)")
	const sessions, each = 6, 40
	var sqls []string
	for i := range sessions {
		sqls = append(sqls, "UPDATE ctr SET v = v + 1 WHERE k = 1")
		if i%2 == 0 {
			sqls = append(sqls, "UPDATE vctr SET v = v + 1, ix = ix + 1")
		} else {
			sqls = append(sqls, "WITH u AS (UPDATE ctr SET v = v + 10 WHERE k = 2 RETURNING v) SELECT * FROM u")
		}
	}
	concurrently(h, each, sqls...)
	h.wantQuery("SELECT v FROM ctr ORDER BY k", fmt.Sprintf("%d\n%d", sessions*each, sessions/2*each*10))
	h.wantQuery("SELECT v, ix FROM vctr", fmt.Sprintf("%d %d", sessions/2*each, sessions/2*each))
}

// TestConcurrentOnConflictDoNothing: of sessions inserting one new key
// with ON CONFLICT DO NOTHING at once, exactly one inserts it (INSERT 0 1)
// and the others find it there (INSERT 0 0).
func TestConcurrentOnConflictDoNothing(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64 NOT NULL, who STRING NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("CREATE TABLE claims (k INT64 NOT NULL, who STRING NOT NULL, n INT64 NOT NULL) MODE APPEND")
	// Each session claims keys 1..40 with ON CONFLICT DO NOTHING and, if
	// its INSERT inserted, records the claim: every key has exactly one
	// claimant, the one the table names.
	const sessions, keys = 4, 40
	var wg sync.WaitGroup
	for i := range sessions {
		other := h.peer()
		who := fmt.Sprintf("s%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 1; k <= keys; k++ {
				res, err := other.run(fmt.Sprintf("INSERT INTO t VALUES (%d, '%s') ON CONFLICT (k) DO NOTHING", k, who))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := other.run(fmt.Sprintf("INSERT INTO claims VALUES (%d, '%s', %d)", k, who, res.RowsAffected)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	h.wantQuery("SELECT count(*) FROM claims WHERE n = 1", fmt.Sprint(keys))
	h.wantQuery("SELECT count(*) FROM claims c JOIN t ON t.k = c.k WHERE c.n = 1 AND c.who <> t.who", "0")
}

// TestTransactionConflict: a transaction whose UPDATE read a key another
// commit wrote before its COMMIT fails with 40001 and writes nothing; one
// whose keys nobody wrote commits, whatever else committed meanwhile.
func TestTransactionConflict(t *testing.T) {
	h := newHarness(t)
	other := h.peer()
	h.ok("CREATE TABLE acct (k INT64 NOT NULL, bal INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("INSERT INTO acct VALUES (1, 100), (2, 100), (3, 100)")

	h.ok("BEGIN")
	h.ok("UPDATE acct SET bal = bal - 10 WHERE k = 1")
	h.ok("UPDATE acct SET bal = bal + 10 WHERE k = 2")
	other.ok("UPDATE acct SET bal = bal + 1 WHERE k = 1")
	h.fails("COMMIT", "40001", "could not serialize access due to concurrent update")
	h.wantQuery("SELECT bal FROM acct ORDER BY k", "101\n100\n100")

	// Blind writes of the same key by others (UPSERT, ingest) conflict
	// too: the UPDATE's value was computed from what they replaced.
	h.ok("BEGIN")
	h.ok("UPDATE acct SET bal = bal - 10 WHERE k = 1")
	other.ok("INSERT INTO acct VALUES (1, 500)")
	if _, err := h.run("COMMIT"); err == nil || !strings.Contains(err.Error(), "40001") && !strings.Contains(err.Error(), "serialize") {
		t.Fatalf("COMMIT after a concurrent upsert of its key: %v, want 40001", err)
	}
	h.wantQuery("SELECT bal FROM acct WHERE k = 1", "500")

	// Other keys, other tables and plain INSERTs do not conflict.
	h.ok("BEGIN")
	h.ok("UPDATE acct SET bal = bal - 10 WHERE k = 1")
	h.ok("INSERT INTO acct VALUES (3, 7)")
	other.ok("UPDATE acct SET bal = bal + 1 WHERE k = 2")
	other.ok("INSERT INTO acct VALUES (3, 8)")
	other.ok("CREATE TABLE elsewhere (k INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("COMMIT")
	h.wantQuery("SELECT bal FROM acct ORDER BY k", "490\n101\n7")

	// A DELETE in a transaction is checked as an UPDATE is, and a
	// ROLLBACK leaves nothing open.
	h.ok("BEGIN")
	h.ok("DELETE FROM acct WHERE k = 2")
	other.ok("UPDATE acct SET bal = 0 WHERE k = 2")
	h.ok("ROLLBACK")
	h.ok("BEGIN")
	h.ok("DELETE FROM acct WHERE k = 2")
	h.ok("COMMIT")
	h.wantQuery("SELECT k FROM acct ORDER BY k", "1\n3")
	if n := h.eng.OpenWatches(); n != 0 {
		t.Errorf("%d Watches open after every statement and transaction ended", n)
	}
}

// TestSelectForUpdate: inside a transaction the rows SELECT … FOR UPDATE
// returned are checked at COMMIT as an UPDATE's keys are, so the
// read-compute-write of an application loses no update; outside one the
// clause changes nothing. Its errors are PostgreSQL's.
func TestSelectForUpdate(t *testing.T) {
	h := newHarness(t)
	other := h.peer()
	h.ok("CREATE TABLE acct (k INT64 NOT NULL, bal INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("CREATE TABLE log (k INT64 NOT NULL, note STRING NOT NULL) MODE APPEND")
	h.ok("INSERT INTO acct VALUES (1, 100), (2, 100), (3, 100)")

	h.wantQuery("SELECT bal FROM acct WHERE k = 1 FOR UPDATE", "100")
	h.ok("BEGIN")
	h.wantQuery("SELECT bal FROM acct WHERE k = 1 FOR UPDATE", "100")
	other.ok("UPDATE acct SET bal = bal + 5 WHERE k = 1")
	h.ok("INSERT INTO acct VALUES (1, 90)") // computed from the 100 read
	h.ok("INSERT INTO log VALUES (1, 'withdrew 10')")
	h.fails("COMMIT", "40001", "could not serialize access due to concurrent update")
	h.wantQuery("SELECT bal FROM acct WHERE k = 1", "105")
	h.wantRows("log")

	// Only the rows returned count: ORDER BY by position, LIMIT and OF.
	h.ok("BEGIN")
	h.wantQuery("SELECT a.k, b.k FROM acct a JOIN acct b ON b.k = a.k + 1 ORDER BY 1 DESC LIMIT 1 FOR UPDATE OF a", "2 3")
	other.ok("UPDATE acct SET bal = 0 WHERE k = 1")
	other.ok("UPDATE acct SET bal = 0 WHERE k = 3") // b is not locked
	h.ok("UPDATE acct SET bal = bal + 1 WHERE k = 2")
	h.ok("COMMIT")
	h.ok("BEGIN")
	h.wantQuery("SELECT k FROM acct ORDER BY bal DESC, k LIMIT 1 FOR SHARE SKIP LOCKED", "2")
	other.ok("UPDATE acct SET bal = 7 WHERE k = 2")
	h.ok("INSERT INTO log VALUES (2, 'x')")
	h.fails("COMMIT", "40001", "could not serialize access due to concurrent update")
	// ROLLBACK TO drops what was read for update since the savepoint.
	h.ok("BEGIN")
	h.ok("SAVEPOINT s")
	h.wantQuery("SELECT k FROM acct WHERE k = 3 FOR UPDATE", "3")
	h.ok("ROLLBACK TO SAVEPOINT s")
	other.ok("UPDATE acct SET bal = 8 WHERE k = 3")
	h.ok("INSERT INTO log VALUES (3, 'y')")
	h.ok("COMMIT")
	h.wantQuery("SELECT count(*) FROM log", "1")

	for _, c := range []struct{ sql, want string }{
		{"SELECT count(*) FROM acct FOR UPDATE", "FOR UPDATE is not allowed with aggregate functions"},
		{"SELECT DISTINCT bal FROM acct FOR SHARE", "FOR SHARE is not allowed with DISTINCT clause"},
		{"SELECT bal FROM acct GROUP BY bal FOR UPDATE", "FOR UPDATE is not allowed with GROUP BY clause"},
		{"SELECT k FROM acct UNION SELECT k FROM acct FOR UPDATE", "FOR UPDATE is not allowed with UNION/INTERSECT/EXCEPT"},
		{"SELECT k FROM acct FOR UPDATE OF nope", `relation "nope" in FOR UPDATE clause not found in FROM clause`},
		{"SELECT k FROM acct AS OF COMMIT 2 FOR UPDATE", "FOR UPDATE is not allowed with AS OF"},
		{"SELECT k FROM acct ORDER BY k AS OF COMMIT 2 FOR UPDATE", "FOR UPDATE is not allowed with AS OF"},
	} {
		if _, err := h.run(c.sql); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.sql, err, c.want)
		}
	}
	if n := h.eng.OpenWatches(); n != 0 {
		t.Errorf("%d Watches open after every transaction ended", n)
	}
}

// TestUpdateUnderIngest: an UPDATE of many keys that ingest keeps writing
// in the same attribute group loses the race for them every time it runs
// optimistically; after a few runs it holds the other commits off and
// commits. Ingest of another group of the same keys is no race at all
// (R4: groups are versioned apart).
func TestUpdateUnderIngest(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE e (k INT64 NOT NULL, v INT64 NULL, n INT64 NULL, PRIMARY KEY (k), ATTRIBUTE GROUP feed (v), ATTRIBUTE GROUP mark (n)) MODE VERSIONED")
	h.ok("INSERT INTO e SELECT k, 0, 0 FROM generate_series(1, 20000) AS g(k)")
	ingest := func(group string) (stop func()) {
		done := make(chan struct{})
		var wg sync.WaitGroup
		var batches atomic.Int64
		for w := range 4 {
			in := h.peer()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 1; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					col := map[string]string{"feed": "v", "mark": "n"}[group]
					if _, err := in.run(fmt.Sprintf("INSERT INTO e (k, %s) SELECT k, -1 FROM generate_series(%d, 20000, 97) AS g(k)", col, 1+(i*4+w)%97)); err != nil {
						t.Error(err)
						return
					}
					batches.Add(1)
				}
			}()
		}
		for batches.Load() < 8 {
			time.Sleep(time.Millisecond)
		}
		return func() { close(done); wg.Wait() }
	}

	stop := ingest("feed")
	for range 3 {
		h.ok("UPDATE e SET n = n + 1")
	}
	stop()
	h.wantQuery("SELECT count(*), min(n), max(n) FROM e", "20000 3 3")
	if s := h.eng.Stats(); s.Conflicts != 0 {
		t.Errorf("%d conflicts between an UPDATE of one group and ingest of another", s.Conflicts)
	}

	stop = ingest("mark")
	for range 3 {
		if res := h.ok("UPDATE e SET n = 7"); res.RowsAffected != 20000 {
			t.Errorf("UPDATE beside ingest of its group: %s", res.Tag)
		}
	}
	stop()
	if s := h.eng.Stats(); s.Conflicts == 0 || s.Exclusives == 0 {
		t.Logf("conflicts %d, exclusive runs %d: the machine let the UPDATEs through unraced", s.Conflicts, s.Exclusives)
	}
}

// TestTransformationGroupNoConflict: a transformation's commits to the
// group it maintains (R12.3) do not outdate a transaction's UPDATE of
// another group of the same key.
func TestTransformationGroupNoConflict(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE acct (k INT64 NOT NULL, bal INT64 NOT NULL, n INT64, PRIMARY KEY (k), ATTRIBUTE GROUP act (n)) MODE UPSERT")
	h.ok("CREATE TABLE ev (k INT64 NOT NULL, at INT64 NOT NULL) MODE APPEND")
	h.ok("INSERT INTO acct (k, bal) VALUES (1, 100)")
	h.ok("CREATE TRANSFORMATION cnt INTO acct ATTRIBUTE GROUP act AS SELECT k, count(*) AS n FROM ev GROUP BY k")
	for range 8 {
		h.ok("INSERT INTO ev VALUES (1, 0)")
		h.ok("BEGIN")
		h.ok("UPDATE acct SET bal = bal + 1 WHERE k = 1")
		time.Sleep(20 * time.Millisecond) // the transformation catches up meanwhile
		h.ok("COMMIT")
	}
	h.ok("SYNC TRANSFORMATIONS")
	h.wantQuery("SELECT bal, n FROM acct", "108 8")
}

// TestForUpdateSameRows: the keys checked are those of the very rows
// returned, also when another run would pick others (random()), and when
// the rows are streamed to a client (ExecuteTo), which sees its own
// columns only.
func TestForUpdateSameRows(t *testing.T) {
	h := newHarness(t)
	other := h.peer()
	h.ok("CREATE TABLE acct (k INT64 NOT NULL, bal INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
	h.ok("INSERT INTO acct SELECT k, 100 FROM generate_series(1, 20) AS g(k)")
	for i := range 10 {
		h.ok("BEGIN")
		var k, bal string
		if i%2 == 0 {
			res := h.ok("SELECT k, bal FROM acct ORDER BY random() LIMIT 1 FOR UPDATE")
			k, bal = res.Rows[0][0].String(), res.Rows[0][1].String()
			if len(res.Columns) != 2 {
				t.Fatalf("columns %v, want k and bal", res.Columns)
			}
		} else {
			sink := &recordSink{}
			if _, err := h.runTo("SELECT k, bal FROM acct ORDER BY random() LIMIT 1 FOR UPDATE", sink); err != nil {
				t.Fatal(err)
			}
			if len(sink.cols) != 2 || len(sink.rows) != 1 {
				t.Fatalf("streamed columns %v rows %v, want k and bal, one row", sink.cols, sink.rows)
			}
			k = sink.rows[0]
			bal = "100"
		}
		other.ok("UPDATE acct SET bal = bal + 1 WHERE k = " + k)
		h.ok("UPDATE acct SET bal = " + bal + " - 1 WHERE k = " + k)
		h.fails("COMMIT", "40001", "could not serialize access due to concurrent update")
	}
}

// TestOnConflictAcrossGroups: ON CONFLICT asks whether the key exists at
// all, so a write of another group of the key races it.
func TestOnConflictAcrossGroups(t *testing.T) {
	h := newHarness(t)
	other := h.peer()
	h.ok("CREATE TABLE g (k INT64 NOT NULL, a INT64 NULL, b INT64 NULL, PRIMARY KEY (k), ATTRIBUTE GROUP ga (a), ATTRIBUTE GROUP gb (b)) MODE UPSERT")
	h.ok("BEGIN")
	if res := h.ok("INSERT INTO g (k, a) VALUES (1, 1) ON CONFLICT DO NOTHING"); res.RowsAffected != 1 {
		t.Fatalf("T1: %s", res.Tag)
	}
	if res := other.ok("INSERT INTO g (k, b) VALUES (1, 2) ON CONFLICT DO NOTHING"); res.RowsAffected != 1 {
		t.Fatalf("T2: %s", res.Tag)
	}
	h.fails("COMMIT", "40001", "could not serialize access due to concurrent update")
	h.wantQuery("SELECT k, a, b FROM g", "1 NULL 2")
}

// TestForUpdateRefusals: PostgreSQL's errors for what cannot be locked,
// and Strata's for what would go unchecked inside a transaction.
func TestForUpdateRefusals(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE acct (k INT64 NOT NULL, bal INT64 NOT NULL, PRIMARY KEY (k)) MODE VERSIONED")
	h.ok("CREATE VIEW va AS SELECT k, bal FROM acct")
	h.ok("INSERT INTO acct VALUES (1, 100)")
	h.wantQuery("SELECT bal FROM va FOR UPDATE", "100")
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM versions(acct) FOR UPDATE", "FOR UPDATE cannot be applied to a function in FROM"},
		{"SELECT bal FROM va FOR UPDATE", "FOR UPDATE cannot be applied to a view"},
		{"SELECT x.k FROM (SELECT k FROM acct) x FOR UPDATE", "FOR UPDATE cannot be applied to a subquery"},
		{"WITH c AS (SELECT 1 AS k) SELECT * FROM c FOR UPDATE OF c", "FOR UPDATE cannot be applied to a WITH query"},
		{"SELECT bal FROM acct FOR UPDATE OF nosuch.acct", "FOR UPDATE must specify unqualified relation names"},
	} {
		h.ok("BEGIN")
		if _, err := h.run(c.sql); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.sql, err, c.want)
		}
		h.ok("ROLLBACK")
	}
	h.ok("BEGIN")
	h.wantQuery("SELECT a.bal FROM acct a, (SELECT 1 AS one) x FOR UPDATE OF a", "100")
	h.ok("COMMIT")
}
