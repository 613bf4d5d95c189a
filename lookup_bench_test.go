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

func benchPoint(b *testing.B, settle bool) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
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
	if settle {
		if err := db.MergeNow(ctx); err != nil {
			b.Fatal(err)
		}
	}
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
		k := rng.IntN(*benchKeys)
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
