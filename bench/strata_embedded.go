package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-db/strata"
)

// strataEmbedded is Strata through its Go API, in this process: each
// batch is one multi-row UPSERT of both groups, the engine settling late
// rows and repeats itself (R3.1, R3.4).
type strataEmbedded struct {
	seed uint64
	dir  string
	db   *strata.DB
	s    *strata.Session
	st   map[string]string
	buf  []byte
	last lookupTrace
	// logPath, if set, receives the engine's debug log (-engine-log).
	logPath string
	logFile *os.File
}

func newStrataEmbedded(seed uint64) *strataEmbedded { return &strataEmbedded{seed: seed} }

func (x *strataEmbedded) Name() string { return "strata" }

func (x *strataEmbedded) Open(ctx context.Context, dir string) error {
	st, err := statements("strata")
	if err != nil {
		return err
	}
	if err := need(st, "strata", "schema", "ingest", "current", "asof", "point", "point_asof", "versions"); err != nil {
		return err
	}
	x.st, x.dir = st, dir
	opts := strata.Options{PageCacheBytes: pageCacheBytes}
	if x.logPath != "" {
		if x.logFile, err = os.Create(x.logPath); err != nil {
			return err
		}
		opts.Logger = slog.New(slog.NewTextHandler(x.logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	x.db, err = strata.Open(dir, opts)
	if err != nil {
		return err
	}
	x.s = x.db.NewSession()
	_, err = x.s.Run(ctx, st["schema"])
	return err
}

// ingestSQL builds the batch's UPSERT.
func ingestSQL(buf []byte, tmpl string, seed uint64, rows []Row) []byte {
	head, tail, _ := strings.Cut(tmpl, "{{rows}}")
	buf = append(buf[:0], head...)
	for i := range rows {
		if i > 0 {
			buf = append(buf, ",\n"...)
		}
		buf = appendRow(buf, seed, &rows[i])
		buf = append(buf, ')')
	}
	return append(buf, tail...)
}

func (x *strataEmbedded) Ingest(ctx context.Context, rows []Row, _ int) (uint64, error) {
	x.buf = ingestSQL(x.buf, x.st["ingest"], x.seed, rows)
	res, err := x.s.Run(ctx, string(x.buf))
	if err != nil {
		return 0, err
	}
	if res.RowsAffected != int64(len(rows)) {
		return 0, fmt.Errorf("UPSERT of %d rows reported %d", len(rows), res.RowsAffected)
	}
	return res.Commit, nil
}

func (x *strataEmbedded) Aggregate(ctx context.Context, commit uint64) (Agg, error) {
	q := x.st["current"]
	if commit > 0 {
		q = withCommit(x.st["asof"], commit)
	}
	res, err := x.s.Run(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make(Agg, 0, len(res.Rows))
	for _, r := range res.Rows {
		n, ok := r[1].Any().(int64)
		if !ok {
			return nil, fmt.Errorf("count(*) came back as %s", r[1].String())
		}
		out = append(out, AggRow{r[0].String(), n, r[2].String()})
	}
	return sortAgg(out), nil
}

func (x *strataEmbedded) Point(ctx context.Context, chain int, address, token string, commit uint64) (string, error) {
	q := x.st["point"]
	if commit > 0 {
		q = withCommit(x.st["point_asof"], commit)
	}
	res, err := x.s.Run(ctx, q, chain, address, token)
	if err != nil {
		return "", err
	}
	switch len(res.Rows) {
	case 0:
		return "", nil
	case 1:
		return res.Rows[0][0].String(), nil
	}
	return "", fmt.Errorf("point lookup returned %d rows", len(res.Rows))
}

func (x *strataEmbedded) Versions(ctx context.Context, chain int, address, token string) (int, error) {
	res, err := x.s.Run(ctx, x.st["versions"], chain, address, token)
	if err != nil {
		return 0, err
	}
	return len(res.Rows), nil
}

// merger is the public call that runs merges to completion, when the root
// package has one (S1's work); the harness finds it by its method so it
// builds either way.
type merger interface {
	MergeNow(ctx context.Context) error
}

func (x *strataEmbedded) Settle(ctx context.Context) (bool, error) {
	m, ok := any(x.db).(merger)
	if !ok {
		return false, nil
	}
	return true, m.MergeNow(ctx)
}

// State lists, per shard, the parts by merge level (level 0: flushed
// deltas; above: merged runs or merged deltas) and the shard's rows and
// bytes, memtables included (system.parts, system.shards).
func (x *strataEmbedded) State(ctx context.Context) (string, error) {
	var b strings.Builder
	res, err := x.s.Run(ctx, "SELECT shard, level, count(*), sum(rows), min(min_commit), max(max_commit) FROM system.parts WHERE table_name = 'balances' GROUP BY shard, level ORDER BY shard, level")
	if err != nil {
		return "", err
	}
	for _, r := range res.Rows {
		fmt.Fprintf(&b, "  shard %s level %s: %s parts, %s rows, commits %s..%s\n", r[0].String(), r[1].String(), r[2].String(), r[3].String(), r[4].String(), r[5].String())
	}
	if res, err = x.s.Run(ctx, "SELECT shard, rows, bytes, parts FROM system.shards WHERE table_name = 'balances' ORDER BY shard"); err != nil {
		return "", err
	}
	for _, r := range res.Rows {
		fmt.Fprintf(&b, "  shard %s: %s rows, %s bytes, %s parts (rows count memtables too)\n", r[0].String(), r[1].String(), r[2].String(), r[3].String())
	}
	return b.String(), nil
}

func (x *strataEmbedded) Bytes(context.Context) (int64, error) { return dirBytes(x.dir) }

// BytesSplit says what total (the data directory's bytes) is made of: the
// parts of the published state by merge level (level 0: flushed deltas),
// the WAL, and the rest, which is mostly the outputs of merges still
// being written beside their inputs.
func (x *strataEmbedded) BytesSplit(ctx context.Context, total int64) (string, error) {
	wal, err := dirBytes(filepath.Join(x.dir, "wal"))
	if err != nil {
		return "", err
	}
	res, err := x.s.Run(ctx, "SELECT level, count(*), sum(bytes) FROM system.parts GROUP BY level ORDER BY level")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var parts int64
	for i, r := range res.Rows {
		n, err := strconv.ParseInt(r[2].String(), 10, 64)
		if err != nil {
			return "", fmt.Errorf("system.parts bytes: %w", err)
		}
		parts += n
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "level %s %s parts %.1f MiB", r[0].String(), r[1].String(), float64(n)/(1<<20))
	}
	return fmt.Sprintf("published parts %.1f MiB (%s), WAL %.1f MiB, other files %.1f MiB (merge outputs not yet published, mostly)",
		float64(parts)/(1<<20), b.String(), float64(wal)/(1<<20), float64(total-parts-wal)/(1<<20)), nil
}

func (x *strataEmbedded) Close() error {
	var err error
	if x.db != nil {
		err = x.db.Close()
	}
	if x.logFile != nil {
		err = errors.Join(err, x.logFile.Close())
		x.logFile = nil
	}
	return err
}
