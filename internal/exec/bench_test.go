package exec_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/holiman/uint256"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// batchSource serves one table of n rows (g INT64 = i % 100, x INT64 = i,
// tok STRING one of 20 token symbols, amt UINT256 = i: the balances aggregate's
// shape) from prebuilt 1024-row batches, so a benchmark measures the
// operators.
type batchSource struct {
	*fakeSource
	batches []*types.Batch
	table   *catalog.Table
}

func (s *batchSource) Scan(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error) {
	idx := make([]int, len(spec.Cols))
	for i, id := range spec.Cols {
		for j, c := range s.table.Columns {
			if c.ID == id {
				idx[i] = j
			}
		}
	}
	for _, b := range s.batches {
		// A new batch each time: fn may keep the batches (plan.Source).
		out := &types.Batch{Cols: make([]*types.Vector, len(idx))}
		for i, j := range idx {
			out.Cols[i] = b.Cols[j]
		}
		out.Rows = b.Rows
		if err := fn(out); err != nil {
			return storage.ScanStats{}, err
		}
	}
	return storage.ScanStats{}, nil
}

func newBatchSource(b *testing.B, n int) *batchSource {
	cat := catalog.New()
	i64, str, u256 := types.Of(types.Int64), types.Of(types.String), types.Of(types.Uint256)
	t, _, err := cat.CreateTable(catalog.TableSpec{Name: "big", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{
		{Name: "g", Type: i64}, {Name: "x", Type: i64}, {Name: "tok", Type: str}, {Name: "amt", Type: u256}}}, 1)
	if err != nil {
		b.Fatal(err)
	}
	s := &batchSource{fakeSource: &fakeSource{Cat: cat, Newest: 1}, table: t}
	// bench/'s token symbols, of 2 to 5 bytes, in a random order.
	toks := make([]string, n)
	syms := strings.Fields("USDC USDT DAI WETH WBTC LINK UNI AAVE MKR CRV LDO ARB OP MATIC SNX COMP GRT ENS RPL BAL")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range toks {
		toks[i] = syms[rng.IntN(len(syms))]
	}
	for i := 0; i < n; i += 1024 {
		bt := types.NewBatch([]types.Type{i64, i64, str, u256}, 1024)
		for j := i; j < min(i+1024, n); j++ {
			bt.Cols[0].AppendInt64(int64(j % 100))
			bt.Cols[1].AppendInt64(int64(j))
			bt.Cols[2].AppendString(toks[j])
			w := uint256.NewInt(uint64(j))
			bt.Cols[3].AppendWide(w)
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

// BenchmarkGroupByString is the balances aggregate's shape: 20 STRING
// groups, count(*) and a UINT256 sum (the typed paths of hash_agg.go).
func BenchmarkGroupByString(b *testing.B) {
	bench(b, "SELECT tok, count(*), sum(amt) FROM big GROUP BY tok")
}

// BenchmarkGroupByStringSerial is BenchmarkGroupByString on one goroutine
// (no parallel aggregation): the per-row cost of the fold.
func BenchmarkGroupByStringSerial(b *testing.B) {
	defer exec.SetParallel(exec.SetParallel(false))
	bench(b, "SELECT tok, count(*), sum(amt) FROM big GROUP BY tok")
}

// BenchmarkTopN keeps 10 of 1 M rows in a heap instead of sorting them.
func BenchmarkTopN(b *testing.B) { bench(b, "SELECT x, g FROM big ORDER BY x DESC LIMIT 10") }

// BenchmarkSortLimitAll is the same ORDER BY above the TopN bound: a sort.
func BenchmarkSortLimitAll(b *testing.B) {
	bench(b, "SELECT x, g FROM big ORDER BY x DESC LIMIT 100000")
}

// BenchmarkSemiJoin is IN (subquery) as a semi hash join.
func BenchmarkSemiJoin(b *testing.B) {
	bench(b, "SELECT count(*) FROM big WHERE g IN (SELECT x FROM big WHERE x < 50)")
}

func BenchmarkHashJoin(b *testing.B) {
	bench(b, "SELECT count(*) FROM big a JOIN (SELECT g FROM big WHERE x < 100) s ON a.g = s.g")
}

// BenchmarkSemiJoinResidual is EXISTS correlated through an equality and a
// non-equality: a semi hash join whose residual condition compares the
// outer row's column (before, the subquery ran once per distinct outer
// (g, x): a million runs).
func BenchmarkSemiJoinResidual(b *testing.B) {
	bench(b, "SELECT count(*) FROM big a WHERE EXISTS (SELECT 1 FROM big s WHERE s.x = a.g AND s.x < 50 AND s.g < a.x)")
}

// BenchmarkWindowRowNumber numbers 1 M rows in 1 000 partitions (sort by
// partition and order key, then one pass).
func BenchmarkWindowRowNumber(b *testing.B) {
	bench(b, "SELECT row_number() OVER (PARTITION BY x % 1000 ORDER BY x) FROM big")
}

// BenchmarkWindowRunningSum is a running sum (the default frame) over the
// same partitions: incremental, each row folded once.
func BenchmarkWindowRunningSum(b *testing.B) {
	bench(b, "SELECT sum(x) OVER (PARTITION BY x % 1000 ORDER BY x) FROM big")
}

// BenchmarkWindowSlidingSum is a 10-row sliding sum, which subtracts the
// row leaving the frame.
func BenchmarkWindowSlidingSum(b *testing.B) {
	bench(b, "SELECT sum(x) OVER (PARTITION BY x % 1000 ORDER BY x ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) FROM big")
}

// BenchmarkWindowSlidingMax is a 100-row sliding max: a deque, not a
// refold of every frame.
func BenchmarkWindowSlidingMax(b *testing.B) {
	bench(b, "SELECT max(x) OVER (PARTITION BY x % 1000 ORDER BY x ROWS BETWEEN 99 PRECEDING AND CURRENT ROW) FROM big")
}
