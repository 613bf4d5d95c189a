package strata

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/storage"
)

// BenchmarkPointAfterIngest is issue 4's point SELECT by the full key on
// the balances table right after its ingest (-balances.keys ×
// -balances.versions rows in 10 000-row UPSERTs, as BenchmarkBalances
// writes them, but not merged first: the parts and background merges are
// where the ingest left them), over random keys with parameters as a
// client sends them. It reports p50 and p99 and, from the engine's
// per-lookup trace, the pages decoded per lookup.
func BenchmarkPointAfterIngest(b *testing.B) { benchPoint(b, false) }

// BenchmarkPointSettled is BenchmarkPointAfterIngest once the merges have
// settled (MergeNow), as bench/'s R1 runs with -quiet-lookups: what a
// lookup costs without background work beside it.
func BenchmarkPointSettled(b *testing.B) { benchPoint(b, true) }

// BenchmarkPointDelta is BenchmarkPointSettled's lookups of keys that a
// small delta part holds beside the shard's merged run: the table is
// folded (MergeFull), one more version of the first eighth of the keys is
// written and flushed, and the lookups ask for those keys. Such a delta
// is smaller than the fold threshold (merge.SettleRatio), so an idle
// database keeps it, and bench/'s medium R1 finds 4–15 % of its keys so.
func BenchmarkPointDelta(b *testing.B) {
	db, s := loadPoint(b)
	ctx := context.Background()
	if err := db.eng.MergeNow(ctx, storage.MergeFull); err != nil {
		b.Fatal(err)
	}
	n := max(*benchKeys/8, 1)
	for from := 0; from < n; from += 10_000 {
		if _, err := s.Run(ctx, upsertSQL(from, min(10_000, n-from), *benchVersions)); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.eng.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	runPoints(b, s, n)
}

// loadPoint opens a database in a temporary directory and writes the
// balances table as BenchmarkPointAfterIngest describes.
func loadPoint(b *testing.B) (*DB, *Session) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := db.NewSession()
	ctx := context.Background()
	if _, err := s.Run(ctx, balancesDDL); err != nil {
		b.Fatal(err)
	}
	for round := 0; round < *benchVersions; round++ {
		for from := 0; from < *benchKeys; from += 10_000 {
			if _, err := s.Run(ctx, upsertSQL(from, min(10_000, *benchKeys-from), round)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return db, s
}

func benchPoint(b *testing.B, settle bool) {
	db, s := loadPoint(b)
	if settle {
		if err := db.MergeNow(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	runPoints(b, s, *benchKeys)
}

// runPoints times point SELECTs of random keys below n.
func runPoints(b *testing.B, s *Session, n int) {
	ctx := context.Background()
	const q = "SELECT amount FROM balances WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3"
	var pages int
	storage.SetLookupTraceHook(func(t *storage.LookupTrace) { pages += t.Pages() })
	defer storage.SetLookupTraceHook(nil)
	// The keys' arguments are made before the clock starts, so the
	// allocations reported are the lookup's own.
	rng := rand.New(rand.NewPCG(1, 2))
	type key struct {
		chain          int
		address, token string
	}
	keys := make([]key, 4096)
	for i := range keys {
		k := rng.IntN(n)
		keys[i] = key{k % 4, fmt.Sprintf("0x%08x", k/20), fmt.Sprintf("T%02d", k%20)}
	}
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		k := keys[len(lat)%len(keys)]
		start := time.Now()
		r, err := s.Run(ctx, q, k.chain, k.address, k.token)
		lat = append(lat, time.Since(start))
		if err != nil || len(r.Rows) != 1 {
			b.Fatal(k, err, r)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(pages)/float64(len(lat)), "decoded/op")
}
