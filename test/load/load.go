// Package load is the concurrent load of issue 5, item 6: many connections
// each run a mix of upserts into two attribute groups, point reads and AS OF
// reads over the PostgreSQL protocol, then the final state is checked
// against the statements applied one by one in commit order.
//
// The check leans on the server only for commit numbers: every upsert
// writes a value no other upsert writes, so versions(acct) says at which
// commit each acknowledged upsert landed; replaying them in that order with
// the rule of SPEC R3.1 (greatest VALID BY value, then the later commit)
// must give the current table, every AS OF read taken during the load, and
// the commits one connection saw must rise. The ordering values come from a
// small range, so ties, which only commit order settles, are common, and so
// are late writes.
//
// load_test.go runs a short variant in CI and the full one (64 connections
// × 1 000 statements) with STRATA_LOAD_FULL=1; STRATA_LOAD_PG=host:port runs
// the same mix against PostgreSQL for comparison, logging both.
package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Config sizes a run.
type Config struct {
	Conns int // concurrent connections
	Stmts int // statements each connection runs
	Keys  int // distinct keys
	// Indexes is the range of the VALID BY values; small means many ties.
	Indexes int
	Seed    uint64
}

// Dialect is the server under load.
type Dialect int

const (
	// Strata runs the mix with UPSERT … ATTRIBUTE GROUP and AS OF COMMIT.
	Strata Dialect = iota
	// PG runs the nearest PostgreSQL equivalents: INSERT … ON CONFLICT with
	// the same ordering rule in its WHERE, and a plain point read where
	// Strata reads AS OF (PostgreSQL keeps no versions to read).
	PG
)

// op is what one statement was.
type op uint8

const (
	opUpsert1 op = iota // holding-like group g1: bal, bal_idx
	opUpsert2           // group g2: cnt, cnt_idx
	opRead              // current point read
	opAsOf              // AS OF COMMIT read (Strata), preceded by SELECT last_commit()
	opLastCommit
	nOps
)

var opNames = [nOps]string{"upsert g1", "upsert g2", "point read", "AS OF read", "last_commit()"}

// row is what a read returned; a NULL is -1 (values are never negative).
type row struct {
	found                  bool
	bal, balIdx, cnt, cIdx int64
}

// asOfRead is one AS OF read to check afterwards.
type asOfRead struct {
	id     int64
	commit int64
	got    row
}

// write is one acknowledged upsert.
type write struct {
	group      int // 1 or 2
	id, v, idx int64
}

// worker is what one connection did.
type worker struct {
	lat     [nOps][]time.Duration
	writes  []write
	asOf    []asOfRead
	commits []int64 // last_commit() answers, in order
	reads   []struct {
		id  int64
		got row
	}
}

// Result is a run's numbers and what the checks need.
type Result struct {
	Statements int
	Elapsed    time.Duration
	workers    []*worker
}

// PerSecond is the run's throughput in statements per second.
func (r *Result) PerSecond() float64 { return float64(r.Statements) / r.Elapsed.Seconds() }

// Percentile returns the latency below which the fraction p (0..1) of the
// statements of every kind finished.
func (r *Result) Percentile(p float64) time.Duration {
	var all []time.Duration
	for _, w := range r.workers {
		for _, l := range w.lat {
			all = append(all, l...)
		}
	}
	return percentile(all, p)
}

// Summary is one line per statement kind: count, p50, p99.
func (r *Result) Summary() string {
	s := ""
	for o := range nOps {
		var all []time.Duration
		for _, w := range r.workers {
			all = append(all, w.lat[o]...)
		}
		if len(all) == 0 {
			continue
		}
		s += fmt.Sprintf("  %-14s %6d  p50 %8s  p99 %8s\n", opNames[o], len(all), percentile(all, 0.5), percentile(all, 0.99))
	}
	return s
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(p * float64(len(d)))
	if i >= len(d) {
		i = len(d) - 1
	}
	return d[i].Round(time.Microsecond)
}

// Setup creates the table (dropping an earlier one).
func Setup(ctx context.Context, url string, d Dialect) error {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	create := `CREATE TABLE acct (id BIGINT NOT NULL, bal BIGINT NULL, bal_idx BIGINT NULL, cnt BIGINT NULL, cnt_idx BIGINT NULL,
  PRIMARY KEY (id),
  ATTRIBUTE GROUP g1 (bal, bal_idx) VALID BY (bal_idx),
  ATTRIBUTE GROUP g2 (cnt, cnt_idx) VALID BY (cnt_idx))
MODE VERSIONED`
	if d == PG {
		create = `CREATE TABLE acct (id BIGINT PRIMARY KEY, bal BIGINT, bal_idx BIGINT, cnt BIGINT, cnt_idx BIGINT)`
	}
	for _, sql := range []string{"DROP TABLE IF EXISTS acct", create} {
		if _, err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// statements are the texts of one dialect, by op.
func statements(d Dialect) [nOps]string {
	if d == PG {
		return [nOps]string{
			`INSERT INTO acct (id, bal, bal_idx) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE
  SET bal = EXCLUDED.bal, bal_idx = EXCLUDED.bal_idx WHERE acct.bal_idx IS NULL OR acct.bal_idx <= EXCLUDED.bal_idx`,
			`INSERT INTO acct (id, cnt, cnt_idx) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE
  SET cnt = EXCLUDED.cnt, cnt_idx = EXCLUDED.cnt_idx WHERE acct.cnt_idx IS NULL OR acct.cnt_idx <= EXCLUDED.cnt_idx`,
			`SELECT bal, bal_idx, cnt, cnt_idx FROM acct WHERE id = $1`,
			`SELECT bal, bal_idx, cnt, cnt_idx FROM acct WHERE id = $1`,
			`SELECT pg_current_xact_id_if_assigned()`,
		}
	}
	return [nOps]string{
		`UPSERT INTO acct (id, bal, bal_idx) VALUES ($1, $2, $3) ATTRIBUTE GROUP g1`,
		`UPSERT INTO acct (id, cnt, cnt_idx) VALUES ($1, $2, $3) ATTRIBUTE GROUP g2`,
		`SELECT bal, bal_idx, cnt, cnt_idx FROM acct WHERE id = $1`,
		`SELECT bal, bal_idx, cnt, cnt_idx FROM acct AS OF COMMIT %d WHERE id = $1`,
		`SELECT last_commit()`,
	}
}

// Run runs the mix: cfg.Conns connections, each cfg.Stmts statements
// (an AS OF read counts as two: last_commit() and the read).
func Run(ctx context.Context, url string, d Dialect, cfg Config) (*Result, error) {
	sqls := statements(d)
	conns := make([]*pgx.Conn, cfg.Conns)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close(context.Background())
			}
		}
	}()
	for i := range conns {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %w", i, err)
		}
		conns[i] = c
	}
	res := &Result{workers: make([]*worker, cfg.Conns)}
	errs := make([]error, cfg.Conns)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range conns {
		w := &worker{}
		for o := range nOps {
			w.lat[o] = make([]time.Duration, 0, cfg.Stmts)
		}
		res.workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.run(ctx, conns[i], d, sqls, cfg, i)
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, w := range res.workers {
		for _, l := range w.lat {
			res.Statements += len(l)
		}
	}
	return res, nil
}

func (w *worker) run(ctx context.Context, c *pgx.Conn, d Dialect, sqls [nOps]string, cfg Config, n int) error {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(n)))
	var last int64
	timed := func(o op, f func() error) error {
		t0 := time.Now()
		err := f()
		w.lat[o] = append(w.lat[o], time.Since(t0))
		if err != nil {
			return fmt.Errorf("connection %d, %s: %w", n, opNames[o], err)
		}
		return nil
	}
	read := func(sql string, id int64) (row, error) {
		var r row
		var bal, balIdx, cnt, cIdx *int64
		var args []any
		if d == Strata && sql != sqls[opRead] {
			// An AS OF read's text changes with its commit: sent unprepared
			// (Parse, Bind, Execute in one round trip), not cached.
			args = append(args, pgx.QueryExecModeExec)
		}
		err := c.QueryRow(ctx, sql, append(args, id)...).Scan(&bal, &balIdx, &cnt, &cIdx)
		if errors.Is(err, pgx.ErrNoRows) {
			return r, nil
		}
		if err != nil {
			return r, err
		}
		r.found = true
		r.bal, r.balIdx, r.cnt, r.cIdx = orNull(bal), orNull(balIdx), orNull(cnt), orNull(cIdx)
		return r, nil
	}
	for i := 0; i < cfg.Stmts; i++ {
		id := int64(rng.IntN(cfg.Keys))
		switch p := rng.IntN(100); {
		case p < 60:
			wr := write{group: 1, id: id, v: int64(n)*1_000_000 + int64(i), idx: int64(rng.IntN(cfg.Indexes))}
			o := opUpsert1
			if p >= 30 {
				wr.group, o = 2, opUpsert2
			}
			if err := timed(o, func() error {
				tag, err := c.Exec(ctx, sqls[o], wr.id, wr.v, wr.idx)
				if err == nil && tag.RowsAffected() != 1 && d == Strata {
					err = fmt.Errorf("tag %q, want 1 row (R3.6)", tag)
				}
				return err
			}); err != nil {
				return err
			}
			w.writes = append(w.writes, wr)
		case p < 85 || len(w.writes) == 0 && d == Strata:
			var got row
			if err := timed(opRead, func() (err error) { got, err = read(sqls[opRead], id); return }); err != nil {
				return err
			}
			w.reads = append(w.reads, struct {
				id  int64
				got row
			}{id, got})
		default:
			// The connection's own newest commit, then the table a few
			// commits before it: a commit other connections are still
			// writing around.
			if err := timed(opLastCommit, func() error {
				if d == PG {
					_, err := c.Exec(ctx, sqls[opLastCommit])
					return err
				}
				return c.QueryRow(ctx, sqls[opLastCommit]).Scan(&last)
			}); err != nil {
				return err
			}
			i++
			if d == PG {
				if err := timed(opAsOf, func() error { _, err := read(sqls[opAsOf], id); return err }); err != nil {
					return err
				}
				continue
			}
			w.commits = append(w.commits, last)
			at := max(1, last-int64(rng.IntN(20)))
			var got row
			if err := timed(opAsOf, func() (err error) {
				got, err = read(fmt.Sprintf(sqls[opAsOf], at), id)
				return
			}); err != nil {
				return err
			}
			w.asOf = append(w.asOf, asOfRead{id: id, commit: at, got: got})
		}
	}
	return nil
}

func orNull(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
