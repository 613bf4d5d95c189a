package driver_test

import (
	"context"
	"math/big"
	"testing"
	"time"
)

func TestQueryScansTypes(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE v (k INT64 NOT NULL, u UINT256, big UINT64, f FLOAT64, b BOOL, s STRING, ts DATETIME64(3, 'UTC'), PRIMARY KEY (k))`); err != nil {
		t.Fatal(err)
	}
	max, _ := new(big.Int).SetString("115792089237316195423570985008687907853269984665640564039457584007913129639935", 10)
	if _, err := db.ExecContext(ctx, `INSERT INTO v VALUES ($1, $2, $3, $4, $5, $6, $7)`, 1, max, uint64(1<<63), 2.5, true, "x", "2026-10-01 12:05:00.123"); err != nil {
		t.Fatal(err)
	}
	var (
		k          int64
		u, bigs, s string
		f          float64
		b          bool
		ts         time.Time
	)
	err := db.QueryRowContext(ctx, `SELECT k, u, big, f, b, s, ts FROM v WHERE k = $1`, 1).Scan(&k, &u, &bigs, &f, &b, &s, &ts)
	if err != nil {
		t.Fatal(err)
	}
	if k != 1 || u != max.String() || bigs != "9223372036854775808" || f != 2.5 || !b || s != "x" ||
		!ts.Equal(time.Date(2026, 10, 1, 12, 5, 0, 123e6, time.UTC)) {
		t.Errorf("scanned %v %v %v %v %v %v %v", k, u, bigs, f, b, s, ts)
	}
	// a transaction is one commit; a rolled back one writes nothing
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 4; i++ {
		if _, err := tx.ExecContext(ctx, `INSERT INTO v (k) VALUES ($1)`, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, _ = db.BeginTx(ctx, nil)
	tx.ExecContext(ctx, `DELETE FROM v`)
	tx.Rollback()
	var n, commits int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM v`).Scan(&n); err != nil || n != 4 {
		t.Errorf("count %d %v, want 4", n, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM system.commits WHERE kind = 'write'`).Scan(&commits); err != nil || commits != 2 {
		t.Errorf("write commits %d %v, want 2", commits, err)
	}
}

// TestQueryStreams: a query's rows are read as the engine makes them: a
// loop left early frees the connection for the next statement, and an
// error met part way reaches rows.Err after the rows before it.
func TestQueryStreams(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	defer db.Close()
	db.SetMaxOpenConns(1) // every statement on the one session
	rows, err := db.QueryContext(ctx, "SELECT x FROM generate_series(1, 100000) AS g(x)")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var x int64
		if err := rows.Scan(&x); err != nil || x != int64(n+1) {
			t.Fatalf("row %d: %d %v", n, x, err)
		}
		if n++; n == 10 {
			break
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after an early close: %d %v", one, err)
	}
	rows, err = db.QueryContext(ctx, "SELECT 1 / (3000 - x) FROM generate_series(1, 5000) AS g(x)")
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err == nil || n == 0 || n >= 3000 {
		t.Fatalf("%d rows, then %v", n, err)
	}
	rows.Close()
	if err := db.QueryRowContext(ctx, "SELECT 2").Scan(&one); err != nil || one != 2 {
		t.Fatalf("after an error: %d %v", one, err)
	}
}

// TestTxQueryThenExec: database/sql lets a transaction run a statement
// while a query's rows are open on it; the rows go on whole.
func TestTxQueryThenExec(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE kv (k INT64 NOT NULL, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO kv SELECT x FROM generate_series(1, 3000) AS g(x)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT k FROM kv ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil || k != n+1 {
			t.Fatalf("row %d: %d %v", n, k, err)
		}
		n++
		if n == 10 {
			if _, err := tx.ExecContext(ctx, "INSERT INTO kv VALUES (9000)"); err != nil {
				t.Fatalf("Exec inside the loop: %v", err)
			}
		}
	}
	if err := rows.Err(); err != nil || n != 3000 {
		t.Fatalf("%d rows, %v", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var count int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM kv").Scan(&count); err != nil || count != 3001 {
		t.Fatalf("count %d, %v", count, err)
	}
}
