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
func BenchmarkPointAfterIngest(b *testing.B) {
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
	const q = "SELECT amount FROM balances WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3"
	var pages int
	storage.SetLookupTraceHook(func(t *storage.LookupTrace) { pages += t.Pages() })
	defer storage.SetLookupTraceHook(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		k := rng.IntN(*benchKeys)
		start := time.Now()
		r, err := s.Run(ctx, q, k%4, fmt.Sprintf("0x%08x", k/20), fmt.Sprintf("T%02d", k%20))
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
