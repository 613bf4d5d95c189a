package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/strata-db/strata"
	"github.com/strata-db/strata/internal/pgwire"
)

// demoSeed is the seed's own example (SPEC §14) as it creates data: the
// versioned balances table with two attribute groups, a write and a late
// write to the holding group, and a group added afterwards. The SPEC's
// query `SELECT … AS OF COMMIT 42` is left out: on a fresh directory,
// commit 42 does not exist yet and the query is an error (R6.6).
var demoSeed = []string{
	`CREATE TABLE balances (
  chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
  amount UINT256 NULL, updated_at DATETIME64(3, 'UTC') NULL,
  balance_index UINT128 NULL, balance_version UINT64 NULL,
  transfer_count UINT64 NULL, last_transfer_at DATETIME64(3, 'UTC') NULL,
  activity_index UINT128 NULL,
  PRIMARY KEY (chain_id, address, token),
  ATTRIBUTE GROUP holding (amount, updated_at, balance_index, balance_version)
    VALID BY (balance_index) REVISION BY (balance_version),
  ATTRIBUTE GROUP activity (transfer_count, last_transfer_at, activity_index)
    VALID BY (activity_index))
MODE VERSIONED
SHARD BY (address) SHARDS AUTO
ORDER BY (chain_id, address, token)`,
	`UPSERT INTO balances (chain_id, address, token, amount, updated_at, balance_index, balance_version)
VALUES (1, '0x9c2e4f1a', 'USDC', 2750000000, '2026-10-01 12:05:00.000', 1002, 1)
ATTRIBUTE GROUP holding`,
	`UPSERT INTO balances (chain_id, address, token, amount, updated_at, balance_index, balance_version)
VALUES (1, '0x9c2e4f1a', 'USDC', 2500000000, '2026-10-01 12:00:00.000', 1001, 1)
ATTRIBUTE GROUP holding`,
	`ALTER TABLE balances ADD ATTRIBUTE GROUP labels (
  label_text STRING NULL, labelled_at DATETIME64(3, 'UTC') NULL)`,
}

// demoFlags are the flags of `strata demo`.
type demoFlags struct {
	data   string
	listen string
	http   string
}

func demoCmd() *cobra.Command {
	var fl demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Serve the seed's balances example, ready for psql",
		Long: `demo writes the seed's balances example (SPEC §14: a versioned table, a write
and a late write) into a data directory and serves it as strata serve does,
printing the psql command that connects to it. Without --data the directory
is a new temporary one, removed on exit; a directory that already holds a
balances table is served as it is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			return runDemo(ctx, fl, cmd.OutOrStdout(), cmd.ErrOrStderr(), nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.data, "data", "", "data directory (default: a temporary one, removed on exit)")
	f.StringVar(&fl.listen, "listen", pgwire.DefaultListen, "address for PostgreSQL clients, host:port")
	f.StringVar(&fl.http, "http", "", "address for HTTP (/metrics), host:port; off when empty")
	return cmd
}

// runDemo is `strata demo` once its flags are read. ready, if not nil,
// receives the server once it listens (tests).
func runDemo(ctx context.Context, fl demoFlags, out, logOut io.Writer, ready func(*pgwire.Server)) error {
	dir := fl.data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "strata-demo-")
		if err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	seeded, err := seedDemo(ctx, dir)
	if err != nil {
		return err
	}
	sf := serveFlags{data: dir, listen: fl.listen, http: fl.http, logFormat: "text"}
	return runServe(ctx, sf, logOut, func(srv *pgwire.Server) {
		what := "The seed's balances example (SPEC §14) is in " + dir + "."
		if !seeded {
			what = dir + " already holds a balances table; it is served as it is."
		}
		host, port, _ := net.SplitHostPort(srv.Addr().String())
		fmt.Fprintf(out, `%s
Connect with:
  psql "postgres://strata@%s/strata"
and try:
  SELECT address, token, amount FROM balances WHERE chain_id = 1;
  SELECT _commit, amount, balance_index, _state, _reason FROM versions(balances);
  SELECT amount FROM balances AS OF COMMIT 2;
docs/getting-started.md walks through it. Stop with Ctrl-C.
`, what, net.JoinHostPort(host, port))
		if ready != nil {
			ready(srv)
		}
	})
}

// seedDemo writes demoSeed into dir unless a balances table is there
// already; it reports whether it wrote.
func seedDemo(ctx context.Context, dir string) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("data directory: %w", err)
	}
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		return false, err
	}
	s := db.NewSession()
	for i, sql := range demoSeed {
		if _, err := s.Run(ctx, sql); err != nil {
			var se *strata.Error
			if i == 0 && errors.As(err, &se) && se.Code == "42P07" {
				return false, db.Close() // seeded by an earlier run
			}
			_ = db.Close()
			return false, fmt.Errorf("seeding the demo: %w", err)
		}
	}
	return true, db.Close()
}
