package pgwire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestTransactionEndsWithConnection: a client gone inside a transaction
// that ran an UPDATE leaves no storage.Watch open (which would make every
// later commit record its keys for good); its writes are never committed.
func TestTransactionEndsWithConnection(t *testing.T) {
	srv, url := startServer(t)
	ctx := context.Background()
	c := connect(t, url)
	for _, q := range []string{"CREATE TABLE t (k INT64 NOT NULL, v INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT", "INSERT INTO t VALUES (1, 0)"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	d := connect(t, url)
	for _, q := range []string{"BEGIN", "UPDATE t SET v = v + 1 WHERE k = 1"} {
		if _, err := d.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.eng.OpenWatches(); n != 1 {
		t.Fatalf("%d Watches open inside the transaction, want 1", n)
	}
	d.Close(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for srv.eng.OpenWatches() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.eng.OpenWatches(); n != 0 {
		t.Errorf("%d Watches open after the client left mid-transaction", n)
	}
	var v int64
	if err := c.QueryRow(ctx, "SELECT v FROM t WHERE k = 1").Scan(&v); err != nil || v != 0 {
		t.Errorf("v = %d (%v), want 0: the transaction was never committed", v, err)
	}
}

// TestForUpdateOverTheWire: SELECT … FOR UPDATE through the extended
// protocol describes and sends the query's own columns only (its keys are
// read beside them), and a COMMIT after another connection updated the
// row read fails with SQLSTATE 40001, which clients retry.
func TestForUpdateOverTheWire(t *testing.T) {
	_, url := startServer(t)
	ctx := context.Background()
	c, d := connect(t, url), connect(t, url)
	for _, q := range []string{"CREATE TABLE acct (k INT64 NOT NULL, bal INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT", "INSERT INTO acct VALUES (1, 100), (2, 50)"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "SELECT bal FROM acct WHERE k = $1 FOR UPDATE", int64(1))
	if err != nil {
		t.Fatal(err)
	}
	var bal int64
	n := 0
	for rows.Next() {
		if len(rows.RawValues()) != 1 {
			t.Fatalf("%d values in a row, want the query's 1", len(rows.RawValues()))
		}
		if err := rows.Scan(&bal); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != 1 || bal != 100 || len(rows.FieldDescriptions()) != 1 {
		t.Fatalf("rows %d, bal %d, fields %d, err %v", n, bal, len(rows.FieldDescriptions()), err)
	}
	if _, err := d.Exec(ctx, "UPDATE acct SET bal = bal + 1 WHERE k = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "UPDATE acct SET bal = $1 WHERE k = 1", bal-10); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, "COMMIT")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "40001" {
		t.Fatalf("COMMIT after a concurrent update of the row read FOR UPDATE: %v, want 40001", err)
	}
	if err := d.QueryRow(ctx, "SELECT bal FROM acct WHERE k = 1").Scan(&bal); err != nil || bal != 101 {
		t.Errorf("bal %d (%v), want 101", bal, err)
	}
}
