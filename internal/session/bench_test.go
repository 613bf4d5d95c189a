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
