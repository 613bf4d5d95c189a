package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// TestLookupKeyFilters compares lookups through parts' key filters
// (part.KeyFilter: a delta or run part that cannot hold a key is not
// sought) with the general path, which reads every part, over a shard
// whose delta parts each hold a few random keys — on their own, before
// any merge, and newer than a merged run — at the snapshot and AS OF
// older commits, for every key written and some never written. The
// filters must have ruled parts out, and a filter that wrongly rules a
// key out must make the comparison fail.
func TestLookupKeyFilters(t *testing.T) {
	for _, mode := range []catalog.Mode{catalog.ModeVersioned, catalog.ModeUpsert} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			h := newHarness(t)
			h.create(groupsSpec(mode))
			tbl := h.table("t")
			rng := rand.New(rand.NewPCG(7, uint64(mode)))
			const keys = 40
			skipped := 0 // parts ruled out by a (truthful) filter
			round := func(r int) {
				var lines []string
				for k := range keys {
					if rng.IntN(6) == 0 {
						lines = append(lines, fmt.Sprintf("k=%d v=r%d idx=%d rev=%d", k, r, rng.IntN(3), rng.IntN(3)))
					}
				}
				if len(lines) == 0 {
					return
				}
				h.mustWrite(tbl, "g", lines)
				if err := h.e.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			compare := func(stage string, lie bool) (differ int) {
				t.Helper()
				snap := h.e.Snapshot()
				defer snap.Release()
				for n := uint64(0); n <= snap.Commit(); n += 1 + snap.Commit()/5 {
					if mode == catalog.ModeUpsert && n != 0 {
						break
					}
					for k := 0; k < keys+5; k++ {
						key := []types.Value{types.NewInt64(int64(k))}
						var tr LookupTrace
						spec := ScanSpec{Cols: allCols(tbl), Commit: true, AsOf: n, Trace: &tr}
						get := func(slow bool) string {
							slowReads, unpooledLookups = slow, slow
							if lie && !slow {
								keyFilterOverride = func(*partFile, []byte) bool { return false }
							}
							defer func() { slowReads, unpooledLookups, keyFilterOverride = false, false, nil }()
							tr = LookupTrace{}
							row, ok, err := snap.Lookup(context.Background(), tbl.ID, key, spec)
							if err != nil {
								t.Fatalf("%s: lookup %d at %d: %v", stage, k, n, err)
							}
							if !lie {
								skipped += tr.FilterSkips
							}
							return fmt.Sprint(ok, row)
						}
						got, want := get(false), get(true)
						if got != want {
							if !lie {
								t.Fatalf("%s: lookup of key %d at %d: %s, the general path says %s", stage, k, n, got, want)
							}
							differ++
						}
					}
				}
				return differ
			}
			for r := range 8 {
				round(r)
			}
			compare("deltas", false)
			if differ := compare("deltas, lying filters", true); differ == 0 {
				t.Fatal("filters that rule every key out changed no lookup of delta parts")
			}
			if err := h.e.MergeNow(context.Background(), MergeFull); err != nil {
				t.Fatal(err)
			}
			for r := 8; r < 14; r++ {
				round(r)
			}
			compare("run and deltas", false)
			if differ := compare("run and deltas, lying filters", true); differ == 0 {
				t.Fatal("filters that rule every key out changed no lookup of a run")
			}
			h.reopen()
			compare("reopened", false)
			if skipped == 0 {
				t.Fatal("no part was ruled out by its key filter")
			}
		})
	}
}
