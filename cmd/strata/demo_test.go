package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/strata-db/strata/internal/pgwire"
)

// demoOnce runs `strata demo` on dir until fn returns, giving fn a pgx
// connection to it, and returns what the demo printed.
func demoOnce(t *testing.T, dir string, fn func(ctx context.Context, c *pgx.Conn)) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	served := make(chan *pgwire.Server, 1)
	done := make(chan error, 1)
	go func() {
		done <- runDemo(ctx, demoFlags{data: dir, listen: "127.0.0.1:0"}, &out, io.Discard, func(s *pgwire.Server) { served <- s })
	}()
	var srv *pgwire.Server
	select {
	case srv = <-served:
	case err := <-done:
		t.Fatalf("demo stopped before serving: %v", err)
	}
	c, err := pgx.Connect(ctx, "postgres://strata@"+srv.Addr().String()+"/strata?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	fn(ctx, c)
	c.Close(ctx)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("demo did not stop cleanly: %v", err)
	}
	return out.String()
}

// TestDemo: the demo seeds SPEC §14's example, prints the psql command for
// the address it serves, and serves a directory it seeded before as it is,
// without writing the example twice.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	check := func(ctx context.Context, c *pgx.Conn, wantCommits int64) {
		t.Helper()
		var amount string
		if err := c.QueryRow(ctx, "SELECT amount::text FROM balances WHERE chain_id = 1").Scan(&amount); err != nil || amount != "2750000000" {
			t.Errorf("current amount %q (%v), want 2750000000: the late write must not win (R3.1)", amount, err)
		}
		var late int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM versions(balances) WHERE _state = 'late'").Scan(&late); err != nil || late != 1 {
			t.Errorf("late versions: %d (%v), want 1", late, err)
		}
		var commits int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM system.commits").Scan(&commits); err != nil || commits != wantCommits {
			t.Errorf("commits: %d (%v), want %d", commits, err, wantCommits)
		}
	}
	out := demoOnce(t, dir, func(ctx context.Context, c *pgx.Conn) {
		check(ctx, c, 4)
		if _, err := c.Exec(ctx, "UPSERT INTO balances (chain_id, address, token, transfer_count, last_transfer_at, activity_index) VALUES (1, '0x9c2e4f1a', 'USDC', 1, '2026-10-01 12:00:00.000', 1) ATTRIBUTE GROUP activity"); err != nil {
			t.Fatal(err)
		}
	})
	if !strings.HasPrefix(out, "The seed's balances example (SPEC §14) is in "+dir+".\n") ||
		!strings.Contains(out, `psql "postgres://strata@127.0.0.1:`) {
		t.Errorf("first run printed:\n%s", out)
	}
	out = demoOnce(t, dir, func(ctx context.Context, c *pgx.Conn) { check(ctx, c, 5) })
	if !strings.HasPrefix(out, dir+" already holds a balances table; it is served as it is.\n") {
		t.Errorf("second run printed:\n%s", out)
	}
}
