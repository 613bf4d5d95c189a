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
	for _, q := range []string{
		`CREATE TABLE big (id INT64 NOT NULL, PRIMARY KEY (id)) MODE UPSERT`,
		`INSERT INTO big SELECT * FROM generate_series(1, 10000)`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
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
