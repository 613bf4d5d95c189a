package strata_test

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-db/strata"
)

// TestWidenKeyAndOrderingColumns: R8.1 lets ALTER COLUMN TYPE widen a key
// (and so SHARD BY) column and a VALID BY / REVISION BY column. Rows written
// before the ALTER — in memtables and in flushed parts — keep their key, their
// shard and their order against rows written after it, at every commit and
// across a restart.
func TestWidenKeyAndOrderingColumns(t *testing.T) {
	dir := t.TempDir()
	// A tiny memtable: every commit is flushed to a part, so the old rows are
	// read back from files written at the old width.
	open := func() (*strata.DB, *strata.Session) {
		db, err := strata.Open(dir, strata.Options{MemtableBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		return db, db.NewSession()
	}
	db, s := open()
	ctx := context.Background()
	run := func(s *strata.Session, sql string) *strata.Result {
		t.Helper()
		r, err := s.Run(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return r
	}
	rows := func(s *strata.Session, sql string) string {
		t.Helper()
		var b strings.Builder
		for _, r := range run(s, sql).Rows {
			for i, v := range r {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(v.String())
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	run(s, `CREATE TABLE w (k INT32 NOT NULL, v STRING NULL, vi INT32 NULL, rev UINT64 NULL,
		PRIMARY KEY (k), ATTRIBUTE GROUP g (v, vi, rev) VALID BY (vi) REVISION BY (rev))
		MODE VERSIONED SHARDS 4`) // commit 1
	run(s, `UPSERT INTO w (k, v, vi, rev) VALUES (1, 'a', 10, 5), (-7, 'b', 10, 5), (2147483647, 'c', 1, 1)`) // 2
	run(s, `ALTER TABLE w ALTER COLUMN k TYPE INT64`)                                                         // 3
	run(s, `ALTER TABLE w ALTER COLUMN rev TYPE UINT128`)                                                     // 4
	run(s, `ALTER TABLE w ALTER COLUMN vi TYPE INT64`)                                                        // 5
	run(s, `UPSERT INTO w (k, v, vi, rev) VALUES (1, 'late', 10, 4), (-7, 'b2', 10, 18446744073709551616),
		(1099511627776, 'wide', 1, 1), (2147483647, 'c2', 4294967296, 0)`) // 6
	want := map[string]string{
		"SELECT k, v, vi, rev FROM w ORDER BY k":                         "-7 b2 10 18446744073709551616\n1 a 10 5\n2147483647 c2 4294967296 0\n1099511627776 wide 1 1\n",
		"SELECT k, v FROM w AS OF COMMIT 2 ORDER BY k":                   "-7 b\n1 a\n2147483647 c\n",
		"SELECT v FROM w WHERE k = 1":                                    "a\n",
		"SELECT v FROM w WHERE k = -7":                                   "b2\n",
		"SELECT v, _state FROM versions(w) WHERE k = 1 ORDER BY _commit": "a current\nlate late\n",
		"SELECT count(*) FROM w":                                         "4\n",
	}
	check := func(s *strata.Session) {
		t.Helper()
		for q, w := range want {
			if got := rows(s, q); got != w {
				t.Errorf("%s:\ngot\n%swant\n%s", q, got, w)
			}
		}
	}
	check(s)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, s = open()
	defer db.Close()
	check(s)
	// A DECIMAL key's scale would change its stored encoding: refused.
	run(s, `CREATE TABLE dk (d DECIMAL(10, 2) NOT NULL, PRIMARY KEY (d)) MODE UPSERT`)
	if _, err := s.Run(ctx, `ALTER TABLE dk ALTER COLUMN d TYPE DECIMAL(12, 4)`); err == nil || !strings.Contains(err.Error(), "key, SHARD BY or ordering column") {
		t.Errorf("DECIMAL key scale change: %v", err)
	}
}
