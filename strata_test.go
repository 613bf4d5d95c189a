package strata_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/strata-db/strata"
)

func openDB(t *testing.T) (*strata.DB, *strata.Session) {
	t.Helper()
	db, err := strata.Open(t.TempDir(), strata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, db.NewSession()
}

func TestSplitStatements(t *testing.T) {
	got := strata.SplitStatements("SELECT 'a;b'; -- c;\nINSERT INTO t VALUES (1);;  ")
	want := []strata.Statement{{SQL: "SELECT 'a;b'", Offset: 0}, {SQL: "INSERT INTO t VALUES (1)", Offset: 20}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SplitStatements = %+v, want %+v", got, want)
	}
}

func TestErrorsArePositioned(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	_, err := s.Run(ctx, "CREATE TABLE t (a INT64 NOT NULL,\n  b NOSUCH, PRIMARY KEY (a))")
	var e *strata.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not a *strata.Error", err, err)
	}
	if e.Code != "42704" || e.Line != 2 || e.Column != 5 || e.Position != 39 {
		t.Errorf("error %+v: want 42704 at line 2, column 5, position 39", e)
	}
	_, err = s.Run(ctx, "SELEC 1")
	if !errors.As(err, &e) || e.Code != "42601" || e.Line != 1 || e.Column != 1 {
		t.Errorf("syntax error %+v", err)
	}
	if _, err := s.Run(ctx, "SHOW TABLES; SHOW TABLES"); !errors.As(err, &e) || e.Code != "42601" {
		t.Errorf("Run of two statements: %v, want a syntax error", err)
	}
	if _, err := s.Run(ctx, "SHOW TABLES;"); err != nil {
		t.Errorf("Run with a trailing semicolon: %v", err)
	}
}

func TestExecStopsAtFirstError(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	res, err := s.Exec(ctx, `CREATE TABLE kv (k STRING NOT NULL, v UINT8, PRIMARY KEY (k));
		INSERT INTO kv VALUES ('a', 1), ('b', 2);
		INSERT INTO kv VALUES ('c', 300);
		INSERT INTO kv VALUES ('d', 4)`)
	var e *strata.Error
	if !errors.As(err, &e) || e.Code != "22003" || e.Statement != 2 {
		t.Fatalf("Exec error %+v, want 22003 in statement 2", err)
	}
	if len(res) != 2 || res[0].Tag != "CREATE TABLE" || res[1].Tag != "INSERT 0 2" || res[1].RowsAffected != 2 || res[1].Commit != 2 {
		t.Errorf("results before the error: %+v %+v", res[0], res[1])
	}
	if s.LastCommit() != 2 {
		t.Errorf("LastCommit %d, want 2", s.LastCommit())
	}
}

func TestArgsAndValues(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	if _, err := s.Run(ctx, `CREATE TABLE v (k INT64 NOT NULL, u UINT256, f FLOAT64, b BOOL, s STRING, PRIMARY KEY (k))`); err != nil {
		t.Fatal(err)
	}
	max, _ := new(big.Int).SetString("115792089237316195423570985008687907853269984665640564039457584007913129639935", 10)
	if _, err := s.Run(ctx, `INSERT INTO v VALUES ($1, $2, $3, $4, $5)`, -7, max, 1.5, true, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, `INSERT INTO v VALUES ($1, $2)`, 1, new(big.Int).Neg(max)); err == nil {
		t.Errorf("a negative UINT256 was accepted")
	}
	if _, err := s.Run(ctx, `INSERT INTO v VALUES ($1)`, struct{}{}); err == nil {
		t.Errorf("an unsupported argument type was accepted")
	}
	res, err := s.Run(ctx, `DESCRIBE v`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Columns) != 6 || res.Columns[2].Type != "BOOL" {
		t.Fatalf("DESCRIBE columns %+v", res.Columns)
	}
	row := res.Rows[1]
	if row[0].String() != "u" || row[1].Any() != "UINT256" || row[2].Any() != true || !row[3].IsNull() || row[3].String() != "NULL" || row[3].Any() != nil {
		t.Errorf("DESCRIBE row %v", row)
	}
}

func TestClosed(t *testing.T) {
	db, s := openDB(t)
	db.Close()
	var e *strata.Error
	if _, err := s.Run(context.Background(), "SHOW TABLES"); !errors.As(err, &e) || e.Code != "57P01" {
		t.Errorf("after Close: %v", err)
	}
}

func TestReopenKeepsCommitsAndSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession()
	if _, err := s.Exec(ctx, `CREATE TABLE kv (k STRING NOT NULL, v INT64, PRIMARY KEY (k)); INSERT INTO kv VALUES ('a', 1)`); err != nil {
		t.Fatal(err)
	}
	// a failed statement takes no number, before or after the restart
	if _, err := s.Run(ctx, `INSERT INTO kv VALUES (NULL, 1)`); err == nil {
		t.Fatal("a NULL key was accepted")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	db, err = strata.Open(dir, strata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s = db.NewSession()
	res, err := s.Run(ctx, `INSERT INTO kv VALUES ('b', 2)`)
	if err != nil || res.Commit != 3 {
		t.Fatalf("after reopen: %+v %v, want commit 3", res, err)
	}
	res, err = s.Run(ctx, `DESCRIBE kv`)
	if err != nil || len(res.Rows) != 2 || res.Rows[1][0].String() != "v" {
		t.Fatalf("DESCRIBE after reopen: %+v %v", res, err)
	}
}

func TestValueAny(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	if _, err := s.Exec(ctx, `CREATE TABLE v (k INT32 NOT NULL, u UINT64, w INT128, d DECIMAL(10,2), f FLOAT32, b BOOL, s STRING,
		y BYTES, dt DATE, ts DATETIME64(3, 'UTC'), id UUID, PRIMARY KEY (k));
		INSERT INTO v VALUES (-1, 18446744073709551615, -170141183460469231731687303715884105728, 12.5, 0.5, false, 'é',
		'\x01', '2026-10-01', '2026-10-01 12:05:00.123', '0b6e3f6c-6b1c-4c4d-9a4e-2f1e0b6e3f6c');
		INSERT INTO v (k) VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, `SELECT k, u, w, d, f, b, s, dt, ts, id FROM v ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tag != "SELECT 2" || len(res.Columns) != 10 || res.Columns[9].Type != "UUID" {
		t.Fatalf("result %q %+v", res.Tag, res.Columns)
	}
	r := res.Rows[0]
	w, _ := new(big.Int).SetString("-170141183460469231731687303715884105728", 10)
	if r[0].Any() != int64(-1) || r[1].Any() != uint64(18446744073709551615) || r[2].Any().(*big.Int).Cmp(w) != 0 ||
		r[3].Any() != "12.50" || r[4].Any() != 0.5 || r[5].Any() != false || r[6].Any() != "é" {
		t.Errorf("values %v %v %v %v %v %v %v", r[0].Any(), r[1].Any(), r[2].Any(), r[3].Any(), r[4].Any(), r[5].Any(), r[6].Any())
	}
	if dt, ok := r[7].Any().(time.Time); !ok || !dt.Equal(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("DATE %v", r[7].Any())
	}
	if ts, ok := r[8].Time(); !ok || !ts.Equal(time.Date(2026, 10, 1, 12, 5, 0, 123e6, time.UTC)) || r[8].String() != "2026-10-01 12:05:00.123" {
		t.Errorf("DATETIME64 %v %q", ts, r[8].String())
	}
	if id, ok := r[9].Any().([16]byte); !ok || id[0] != 0x0b || r[9].String() != "0b6e3f6c-6b1c-4c4d-9a4e-2f1e0b6e3f6c" {
		t.Errorf("UUID %v %q", r[9].Any(), r[9].String())
	}
	for i, v := range res.Rows[1][1:] {
		if !v.IsNull() || v.Any() != nil || v.String() != "NULL" {
			t.Errorf("column %d of a NULL row: %v", i+1, v.Any())
		}
	}
	// a value taken from a result binds as an argument with its type
	res, err = s.Run(ctx, `SELECT k FROM v WHERE u = $1`, r[1])
	if err != nil || len(res.Rows) != 1 {
		t.Errorf("a Value as argument: %v %v", res, err)
	}
}

// TestResultRowsOwned: a result's rows are the caller's (publicRow hands
// the session's arrays over without a copy). Appending to a row leaves
// the next one alone, writing into a row changes no later result, and a
// row built from a Value carries it.
func TestResultRowsOwned(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	if _, err := s.Exec(ctx, `CREATE TABLE o (k INT64 NOT NULL, v STRING, PRIMARY KEY (k)) MODE VERSIONED;
		INSERT INTO o VALUES (1, 'a'), (2, 'b'), (3, 'c');
		INSERT INTO o VALUES (1, 'a2');
		CREATE TABLE p (k INT64 NOT NULL, PRIMARY KEY (k))`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SELECT k, v FROM o ORDER BY k`, `SELECT k, v FROM versions(o) WHERE k = 1`, `SHOW TABLES`, `DESCRIBE o`} {
		res, err := s.Run(ctx, q)
		if err != nil {
			t.Fatal(q, err)
		}
		if len(res.Rows) < 2 {
			t.Fatalf("%s: %d rows", q, len(res.Rows))
		}
		want := fmt.Sprint(res.Rows)
		for i, r := range res.Rows {
			if cap(r) != len(r) || len(r) != len(res.Columns) {
				t.Fatalf("%s: row %d has %d cells, capacity %d, for %d columns", q, i, len(r), cap(r), len(res.Columns))
			}
		}
		next := res.Rows[1][0].String()
		_ = append(res.Rows[0], res.Rows[0][0])
		if res.Rows[1][0].String() != next {
			t.Fatalf("%s: appending to row 0 changed row 1", q)
		}
		res.Rows[0][0] = res.Rows[1][0]
		again, err := s.Run(ctx, q)
		if err != nil {
			t.Fatal(q, err)
		}
		if got := fmt.Sprint(again.Rows); got != want {
			t.Fatalf("%s: after the first result was written to, the same query returned %s, want %s", q, got, want)
		}
	}
}
