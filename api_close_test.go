package strata

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestCloseEndsTransaction: Session.Close rolls back an open transaction
// (releasing the storage.Watch an UPDATE in it opened); the session stays
// usable.
func TestCloseEndsTransaction(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	s := db.NewSession()
	for _, q := range []string{"CREATE TABLE t (k INT64 NOT NULL, v INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT", "INSERT INTO t VALUES (1, 0)", "BEGIN", "UPDATE t SET v = v + 1 WHERE k = 1"} {
		if _, err := s.Run(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := db.eng.OpenWatches(); n != 0 {
		t.Errorf("%d Watches open after Close", n)
	}
	res, err := s.Run(ctx, "UPDATE t SET v = v + 5 WHERE k = 1")
	if err != nil || res.Commit == 0 {
		t.Fatalf("UPDATE after Close: %v, %+v", err, res)
	}
	rows, err := s.Query(ctx, "SELECT v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() || rows.Row()[0].String() != "5" {
		t.Errorf("v = %v (%v), want 5: the rolled-back UPDATE wrote nothing", rows.Row(), rows.Err())
	}
}

// TestDroppedSessionReleasesWatch: a session dropped inside a transaction
// that ran an UPDATE, never closed, releases its storage.Watch once
// collected.
func TestDroppedSessionReleasesWatch(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	func() {
		s := db.NewSession()
		for _, q := range []string{"CREATE TABLE t (k INT64 NOT NULL, v INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT", "INSERT INTO t VALUES (1, 0)", "BEGIN", "UPDATE t SET v = v + 1 WHERE k = 1"} {
			if _, err := s.Run(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for db.eng.OpenWatches() != 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := db.eng.OpenWatches(); n != 0 {
		t.Errorf("%d Watches open after the session was dropped", n)
	}
}
