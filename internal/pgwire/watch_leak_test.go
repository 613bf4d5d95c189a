package pgwire

import (
	"context"
	"testing"
	"time"
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
