package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// loadBalancesRuns writes the balances table of BenchmarkBalances
// (-storage.keys keys, -storage.versions rounds), merges it into current
// and history runs, and reopens the directory with the page cache
// pageCache (Options.PageCacheBytes), so that no page of it is cached.
// It returns the engine, the table and the middle commit.
func loadBalancesRuns(b *testing.B, pageCache int64) (*Engine, *catalog.Table, uint64) {
	b.Helper()
	dir := b.TempDir()
	e, err := Open(dir, Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	t, mid := writeBalancesRuns(b, e)
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	if e, err = Open(dir, Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40, PageCacheBytes: pageCache}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e, t, mid
}

// writeBalancesRuns writes loadBalancesRuns' table into e and merges it;
// it returns the table and the middle commit.
func writeBalancesRuns(b *testing.B, e *Engine) (*catalog.Table, uint64) {
	b.Helper()
	keys, rounds := *balKeys, *balVersions
	ctx := context.Background()
	t := createBalances(b, e)
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
	if err := e.MergeNow(ctx, MergeFull); err != nil {
		b.Fatal(err)
	}
	return t, mid
}

// balancesKey sets key to the primary key of balances key k
// (balancesWrite's layout).
func balancesKey(key []types.Value, k int) {
	key[0], _ = types.NewUint(types.Of(types.Uint16), uint64(k%4))
	key[1] = types.NewString(fmt.Sprintf("0x%08x", k/20))
	key[2] = types.NewString(fmt.Sprintf("T%02d", k%20))
}

// BenchmarkLookupRuns looks keys of the merged balances table up by their
// full key, reading one column as bench/ R1 and R4 do: with no page cache
// (every lookup decodes the pages it reads, the cost of a page not yet
// cached), and with the default cache after a warming pass over every
// key. It reports p50 and p99 over the lookups.
func BenchmarkLookupRuns(b *testing.B) {
	for _, cold := range []bool{true, false} {
		cache, name := int64(0), "warm"
		if cold {
			cache, name = -1, "cold"
		}
		e, t, mid := loadBalancesRuns(b, cache)
		amount, _ := t.Column("amount")
		ctx := context.Background()
		run := func(b *testing.B, asOf uint64) {
			snap := e.Snapshot()
			defer snap.Release()
			key := make([]types.Value, 3)
			spec := ScanSpec{Cols: []catalog.ColumnID{amount.ID}, AsOf: asOf}
			if !cold {
				for k := range *balKeys {
					balancesKey(key, k)
					if _, ok, err := snap.Lookup(ctx, t.ID, key, spec); err != nil || !ok {
						b.Fatal(ok, err)
					}
				}
			}
			var lat []time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				k := (i * 7919) % *balKeys
				balancesKey(key, k)
				start := time.Now()
				if _, ok, err := snap.Lookup(ctx, t.ID, key, spec); err != nil || !ok {
					b.Fatal(ok, err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		}
		b.Run(name+"/current", func(b *testing.B) { run(b, 0) })
		b.Run(name+"/asof-middle", func(b *testing.B) { run(b, mid) })
	}
}

// balancesKeysWrite is a holding version of round r for each of keys, in
// the layout of balancesWrite.
func balancesKeysWrite(t *catalog.Table, keys []int, r int) Write {
	grp, _ := t.Group("holding")
	ts := []types.Type{types.Of(types.Uint16), types.Of(types.String), types.Of(types.String),
		types.Of(types.Uint256), types.Of(types.Uint128), types.Of(types.Uint64)}
	bt := types.NewBatch(ts, len(keys))
	var buf [16]byte
	for _, k := range keys {
		bt.Cols[0].AppendUint64(uint64(k % 4))
		bt.Cols[1].AppendBytes(fmt.Appendf(buf[:0], "0x%08x", k/20))
		bt.Cols[2].AppendBytes(fmt.Appendf(buf[:0], "T%02d", k%20))
		bt.Cols[3].AppendWide(uint256.NewInt(uint64(7000 + k + r)))
		bt.Cols[4].AppendWide(uint256.NewInt(uint64(1000 + r)))
		bt.Cols[5].AppendUint64(1)
	}
	bt.Rows = len(keys)
	return Write{Kind: WriteVersion, Table: t.ID, Group: grp.ID, Cols: append(append([]catalog.ColumnID(nil), t.Key...), grp.Columns...), Batch: bt}
}

// BenchmarkLookupDeltas looks keys up as bench/ R1 does right after an
// ingest: the merged balances table (loadBalancesRuns) with 16 delta
// parts newer than its run, each a flush of versions of 2 % of the keys
// drawn at random, so that every delta's key bounds span nearly every
// key, as random addresses make them. With key filters ("filter") a
// lookup seeks only the deltas that hold its key; without ("nofilter",
// every filter answering "maybe") it decodes a sort page of each. Both
// after a warming pass over every key, with the default page cache and
// with none ("cold"). It reports p50 and p99, and per lookup the parts
// sought (probes/op), the parts ruled out by their filters (skips/op) and
// the pages decoded (misses/op).
// flushRandomDeltas writes n delta parts over the balances runs, each a
// commit of 2 % of the keys, distinct and drawn at random (the same for
// every call), flushed on its own.
func flushRandomDeltas(b *testing.B, e *Engine, t *catalog.Table, n int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	keys := *balKeys
	for d := range n {
		ks := make([]int, 0, keys/50)
		seen := map[int]bool{}
		for len(ks) < keys/50 {
			if k := rng.IntN(keys); !seen[k] {
				seen[k] = true
				ks = append(ks, k)
			}
		}
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{balancesKeysWrite(t, ks, 100+d)}}); err != nil {
			b.Fatal(err)
		}
		if err := e.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupDeltas(b *testing.B) {
	for _, cold := range []bool{false, true} {
		cache, cname := int64(0), "warm"
		if cold {
			cache, cname = -1, "cold"
		}
		e, t, _ := loadBalancesRuns(b, cache)
		ctx := context.Background()
		flushRandomDeltas(b, e, t, 16)
		keys := *balKeys
		amount, _ := t.Column("amount")
		for _, filter := range []bool{true, false} {
			name := cname + "/filter"
			if !filter {
				name = cname + "/nofilter"
			}
			b.Run(name, func(b *testing.B) {
				if !filter {
					keyFilterOverride = func(*partFile, []byte) bool { return true }
					defer func() { keyFilterOverride = nil }()
				}
				snap := e.Snapshot()
				defer snap.Release()
				key := make([]types.Value, 3)
				spec := ScanSpec{Cols: []catalog.ColumnID{amount.ID}}
				if !cold {
					for k := range keys {
						balancesKey(key, k)
						if _, ok, err := snap.Lookup(ctx, t.ID, key, spec); err != nil || !ok {
							b.Fatal(ok, err)
						}
					}
				}
				var lat []time.Duration
				var probes, skips, pages int
				misses := e.pages.Stats().Misses
				var tr LookupTrace
				spec.Trace = &tr
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					balancesKey(key, (i*7919)%keys)
					tr = LookupTrace{}
					start := time.Now()
					if _, ok, err := snap.Lookup(ctx, t.ID, key, spec); err != nil || !ok {
						b.Fatal(ok, err)
					}
					lat = append(lat, time.Since(start))
					probes += tr.KeyProbes
					skips += tr.FilterSkips
					pages += tr.Pages()
				}
				n := float64(len(lat))
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(probes)/n, "probes/op")
				b.ReportMetric(float64(skips)/n, "skips/op")
				b.ReportMetric(float64(pages)/n, "decoded/op")
				b.ReportMetric(float64(e.pages.Stats().Misses-misses)/n, "misses/op")
			})
		}
	}
}

// BenchmarkLookupAfterScan looks keys of the merged balances table up
// right after three full scans of it, current and AS OF the middle commit
// (the order of bench/: R2 and R3, then R1 and R4), with no warming pass:
// pages a lookup needs that the scans' kept chunks hold are not decoded.
// It reports p50, p99 and pages decoded per lookup.
func BenchmarkLookupAfterScan(b *testing.B) {
	e, t, mid := loadBalancesRuns(b, 0)
	ctx := context.Background()
	amount, _ := t.Column("amount")
	for _, n := range []uint64{0, mid} {
		for range 3 {
			snap := e.Snapshot()
			spec := ScanSpec{Table: t.ID, Cols: []catalog.ColumnID{t.Key[0], amount.ID}, AsOf: n}
			if _, err := snap.Scan(ctx, spec, func(*types.Batch) error { return nil }); err != nil {
				b.Fatal(err)
			}
			snap.Release()
		}
	}
	run := func(b *testing.B, n uint64) {
		snap := e.Snapshot()
		defer snap.Release()
		key := make([]types.Value, 3)
		spec := ScanSpec{Cols: []catalog.ColumnID{amount.ID}, AsOf: n}
		var lat []time.Duration
		misses := e.pages.Stats().Misses
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			balancesKey(key, (i*7919)%*balKeys)
			start := time.Now()
			if _, ok, err := snap.Lookup(ctx, t.ID, key, spec); err != nil || !ok {
				b.Fatal(ok, err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(e.pages.Stats().Misses-misses)/float64(len(lat)), "misses/op")
	}
	b.Run("current", func(b *testing.B) { run(b, 0) })
	b.Run("asof-middle", func(b *testing.B) { run(b, mid) })
}

// BenchmarkLookupFresh looks keys up right after the engine wrote the
// parts that hold them, as bench/ R1 does after its ingest: the balances
// table merged into runs (writeBalancesRuns) and then 8 delta flushes of
// 2 % of the keys each, in the same engine, with no warming pass and each
// key looked up once (-benchtime at most -storage.keys). "written" lets
// flushes and merges put the pages of what they write into the page cache
// (part.WriteOptions.Warm); "decoded" does not, so lookups decode them.
// It reports p50, p99 and the pages decoded per lookup (misses/op).
func BenchmarkLookupFresh(b *testing.B) {
	for _, warm := range []bool{false, true} {
		name := "decoded"
		if warm {
			name = "written"
		}
		b.Run(name, func(b *testing.B) {
			e, err := Open(b.TempDir(), Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40, WarmWrites: warm})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			t, _ := writeBalancesRuns(b, e)
			ctx := context.Background()
			flushRandomDeltas(b, e, t, 8)
			keys := *balKeys
			amount, _ := t.Column("amount")
			snap := e.Snapshot()
			defer snap.Release()
			key := make([]types.Value, 3)
			spec := ScanSpec{Cols: []catalog.ColumnID{amount.ID}}
			var lat []time.Duration
			misses := e.pages.Stats().Misses
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i >= keys {
					b.Fatalf("-benchtime above -storage.keys (%d): keys would be looked up twice", keys)
				}
				balancesKey(key, (i*7919)%keys)
				start := time.Now()
				if _, ok, err := snap.Lookup(ctx, t.ID, key, spec); err != nil || !ok {
					b.Fatal(ok, err)
				}
				lat = append(lat, time.Since(start))
			}
			n := float64(len(lat))
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(e.pages.Stats().Misses-misses)/n, "misses/op")
		})
	}
}

// BenchmarkVersionsDeltas reads the versions of one key (versions(t) with
// the full key: versionsOfKey) of the merged balances table with 16 delta
// parts of random keys over it, as bench/'s R5 does right after an
// ingest, every column, warm: each key is read once before the timed
// loop. It reports p50 and p99.
func BenchmarkVersionsDeltas(b *testing.B) {
	e, t, _ := loadBalancesRuns(b, 0)
	ctx := context.Background()
	flushRandomDeltas(b, e, t, 16)
	keys := *balKeys
	snap := e.Snapshot()
	defer snap.Release()
	key := make([]types.Value, 3)
	read := func(k int) {
		balancesKey(key, k)
		var lo []byte
		for _, v := range key {
			lo = types.AppendKey(lo, v)
		}
		spec := ScanSpec{Table: t.ID, Cols: allCols(t), Ranges: []KeyRange{{Lo: lo, Hi: keyPrefixEnd(lo)}}}
		rows := 0
		if _, err := snap.Versions(ctx, spec, func(b *types.Batch) error { rows += b.Rows; return nil }); err != nil || rows == 0 {
			b.Fatal(rows, err)
		}
	}
	for k := range keys {
		read(k)
	}
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		read((i * 7919) % keys)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
