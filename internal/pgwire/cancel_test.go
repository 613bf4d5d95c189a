package pgwire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestCancelStopsJoin: a CancelRequest (psql sends one on Ctrl-C) stops a statement in the middle of a join of 100 M
// candidate pairs: the client gets 57014 and the connection serves on.
func TestCancelStopsJoin(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	execAll(t, c,
		`CREATE TABLE big (id INT64 NOT NULL, PRIMARY KEY (id)) MODE UPSERT`,
		`INSERT INTO big SELECT * FROM generate_series(1, 10000)`,
	)
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = c.PgConn().CancelRequest(ctx)
	}()
	var n int64
	err := c.QueryRow(ctx, `SELECT count(*) FROM big AS a CROSS JOIN big AS b WHERE a.id + b.id < 0`).Scan(&n)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("cancelled join: %v (%d), want 57014", err, n)
	}
	if err := c.QueryRow(ctx, `SELECT count(*) FROM big`).Scan(&n); err != nil || n != 10000 {
		t.Fatalf("after the cancel: %d %v", n, err)
	}
}

// TestCancelIdle: a CancelRequest that arrives between statements cancels
// nothing, as in PostgreSQL: the statements after it run, on the context
// the connection keeps from one statement to the next.
func TestCancelIdle(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	var n int64
	for i := 0; i < 3; i++ {
		if err := c.QueryRow(ctx, `SELECT 1`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("before cancel %d: %d %v", i, n, err)
		}
		if err := c.PgConn().CancelRequest(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the server handles it on another connection
		if err := c.QueryRow(ctx, `SELECT 2`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("after an idle cancel %d: %d %v", i, n, err)
		}
	}
}
