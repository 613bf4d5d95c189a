package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/strata-db/strata/internal/pgwire"
	"github.com/strata-db/strata/internal/storage"
)

// serveFlags are the flags of `strata serve`.
type serveFlags struct {
	data      string
	listen    string
	http      string
	logFormat string
	// logLevel is the least severe level logged: debug, info, warn or
	// error.
	logLevel  string
	tlsCert   string
	tlsKey    string
	asofIndex bool
	// pageCacheMiB is storage.Options.PageCacheBytes in MiB (0: its
	// default).
	pageCacheMiB int64
	// warmWrites is storage.Options.WarmWrites.
	warmWrites bool
	// hugePageMiB is storage.Options.HugePageBytes in MiB (0: its default,
	// -1: none).
	hugePageMiB int64
	// blockingReads is pgwire.Config.BlockingReads, 0 meaning off.
	blockingReads int
}

// HTTPHandlers register what --http serves (/metrics and the like) on the
// server's mux; a file of this command adds to it from init. They get the
// wire server and the engine, whose counters they read.
var httpHandlers []func(mux *http.ServeMux, srv *pgwire.Server, eng *storage.Engine)

func serveCmd() *cobra.Command {
	var fl serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a data directory over the PostgreSQL protocol",
		Long: `serve opens the data directory (created if missing, locked against a second
process) and serves it over the PostgreSQL wire protocol, so psql, pgx,
psycopg2 and other clients connect unchanged:

  psql "postgres://strata@127.0.0.1:5433/strata"

The database is named strata; postgres and an empty name are accepted too.
While no user exists, any user name may connect from this machine; serving
another address needs a user first (CREATE USER name PASSWORD '…'), and then
every connection authenticates with SCRAM-SHA-256. SIGTERM or SIGINT stops
accepting, cancels running statements, closes the directory and exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return runServe(ctx, fl, cmd.ErrOrStderr(), nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.data, "data", "./strata-data", "data directory (created if missing)")
	f.StringVar(&fl.listen, "listen", pgwire.DefaultListen, "address for PostgreSQL clients, host:port")
	f.StringVar(&fl.http, "http", "", "address for HTTP (/metrics, /debug/pprof), host:port, without authentication; off when empty")
	f.StringVar(&fl.logFormat, "log-format", "text", "log format on standard error: text or json")
	f.StringVar(&fl.logLevel, "log-level", "info", "least severe level logged: debug (also each merge with its reason and each idle prewarm pass), info, warn or error")
	f.StringVar(&fl.tlsCert, "tls-cert", "", "PEM certificate for TLS (with --tls-key)")
	f.StringVar(&fl.tlsKey, "tls-key", "", "PEM private key for TLS (with --tls-cert)")
	f.BoolVar(&fl.asofIndex, "asof-index", false, "write AS OF indexes of versioned tables' merged runs: faster first reads at past commits, more disk and merge CPU")
	f.Int64Var(&fl.pageCacheMiB, "page-cache-mib", 0, "MiB of decoded part pages kept for point lookups and repeated scans, like PostgreSQL's shared_buffers (0: 256)")
	f.IntVar(&fl.blockingReads, "blocking-reads", pgwire.DefaultBlockingReads, "connections at a time that wait for their next message in a blocking read on a thread of their own (fewer system calls per request); the rest use the network poller; 0 turns it off")
	f.BoolVar(&fl.warmWrites, "warm-writes", false, "put the pages lookups read of freshly written parts in the page cache: faster lookups right after writes, slower ingest")
	f.Int64Var(&fl.hugePageMiB, "huge-page-mib", 0, "MiB of the heap readied at start for transparent huge pages, which make ingest cheaper where the kernel's THP mode is madvise (0: 4096, at most a quarter of the machine's memory; -1: none)")
	return cmd
}

// runServe is `strata serve` once its flags are read; it returns when ctx
// is done (after a graceful shutdown) or on a start error. ready, if not
// nil, receives the server once it listens.
func runServe(ctx context.Context, fl serveFlags, logOut io.Writer, ready func(*pgwire.Server)) error {
	if fl.blockingReads < 0 || fl.blockingReads > 4096 {
		return fmt.Errorf("--blocking-reads %d: must be between 0 (off) and 4096", fl.blockingReads)
	}
	if fl.pageCacheMiB < 0 || fl.pageCacheMiB > 1<<30 {
		return fmt.Errorf("--page-cache-mib %d: must be between 0 (the default) and 2^30", fl.pageCacheMiB)
	}
	if fl.hugePageMiB < -1 || fl.hugePageMiB > 1<<30 {
		return fmt.Errorf("--huge-page-mib %d: must be between -1 (none), 0 (the default) and 2^30", fl.hugePageMiB)
	}
	var level slog.Level
	if fl.logLevel == "" {
		fl.logLevel = "info"
	}
	if err := level.UnmarshalText([]byte(fl.logLevel)); err != nil || strings.ContainsAny(fl.logLevel, "+-") {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", fl.logLevel)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	switch fl.logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(logOut, hopts))
	case "json":
		log = slog.New(slog.NewJSONHandler(logOut, hopts))
	default:
		return fmt.Errorf("--log-format %q: want text or json", fl.logFormat)
	}
	var tlsCfg *tls.Config
	if (fl.tlsCert == "") != (fl.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if fl.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(fl.tlsCert, fl.tlsKey)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if err := os.MkdirAll(fl.data, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	eng, err := storage.Open(fl.data, storage.Options{Logger: log, AsOfIndex: fl.asofIndex, PageCacheBytes: fl.pageCacheMiB << 20,
		WarmWrites: fl.warmWrites, HugePageBytes: fl.hugePageMiB << 20})
	if err != nil {
		return err
	}
	defer eng.Close()
	blocking := fl.blockingReads
	if blocking == 0 {
		blocking = -1 // off; Config's 0 means its default
	}
	srv, err := pgwire.New(eng, pgwire.Config{Listen: fl.listen, TLS: tlsCfg, Logger: log, Version: version, BlockingReads: blocking})
	if err != nil {
		return err
	}
	var hs *http.Server
	if fl.http != "" {
		mux := http.NewServeMux()
		for _, h := range httpHandlers {
			h(mux, srv, eng)
		}
		ln, err := net.Listen("tcp", fl.http)
		if err != nil {
			srv.Shutdown(context.Background())
			return fmt.Errorf("--http %s: %w", fl.http, err)
		}
		hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ln)
		log.Info("http listening", "addr", ln.Addr().String())
	}
	log.Info("strata serving", "data", fl.data, "addr", srv.Addr().String(), "database", "strata", "tls", tlsCfg != nil)
	if ready != nil {
		ready(srv)
	}
	err = srv.Serve(ctx)
	if hs != nil {
		hs.Close()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err := eng.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", fl.data, err)
	}
	log.Info("strata stopped", "data", fl.data)
	return nil
}
