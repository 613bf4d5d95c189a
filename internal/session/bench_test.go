package session

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/storage"
)

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
	run := func(sql string) {
		stmt, err := parser.Parse(sql)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Execute(ctx, stmt, sql, nil); err != nil {
			b.Fatal(err)
		}
	}
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
			run := func(sql string) {
				stmt, err := parser.Parse(sql)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Execute(ctx, stmt, sql, nil); err != nil {
					b.Fatal(err)
				}
			}
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
