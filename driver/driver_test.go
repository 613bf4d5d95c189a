package driver_test

import (
	"context"
	"database/sql"
	"errors"
	"math/big"
	"testing"

	"github.com/strata-db/strata"
	"github.com/strata-db/strata/driver"
)

func open(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("strata", dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestExecArgsAndErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := open(t, dir)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE kv (k STRING NOT NULL, v UINT256, PRIMARY KEY (k)); CREATE TABLE e (x INT64) MODE APPEND"); err != nil {
		t.Fatal(err)
	}
	big1, _ := new(big.Int).SetString("115792089237316195423570985008687907853269984665640564039457584007913129639935", 10)
	res, err := db.ExecContext(ctx, "INSERT INTO kv VALUES ($1, $2), ($3, $4)", "a", big1, "b", uint64(1<<63))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("RowsAffected %d, want 2", n)
	}
	_, err = db.ExecContext(ctx, "INSERT INTO kv VALUES ($1, $2)", "c", -1)
	var se *strata.Error
	if !errors.As(err, &se) || se.Code != "22003" {
		t.Fatalf("out of range through database/sql: %v, want *strata.Error 22003", err)
	}
	rows, err := db.QueryContext(ctx, "SHOW TABLES")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name, mode string
		if err := rows.Scan(&name, &mode); err != nil {
			t.Fatal(err)
		}
		got = append(got, name+" "+mode)
	}
	rows.Close()
	if len(got) != 2 || got[0] != "e append" || got[1] != "kv upsert" {
		t.Errorf("SHOW TABLES through database/sql: %q", got)
	}
}

func TestTxAndReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := open(t, dir)
	if _, err := db.ExecContext(ctx, "CREATE TABLE kv (k STRING NOT NULL, v INT64, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO kv VALUES ($1, $2)", "a", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE kv"); err == nil {
		t.Errorf("DDL after a write inside a transaction was accepted")
	}
	// The failed statement aborted the transaction: its COMMIT rolls
	// back, and says so, as pgx's and lib/pq's do.
	if err := tx.Commit(); !errors.Is(err, driver.ErrCommitRollback) {
		t.Fatalf("Commit of a failed transaction: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM kv").Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after the rolled-back transaction: %d %v", n, err)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO kv VALUES ($1, $2)", "b", 2); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Closing every connection closes the directory, so it can be opened
	// again in the same process.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, "SHOW TABLES").Scan(new(string), &mode); err != nil || mode != "upsert" {
		t.Fatalf("after reopen: %q %v", mode, err)
	}
	// Two pools on one directory share its DB.
	db2 := open(t, dir)
	defer db2.Close()
	if err := db2.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
}
