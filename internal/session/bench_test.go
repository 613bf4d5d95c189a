package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/storage"
)

// benchExec returns a function that parses and runs one statement on s,
// failing b on any error.
func benchExec(b *testing.B, s *Session) func(sql string) {
	return func(sql string) {
		stmt, err := parser.Parse(sql)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Execute(context.Background(), stmt, sql, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsertValues measures a 10 000-row INSERT … VALUES into the
// seed's two-group table: evaluation, casts, the split by group and one
// commit, parse excluded.
func BenchmarkInsertValues(b *testing.B) {
	eng, err := storage.Open(b.TempDir(), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	s := New(eng, Options{})
	ctx := context.Background()
	run := benchExec(b, s)
	run(`CREATE TABLE balances (chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
		amount UINT256 NULL, updated_at DATETIME64(3, 'UTC') NULL, balance_index UINT128 NULL, balance_version UINT64 NULL,
		note STRING, PRIMARY KEY (chain_id, address, token),
		ATTRIBUTE GROUP holding (amount, updated_at, balance_index, balance_version) VALID BY (balance_index) REVISION BY (balance_version))
		MODE VERSIONED`)
	const rows = 10000
	var sb strings.Builder
	sb.WriteString("INSERT INTO balances VALUES ")
	for i := 0; i < rows; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(1, '0x%08x', 'USDC', %d, '2026-10-01 12:05:00.000', %d, 1, 'n')", i, 2750000000+i, 1000+i)
	}
	sql := sb.String()
	stmt, err := parser.Parse(sql)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if _, err := s.Execute(ctx, stmt, sql, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkTxnPointRead measures a point SELECT inside a transaction that
// has written one row, over a table of 10 000 committed rows still in the
// memtable: "fresh" writes before every read, so each read builds the
// pending view (Snapshot.WithPending copies the touched shard's
// memtable); "reused" reads with nothing new, so the view is reused.
func BenchmarkTxnPointRead(b *testing.B) {
	for _, mode := range []string{"fresh", "reused"} {
		b.Run(mode, func(b *testing.B) {
			eng, err := storage.Open(b.TempDir(), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			s := New(eng, Options{})
			ctx := context.Background()
			run := benchExec(b, s)
			run(`CREATE TABLE t (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE UPSERT`)
			var sb strings.Builder
			sb.WriteString("INSERT INTO t VALUES ")
			for i := 0; i < 10000; i++ {
				if i > 0 {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "(%d, %d)", i, i)
			}
			run(sb.String())
			run("BEGIN")
			run("INSERT INTO t VALUES (-1, 0)")
			sel, err := parser.Parse("SELECT v FROM t WHERE k = 5")
			if err != nil {
				b.Fatal(err)
			}
			ins, err := parser.Parse("INSERT INTO t VALUES (-2, 0)")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if mode == "fresh" {
					if _, err := s.Execute(ctx, ins, "", nil); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := s.Execute(ctx, sel, "", nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			run("ROLLBACK")
		})
	}
}

// BenchmarkTransformation measures a transformation keeping up with its
// source (R12.2): per op, a 1 000-row INSERT into the conformance script's
// transfers table, then SYNC TRANSFORMATIONS, which returns once the
// runner has read the new rows and committed the changed groups. "aggregate"
// keeps balances' activity group (count and max per address of both
// sides, UNION ALL, 10 000 addresses); "rows" copies the rows with a
// filter; "none" is the INSERT alone, for the ratio.
func BenchmarkTransformation(b *testing.B) {
	for _, kind := range []string{"none", "rows", "aggregate"} {
		b.Run(kind, func(b *testing.B) {
			eng, err := storage.Open(b.TempDir(), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			s := New(eng, Options{})
			run := benchExec(b, s)
			run(`CREATE TABLE transfers (chain_id UINT16 NOT NULL, from_address STRING NOT NULL, to_address STRING NOT NULL,
				token STRING NOT NULL, amount UINT256 NOT NULL, transfer_index UINT128 NOT NULL) MODE APPEND`)
			run(`CREATE TABLE balances (chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
				transfer_count UINT64 NULL, activity_index UINT128 NULL, PRIMARY KEY (chain_id, address, token),
				ATTRIBUTE GROUP activity (transfer_count, activity_index) VALID BY (activity_index)) MODE VERSIONED`)
			run(`CREATE TABLE big (chain_id UINT16 NOT NULL, from_address STRING NOT NULL, amount UINT256 NOT NULL) MODE APPEND`)
			switch kind {
			case "rows":
				run(`CREATE TRANSFORMATION t INTO big AS SELECT chain_id, from_address, amount FROM transfers WHERE amount > 10`)
			case "aggregate":
				run(`CREATE TRANSFORMATION t INTO balances ATTRIBUTE GROUP activity AS
					SELECT chain_id, address, token, count(*) AS transfer_count, max(transfer_index) AS activity_index
					FROM (SELECT chain_id, from_address AS address, token, transfer_index FROM transfers
					      UNION ALL SELECT chain_id, to_address AS address, token, transfer_index FROM transfers) AS sides
					GROUP BY chain_id, address, token`)
			}
			const rows = 1000
			batches := make([]string, 16)
			for i := range batches {
				var sb strings.Builder
				sb.WriteString("INSERT INTO transfers VALUES ")
				for r := 0; r < rows; r++ {
					if r > 0 {
						sb.WriteString(", ")
					}
					n := i*rows + r
					fmt.Fprintf(&sb, "(1, '0x%08x', '0x%08x', 'USDC', %d, %d)", n*7919%10000, n*104729%10000, n%100, n)
				}
				batches[i] = sb.String()
			}
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				run(batches[n%len(batches)])
				run("SYNC TRANSFORMATIONS")
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkTransformationRestart measures what an aggregate transformation
// costs over rows already in its source: "catchup" creates it over 200 000
// rows (100 000 addresses) and waits for SYNC, which reads them in steps of
// at most maxDeltaRows; "restart" closes and reopens the engine and runs
// one small INSERT and SYNC, which first rebuilds the state from the source
// as of the checkpoint (docs/transformations.md).
func BenchmarkTransformationRestart(b *testing.B) {
	const rows = 200000
	setup := func(b *testing.B, dir string) (*storage.Engine, func(string)) {
		eng, err := storage.Open(dir, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return eng, benchExec(b, New(eng, Options{}))
	}
	fill := func(run func(string)) {
		run(`CREATE TABLE transfers (chain_id UINT16 NOT NULL, from_address STRING NOT NULL, token STRING NOT NULL,
			amount UINT256 NOT NULL) MODE APPEND`)
		run(`CREATE TABLE totals (chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
			n INT64 NULL, total UINT256 NULL, PRIMARY KEY (chain_id, address, token)) MODE UPSERT`)
		for i := 0; i < rows; i += 10000 {
			var sb strings.Builder
			sb.WriteString("INSERT INTO transfers VALUES ")
			for r := i; r < i+10000; r++ {
				if r > i {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "(1, '0x%08x', 'USDC', %d)", r*7919%100000, r%1000)
			}
			run(sb.String())
		}
	}
	const create = `CREATE TRANSFORMATION t INTO totals AS SELECT chain_id, from_address AS address, token,
		count(*) AS n, sum(amount) AS total FROM transfers GROUP BY chain_id, from_address, token`
	b.Run("catchup", func(b *testing.B) {
		for n := 0; n < b.N; n++ {
			b.StopTimer()
			eng, run := setup(b, b.TempDir())
			fill(run)
			b.StartTimer()
			run(create)
			run("SYNC TRANSFORMATIONS")
			b.StopTimer()
			eng.Close()
		}
		b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("restart", func(b *testing.B) {
		dir := b.TempDir()
		eng, run := setup(b, dir)
		fill(run)
		run(create)
		run("SYNC TRANSFORMATIONS")
		eng.Close()
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			eng, run := setup(b, dir)
			run(fmt.Sprintf("INSERT INTO transfers VALUES (1, '0x%08x', 'USDC', 1)", n))
			run("SYNC TRANSFORMATIONS")
			b.StopTimer()
			eng.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkConcurrentUpdates measures one-row UPDATEs from 8 sessions at
// once, each of its own key (distinct: no statement conflicts) or all of
// one key (every commit outdates the others' reads, which run again):
// the cost of reading under a Watch and of the conflict check and
// retries, against the WAL's group commit.
func BenchmarkConcurrentUpdates(b *testing.B) {
	for _, shared := range []bool{false, true} {
		name := "distinct"
		if shared {
			name = "one-key"
		}
		b.Run(name, func(b *testing.B) {
			eng, err := storage.Open(b.TempDir(), storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			benchExec(b, New(eng, Options{}))("CREATE TABLE ctr (k INT64 NOT NULL, v INT64 NOT NULL, PRIMARY KEY (k)) MODE UPSERT")
			benchExec(b, New(eng, Options{}))("INSERT INTO ctr SELECT k, 0 FROM generate_series(0, 7) AS g(k)")
			const sessions = 8
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for i := range sessions {
				run := benchExec(b, New(eng, Options{}))
				key := i
				if shared {
					key = 0
				}
				sql := fmt.Sprintf("UPDATE ctr SET v = v + 1 WHERE k = %d", key)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						run(sql)
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}
