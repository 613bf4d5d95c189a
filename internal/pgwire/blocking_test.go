//go:build unix

package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/strata-db/strata/internal/storage"
)

// startServerWith is startServer with a Config of the test's own, and no
// Shutdown at cleanup: the tests here shut the server down themselves.
func startServerWith(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	eng, err := storage.Open(t.TempDir(), storage.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	cfg.Listen, cfg.Logger = "127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := New(eng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background())
	return srv, "postgres://anyone@" + srv.Addr().String() + "/strata?sslmode=disable"
}

// shutdownWithin fails the test if Shutdown does not return within d (a
// connection's goroutine left blocked in read(2) or write(2) would hold it
// forever).
func shutdownWithin(t *testing.T, srv *Server, ctx context.Context, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("Shutdown did not return within %s", d)
		return nil
	}
}

// TestBlockingReadsShutdownIdle checks an idle connection reading with a
// blocking read(2) gets 57P01 and is closed by Shutdown, promptly.
func TestBlockingReadsShutdownIdle(t *testing.T) {
	srv, url := startServerWith(t, Config{})
	c := connect(t, url)
	var one int
	if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %v", err)
	}
	if n := srv.BlockingConnections(); n != 1 {
		t.Fatalf("%d connections read with blocking system calls, want 1", n)
	}
	if !detached(srv) {
		t.Fatal("a connection without TLS was not moved off the network poller")
	}
	time.Sleep(20 * time.Millisecond) // let the server wait in read(2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdownWithin(t, srv, ctx, 10*time.Second); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err == nil {
		t.Fatal("a query after Shutdown succeeded")
	}
	if n := srv.BlockingConnections(); n != 0 {
		t.Fatalf("%d blocking slots held after Shutdown", n)
	}
}

// detached reports whether every registered connection reads a detached
// socket.
func detached(srv *Server) bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, c := range srv.conns {
		if c.file.Load() == nil {
			return false
		}
	}
	return len(srv.conns) > 0
}

// TestBlockingReadsTLS checks a TLS connection, whose socket stays under
// its TLS layer (blocking, not detached), works and is closed by
// Shutdown while it waits in read(2).
func TestBlockingReadsTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	srv, _ := startServerWith(t, Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	ctx := context.Background()
	c := connectTLS(t, srv, pool)
	defer c.Close(ctx)
	for i := range 3 {
		var n int
		if err := c.QueryRow(ctx, "SELECT $1::INT64 * 2", i).Scan(&n); err != nil || n != 2*i {
			t.Fatalf("query over TLS: %d, %v", n, err)
		}
	}
	if n := srv.BlockingConnections(); n != 1 || detached(srv) {
		t.Fatalf("%d blocking connections (detached %v), want 1 blocking under TLS", n, detached(srv))
	}
	time.Sleep(20 * time.Millisecond)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := shutdownWithin(t, srv, sctx, 10*time.Second); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// TestBlockingReadsShutdownStuckWrite checks Shutdown's deadline frees a
// connection whose goroutine is blocked in write(2) to a client that
// stopped reading: a blocking socket's write is ended by shutting the
// socket down, not by closing it.
func TestBlockingReadsShutdownStuckWrite(t *testing.T) {
	srv, _ := startServerWith(t, Config{})
	fe := rawFrontend(t, srv)
	// Far more rows than the socket buffers hold, never read.
	fe.Send(&pgproto3.Query{String: "SELECT repeat('x', 1000) FROM generate_series(1, 200000)"})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let the server fill the buffers and block
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	shutdownWithin(t, srv, ctx, 10*time.Second) // ctx's error or nil: either way it returned
}

// TestBlockingReadsBounded checks Config.BlockingReads: connections beyond
// it read through the poller and work the same, and a negative value turns
// blocking reads off.
func TestBlockingReadsBounded(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{{1, 1}, {-1, 0}} {
		srv, url := startServerWith(t, Config{BlockingReads: tc.limit})
		a, b := connect(t, url), connect(t, url)
		for i := range 3 {
			for _, c := range []*pgx.Conn{a, b} {
				var n int
				if err := c.QueryRow(context.Background(), "SELECT $1::INT64 + 1", i).Scan(&n); err != nil || n != i+1 {
					t.Fatalf("limit %d: query: %d, %v", tc.limit, n, err)
				}
			}
		}
		if n := srv.BlockingConnections(); n != tc.want {
			t.Fatalf("limit %d: %d blocking connections, want %d", tc.limit, n, tc.want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := shutdownWithin(t, srv, ctx, 10*time.Second); err != nil {
			t.Fatalf("limit %d: shutdown: %v", tc.limit, err)
		}
		cancel()
	}
}

// TestServeWaitsForConnections: Serve returns, once its context ends, only
// after every connection has been closed, so that a caller may close the
// engine next (strata serve does) with no statement still using it.
func TestServeWaitsForConnections(t *testing.T) {
	eng, err := storage.Open(t.TempDir(), storage.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv, err := New(eng, Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	url := "postgres://anyone@" + srv.Addr().String() + "/strata?sslmode=disable"
	for range 4 {
		c := connect(t, url)
		var one int
		if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve: %v, want context.Canceled", err)
		}
	case <-time.After(2 * ShutdownGrace):
		t.Fatal("Serve did not return")
	}
	if n := srv.Connections(); n != 0 {
		t.Fatalf("Serve returned with %d connections still open", n)
	}
}

// TestConnYields: a connection answering queries back to back passes
// through the scheduler about every yieldEvery (conn.loop), not once per
// message, so the runtime's monitor never takes it for a goroutine
// hogging its processor.
func TestConnYields(t *testing.T) {
	var yields atomic.Int64
	old := yield
	yield = func() { yields.Add(1); old() }
	t.Cleanup(func() { yield = old })
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	queries := 0
	start := time.Now()
	for time.Since(start) < 50*yieldEvery {
		var n int64
		if err := c.QueryRow(ctx, "SELECT $1::INT64", int64(queries)).Scan(&n); err != nil || n != int64(queries) {
			t.Fatalf("query %d: %d, %v", queries, n, err)
		}
		queries++
	}
	elapsed := time.Since(start)
	got := yields.Load()
	// At most one yield per yieldEvery of the loop's time (a yield per
	// message, four a query, exceeds that unless a query takes over 8 ms),
	// and at least a few over fifty of them, however slow the machine.
	if most := int64(elapsed/yieldEvery) + 1; got < 3 || got > most {
		t.Fatalf("%d yields over %d queries in %v, want 3 to %d", got, queries, elapsed, most)
	}
}

// rawFrontend connects to srv at the protocol level, past the startup up to
// the first ReadyForQuery, for tests that look at the messages themselves.
// The connection is closed when the test ends.
func rawFrontend(t *testing.T, srv *Server) *pgproto3.Frontend {
	t.Helper()
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "anyone", "database": "strata"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return fe
		}
	}
}
