package storage

import (
	"context"
	"flag"
	"fmt"
	"github.com/strata-db/strata/internal/cputime"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
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

// benchWriteKeys builds a version batch of the given keys, at idx.
func benchWriteKeys(t *catalog.Table, keys []int, idx int64) Write {
	w := benchWrite(t, 0, 0, idx)
	for _, k := range keys {
		w.Batch.Cols[0].AppendInt64(int64(k))
		w.Batch.Cols[1].AppendString("value-of-some-length")
		w.Batch.Cols[2].AppendInt64(idx)
	}
	w.Batch.Rows = len(keys)
	return w
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
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{ws[i]}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "versions/s")
	// The process's CPU per commit: on a shared machine wall time (and so
	// versions/s) mostly measures the other load.
	b.ReportMetric(float64(cputime.Process()-cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkCommitTwoGroups commits 10 000 keys of both groups of a
// two-group table per commit, two version writes of the same rows as W1's
// UPSERT gives storage, fsync on.
func BenchmarkCommitTwoGroups(b *testing.B) {
	e, err := Open(b.TempDir(), Options{MemtableBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	if _, err := e.Commit(ctx, &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
		_, _, err := c.CreateTable(prepSpec(), n)
		return err
	}}); err != nil {
		b.Fatal(err)
	}
	t, _ := e.Catalog().Table("t")
	groupWrite := func(group string, first int, idx int64) Write {
		g, _ := t.Group(group)
		batch := types.NewBatch([]types.Type{types.Of(types.Int64), types.Of(types.String), types.Of(types.Int64)}, 10000)
		for i := range 10000 {
			batch.Cols[0].AppendInt64(int64(first + i))
			batch.Cols[1].AppendString("value-of-some-length")
			batch.Cols[2].AppendInt64(idx)
		}
		batch.Rows = 10000
		return Write{Kind: WriteVersion, Table: t.ID, Group: g.ID, Cols: append(append([]catalog.ColumnID(nil), t.Key...), g.Columns...), Batch: batch}
	}
	txns := make([]*Txn, b.N)
	for i := range txns {
		first := (i % 10) * 10000
		txns[i] = &Txn{Kind: KindWrite, Writes: []Write{groupWrite("g", first, int64(i+1)), groupWrite("h", first, int64(i+1))}}
	}
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		if _, err := e.Commit(ctx, txns[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*20000/b.Elapsed().Seconds(), "versions/s")
	b.ReportMetric(float64(cputime.Process()-cpu)/1e6/float64(b.N), "cpu-ms/op")
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

var (
	balKeys     = flag.Int("storage.keys", 100_000, "keys of BenchmarkBalances")
	balVersions = flag.Int("storage.versions", 10, "holding versions per key of BenchmarkBalances")
	balNoIndex  = flag.Bool("storage.noasofindex", false, "merges of BenchmarkBalances and BenchmarkMergeFull write no AS OF index (Options.AsOfIndex off)")
)

// balancesSpec is the seed's balances schema: a three-column key, a
// holding group ordered by (balance_index, balance_version) and an
// activity group ordered by activity_index.
func balancesSpec() catalog.TableSpec {
	return catalog.TableSpec{
		Name: "balances", Mode: catalog.ModeVersioned,
		Columns: []catalog.ColumnSpec{
			{Name: "chain_id", Type: types.Of(types.Uint16), NotNull: true},
			{Name: "address", Type: types.Of(types.String), NotNull: true},
			{Name: "token", Type: types.Of(types.String), NotNull: true},
			{Name: "amount", Type: types.Of(types.Uint256)},
			{Name: "balance_index", Type: types.Of(types.Uint128)},
			{Name: "balance_version", Type: types.Of(types.Uint64)},
			{Name: "transfer_count", Type: types.Of(types.Uint64)},
			{Name: "activity_index", Type: types.Of(types.Uint128)},
		},
		PrimaryKey: []string{"chain_id", "address", "token"},
		Groups: []catalog.GroupSpec{
			{Name: "holding", Columns: []string{"amount", "balance_index", "balance_version"},
				ValidBy: []string{"balance_index"}, RevisionBy: []string{"balance_version"}},
			{Name: "activity", Columns: []string{"transfer_count", "activity_index"}, ValidBy: []string{"activity_index"}},
		},
	}
}

// createBalances commits CREATE TABLE balances (balancesSpec) to e.
func createBalances(tb testing.TB, e *Engine) *catalog.Table {
	tb.Helper()
	if _, err := e.Commit(context.Background(), &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
		_, _, err := c.CreateTable(balancesSpec(), n)
		return err
	}}); err != nil {
		tb.Fatal(err)
	}
	t, _ := e.Catalog().Table("balances")
	return t
}

// balancesWrite is round r of group g for keys [from, from+n): every
// third holding version is late (its index is below the previous
// round's), as in the root package's benchmarks.
func balancesWrite(t *catalog.Table, g string, from, n, r int) Write {
	keys := make([]int, n)
	for i := range keys {
		keys[i] = from + i
	}
	return balancesWriteKeys(t, g, keys, r)
}

// balancesWriteKeys is balancesWrite for the keys listed, in their order.
func balancesWriteKeys(t *catalog.Table, g string, keys []int, r int) Write {
	n := len(keys)
	grp, _ := t.Group(g)
	ts := []types.Type{types.Of(types.Uint16), types.Of(types.String), types.Of(types.String)}
	if g == "holding" {
		ts = append(ts, types.Of(types.Uint256), types.Of(types.Uint128), types.Of(types.Uint64))
	} else {
		ts = append(ts, types.Of(types.Uint64), types.Of(types.Uint128))
	}
	bt := types.NewBatch(ts, n)
	var addr [16]byte
	for _, k := range keys {
		bt.Cols[0].AppendUint64(uint64(k % 4))
		bt.Cols[1].AppendBytes(fmt.Appendf(addr[:0], "0x%08x", k/20))
		bt.Cols[2].AppendBytes(fmt.Appendf(addr[:0], "T%02d", k%20))
		idx := uint64(r*10 + 5)
		if (k+r)%3 == 0 && r > 0 {
			idx = uint64(r*10 - 7)
		}
		if g == "holding" {
			bt.Cols[3].AppendWide(uint256.NewInt(uint64(1000 + k + r)))
			bt.Cols[4].AppendWide(uint256.NewInt(idx))
			bt.Cols[5].AppendUint64(1)
		} else {
			bt.Cols[3].AppendUint64(uint64(r))
			bt.Cols[4].AppendWide(uint256.NewInt(idx))
		}
	}
	bt.Rows = n
	return Write{Kind: WriteVersion, Table: t.ID, Group: grp.ID, Cols: append(append([]catalog.ColumnID(nil), t.Key...), grp.Columns...), Batch: bt}
}

// BenchmarkBalances reads a balances table of -storage.keys keys and
// -storage.versions holding versions per key (plus an activity version
// every fifth round), loaded in 10 000-row commits: flushed and unmerged,
// then merged into current and history runs (MergeNow). Run the 10 M
// version case with -storage.keys 1000000 -storage.versions 10.
func BenchmarkBalances(b *testing.B) {
	keys, rounds := *balKeys, *balVersions
	e, err := Open(b.TempDir(), Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40, AsOfIndex: !*balNoIndex})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	t := createBalances(b, e)
	versions := 0
	var mid uint64
	for r := 0; r < rounds; r++ {
		for _, g := range []string{"holding", "activity"} {
			if g == "activity" && r%5 != 0 {
				continue
			}
			for k := 0; k < keys; k += 10000 {
				w := balancesWrite(t, g, k, min(10000, keys-k), r)
				if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
					b.Fatal(err)
				}
				versions += w.Batch.Rows
			}
		}
		if r == rounds/2 {
			mid = e.LastCommit()
		}
		if r%4 == 3 {
			if err := e.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := e.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	spec := ScanSpec{Table: t.ID, Cols: allCols(t), Commit: true}
	// scan measures reads of the shards' sources: the resolved-scan
	// cache is off except in the */current-cached cases.
	scan := func(b *testing.B, spec ScanSpec) {
		scanCacheOff = !strings.HasSuffix(b.Name(), "-cached")
		defer func() { scanCacheOff = false }()
		b.ReportAllocs()
		if !scanCacheOff {
			// Fill the cache before the loop's clock starts.
			snap := e.Snapshot()
			if _, err := snap.Scan(ctx, spec, func(*types.Batch) error { return nil }); err != nil {
				b.Fatal(err)
			}
			snap.Release()
		}
		rows := 0
		// CPU time per read (the process's, the prefetch goroutines
		// included): steadier than wall time on a shared machine.
		cpu0 := cputime.Process()
		for b.Loop() {
			snap := e.Snapshot()
			if _, err := snap.Scan(ctx, spec, func(bt *types.Batch) error { rows += bt.Rows; return nil }); err != nil {
				b.Fatal(err)
			}
			snap.Release()
		}
		b.ReportMetric(float64((cputime.Process()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(versions)*float64(b.N)/b.Elapsed().Seconds(), "versions/s")
		b.ReportMetric(float64(rows)/float64(b.N), "rows")
	}
	lookup := func(b *testing.B) {
		snap := e.Snapshot()
		defer snap.Release()
		key := make([]types.Value, 3)
		var lat []time.Duration
		// 100 lookups per op, so that a short -benchtime (the 10 M case)
		// still gives percentiles over many samples.
		for i := 0; b.Loop(); i++ {
			for j := range 100 {
				k := ((i*100 + j) * 7919) % keys
				key[0], _ = types.NewUint(types.Of(types.Uint16), uint64(k%4))
				key[1] = types.NewString(fmt.Sprintf("0x%08x", k/20))
				key[2] = types.NewString(fmt.Sprintf("T%02d", k%20))
				start := time.Now()
				if _, ok, err := snap.Lookup(ctx, t.ID, key, ScanSpec{Cols: allCols(t)}); err != nil || !ok {
					b.Fatal(ok, err)
				}
				lat = append(lat, time.Since(start))
			}
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
	bytesPerVersion := func(b *testing.B) {
		snap := e.Snapshot()
		var bytes uint64
		for _, p := range snap.Parts(t.ID) {
			bytes += p.Bytes
		}
		snap.Release()
		b.ReportMetric(float64(bytes)/float64(versions), "bytes/version")
		b.ReportMetric(float64(asofIndexBytes(e, t.ID))/float64(versions), "index-bytes/version")
	}
	b.Run("unmerged/current", func(b *testing.B) { scan(b, spec) })
	b.Run("unmerged/lookup", lookup)
	if err := e.MergeNow(ctx, MergeFull); err != nil {
		b.Fatal(err)
	}
	b.Run("merged/current", func(b *testing.B) { scan(b, spec); bytesPerVersion(b) })
	b.Run("merged/current-cached", func(b *testing.B) { scan(b, spec) })
	asOf := spec
	asOf.AsOf = mid
	// asof-middle-serial reads without decoding blocks ahead
	// (runScan.scanInterval's prefetchers): run before and after
	// asof-middle, an A/B in one process that gives neither the colder
	// page cache.
	serial := func(b *testing.B) {
		ivSerial = true
		defer func() { ivSerial = false }()
		scan(b, asOf)
	}
	// asof-middle-noindex reads through the run as if it had no AS OF
	// index (asofindex.go): the A/B of the index in one process.
	noIndex := func(b *testing.B) {
		noAsOfReads = true
		defer func() { noAsOfReads = false }()
		scan(b, asOf)
	}
	b.Run("merged/asof-middle-serial", serial)
	b.Run("merged/asof-middle", func(b *testing.B) { scan(b, asOf) })
	b.Run("merged/asof-middle-noindex", noIndex)
	b.Run("merged/asof-middle-serial", serial)
	b.Run("merged/asof-middle", func(b *testing.B) { scan(b, asOf) })
	b.Run("merged/asof-middle-noindex", noIndex)
	b.Run("merged/asof-middle-cached", func(b *testing.B) { scan(b, asOf) })
	b.Run("merged/lookup", lookup)
	// Two more rounds of every key, flushed but not merged: the run plus
	// newer deltas that touch every key, what a read sees while merges
	// catch up after a burst of ingest (bench/ R2 measures this state).
	for r := rounds; r < rounds+2; r++ {
		for k := 0; k < keys; k += 10000 {
			w := balancesWrite(t, "holding", k, min(10000, keys-k), r)
			if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("run+deltas/current", func(b *testing.B) { scan(b, spec) })
	b.Run("run+deltas/current-cached", func(b *testing.B) { scan(b, spec) })
	b.Run("run+deltas/asof-middle", func(b *testing.B) { scan(b, asOf) })
}

// BenchmarkKeyedPartData lays out a memtable of 100 000 keys, 3 versions
// each, as part rows: the CPU of a flush before the part is written.
func BenchmarkKeyedPartData(b *testing.B) {
	e, t := benchEngine(b, catalog.ModeVersioned)
	fill(b, e, t, 100000, 3)
	m := e.cur.Load().tables[t.ID].shards[0].keyed
	b.ReportAllocs()
	for b.Loop() {
		var meta part.Meta
		if _, err := keyedPartData(t, m, &meta); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyedPartDataShuffled is BenchmarkKeyedPartData with the keys
// written in random order, as an ingest of unsorted batches writes them:
// the memtable's memory is then in arrival order, not key order, and the
// flush's walk in key order jumps around it.
func BenchmarkKeyedPartDataShuffled(b *testing.B) {
	e, t := benchEngine(b, catalog.ModeVersioned)
	shuffledRounds(b, e, func(keys []int, round int) []Write {
		return []Write{benchWriteKeys(t, keys, int64(round+1))}
	})
	benchLayout(b, e, t)
}

// shuffledRounds commits three rounds over 100 000 keys, each round in a
// new random order, 1 000 keys a commit; w makes a commit's writes.
func shuffledRounds(b *testing.B, e *Engine, w func(keys []int, round int) []Write) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		keys := r.Perm(100000)
		for lo := 0; lo < len(keys); lo += 1000 {
			if _, err := e.Commit(context.Background(), &Txn{Kind: KindWrite, Writes: w(keys[lo:lo+1000], round)}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchLayout times keyedPartData over the memtable of t's first shard,
// reporting the process's CPU per layout too.
func benchLayout(b *testing.B, e *Engine, t *catalog.Table) {
	m := e.cur.Load().tables[t.ID].shards[0].keyed
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		var meta part.Meta
		if _, err := keyedPartData(t, m, &meta); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkKeyedPartDataBalances is BenchmarkKeyedPartDataShuffled on
// the balances table: 100 000 keys × 3 rounds of both groups, each
// commit 1 000 random keys, so every key has versions of two groups and
// each group's columns are NULL in the other's rows (bench/'s flushes).
func BenchmarkKeyedPartDataBalances(b *testing.B) {
	e, err := Open(b.TempDir(), Options{MemtableBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	t := createBalances(b, e)
	shuffledRounds(b, e, func(keys []int, round int) []Write {
		return []Write{balancesWriteKeys(t, "holding", keys, round), balancesWriteKeys(t, "activity", keys, round)}
	})
	benchLayout(b, e, t)
}

// BenchmarkFirstScan reads R2's columns (token, amount: bench/'s
// `SELECT token, count(*), sum(amount) … GROUP BY token`) of a balances
// table laid out as right after a burst of ingest: -storage.keys keys
// merged into current and history runs (6 rounds), then 4 more rounds of
// both groups in 3 delta parts and the memtable, every 40th key's
// previous version delivered again (an exact repeat, as bench/'s 2 %
// re-deliveries). No page or scan cache: every block is decoded, as a
// first scan after ingest decodes it. cpu-ms/op is the process's CPU per
// scan, less noisy than ns/op on a shared machine.
func BenchmarkFirstScan(b *testing.B) {
	keys := *balKeys
	e, err := Open(b.TempDir(), Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40, PageCacheBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	t := createBalances(b, e)
	commit := func(ws ...Write) {
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: ws}); err != nil {
			b.Fatal(err)
		}
	}
	for r := 0; r < 10; r++ {
		for k := 0; k < keys; k += 10000 {
			n := min(10000, keys-k)
			commit(balancesWrite(t, "holding", k, n, r), balancesWrite(t, "activity", k, n, r))
			if r > 0 && k%40000 == 0 {
				// Re-deliver the previous round's versions of a slice of
				// keys: exact repeats of versions that still count.
				commit(balancesWrite(t, "holding", k, min(250, n), r-1))
			}
		}
		switch {
		case r == 5:
			if err := e.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			if err := e.MergeNow(ctx, MergeFull); err != nil {
				b.Fatal(err)
			}
		case r > 5 && r < 9:
			if err := e.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	var ids []catalog.ColumnID
	for _, name := range []string{"token", "amount"} {
		c, _ := t.Column(name)
		ids = append(ids, c.ID)
	}
	spec := ScanSpec{Table: t.ID, Cols: ids, ReadOnly: true}
	scanCacheOff = true
	defer func() { scanCacheOff = false }()
	b.ReportAllocs()
	rows := 0
	cpu := cputime.Process()
	for b.Loop() {
		snap := e.Snapshot()
		if _, err := snap.Scan(ctx, spec, func(bt *types.Batch) error { rows += bt.Rows; return nil }); err != nil {
			b.Fatal(err)
		}
		snap.Release()
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(rows)/float64(b.N), "rows")
}

// asofIndexBytes is the size of table id's AS OF index parts.
func asofIndexBytes(e *Engine, id catalog.TableID) uint64 {
	var n uint64
	for _, sd := range e.cur.Load().tables[id].shards {
		for _, pf := range sd.asof {
			n += pf.man.Bytes
		}
	}
	return n
}

// BenchmarkIngestBalances is issue 3's ingest target as a user meets it:
// the balances table's holding group (every third version late) and an
// activity version every fifth round, in 10 000-row commits with fsync
// on, through an engine with its default memtable size and background
// flushes and merges running. Each op loads -storage.keys keys ×
// -storage.versions rounds into a fresh engine; versions/s counts the
// rows committed over the wall time of the commits, the last one's
// acknowledgement included (background work that is still running then
// is not waited for: it is what the cpu-ms/op metric adds).
func BenchmarkIngestBalances(b *testing.B) {
	keys, rounds := *balKeys, *balVersions
	ctx := context.Background()
	var versions int
	var elapsed time.Duration
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		e, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		t := createBalances(b, e)
		var ws []Write
		for r := 0; r < rounds; r++ {
			for _, g := range []string{"holding", "activity"} {
				if g == "activity" && r%5 != 0 {
					continue
				}
				for k := 0; k < keys; k += 10000 {
					ws = append(ws, balancesWrite(t, g, k, min(10000, keys-k), r))
				}
			}
		}
		b.StartTimer()
		cpu0 := cputime.Process()
		start := time.Now()
		for i := range ws {
			if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: ws[i : i+1]}); err != nil {
				b.Fatal(err)
			}
			versions += ws[i].Batch.Rows
		}
		elapsed += time.Since(start)
		cpu += cputime.Process() - cpu0
		b.StopTimer()
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(versions)/elapsed.Seconds(), "versions/s")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}
