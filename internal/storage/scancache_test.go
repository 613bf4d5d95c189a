package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// scanSnap reads spec on snap, by the general path when slow, and
// returns the rows rendered and the stats. The batches handed out are
// reset after rendering (unless spec.ReadOnly promises not to modify
// them), so that a cache that kept them would be caught.
func scanSnap(t *testing.T, snap *Snapshot, spec ScanSpec, slow bool) ([]string, ScanStats) {
	t.Helper()
	slowReads = slow
	defer func() { slowReads = false }()
	tbl, _ := snap.Catalog().TableByID(spec.Table)
	var bs []*types.Batch
	st, err := snap.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil })
	if err != nil {
		t.Fatal(err)
	}
	names := tbl.Names(spec.Cols)
	if spec.Commit {
		names = append(names, "_commit")
	}
	out := render(names, bs)
	if !spec.ReadOnly {
		for _, b := range bs {
			b.Reset()
		}
	}
	return out, st
}

// TestScanCacheMatchesSources checks the resolved-scan cache (scancache.go)
// against the general path: repeated current scans (the second served from
// the cache), at every step of a schedule of random versions (late ones,
// REVISION BY ties, exact re-deliveries), deletes, flushes, merges and an
// ADD then a DROP COLUMN (of the added one); a snapshot taken before newer commits read after
// a newer one filled the cache, and the newer one read after the older
// one did; AS OF reads at every commit, each repeated (a versioned
// table's from the cache, an upsert table's never cached), including
// commits before the table had data and commits after a flush, and
// AS OF entries used again after later commits, flushes and merges (but
// not after a DDL); and a commit to another table, after which the entry
// is still valid and used.
func TestScanCacheMatchesSources(t *testing.T) {
	for _, mode := range []catalog.Mode{catalog.ModeVersioned, catalog.ModeUpsert} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/%d", mode, seed), func(t *testing.T) {
				h := newHarness(t)
				h.mergePartRows = 40
				h.reopen()
				rng := rand.New(rand.NewPCG(seed, 11))
				h.create(balSpec(mode))
				h.create(kvSpec("other", catalog.ModeUpsert))
				same := func(what string, got, want []string) {
					t.Helper()
					if !slices.Equal(got, want) {
						t.Fatalf("%s: cached read differs from the general path:\ngot:\n%s\nwant:\n%s", what,
							strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
				}
				ctx := context.Background()
				hits, asOfHits := 0, 0
				var old *Snapshot
				// filled are the commits the previous check read AS OF
				// with parts in place, so that the next check must find
				// them in the cache (they survive later commits, flushes
				// and merges); a DDL clears it.
				filled := map[uint64]bool{}
				check := func(stage string) {
					t.Helper()
					snap := h.e.Snapshot()
					defer snap.Release()
					tbl, _ := snap.Catalog().Table("b")
					specs := []ScanSpec{
						{Table: tbl.ID, Cols: allCols(tbl), Commit: true, BatchRows: 5},
						{Table: tbl.ID, Cols: []catalog.ColumnID{tbl.Columns[1].ID, tbl.Columns[2].ID}},
						{Table: tbl.ID, Cols: []catalog.ColumnID{tbl.Columns[1].ID, tbl.Columns[2].ID}, ReadOnly: true},
					}
					parts := len(snap.st.tables[tbl.ID].shards[0].parts) > 0
					for si, spec := range specs {
						want, _ := scanSnap(t, snap, spec, true)
						got, _ := scanSnap(t, snap, spec, false)
						same(fmt.Sprintf("%s spec %d first", stage, si), got, want)
						got, st := scanSnap(t, snap, spec, false)
						same(fmt.Sprintf("%s spec %d again", stage, si), got, want)
						if parts && st.CachedShards == 0 {
							t.Fatalf("%s spec %d: the repeated scan was not served from the cache", stage, si)
						}
						hits += st.CachedShards
						if old != nil {
							// The older snapshot's data may be the same
							// shard data: its read must not take the newer
							// entry, and the newer read then must not take
							// the older one.
							ospec := spec
							otbl, _ := old.Catalog().Table("b")
							ospec.Cols = allCols(otbl)
							w, _ := scanSnap(t, old, ospec, true)
							g, _ := scanSnap(t, old, ospec, false)
							same(stage+" older snapshot", g, w)
							g, _ = scanSnap(t, snap, spec, false)
							same(stage+" after the older snapshot", g, want)
						}
					}
					nowFilled := map[uint64]bool{}
					for n := uint64(1); n <= snap.Commit(); n += 2 {
						spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true, AsOf: n}
						if mode == catalog.ModeUpsert {
							spec.AsOf = snap.Commit()
						}
						want, _ := scanSnap(t, snap, spec, true)
						if old != nil && oldTable(old) == tbl && spec.AsOf <= old.Commit() {
							// The older snapshot reads the same answer
							// at n (from the previous check's entry when
							// it holds the same shard data).
							g, _ := scanSnap(t, old, spec, false)
							same(fmt.Sprintf("%s AS OF %d, older snapshot", stage, n), g, want)
						}
						got, st := scanSnap(t, snap, spec, false)
						same(fmt.Sprintf("%s AS OF %d", stage, n), got, want)
						if mode == catalog.ModeVersioned && filled[n] && st.CachedShards == 0 {
							t.Fatalf("%s AS OF %d: the entry of the previous check was not used", stage, n)
						}
						got, st = scanSnap(t, snap, spec, false)
						same(fmt.Sprintf("%s AS OF %d again", stage, n), got, want)
						switch {
						case mode == catalog.ModeUpsert && st.CachedShards != 0:
							t.Fatalf("%s: an upsert table's AS OF read used the cache", stage)
						case mode == catalog.ModeVersioned && parts && st.CachedShards == 0:
							t.Fatalf("%s AS OF %d: the repeated read was not served from the cache", stage, n)
						}
						asOfHits += st.CachedShards
						if parts && mode == catalog.ModeVersioned {
							nowFilled[n] = true
						}
					}
					filled = nowFilled
					if old != nil {
						old.Release()
					}
					old = h.e.Snapshot()
				}
				step := func(i int) {
					randomWrites(t, h, rng, 2, 40)
					switch i % 5 {
					case 1:
						if err := h.e.Flush(ctx); err != nil {
							t.Fatal(err)
						}
					case 3:
						if err := h.e.Flush(ctx); err != nil {
							t.Fatal(err)
						}
						if err := h.e.MergeNow(ctx, MergeFull); err != nil {
							t.Fatal(err)
						}
					}
				}
				// carried: a flush and a merge without writes between
				// publish new shard data with the same results, and the
				// entry follows it (scanCache.carry).
				carried := func(stage string) {
					t.Helper()
					tbl := h.table("b")
					spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true, BatchRows: 5}
					snap := h.e.Snapshot()
					want, _ := scanSnap(t, snap, spec, true)
					scanSnap(t, snap, spec, false)
					snap.Release()
					for _, op := range []string{"flush", "merge"} {
						var err error
						if op == "flush" {
							err = h.e.Flush(ctx)
						} else {
							err = h.e.MergeNow(ctx, MergeFull)
						}
						if err != nil {
							t.Fatal(err)
						}
						snap := h.e.Snapshot()
						got, st := scanSnap(t, snap, spec, false)
						ref, _ := scanSnap(t, snap, spec, true)
						snap.Release()
						same(stage+" after "+op, got, want)
						same(stage+" after "+op+", general path", ref, want)
						if st.CachedShards == 0 {
							t.Fatalf("%s: the entry did not follow the %s", stage, op)
						}
					}
				}
				for i := range 8 {
					step(i)
					check(fmt.Sprintf("step %d", i))
					if i%3 == 2 {
						carried(fmt.Sprintf("step %d", i))
					}
				}
				h.ddl(func(c *catalog.Catalog, commit uint64) error {
					_, err := c.AddColumn(catalog.AddColumnSpec{Table: "b", Group: "h",
						Column: catalog.ColumnSpec{Name: "extra", Type: types.Of(types.Int64), Default: &catalog.Default{SQL: "9", Value: "9"}}}, commit)
					return err
				})
				filled = map[uint64]bool{} // a new *catalog.Table: entries no longer match
				check("added")
				for i := 8; i < 14; i++ {
					step(i)
					check(fmt.Sprintf("step %d", i))
				}
				h.ddl(func(c *catalog.Catalog, commit uint64) error {
					_, err := c.DropColumn(catalog.DropColumnSpec{Table: "b", Column: "extra"}, commit)
					return err
				})
				filled = map[uint64]bool{}
				check("dropped")
				step(14)
				check("after drop")
				// A commit to another table advances the commit but not
				// this table's data: the entry stays valid.
				before := hits
				snap := h.e.Snapshot()
				tbl, _ := snap.Catalog().Table("b")
				spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true, BatchRows: 5}
				want, _ := scanSnap(t, snap, spec, true)
				scanSnap(t, snap, spec, false)
				snap.Release()
				o := h.table("other")
				h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{mustVersion(t, o, "g", []string{"k=1 v='x' idx=1"})}})
				snap = h.e.Snapshot()
				got, st := scanSnap(t, snap, spec, false)
				snap.Release()
				same("after a commit to another table", got, want)
				if st.CachedShards == 0 {
					t.Fatal("a commit to another table dropped the entry")
				}
				if hits == before && hits == 0 {
					t.Fatal("the cache was never used")
				}
				if mode == catalog.ModeVersioned && asOfHits == 0 {
					t.Fatal("no AS OF read was served from the cache")
				}
				old.Release()
			})
		}
	}
}

// oldTable is table b as snap's catalog has it.
func oldTable(snap *Snapshot) *catalog.Table {
	t, _ := snap.Catalog().Table("b")
	return t
}

// mustVersion is versionWrite that fails the test on error.
func mustVersion(t *testing.T, tbl *catalog.Table, group string, lines []string) Write {
	t.Helper()
	w, err := versionWrite(tbl, group, lines)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestScanCacheTooLarge: a shard whose scan outgrows the budget is noted,
// so its next scans do not copy their output only to drop it; its answers
// stay those of the general path, and newer shard data is tried again.
func TestScanCacheTooLarge(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	write := func(from int) {
		var rows []string
		for k := from; k < from+50; k++ {
			rows = append(rows, fmt.Sprintf("k=%d v='value %d' idx=1", k, k))
		}
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, rows...)}})
		if err := h.e.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	c := h.e.scans
	budget := c.budget
	c.budget = 256
	spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl)}
	for i := range 2 {
		snap := h.e.Snapshot()
		want, _ := scanSnap(t, snap, spec, true)
		got, st := scanSnap(t, snap, spec, false)
		snap.Release()
		if !slices.Equal(got, want) || len(got) != 50 {
			t.Fatalf("scan %d: got %d rows, want the general path's %d", i, len(got), len(want))
		}
		if st.CachedShards != 0 || c.fills != 0 {
			t.Fatalf("scan %d: an entry over the budget was kept", i)
		}
	}
	if len(c.tooLarge) != 1 {
		t.Fatalf("%d shards noted too large, want 1", len(c.tooLarge))
	}
	c.budget = budget
	write(50)
	snap := h.e.Snapshot()
	scanSnap(t, snap, spec, false)
	_, st := scanSnap(t, snap, spec, false)
	snap.Release()
	if st.CachedShards == 0 {
		t.Fatal("newer shard data was not tried again")
	}
}

// TestScanCacheAsOfOlderSnapshot: reads AS OF one commit from a snapshot
// taken before a flush and from one after it take turns on one key of the
// cache. The entry of the published shard data is kept: a read of the
// older snapshot does not displace it, and what the older snapshot fills
// first is kept for the newer data, which the flush published in its
// place, so that reads of the newer snapshot hit from then on while the
// older one is still held.
func TestScanCacheAsOfOlderSnapshot(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	ctx := context.Background()
	for r := range 3 {
		var rows []string
		for k := range 20 {
			rows = append(rows, fmt.Sprintf("k=%d v='v%d' idx=%d", k, r, r))
		}
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, rows...)}})
		if err := h.e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n := h.e.LastCommit() - 1
	spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true, AsOf: n}
	read := func(snap *Snapshot, what string, wantHit bool) {
		t.Helper()
		checkCachedScan(t, snap, spec, what, wantHit)
	}
	for _, olderFirst := range []bool{true, false} {
		older := h.e.Snapshot()
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v='late' idx=0")}})
		if err := h.e.Flush(ctx); err != nil { // new shard data; nothing to carry when olderFirst
			t.Fatal(err)
		}
		newer := h.e.Snapshot()
		if olderFirst {
			read(older, "older snapshot, first", false)
			read(newer, "newer snapshot after the older one filled", true)
			read(newer, "newer snapshot again", true)
			read(older, "older snapshot again", false)
			read(newer, "newer snapshot after the older one read again", true)
		} else {
			// The entry of the previous round was carried by the flush.
			read(newer, "newer snapshot, carried entry", true)
			read(older, "older snapshot", false)
			read(newer, "newer snapshot after the older one read", true)
		}
		older.Release()
		newer.Release()
		if olderFirst {
			h.e.scans.m = map[scanCacheKey]*scanCacheEntry{} // the second round fills from the newer data
			h.e.scans.bytes = 0
			snap := h.e.Snapshot()
			read(snap, "refill", false)
			snap.Release()
		}
	}
}

// TestScanCacheScanOutlivesMerge: a full scan that began on shard data a
// merge (or flush) replaced before it ended keeps its rows for the data
// published in its place, so the next scan hits; unless a commit came
// since (a current read), or the data was replaced by a later commit's
// flush, when it must not.
func TestScanCacheScanOutlivesMerge(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	ctx := context.Background()
	write := func(r int) {
		var rows []string
		for k := range 30 {
			rows = append(rows, fmt.Sprintf("k=%d v='v%d' idx=%d", k, r, r))
		}
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, rows...)}})
	}
	for r := range 5 {
		write(r)
		if err := h.e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write(5) // in the memtable
	spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true}
	read := func(snap *Snapshot, what string, wantHit bool) {
		t.Helper()
		checkCachedScan(t, snap, spec, what, wantHit)
	}
	// The scan "began" on before's data; a flush and a full merge
	// replaced it before it filled the cache.
	before := h.e.Snapshot()
	if err := h.e.MergeNow(ctx, MergeFull); err != nil {
		t.Fatal(err)
	}
	read(before, "scan of the replaced data", false)
	before.Release()
	snap := h.e.Snapshot()
	read(snap, "scan of the merged data", true)
	snap.Release()

	// A commit after the scan began: its rows are not the current ones.
	before = h.e.Snapshot()
	h.e.scans.m = map[scanCacheKey]*scanCacheEntry{}
	h.e.scans.bytes = 0
	write(6)
	if err := h.e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	read(before, "scan of data replaced after a commit", false)
	before.Release()
	snap = h.e.Snapshot()
	read(snap, "scan after the commit", false)
	read(snap, "scan after the commit, again", true)
	snap.Release()
}

// checkCachedScan reads spec on snap by the general path and then as
// reads do, and fails unless both return the same rows and the second
// hit the resolved-scan cache exactly when wantHit.
func checkCachedScan(t *testing.T, snap *Snapshot, spec ScanSpec, what string, wantHit bool) {
	t.Helper()
	want, _ := scanSnap(t, snap, spec, true)
	got, st := scanSnap(t, snap, spec, false)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: cached read differs from the general path:\ngot:\n%s\nwant:\n%s", what,
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if hit := st.CachedShards > 0; hit != wantHit {
		t.Fatalf("%s: hit %v, want %v", what, hit, wantHit)
	}
}

// TestScanCacheSuccessorsHoldNothing: the record of which shard data
// replaced which (carriedTo's chains) keeps no replaced data alive. With an
// old snapshot held across several flushes, the data published between it
// and the live data is collected (its memtables with it), and once the
// snapshot is released the record shrinks to nothing reachable.
func TestScanCacheSuccessorsHoldNothing(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	ctx := context.Background()
	write := func(r int) {
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, fmt.Sprintf("k=%d v='v%d' idx=%d", r, r, r))}})
	}
	write(0)
	old := h.e.Snapshot()
	var between []weak.Pointer[shardData]
	for r := 1; r <= 4; r++ {
		write(r)
		if err := h.e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		between = append(between, weak.Make(h.e.liveShard(tbl.ID, 0)))
	}
	runtime.GC()
	runtime.GC()
	for i, w := range between[:len(between)-1] {
		if w.Value() != nil {
			t.Fatalf("shard data published by flush %d is still alive while an older snapshot is held", i+1)
		}
	}
	// The chain from the old snapshot's data to the live data still
	// leads there, through collected data.
	sd := old.st.tables[tbl.ID].shards[0]
	if to := h.e.scans.carriedTo(sd, h.e.liveShard(tbl.ID, 0), 1, h.e.LastCommit()); to == nil {
		t.Fatal("no chain from the old snapshot's shard data to the live data")
	}
	old.Release()
	sd = nil
	runtime.GC()
	runtime.GC()
	write(5)
	if err := h.e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	h.e.scans.mu.Lock()
	n := len(h.e.scans.succ)
	h.e.scans.mu.Unlock()
	if n > 2 {
		t.Fatalf("%d successor records kept once nothing old is held", n)
	}
}
