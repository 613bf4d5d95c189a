package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
	keys, rounds := *balKeys, *balVersions
	dir := b.TempDir()
	e, err := Open(dir, Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Commit(ctx, &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
		_, _, err := c.CreateTable(balancesSpec(), n)
		return err
	}}); err != nil {
		b.Fatal(err)
	}
	t, _ := e.Catalog().Table("balances")
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
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	if e, err = Open(dir, Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40, PageCacheBytes: pageCache}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e, t, mid
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
