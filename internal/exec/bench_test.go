package exec_test

import (
	"context"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// batchSource serves one table of n rows (g INT64 = i % 100, x INT64 = i)
// from prebuilt 1024-row batches, so a benchmark measures the operators.
type batchSource struct {
	*fakeSource
	batches []*types.Batch
}

func (s *batchSource) Scan(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error) {
	for _, b := range s.batches {
		if err := fn(b); err != nil {
			return storage.ScanStats{}, err
		}
	}
	return storage.ScanStats{}, nil
}

func newBatchSource(b *testing.B, n int) *batchSource {
	cat := catalog.New()
	i64 := types.Of(types.Int64)
	if _, _, err := cat.CreateTable(catalog.TableSpec{Name: "big", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{
		{Name: "g", Type: i64}, {Name: "x", Type: i64}}}, 1); err != nil {
		b.Fatal(err)
	}
	s := &batchSource{fakeSource: &fakeSource{Cat: cat, Newest: 1}}
	for i := 0; i < n; i += 1024 {
		bt := types.NewBatch([]types.Type{i64, i64}, 1024)
		for j := i; j < min(i+1024, n); j++ {
			bt.Cols[0].AppendInt64(int64(j % 100))
			bt.Cols[1].AppendInt64(int64(j))
			bt.Rows++
		}
		s.batches = append(s.batches, bt)
	}
	return s
}

func bench(b *testing.B, sql string) {
	const n = 1 << 20
	src := newBatchSource(b, n)
	stmt, err := parser.Parse(sql)
	if err != nil {
		b.Fatal(err)
	}
	env := &plan.Env{Source: src}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p, err := plan.Build(stmt, env)
		if err != nil {
			b.Fatal(err)
		}
		if err := exec.Run(context.Background(), p, env, func(*types.Batch) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

func BenchmarkFilter(b *testing.B) { bench(b, "SELECT x FROM big WHERE x % 7 = 3 AND g < 50") }
func BenchmarkGroupBy(b *testing.B) {
	bench(b, "SELECT g, count(*), sum(x), max(x) FROM big GROUP BY g")
}
func BenchmarkHashJoin(b *testing.B) {
	bench(b, "SELECT count(*) FROM big a JOIN (SELECT g FROM big WHERE x < 100) s ON a.g = s.g")
}
