package load

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/pgwire"
	"github.com/strata-db/strata/internal/storage"
)

// serve starts an in-process server on a fresh directory and a free
// loopback port and returns its URL and engine.
func serve(t *testing.T) (string, *storage.Engine) {
	t.Helper()
	eng, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := pgwire.New(eng, pgwire.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		eng.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	return "postgres://strata@" + srv.Addr().String() + "/strata?sslmode=disable", eng
}

// TestLoad runs the mix against Strata and checks the result. In CI it is
// short (8 connections × 150 statements); STRATA_LOAD_FULL=1 runs issue 5's
// 64 × 1 000, and STRATA_LOAD_PG=host:port then runs the same mix against
// that PostgreSQL too, logging both side by side.
func TestLoad(t *testing.T) {
	cfg := Config{Conns: 8, Stmts: 150, Keys: 64, Indexes: 8, Seed: 1}
	if os.Getenv("STRATA_LOAD_FULL") == "1" {
		cfg = Config{Conns: 64, Stmts: 1000, Keys: 512, Indexes: 16, Seed: 1}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	url, eng := serve(t)
	if err := Setup(ctx, url, Strata); err != nil {
		t.Fatal(err)
	}
	// /metrics is scraped all along, as Prometheus would (faster): reading
	// the engine's stats must not race its commits (run with -race).
	m := metrics.New(eng, nil)
	stop := make(chan struct{})
	scraped := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				scraped <- nil
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, err := m.Gatherer().Gather(); err != nil {
				scraped <- err
				return
			}
		}
	}()
	res, err := Run(ctx, url, Strata, cfg)
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-scraped; err != nil {
		t.Fatalf("scraping /metrics during the load: %v", err)
	}
	writes := 0
	for _, w := range res.workers {
		writes += len(w.writes)
	}
	if st := eng.Stats(); st.RowsWritten < uint64(writes) || st.Commit < uint64(writes) {
		t.Errorf("engine stats: %d commits, %d rows written; the load acknowledged %d upserts", st.Commit, st.RowsWritten, writes)
	}
	t.Logf("strata: %d connections × %d statements: %d statements in %s, %.0f statements/s, p50 %s, p99 %s\n%s",
		cfg.Conns, cfg.Stmts, res.Statements, res.Elapsed.Round(time.Millisecond), res.PerSecond(),
		res.Percentile(0.5), res.Percentile(0.99), res.Summary())
	// Where an upsert's time goes: the group commit's fsyncs.
	if ws := eng.Stats().WAL; ws.Fsyncs > 0 {
		t.Logf("strata WAL: %d fsyncs for %d records (%.1f per fsync), mean fsync %s",
			ws.Fsyncs, ws.Records, float64(ws.Records)/float64(ws.Fsyncs), (ws.SyncTime / time.Duration(ws.Fsyncs)).Round(time.Microsecond))
	}
	if err := Check(ctx, url, res); err != nil {
		t.Fatal(err)
	}

	if peer := os.Getenv("STRATA_LOAD_PG"); peer != "" {
		if _, _, err := net.SplitHostPort(peer); err != nil {
			t.Fatalf("STRATA_LOAD_PG=%q: want host:port", peer)
		}
		pgURL := "postgres://postgres@" + peer + "/postgres?sslmode=disable"
		if err := Setup(ctx, pgURL, PG); err != nil {
			t.Fatal(err)
		}
		pres, err := Run(ctx, pgURL, PG, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("postgresql: %d statements in %s, %.0f statements/s, p50 %s, p99 %s\n%s",
			pres.Statements, pres.Elapsed.Round(time.Millisecond), pres.PerSecond(),
			pres.Percentile(0.5), pres.Percentile(0.99), pres.Summary())
	}
}
