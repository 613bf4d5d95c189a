package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // database/sql driver "duckdb"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// sqlPeer is PostgreSQL, SQLite or DuckDB through database/sql, running
// the statements of bench/peers/NAME.sql: a current table and a history
// table, both written in one transaction per batch.
type sqlPeer struct {
	name string
	seed uint64
	// open starts the server when there is one and returns the driver name
	// and DSN.
	open func(ctx context.Context, dir string) (driver, dsn string, err error)
	// bytes measures the size on disk when the peer has no SQL for it.
	bytes func(ctx context.Context, db *sql.DB) (int64, error)
	stop  func() error
	// server says the peer is a server reached over a socket.
	server bool

	sqlReads
	buf    []byte
	merged []Row
}

func (p *sqlPeer) Name() string { return p.name }

func (p *sqlPeer) overWire() bool { return p.server }

// serverPID is the PostgreSQL backend serving the harness's one
// connection; 0 (no server process to read) for an in-process peer.
func (p *sqlPeer) serverPID(ctx context.Context) (int, error) {
	if !p.server {
		return 0, nil
	}
	var pid int
	err := p.db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid)
	return pid, err
}

func (p *sqlPeer) Open(ctx context.Context, dir string) error {
	st, err := statements(p.name)
	if err != nil {
		return err
	}
	if err := need(st, p.name, "schema", "ingest_current", "ingest_history", "current", "asof", "point", "point_asof", "versions", "settle"); err != nil {
		return err
	}
	p.st = st
	driver, dsn, err := p.open(ctx, dir)
	if err != nil {
		return err
	}
	if p.db, err = sql.Open(driver, dsn); err != nil {
		return err
	}
	// One connection: the workload is one writer then one reader, and an
	// in-process engine's settings (SQLite's pragmas) hold per connection.
	p.db.SetMaxOpenConns(1)
	if err := p.execAll(ctx, st["schema"]); err != nil {
		return fmt.Errorf("%s schema: %w", p.name, err)
	}
	if p.point, err = p.db.PrepareContext(ctx, st["point"]); err != nil {
		return err
	}
	if p.versions, err = p.db.PrepareContext(ctx, st["versions"]); err != nil {
		return err
	}
	return nil
}

// currentRows collapses a batch to one row per key for the current table:
// the key's greatest version in the batch. PostgreSQL and DuckDB refuse to
// update one row twice in a command, so a client must do this; the
// statement's WHERE still settles the row against what the table holds.
// In this workload activity_index is balance_index*100 + balance_version,
// so one row is the winner of both groups.
func (p *sqlPeer) currentRows(rows []Row) []Row {
	at := make(map[int32]int, len(rows))
	out := p.merged[:0]
	for _, r := range rows {
		i, ok := at[r.Key]
		if !ok {
			at[r.Key] = len(out)
			out = append(out, r)
			continue
		}
		if w := &out[i]; r.Index > w.Index || (r.Index == w.Index && r.Version > w.Version) {
			*w = r
		}
	}
	p.merged = out
	return out
}

// historyRows drops exact repeats inside a batch (the history's key is
// (key, balance_index, balance_version); ON CONFLICT DO NOTHING drops the
// ones already stored).
func historyRows(rows []Row, buf []Row) []Row {
	type vk struct {
		k    int32
		i, v uint64
	}
	seen := make(map[vk]bool, len(rows))
	out := buf[:0]
	for _, r := range rows {
		key := vk{r.Key, r.Index, r.Version}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, r)
	}
	return out
}

func (p *sqlPeer) Ingest(ctx context.Context, rows []Row, batch int) (uint64, error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	p.buf = ingestSQL(p.buf, p.st["ingest_current"], p.seed, p.currentRows(rows))
	if _, err := tx.ExecContext(ctx, string(p.buf)); err != nil {
		return 0, fmt.Errorf("%s current upsert: %w", p.name, err)
	}
	p.buf = batchSQL(p.buf, p.st["ingest_history"], p.seed, historyRows(rows, nil), batch)
	if _, err := tx.ExecContext(ctx, string(p.buf)); err != nil {
		return 0, fmt.Errorf("%s history insert: %w", p.name, err)
	}
	return uint64(batch), tx.Commit()
}

// batchSQL fills tmpl's {{rows}} with rows, each followed by batch (the
// history's and the staging table's commit_seq), into buf's memory.
func batchSQL(buf []byte, tmpl string, seed uint64, rows []Row, batch int) []byte {
	head, tail, _ := strings.Cut(tmpl, "{{rows}}")
	buf = append(buf[:0], head...)
	suffix := fmt.Sprintf(", %d)", batch)
	for i := range rows {
		if i > 0 {
			buf = append(buf, ",\n"...)
		}
		buf = appendRow(buf, seed, &rows[i])
		buf = append(buf, suffix...)
	}
	return append(buf, tail...)
}

// sqlReads are the reads R2–R5 through database/sql, the same for every
// system spoken to in SQL (the peers and Strata over pgwire): st holds the
// system's statements (bench/peers/*.sql).
type sqlReads struct {
	db          *sql.DB
	st          map[string]string
	point, past *sql.Stmt // prepared R1; R4 is prepared per commit
	pastAt      uint64
	versions    *sql.Stmt
}

func (p *sqlReads) Aggregate(ctx context.Context, commit uint64) (Agg, error) {
	q := p.st["current"]
	if commit > 0 {
		q = withCommit(p.st["asof"], commit)
	}
	rs, err := p.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out Agg
	for rs.Next() {
		var r AggRow
		if err := rs.Scan(&r.Token, &r.Count, &r.Sum); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return sortAgg(out), rs.Err()
}

func (p *sqlReads) Point(ctx context.Context, chain int, address, token string, commit uint64) (string, error) {
	stmt := p.point
	if commit > 0 {
		if p.past == nil || p.pastAt != commit {
			if p.past != nil {
				p.past.Close()
			}
			var err error
			if p.past, err = p.db.PrepareContext(ctx, withCommit(p.st["point_asof"], commit)); err != nil {
				return "", err
			}
			p.pastAt = commit
		}
		stmt = p.past
	}
	var v sql.NullString
	err := stmt.QueryRowContext(ctx, chain, address, token).Scan(&v)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return v.String, err
}

func (p *sqlReads) Versions(ctx context.Context, chain int, address, token string) (int, error) {
	rs, err := p.versions.QueryContext(ctx, chain, address, token)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	n := 0
	for rs.Next() {
		n++
	}
	return n, rs.Err()
}

func (p *sqlPeer) Settle(ctx context.Context) (bool, error) {
	_, err := p.db.ExecContext(ctx, p.st["settle"])
	return true, err
}

func (p *sqlPeer) Bytes(ctx context.Context) (int64, error) {
	if q, ok := p.st["bytes"]; ok {
		var n int64
		err := p.db.QueryRowContext(ctx, q).Scan(&n)
		return n, err
	}
	return p.bytes(ctx, p.db)
}

func (p *sqlPeer) Close() error {
	var err error
	if p.db != nil {
		err = p.db.Close()
	}
	if p.stop != nil {
		if e := p.stop(); err == nil {
			err = e
		}
	}
	return err
}

// newSQLite is SQLite in WAL mode with synchronous=FULL: every commit is
// durable, as Strata's and PostgreSQL's are.
func newSQLite(seed uint64) *sqlPeer {
	var dir string
	return &sqlPeer{
		name: "sqlite", seed: seed,
		open: func(_ context.Context, d string) (string, string, error) {
			dir = d
			path := filepath.Join(d, "bench.db")
			return "sqlite", "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=cache_size(-262144)", nil
		},
		bytes: func(context.Context, *sql.DB) (int64, error) { return dirBytes(dir) },
	}
}

// newDuckDB is DuckDB in one database file; DuckDB writes its WAL on every
// commit and checkpoints it into the file once the WAL passes
// duckdbCheckpointThreshold.
func newDuckDB(seed uint64) *sqlPeer {
	var dir string
	return &sqlPeer{
		name: "duckdb", seed: seed,
		open: func(_ context.Context, d string) (string, string, error) {
			dir = d
			return "duckdb", filepath.Join(d, "bench.duckdb") + "?checkpoint_threshold=" + duckdbCheckpointThreshold, nil
		},
		bytes: func(context.Context, *sql.DB) (int64, error) { return dirBytes(dir) },
	}
}

// duckdbCheckpointThreshold is the WAL size at which DuckDB checkpoints:
// PostgreSQL's default max_wal_size, so both peers keep about as much WAL
// between checkpoints. Under DuckDB's default (16 MB) its ingest slowed
// as the tables grew, to ~550 rows/s at medium scale (five hours for W1):
// a checkpoint writes a table's ART index out whole, not only what
// changed (duckdb/duckdb#24848). With 1GB the medium ingest takes an
// hour, 2.7 k rows/s (docs/benchmarks.md, 2026-12-06, sixth session).
const duckdbCheckpointThreshold = "1GB"

// newPostgres is a throwaway PostgreSQL server started for the run.
func newPostgres(seed uint64) *sqlPeer {
	p := &sqlPeer{name: "postgres", seed: seed, server: true}
	var srv *pgServer
	p.open = func(ctx context.Context, d string) (string, string, error) {
		var err error
		if srv, err = startPostgres(ctx, d); err != nil {
			return "", "", err
		}
		return "pgx", srv.dsn, nil
	}
	p.stop = func() error {
		if srv == nil {
			return nil
		}
		return srv.stop()
	}
	return p
}
