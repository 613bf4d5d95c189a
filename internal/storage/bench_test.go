package storage

import (
	"context"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// benchEngine opens an engine on the OS file system (real fsyncs) with
// table t of kvSpec.
func benchEngine(b *testing.B, mode catalog.Mode) (*Engine, *catalog.Table) {
	b.Helper()
	// A memtable that never fills: these benchmarks measure memtables,
	// BenchmarkScanFlushed flushes explicitly.
	e, err := Open(b.TempDir(), Options{MemtableBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	if _, err := e.Commit(context.Background(), &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
		_, _, err := c.CreateTable(kvSpec("t", mode), n)
		return err
	}}); err != nil {
		b.Fatal(err)
	}
	t, _ := e.Catalog().Table("t")
	return e, t
}

// benchWrite builds a version batch of rows keys from first, at idx.
func benchWrite(t *catalog.Table, first, rows int, idx int64) Write {
	g, _ := t.Group("g")
	batch := types.NewBatch([]types.Type{types.Of(types.Int64), types.Of(types.String), types.Of(types.Int64)}, rows)
	for i := 0; i < rows; i++ {
		batch.Cols[0].AppendInt64(int64(first + i))
		batch.Cols[1].AppendString("value-of-some-length")
		batch.Cols[2].AppendInt64(idx)
	}
	batch.Rows = rows
	return Write{Kind: WriteVersion, Table: t.ID, Group: g.ID, Cols: append(append([]catalog.ColumnID(nil), t.Key...), g.Columns...), Batch: batch}
}

func fill(b *testing.B, e *Engine, t *catalog.Table, keys, versions int) {
	b.Helper()
	for v := 0; v < versions; v++ {
		for k := 0; k < keys; k += 10000 {
			w := benchWrite(t, k, min(10000, keys-k), int64(v+1))
			if _, err := e.Commit(context.Background(), &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCommitVersions commits 10 000-row version batches, fsync on.
func BenchmarkCommitVersions(b *testing.B) {
	e, t := benchEngine(b, catalog.ModeVersioned)
	ctx := context.Background()
	ws := make([]Write, b.N)
	for i := range ws {
		ws[i] = benchWrite(t, (i%10)*10000, 10000, int64(i+1))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{ws[i]}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "versions/s")
}

func benchScan(b *testing.B, keys, versions int, asOf func(e *Engine) uint64) {
	e, t := benchEngine(b, catalog.ModeVersioned)
	fill(b, e, t, keys, versions)
	ctx := context.Background()
	spec := ScanSpec{Table: t.ID, Cols: allCols(t), Commit: true, AsOf: asOf(e)}
	b.ResetTimer()
	rows := 0
	for i := 0; i < b.N; i++ {
		snap := e.Snapshot()
		if _, err := snap.Scan(ctx, spec, func(bt *types.Batch) error { rows += bt.Rows; return nil }); err != nil {
			b.Fatal(err)
		}
		snap.Release()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScanCurrent reads 100 000 keys (3 versions each) at the newest
// commit.
func BenchmarkScanCurrent(b *testing.B) {
	benchScan(b, 100000, 3, func(*Engine) uint64 { return 0 })
}

// BenchmarkScanAsOf reads the same table AS OF a commit in the middle of
// its history, where the winner is not the newest version.
func BenchmarkScanAsOf(b *testing.B) {
	benchScan(b, 100000, 3, func(e *Engine) uint64 { return e.LastCommit() - 12 })
}

// BenchmarkLookup reads one key of 100 000 by its full key.
func BenchmarkLookup(b *testing.B) { benchLookup(b, false) }

// BenchmarkLookupFlushed reads one key of 100 000 held in parts.
func BenchmarkLookupFlushed(b *testing.B) { benchLookup(b, true) }

func benchLookup(b *testing.B, flush bool) {
	e, t := benchEngine(b, catalog.ModeVersioned)
	fill(b, e, t, 100000, 2)
	ctx := context.Background()
	if flush {
		if err := e.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	spec := ScanSpec{Cols: allCols(t)}
	snap := e.Snapshot()
	defer snap.Release()
	key := make([]types.Value, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key[0] = types.NewInt64(int64(i*7919) % 100000)
		if _, ok, err := snap.Lookup(ctx, t.ID, key, spec); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkScanFlushed reads 100 000 keys (3 versions each) from parts.
func BenchmarkScanFlushed(b *testing.B) {
	benchScan(b, 100000, 3, func(e *Engine) uint64 {
		if err := e.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		return 0
	})
}

// BenchmarkCommitParallel commits one-row transactions from many
// goroutines: group commit shares each fsync among the waiting commits.
func BenchmarkCommitParallel(b *testing.B) {
	e, t := benchEngine(b, catalog.ModeUpsert)
	ctx := context.Background()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{benchWrite(t, i, 1, 1)}}); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	st := e.wal.Stats()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
	b.ReportMetric(float64(st.Records)/float64(max(st.Batches, 1)), "commits/fsync")
}
