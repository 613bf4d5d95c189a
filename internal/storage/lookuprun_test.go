package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// TestLookupRun compares lookups answered from a merged run's stored
// winners (lookuprun.go) with the general path, over the groupsSpec table
// (two ordered groups, one with REVISION BY, and the commit-ordered
// default group) in both keyed modes, in one shard and in three, through
// groupsSchedule's merges (several parts per run), delta parts, memtables,
// ADD COLUMN and DROP COLUMN. Ties, re-deliveries of earlier versions and
// deletes are frequent. Every key and one never written is looked up at
// the snapshot and AS OF every few commits (before the run's newest
// commit: the interval read), with every column, a few, none, key
// columns, and _commit; both of lookupRun's cases must occur.
func TestLookupRun(t *testing.T) {
	for _, mode := range []catalog.Mode{catalog.ModeVersioned, catalog.ModeUpsert} {
		var runs, intervals int // lookups lookupRun answered (LookupTrace.Path)
		ran := false
		for _, shards := range []int{1, 3} {
			for seed := uint64(1); seed <= uint64(2-shards/3); seed++ { // 2 seeds of one shard, 1 of three
				t.Run(fmt.Sprint(mode, shards, seed), func(t *testing.T) {
					ran = true
					h := newHarness(t)
					h.mergePartRows = 16
					h.reopen()
					spec := groupsSpec(mode)
					spec.Shards = shards
					h.create(spec)
					tbl := h.table("t")
					rng := rand.New(rand.NewPCG(seed, 43))
					const keys = 16
					round := groupsRound(t, h, &tbl, rng, keys)
					check := func(stage string) {
						t.Helper()
						c := tbl.Columns
						colSets := [][]catalog.ColumnID{allCols(tbl), {c[1].ID}, {c[4].ID}, {c[0].ID}, {}, {c[len(c)-1].ID, c[2].ID}}
						if e, ok := tbl.Column("e"); ok {
							colSets = append(colSets, []catalog.ColumnID{e.ID}, []catalog.ColumnID{c[1].ID, e.ID})
						}
						snap := h.e.Snapshot()
						defer snap.Release()
						newest := snap.Commit()
						ns := []uint64{0}
						if mode == catalog.ModeVersioned {
							for n := uint64(1); n <= newest; n += 1 + newest/4 {
								ns = append(ns, n)
							}
							ns = append(ns, newest-1, newest)
						}
						for _, n := range ns {
							for _, cols := range colSets {
								for _, commit := range []bool{false, true} {
									var tr LookupTrace
									spec := ScanSpec{Cols: cols, Commit: commit, AsOf: n, Trace: &tr}
									for k := 0; k <= keys; k++ {
										if k == keys {
											k = 1000 // never written
										}
										if n != 0 && n < newest-1 && (k+int(n))%3 != 0 {
											continue // a third of the keys at the older commits
										}
										key := []types.Value{types.NewInt64(int64(k))}
										get := func(slow bool) string {
											// The reference also builds its reader afresh
											// (the fast path's is pooled: lookuppool.go).
											slowReads, unpooledLookups = slow, slow
											defer func() { slowReads, unpooledLookups = false, false }()
											tr = LookupTrace{}
											row, ok, err := snap.Lookup(context.Background(), tbl.ID, key, spec)
											if err != nil {
												t.Fatalf("%s: lookup %d: %v", stage, k, err)
											}
											switch tr.Path {
											case PathRun:
												runs++
											case PathInterval:
												intervals++
											}
											return fmt.Sprint(ok, row)
										}
										if got, want := get(false), get(true); got != want {
											t.Fatalf("%s: lookup of key %d at %d, cols %v, _commit %v: %s, the general path says %s", stage, k, n, cols, commit, got, want)
										}
									}
								}
							}
						}
					}
					groupsSchedule(t, h, &tbl, round, check, nil)
				})
			}
		}
		if !ran {
			continue
		}
		if runs == 0 {
			t.Fatalf("%s: no lookup was answered from a run", mode)
		}
		if mode == catalog.ModeVersioned && intervals == 0 {
			t.Fatalf("%s: no lookup before a run's newest commit was answered from its intervals", mode)
		}
	}
}

// TestLookupReaderPooled checks that a lookup takes the reader the last
// lookup of the same table and columns gave back (lookuppool.go) and so
// allocates less than one that builds its reader, that a failed lookup
// gives none back, and that the row read is the same either way.
func TestLookupReaderPooled(t *testing.T) {
	h := newHarness(t)
	h.create(groupsSpec(catalog.ModeVersioned))
	tbl := h.table("t")
	h.mustWrite(tbl, "g", []string{"k=1 v=a idx=1 rev=0", "k=2 v=b idx=0 rev=1"})
	snap := h.e.Snapshot()
	defer snap.Release()
	ctx := context.Background()
	spec := ScanSpec{Cols: allCols(tbl), Commit: true}
	key := []types.Value{types.NewInt64(1)}
	lookup := func() string {
		row, ok, err := snap.Lookup(ctx, tbl.ID, key, spec)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ok, row)
	}
	pooled := lookup()
	k := lookupReaderKey{t: tbl, n: len(spec.Cols), commit: true, batch: 1}
	copy(k.cols[:], spec.Cols)
	if keptReaders(k) == 0 {
		t.Fatal("no reader kept after a lookup")
	}
	comparePooled(t, lookup, pooled)
	// A lookup that fails (the key does not cast) keeps no reader.
	dropReaders(k)
	bad := []types.Value{types.NewString("x")}
	if _, _, err := snap.Lookup(ctx, tbl.ID, bad, spec); err == nil {
		t.Fatal("lookup of a non-integer key succeeded")
	}
	if keptReaders(k) != 0 {
		t.Fatal("a failed lookup gave its reader back")
	}
	if got := lookup(); got != pooled {
		t.Fatalf("after a failed lookup: %s, want %s", got, pooled)
	}
}

// TestVersionsReaderPooled: a read of one key's versions gives its reader
// back (lookuppool.go) and the next read takes it: it allocates less than
// one building its reader, returns the same rows (more than BatchRows of
// them, handed on in one batch, so a reader taken back builds a new one),
// and a read cut short by its callback's error gives none back.
func TestVersionsReaderPooled(t *testing.T) {
	h := newHarness(t)
	h.create(groupsSpec(catalog.ModeVersioned))
	tbl := h.table("t")
	var lines []string
	for i := range 7 {
		lines = append(lines, fmt.Sprintf("k=1 v=a%d idx=%d rev=0", i, i), fmt.Sprintf("k=2 v=b%d idx=%d rev=1", i, i))
	}
	h.mustWrite(tbl, "g", lines)
	if err := h.e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.mustWrite(tbl, "g", []string{"k=1 v=late idx=3 rev=5"})
	snap := h.e.Snapshot()
	defer snap.Release()
	ctx := context.Background()
	lo := types.AppendKey(nil, types.NewInt64(1))
	spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Ranges: []KeyRange{{Lo: lo, Hi: keyPrefixEnd(lo)}}, BatchRows: 3}
	read := func() string {
		var bs []*types.Batch
		if _, err := snap.Versions(ctx, spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
			t.Fatal(err)
		}
		return strings.Join(render(append(tbl.Names(spec.Cols), VersionsCols...), bs), "\n")
	}
	before := keyVersionReads.Load()
	pooled := read()
	if keyVersionReads.Load() == before {
		t.Fatal("the read did not seek the key")
	}
	if n := strings.Count(pooled, "\n") + 1; n <= spec.BatchRows {
		t.Fatalf("%d rows: the read must fill more than a batch", n)
	}
	k := lookupReaderKey{t: tbl, n: len(spec.Cols), versions: true, batch: spec.BatchRows}
	copy(k.cols[:], spec.Cols)
	if keptReaders(k) == 0 {
		t.Fatal("no reader kept after a read of one key's versions")
	}
	if again := read(); again != pooled {
		t.Fatalf("the pooled reader read\n%s\nthe first\n%s", again, pooled)
	}
	comparePooled(t, read, pooled)
	dropReaders(k)
	stop := errors.New("stop")
	if _, err := snap.Versions(ctx, spec, func(*types.Batch) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("a read whose callback failed: %v", err)
	}
	if keptReaders(k) != 0 {
		t.Fatal("a failed read gave its reader back")
	}
	if got := read(); got != pooled {
		t.Fatalf("after a failed read:\n%s\nwant\n%s", got, pooled)
	}
}

// TestLookupReaderPooledConcurrent runs lookups of one table and column
// set from several goroutines, which share the free list of readers
// (lookuppool.go), and checks every row against one read beforehand; run
// with -race it also checks that no reader is used by two at once.
func TestLookupReaderPooledConcurrent(t *testing.T) {
	h := newHarness(t)
	h.create(groupsSpec(catalog.ModeVersioned))
	tbl := h.table("t")
	const keys = 8
	var lines []string
	for k := 0; k < keys; k++ {
		lines = append(lines, fmt.Sprintf("k=%d v=%c idx=%d rev=%d", k, 'a'+rune(k%2), k%2, k%3))
	}
	h.mustWrite(tbl, "g", lines)
	ctx := context.Background()
	// Merged into a run, so that the lookups also share its classification
	// and buffers (lookupRun).
	if err := h.e.MergeNow(ctx, MergeFull); err != nil {
		t.Fatal(err)
	}
	snap := h.e.Snapshot()
	defer snap.Release()
	spec := ScanSpec{Cols: allCols(tbl), Commit: true}
	lookup := func(k int, tr *LookupTrace) (string, error) {
		spec := spec
		spec.Trace = tr
		row, ok, err := snap.Lookup(ctx, tbl.ID, []types.Value{types.NewInt64(int64(k))}, spec)
		return fmt.Sprint(ok, row), err
	}
	want := make([]string, keys+1) // keys+1: never written
	runs := 0
	for k := range want {
		var tr LookupTrace
		var err error
		if want[k], err = lookup(k, &tr); err != nil {
			t.Fatal(err)
		}
		if tr.Path == PathRun {
			runs++
		}
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				k := (i*7 + g) % len(want)
				got, err := lookup(k, nil)
				if err == nil && got != want[k] {
					err = fmt.Errorf("key %d: %s, want %s", k, got, want[k])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if runs == 0 {
		t.Fatal("no lookup was answered from a run")
	}
}

// TestLookupWarmedPages: lookups through the pages flushes and merges put
// in the cache as they write (part.WriteOptions.Warm) answer exactly as
// lookups that decode the same parts from their files. The same writes go
// to two engines, one warming and one not (Options.WarmWrites), and at each
// stage (versions in the memtable, after flushes, after a full merge into
// runs of several parts, after more flushes over the runs) every key and
// one never written is looked up current and AS OF every few commits,
// with the group's columns, every column, and _commit.
func TestLookupWarmedPages(t *testing.T) {
	ctx := context.Background()
	const keys = 3000
	open := func(warm bool) *Engine {
		e, err := Open(t.TempDir(), Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40, MergePartRows: 2500, WarmWrites: warm})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		if _, err := e.Commit(ctx, &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
			_, _, err := c.CreateTable(balancesSpec(), n)
			return err
		}}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	engines := [2]*Engine{open(true), open(false)}
	tbl, _ := engines[0].Catalog().Table("balances")
	rng := rand.New(rand.NewPCG(7, 8))
	round := 0
	write := func(batches int) {
		for range batches {
			ks := make([]int, 0, keys/4)
			for range keys / 4 {
				ks = append(ks, rng.IntN(keys))
			}
			for _, e := range engines {
				if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{balancesKeysWrite(tbl, ks, round)}}); err != nil {
					t.Fatal(err)
				}
			}
			round++
		}
	}
	each := func(f func(e *Engine) error) {
		for _, e := range engines {
			if err := f(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	flush := func(e *Engine) error { return e.Flush(ctx) }
	check := func(stage string) {
		t.Helper()
		amount, _ := tbl.Column("amount")
		snaps := [2]*Snapshot{engines[0].Snapshot(), engines[1].Snapshot()}
		defer snaps[0].Release()
		defer snaps[1].Release()
		newest := snaps[0].Commit()
		key := make([]types.Value, 3)
		for n := uint64(0); n <= newest; n += 1 + newest/5 {
			for _, spec := range []ScanSpec{{Cols: []catalog.ColumnID{amount.ID}, AsOf: n}, {Cols: allCols(tbl), AsOf: n, Commit: true}} {
				for k := 0; k <= keys; k++ {
					balancesKey(key, k)
					var got [2]string
					for i, s := range snaps {
						row, ok, err := s.Lookup(ctx, tbl.ID, key, spec)
						if err != nil {
							t.Fatalf("%s: lookup %d at %d: %v", stage, k, n, err)
						}
						got[i] = fmt.Sprint(ok, row)
					}
					if got[0] != got[1] {
						t.Fatalf("%s: lookup of key %d at %d (%d columns): %s through warmed pages, %s decoded", stage, k, n, len(spec.Cols), got[0], got[1])
					}
				}
			}
		}
	}
	write(4)
	check("memtable")
	for range 3 {
		write(3)
		each(flush)
	}
	check("deltas")
	each(func(e *Engine) error { return e.MergeNow(ctx, MergeFull) })
	check("runs")
	for range 2 {
		write(2)
		each(flush)
	}
	check("runs and deltas")
	if st := engines[0].pages.Stats(); st.Warmed == 0 {
		t.Fatal("no page was warmed")
	} else if st := engines[1].pages.Stats(); st.Warmed != 0 {
		t.Fatalf("%d pages warmed with warming off", st.Warmed)
	}
}

// TestLookupTrace checks what a traced lookup reports: the path it took
// and, per part kind, the pages it sought, decoded and found cached.
func TestLookupTrace(t *testing.T) {
	h := newHarness(t)
	h.create(groupsSpec(catalog.ModeVersioned))
	tbl := h.table("t")
	var lines []string
	for k := 0; k < 8; k++ {
		lines = append(lines, fmt.Sprintf("k=%d v=a idx=1 rev=1", k))
	}
	h.mustWrite(tbl, "g", lines)
	ctx := context.Background()
	if err := h.e.MergeNow(ctx, MergeFull); err != nil {
		t.Fatal(err)
	}
	h.reopen() // a cold page cache
	v, _ := tbl.Column("v")
	lookup := func(k int) LookupTrace {
		t.Helper()
		snap := h.e.Snapshot()
		defer snap.Release()
		var tr LookupTrace
		_, ok, err := snap.Lookup(ctx, tbl.ID, []types.Value{types.NewInt64(int64(k))}, ScanSpec{Cols: []catalog.ColumnID{v.ID}, Trace: &tr})
		if err != nil || !ok {
			t.Fatalf("lookup of %d: %v %v", k, ok, err)
		}
		return tr
	}
	if tr := lookup(1); tr.Path != PathRun || tr.Current.Seeks != 1 || tr.Current.Decoded == 0 || tr.Delta.Seeks != 0 || tr.Current.Stored <= 0 {
		t.Fatalf("first lookup of a run: %s", tr.String())
	}
	if tr := lookup(1); tr.Path != PathRun || tr.Current.Decoded != 0 || tr.Current.Hits == 0 {
		t.Fatalf("second lookup of a run: %s", tr.String())
	}
	h.mustWrite(tbl, "g", []string{"k=1 v=b idx=2 rev=1"})
	if err := h.e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if tr := lookup(1); tr.Path != PathParts || tr.Delta.Seeks == 0 || tr.Current.Seeks != 1 {
		t.Fatalf("lookup of a key a delta holds: %s", tr.String())
	}
	if tr := lookup(2); tr.Path != PathRun || tr.Delta.Seeks != 0 {
		t.Fatalf("lookup of a key no delta holds: %s", tr.String())
	}
}

// TestFoldWarmsPages: the fold of an idle shard (merge.Settle) puts the
// pages lookups read of the run it writes into the page cache even with
// Options.WarmWrites off, so the first lookup after it decodes nothing;
// the answers are those of the same lookup after a reopen (cold cache).
func TestFoldWarmsPages(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, tbl := openBalancesEngine(t, dir)
	defer func() { _ = e.Close() }()
	var err error
	const keys = 2000
	for round := range 3 {
		ks := make([]int, keys)
		for i := range ks {
			ks[i] = i
		}
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{balancesKeysWrite(tbl, ks, round)}}); err != nil {
			t.Fatal(err)
		}
	}
	// MergeNow flushes one delta run, which the policy leaves alone and
	// Settles folds.
	if err := e.MergeNow(ctx); err != nil {
		t.Fatal(err)
	}
	if e.merges.Load() != 1 {
		t.Fatalf("%d merges, want the one fold", e.merges.Load())
	}
	sample := everyNth(keys, 97)
	lookups := func(e *Engine) (string, LookupTrace) {
		t.Helper()
		return lookupAmounts(t, e, tbl, sample, func(k int, tr *LookupTrace) {
			if tr.Path != PathRun {
				t.Fatalf("lookup of %d after the fold: %s", k, tr.String())
			}
		})
	}
	warm, tr := lookups(e)
	if tr.Current.Decoded != 0 || tr.Current.Hits == 0 {
		t.Fatalf("lookups after a fold decoded %d pages, found %d cached", tr.Current.Decoded, tr.Current.Hits)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e, err = Open(dir, Options{NoBackgroundMerges: true}); err != nil {
		t.Fatal(err)
	}
	cold, tr := lookups(e)
	if tr.Current.Decoded == 0 {
		t.Fatal("lookups after a reopen decoded nothing")
	}
	if cold != warm {
		t.Fatalf("lookups through warmed pages %s, decoded %s", warm, cold)
	}
}

// TestIdleDeltasPrewarmed: a shard whose newer runs are too small to be
// folded keeps them as delta parts; once idle (MergeNow here, the merger
// after Options.SettleAfter), their pages are decoded into the page cache,
// so the lookups of the keys they touch decode no delta page, and answer
// as a cold reopen does.
func TestIdleDeltasPrewarmed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, tbl := openBalancesEngine(t, dir)
	defer func() { _ = e.Close() }()
	var err error
	const keys = 20000
	write := func(ks []int, round int) {
		t.Helper()
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{balancesKeysWrite(tbl, ks, round)}}); err != nil {
			t.Fatal(err)
		}
	}
	all := make([]int, keys)
	for i := range all {
		all[i] = i
	}
	for round := range 3 {
		write(all, round)
	}
	if err := e.MergeNow(ctx, MergeFull); err != nil {
		t.Fatal(err)
	}
	// A few keys written again: one small delta run, below the fold's
	// ratio, which MergeNow leaves and prewarms.
	touched := everyNth(keys, 397)
	write(touched, 3)
	merges, before := e.merges.Load(), prewarmedBytes.Load()
	if err := e.MergeNow(ctx); err != nil {
		t.Fatal(err)
	}
	if e.merges.Load() != merges {
		t.Fatal("the small delta run was folded; the test wants it kept")
	}
	if prewarmedBytes.Load() == before {
		t.Fatal("nothing prewarmed")
	}
	lookups := func(e *Engine) (string, LookupTrace) {
		t.Helper()
		return lookupAmounts(t, e, tbl, touched, nil)
	}
	warm, tr := lookups(e)
	if tr.Delta.Seeks == 0 || tr.Delta.Decoded != 0 || tr.Delta.Hits == 0 {
		t.Fatalf("lookups of prewarmed deltas: %d seeks, %d pages decoded, %d cached", tr.Delta.Seeks, tr.Delta.Decoded, tr.Delta.Hits)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e, err = Open(dir, Options{NoBackgroundMerges: true}); err != nil {
		t.Fatal(err)
	}
	cold, tr := lookups(e)
	if tr.Delta.Decoded == 0 {
		t.Fatal("lookups after a reopen decoded no delta page")
	}
	if cold != warm {
		t.Fatalf("lookups through prewarmed pages %s, decoded %s", warm, cold)
	}
}

// TestIdleRunsPrewarmed: a current run whose pages are not in the page
// cache (here after a reopen; in an ingest, after a fold during a pause
// whose pages later writes evicted) is decoded into it once the engine is
// idle (MergeNow here), so the lookups that follow decode no current
// page and answer as cold lookups do.
func TestIdleRunsPrewarmed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const keys = 20000
	e, tbl, _ := mergedBalances(t, dir, keys, 2)
	defer func() { _ = e.Close() }()
	probe := everyNth(keys, 211)
	reopen := func() { e = reopenQuiet(t, e, dir) }
	reopen()
	cold, tr := lookupAmounts(t, e, tbl, probe, nil)
	if tr.Current.Decoded == 0 {
		t.Fatal("lookups after a reopen decoded nothing")
	}
	reopen()
	// A commit arriving once the pass has begun (idle true, then false)
	// stops it before the next part, which stays for a later pass.
	calls := 0
	if err := e.prewarmLoop(ctx, false, func() bool { calls++; return calls == 1 }); err != nil {
		t.Fatal(err)
	}
	if _, runs, _ := e.unwarmed(); len(runs) == 0 || calls != 2 {
		t.Fatalf("a pass that stopped being idle took the runs (%d left, idle asked %d times)", len(runs), calls)
	}
	before := prewarmedBytes.Load()
	if err := e.MergeNow(ctx); err != nil {
		t.Fatal(err)
	}
	if prewarmedBytes.Load() == before {
		t.Fatal("nothing prewarmed")
	}
	warm, tr := lookupAmounts(t, e, tbl, probe, nil)
	if tr.Current.Decoded != 0 || tr.Current.Hits == 0 {
		t.Fatalf("lookups of a prewarmed run decoded %d pages, found %d cached", tr.Current.Decoded, tr.Current.Hits)
	}
	if warm != cold {
		t.Fatalf("lookups through prewarmed pages %s, decoded %s", warm, cold)
	}
	// Once per part: a second idle pass decodes nothing more.
	before = prewarmedBytes.Load()
	if err := e.MergeNow(ctx); err != nil {
		t.Fatal(err)
	}
	if prewarmedBytes.Load() != before {
		t.Fatal("a second pass prewarmed the run again")
	}
}

// TestIdleHistoryPrewarmed: an idle engine (MergeNow here) decodes into
// the page cache's free room what lookups AS OF a past commit read of a
// history run besides the columns they ask for (its sort keys as key runs,
// groups and validity intervals), so that such a lookup then decodes at
// most the one page of the column it asks for, and answers as a cold one.
func TestIdleHistoryPrewarmed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const keys = 20000
	e, tbl, commits := mergedBalances(t, dir, keys, 4)
	defer func() { _ = e.Close() }()
	// Keys far enough apart that no two share a history page.
	probe := everyNth(keys, 1009)
	reopen := func() { e = reopenQuiet(t, e, dir) }
	reopen()
	asOf := commits[1]
	cold, tr := lookupAmountsAt(t, e, tbl, probe, asOf, nil)
	if tr.History.Decoded < 3*len(probe) {
		t.Fatalf("cold lookups AS OF %d decoded %d history pages for %d keys", asOf, tr.History.Decoded, len(probe))
	}
	reopen()
	before := prewarmedBytes.Load()
	if err := e.MergeNow(ctx); err != nil {
		t.Fatal(err)
	}
	if prewarmedBytes.Load() == before {
		t.Fatal("nothing prewarmed")
	}
	if _, _, hists := e.unwarmed(); len(hists) != 0 {
		t.Fatalf("%d history parts not prewarmed", len(hists))
	}
	warm, tr := lookupAmountsAt(t, e, tbl, probe, asOf, nil)
	if tr.History.Decoded > len(probe) || tr.History.Hits < 4*len(probe) {
		t.Fatalf("lookups AS OF %d of a prewarmed history decoded %d pages and found %d cached, for %d keys", asOf, tr.History.Decoded, tr.History.Hits, len(probe))
	}
	if warm != cold {
		t.Fatalf("lookups through prewarmed pages %s, decoded %s", warm, cold)
	}
}

// mergedBalances opens an engine on dir without background merges,
// commits rounds versions of keys balances keys, one commit a round, and
// merges them into one run; it returns the rounds' commits.
func mergedBalances(t *testing.T, dir string, keys, rounds int) (*Engine, *catalog.Table, []uint64) {
	t.Helper()
	ctx := context.Background()
	e, tbl := openBalancesEngine(t, dir)
	all := make([]int, keys)
	for i := range all {
		all[i] = i
	}
	var commits []uint64
	for round := range rounds {
		c, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{balancesKeysWrite(tbl, all, round)}})
		if err != nil {
			_ = e.Close()
			t.Fatal(err)
		}
		commits = append(commits, c)
	}
	if err := e.MergeNow(ctx, MergeFull); err != nil {
		_ = e.Close()
		t.Fatal(err)
	}
	return e, tbl, commits
}

// everyNth returns the keys 0, step, 2·step, ... below keys.
func everyNth(keys, step int) []int {
	var out []int
	for k := 0; k < keys; k += step {
		out = append(out, k)
	}
	return out
}

// reopenQuiet closes e and opens dir again without background merges, so
// that its page cache starts empty.
func reopenQuiet(t *testing.T, e *Engine, dir string) *Engine {
	t.Helper()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir, Options{NoBackgroundMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// openBalancesEngine opens an engine on dir without background merges
// and creates the balances table in it.
func openBalancesEngine(t *testing.T, dir string) (*Engine, *catalog.Table) {
	t.Helper()
	e, err := Open(dir, Options{NoBackgroundMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Commit(context.Background(), &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
		_, _, err := c.CreateTable(balancesSpec(), n)
		return err
	}}); err != nil {
		_ = e.Close()
		t.Fatal(err)
	}
	tbl, _ := e.Catalog().Table("balances")
	return e, tbl
}

// lookupAmounts looks up the amount of each of keys on a snapshot of e,
// calling check (when not nil) with each lookup's trace, and returns the
// answers rendered and the delta and current pages traced, summed.
func lookupAmounts(t *testing.T, e *Engine, tbl *catalog.Table, keys []int, check func(k int, tr *LookupTrace)) (string, LookupTrace) {
	t.Helper()
	return lookupAmountsAt(t, e, tbl, keys, 0, check)
}

// lookupAmountsAt is lookupAmounts AS OF commit asOf (0: now); the trace
// sums history pages too.
func lookupAmountsAt(t *testing.T, e *Engine, tbl *catalog.Table, keys []int, asOf uint64, check func(k int, tr *LookupTrace)) (string, LookupTrace) {
	t.Helper()
	snap := e.Snapshot()
	defer snap.Release()
	amount, _ := tbl.Column("amount")
	var sum LookupTrace
	var out []string
	key := make([]types.Value, 3)
	for _, k := range keys {
		balancesKey(key, k)
		var tr LookupTrace
		row, ok, err := snap.Lookup(context.Background(), tbl.ID, key, ScanSpec{Cols: []catalog.ColumnID{amount.ID}, AsOf: asOf, Trace: &tr})
		if err != nil {
			t.Fatal(err)
		}
		if check != nil {
			check(k, &tr)
		}
		sum.Delta.Add(&tr.Delta)
		sum.Current.Add(&tr.Current)
		sum.History.Add(&tr.History)
		out = append(out, fmt.Sprint(ok, row))
	}
	return fmt.Sprint(out), sum
}

// keptReaders is how many readers the free list of k holds.
func keptReaders(k lookupReaderKey) int {
	lookupReaders.mu.Lock()
	defer lookupReaders.mu.Unlock()
	return len(lookupReaders.m[k])
}

// dropReaders empties the free list of k.
func dropReaders(k lookupReaderKey) {
	lookupReaders.mu.Lock()
	defer lookupReaders.mu.Unlock()
	lookupReaders.m[k] = nil
}

// comparePooled fails unless read, taking a pooled reader, returns
// pooled, as read building its reader each time does, and allocates less
// than that.
func comparePooled(t *testing.T, read func() string, pooled string) {
	t.Helper()
	warm := testing.AllocsPerRun(20, func() { read() })
	unpooledLookups = true
	fresh := read()
	cold := testing.AllocsPerRun(20, func() { read() })
	unpooledLookups = false
	if pooled != fresh {
		t.Fatalf("a pooled reader read\n%s\na new one\n%s", pooled, fresh)
	}
	if warm >= cold {
		t.Fatalf("a pooled read allocated %v times, one building its reader %v", warm, cold)
	}
}
