package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
)

// balSpec is a balances-like table: a two-column key and two groups,
// one ordered by (valid, revision), one by valid alone.
func balSpec(mode catalog.Mode) catalog.TableSpec {
	return catalog.TableSpec{
		Name: "b", Mode: mode,
		Columns: []catalog.ColumnSpec{
			{Name: "k", Type: types.Of(types.Int64), NotNull: true},
			{Name: "s", Type: types.Of(types.String), NotNull: true},
			{Name: "amt", Type: types.Of(types.Int64)},
			{Name: "idx", Type: types.Of(types.Int64)},
			{Name: "rev", Type: types.Of(types.Int64)},
			{Name: "cnt", Type: types.Of(types.String)},
			{Name: "aidx", Type: types.Of(types.Int64)},
		},
		PrimaryKey: []string{"k", "s"},
		Groups: []catalog.GroupSpec{
			{Name: "h", Columns: []string{"amt", "idx", "rev"}, ValidBy: []string{"idx"}, RevisionBy: []string{"rev"}},
			{Name: "a", Columns: []string{"cnt", "aidx"}, ValidBy: []string{"aidx"}},
		},
	}
}

// randomWrites commits rounds of random versions (a third of them late,
// some exact repeats) and deletes to table b.
func randomWrites(t *testing.T, h *harness, rng *rand.Rand, rounds, keys int) {
	t.Helper()
	for r := 0; r < rounds; r++ {
		tbl := h.table("b")
		var ws []Write
		var hl, al, dl []string
		for i := 0; i < keys/2+1; i++ {
			k := rng.IntN(keys)
			key := fmt.Sprintf("k=%d s='s%d'", k%7, k)
			switch x := rng.IntN(10); {
			case x < 5:
				idx := rng.IntN(8)
				extra := ""
				if _, ok := tbl.Column("extra"); ok && rng.IntN(2) == 0 {
					extra = fmt.Sprintf(" extra=%d", rng.IntN(3))
				}
				hl = append(hl, fmt.Sprintf("%s amt=%d idx=%d rev=%d%s", key, rng.IntN(3), idx, rng.IntN(2), extra))
			case x < 9:
				al = append(al, fmt.Sprintf("%s cnt='c%d' aidx=%d", key, rng.IntN(3), rng.IntN(6)))
			default:
				dl = append(dl, key)
			}
		}
		for _, x := range []struct {
			g     string
			lines []string
		}{{"h", hl}, {"a", al}} {
			if len(x.lines) > 0 {
				w, err := versionWrite(tbl, x.g, x.lines)
				if err != nil {
					t.Fatal(err)
				}
				ws = append(ws, w)
			}
		}
		if len(dl) > 0 && tbl.Mode != catalog.ModeAppend {
			w, err := deleteWrite(tbl, dl)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
		h.mustCommit(&Txn{Kind: KindWrite, Writes: ws})
	}
}

// readBoth scans at n with the fast paths (without the resolved-scan
// cache, with AS OF blocks decoded ahead and inline, and with the cache)
// and with the general path, and fails when they differ.
func readBoth(t *testing.T, h *harness, spec ScanSpec, what string) int {
	t.Helper()
	read := func(slow bool) ([]string, ScanStats) {
		slowReads = slow
		defer func() { slowReads, scanCacheOff, ivSerial, noAsOfReads = false, false, false, false }()
		snap := h.e.Snapshot()
		defer snap.Release()
		tbl, _ := snap.Catalog().TableByID(spec.Table)
		var bs []*types.Batch
		st, err := snap.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil })
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		names := tbl.Names(spec.Cols)
		if spec.Commit {
			names = append(names, "_commit")
		}
		return render(names, bs), st
	}
	want, _ := read(true)
	// The sources themselves (the resolved-scan cache off), with blocks
	// decoded ahead and inline, through the run's AS OF index and without
	// it, then as reads go (an entry filled or carried earlier may serve
	// it).
	for _, way := range []string{"uncached", "uncached, serial", "uncached, no AS OF index", "cached"} {
		scanCacheOff, ivSerial = way != "cached", way == "uncached, serial"
		noAsOfReads = way == "uncached, no AS OF index"
		got, _ := read(false)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: fast path (%s) differs from the general path:\nfast:\n%s\ngeneral:\n%s", what, way,
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	return len(want)
}

// shardKinds lists the kinds of the parts of table b's shards.
func shardKinds(h *harness, id catalog.TableID) []part.Kind {
	var ks []part.Kind
	for _, sd := range h.e.cur.Load().tables[id].shards {
		for _, pf := range sd.parts {
			ks = append(ks, pf.r.Meta().Kind)
		}
	}
	return ks
}

// TestFastReadsMatchGeneralPath checks the fast reads of merged shards
// (current stream, AS OF range check) against the general resolution, at
// every commit, over key ranges, with deletes, late versions, repeats, a
// column added midway (R6.5), newer delta parts and the memtable.
func TestFastReadsMatchGeneralPath(t *testing.T) {
	for _, mode := range []catalog.Mode{catalog.ModeVersioned, catalog.ModeUpsert} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/%d", mode, seed), func(t *testing.T) {
				h := newHarness(t)
				h.mergePartRows = 40 // several parts per run
				h.reopen()
				rng := rand.New(rand.NewPCG(seed, 7))
				h.create(balSpec(mode))
				randomWrites(t, h, rng, 6, 60)
				if seed%2 == 0 {
					// Else the versions before the column and after it
					// share a part, which then holds the column.
					if err := h.e.Flush(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				h.ddl(func(c *catalog.Catalog, commit uint64) error {
					_, err := c.AddColumn(catalog.AddColumnSpec{Table: "b", Group: "h",
						Column: catalog.ColumnSpec{Name: "extra", Type: types.Of(types.Int64), Default: &catalog.Default{SQL: "9", Value: "9"}}}, commit)
					return err
				})
				randomWrites(t, h, rng, 6, 60)
				if err := h.e.MergeNow(context.Background(), MergeFull); err != nil {
					t.Fatal(err)
				}
				tbl := h.table("b")
				check := func(stage string) {
					if ks := shardKinds(h, tbl.ID); !slices.Contains(ks, part.KindCurrent) {
						t.Fatalf("%s: parts %v hold no current run", stage, ks)
					}
					last := h.e.LastCommit()
					lo := types.AppendKey(nil, types.NewInt64(2))
					hi := types.AppendKey(nil, types.NewInt64(5))
					mid := types.AppendKey(types.AppendKey(nil, types.NewInt64(3)), types.NewString("s3"))
					for n := uint64(2); n <= last; n++ {
						if mode == catalog.ModeUpsert && n != last {
							continue
						}
						for ri, rs := range [][]KeyRange{nil, {{Lo: lo, Hi: hi}}, {{Hi: lo}, {Lo: mid}}} {
							spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true, AsOf: n, Ranges: rs, BatchRows: 7}
							readBoth(t, h, spec, fmt.Sprintf("%s AS OF %d ranges %d", stage, n, ri))
						}
						spec := ScanSpec{Table: tbl.ID, Cols: []catalog.ColumnID{tbl.Columns[5].ID, tbl.Columns[1].ID}, AsOf: n}
						readBoth(t, h, spec, fmt.Sprintf("%s AS OF %d two columns", stage, n))
						spec.Cols = []catalog.ColumnID{tbl.Columns[1].ID, tbl.Columns[2].ID, tbl.Columns[1].ID, tbl.Columns[0].ID}
						readBoth(t, h, spec, fmt.Sprintf("%s AS OF %d a key column twice", stage, n))
						if n%3 == 0 || n == last {
							lookupBoth(t, h, tbl, n, 60, stage)
						}
					}
				}
				f0, i0, a0 := fastReads.Load(), intervalReads.Load(), asofReads.Load()
				check("merged")
				if fastReads.Load() == f0 || mode == catalog.ModeVersioned && (intervalReads.Load() == i0 || asofReads.Load() == a0) {
					t.Fatalf("the fast paths did not run: %d reads, %d AS OF, %d through the AS OF index",
						fastReads.Load()-f0, intervalReads.Load()-i0, asofReads.Load()-a0)
				}
				if err := h.e.Check(); err != nil {
					t.Fatal(err)
				}
				randomWrites(t, h, rng, 3, 60)
				if err := h.e.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				check("merged + delta")
				randomWrites(t, h, rng, 3, 60)
				check("merged + delta + memtable")
			})
		}
	}
}

// lookupBoth looks every key up at n with the seeking lookup and with the
// general path and fails when they differ.
func lookupBoth(t *testing.T, h *harness, tbl *catalog.Table, n uint64, keys int, stage string) {
	t.Helper()
	snap := h.e.Snapshot()
	defer snap.Release()
	for _, cols := range [][]catalog.ColumnID{allCols(tbl), {tbl.Columns[5].ID, tbl.Columns[1].ID, tbl.Columns[3].ID}} {
		lookupColsBoth(t, snap, tbl, ScanSpec{Cols: cols, Commit: true, AsOf: n}, keys, stage)
	}
	// Without _commit, lookups read only the groups of the columns asked
	// for from parts (lookupGroups): one column of group h, one of group a
	// with a key column, key columns alone, nothing.
	c := tbl.Columns
	for _, cols := range [][]catalog.ColumnID{{c[2].ID}, {c[5].ID, c[0].ID}, {c[1].ID}, {}, allCols(tbl)} {
		lookupColsBoth(t, snap, tbl, ScanSpec{Cols: cols, AsOf: n}, keys, stage+" without _commit")
	}
}

func lookupColsBoth(t *testing.T, snap *Snapshot, tbl *catalog.Table, spec ScanSpec, keys int, stage string) {
	t.Helper()
	n := spec.AsOf
	for k := 0; k < keys; k++ {
		key := []types.Value{types.NewInt64(int64(k % 7)), types.NewString(fmt.Sprintf("s%d", k))}
		get := func(slow bool) string {
			slowReads = slow
			defer func() { slowReads = false }()
			row, ok, err := snap.Lookup(context.Background(), tbl.ID, key, spec)
			if err != nil {
				t.Fatalf("%s: lookup %v at %d: %v", stage, key, n, err)
			}
			return fmt.Sprint(ok, row)
		}
		if got, want := get(false), get(true); got != want {
			t.Fatalf("%s: lookup of key %d at %d: %s, the general path says %s", stage, k, n, got, want)
		}
	}
}

// TestFastReadsSeeHistoryRepeats: a newer version that repeats a
// superseded version kept in the history run is dropped (R3.4), so the
// fast paths must read history for every key a newer source touches.
func TestFastReadsSeeHistoryRepeats(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=5", "k=2 v=a idx=5")}})
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=b idx=5", "k=2 v=b idx=5")}})
	if err := h.e.MergeNow(context.Background(), MergeFull); err != nil {
		t.Fatal(err)
	}
	// v=a at idx 5 still counts (superseded by v=b only by commit order):
	// writing it again adds nothing, and v=b stays the winner.
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=5")}})
	if err := h.e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=2 v=a idx=5")}})
	want := []string{"k=1 v=b idx=5 _commit=3", "k=2 v=b idx=5 _commit=3"}
	spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true}
	if got := scanCount(t, h, spec); !slices.Equal(got, want) {
		t.Fatalf("scan: %v, want %v", got, want)
	}
	readBoth(t, h, spec, "scan")
	snap := h.e.Snapshot()
	defer snap.Release()
	for k := int64(1); k <= 2; k++ {
		row, ok, err := snap.Lookup(context.Background(), tbl.ID, []types.Value{types.NewInt64(k)}, spec)
		if err != nil || !ok || row[1].String() != "b" {
			t.Fatalf("lookup of %d: %v %v %v, want v=b", k, row, ok, err)
		}
	}
}

// TestLookupReadsWholeGroups: a lookup reads from parts only the groups of
// the columns asked for, but each whole, because a repeat (R3.4) is an
// equal payload: here the third version equals the first in amt but not in
// extra, so it is no repeat and wins by commit order. Reading amt alone
// would take it for a repeat and return the second version's amt.
func TestLookupReadsWholeGroups(t *testing.T) {
	h := newHarness(t)
	h.create(balSpec(catalog.ModeVersioned))
	h.ddl(func(c *catalog.Catalog, commit uint64) error {
		_, err := c.AddColumn(catalog.AddColumnSpec{Table: "b", Group: "h",
			Column: catalog.ColumnSpec{Name: "extra", Type: types.Of(types.Int64)}}, commit)
		return err
	})
	tbl := h.table("b")
	write := func(line string) {
		t.Helper()
		w, err := versionWrite(tbl, "h", []string{line})
		if err != nil {
			t.Fatal(err)
		}
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
	}
	write("k=1 s='a' amt=1 idx=5 rev=1 extra=1")
	write("k=1 s='a' amt=2 idx=5 rev=1 extra=1")
	if err := h.e.MergeNow(context.Background(), MergeFull); err != nil {
		t.Fatal(err)
	}
	write("k=1 s='a' amt=1 idx=5 rev=1 extra=2")
	if err := h.e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	amt, _ := tbl.Column("amt")
	snap := h.e.Snapshot()
	defer snap.Release()
	key := []types.Value{types.NewInt64(1), types.NewString("a")}
	for _, slow := range []bool{false, true} {
		slowReads = slow
		row, ok, err := snap.Lookup(context.Background(), tbl.ID, key, ScanSpec{Cols: []catalog.ColumnID{amt.ID}})
		slowReads = false
		if err != nil || !ok || row[0].String() != "1" {
			t.Fatalf("slow=%v: lookup: %v %v %v, want amt=1", slow, row, ok, err)
		}
	}
}

// TestLookupSkipsHistory: lookups at or after a merged run's newest commit
// read its history only when a newer version ties with the run's winner on
// every ordering value (mayRepeatHistory). Ordering values and payloads
// from tiny domains make ties, repeats and deletes common; every key is
// compared with the general path after the merge, with delta parts and
// with the memtable.
func TestLookupSkipsHistory(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := newHarness(t)
			h.create(kvSpec("t", catalog.ModeVersioned))
			tbl := h.table("t")
			rng := rand.New(rand.NewPCG(seed, 11))
			const keys = 12
			round := func() {
				var rows, dels []string
				for k := 0; k < keys; k++ {
					switch x := rng.IntN(10); {
					case x < 6:
						rows = append(rows, fmt.Sprintf("k=%d v=%c idx=%d", k, 'a'+rune(rng.IntN(2)), rng.IntN(2)))
					case x == 6:
						dels = append(dels, fmt.Sprintf("k=%d", k))
					}
				}
				var ws []Write
				if len(rows) > 0 {
					ws = append(ws, kvWrite(t, tbl, rows...))
				}
				if len(dels) > 0 {
					w, err := deleteWrite(tbl, dels)
					if err != nil {
						t.Fatal(err)
					}
					ws = append(ws, w)
				}
				if len(ws) > 0 {
					h.mustCommit(&Txn{Kind: KindWrite, Writes: ws})
				}
			}
			check := func(stage string) {
				t.Helper()
				snap := h.e.Snapshot()
				defer snap.Release()
				for _, spec := range []ScanSpec{{Cols: allCols(tbl)}, {Cols: []catalog.ColumnID{tbl.Columns[1].ID}}, {Cols: allCols(tbl), Commit: true}} {
					for k := 0; k < keys; k++ {
						key := []types.Value{types.NewInt64(int64(k))}
						get := func(slow bool) string {
							slowReads = slow
							defer func() { slowReads = false }()
							row, ok, err := snap.Lookup(context.Background(), tbl.ID, key, spec)
							if err != nil {
								t.Fatalf("%s: lookup %d: %v", stage, k, err)
							}
							return fmt.Sprint(ok, row)
						}
						if got, want := get(false), get(true); got != want {
							t.Fatalf("%s: lookup of key %d: %s, the general path says %s", stage, k, got, want)
						}
					}
				}
			}
			for i := 0; i < 5; i++ {
				round()
			}
			if err := h.e.MergeNow(context.Background(), MergeFull); err != nil {
				t.Fatal(err)
			}
			if ks := shardKinds(h, tbl.ID); !slices.Contains(ks, part.KindHistory) {
				t.Fatalf("parts %v hold no history run", ks)
			}
			check("merged")
			for i := 0; i < 3; i++ {
				round()
				if err := h.e.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("merged + %d delta parts", i+1))
			}
			round()
			check("merged + delta + memtable")
		})
	}
}

// TestLookupSkipsHistoryGroups is TestLookupSkipsHistory over a table
// with two ordered groups (one with REVISION BY) and the commit-ordered
// group default, in both keyed modes, at the newest commits, through
// several merges, an ADD COLUMN to group g and a DROP COLUMN: ties,
// repeats of history versions, deletes and re-deliveries are frequent,
// and every key is compared with the general path for every group's
// columns alone and together, with and without _commit.
func TestLookupSkipsHistoryGroups(t *testing.T) {
	for _, mode := range []catalog.Mode{catalog.ModeVersioned, catalog.ModeUpsert} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprint(mode, seed), func(t *testing.T) {
				h := newHarness(t)
				h.create(groupsSpec(mode))
				tbl := h.table("t")
				rng := rand.New(rand.NewPCG(seed, 23))
				const keys = 8
				group := func(name string, rows []string) Write {
					w, err := versionWrite(tbl, name, rows)
					if err != nil {
						t.Fatal(err)
					}
					return w
				}
				round := func() {
					var gs, hs, ds, dels []string
					for k := 0; k < keys; k++ {
						switch x := rng.IntN(12); {
						case x < 4:
							g := fmt.Sprintf("k=%d v=%c idx=%d rev=%d", k, 'a'+rune(rng.IntN(2)), rng.IntN(2), rng.IntN(2))
							if _, ok := tbl.Column("e"); ok && rng.IntN(2) == 0 {
								g += fmt.Sprintf(" e=%d", rng.IntN(2))
							}
							gs = append(gs, g)
						case x < 7:
							hs = append(hs, fmt.Sprintf("k=%d a=%d aidx=%d", k, rng.IntN(2), rng.IntN(2)))
						case x < 9:
							if _, ok := tbl.Column("x"); ok {
								ds = append(ds, fmt.Sprintf("k=%d x=%c", k, 'a'+rune(rng.IntN(2))))
							} else {
								ds = append(ds, fmt.Sprintf("k=%d", k))
							}
						case x == 9:
							dels = append(dels, fmt.Sprintf("k=%d", k))
						}
					}
					var ws []Write
					if len(gs) > 0 {
						ws = append(ws, group("g", gs))
					}
					if len(hs) > 0 {
						ws = append(ws, group("h", hs))
					}
					if len(ds) > 0 {
						ws = append(ws, group("default", ds))
					}
					if len(dels) > 0 {
						w, err := deleteWrite(tbl, dels)
						if err != nil {
							t.Fatal(err)
						}
						ws = append(ws, w)
					}
					if len(ws) > 0 {
						h.mustCommit(&Txn{Kind: KindWrite, Writes: ws})
					}
				}
				check := func(stage string) {
					t.Helper()
					c := tbl.Columns
					colSets := [][]catalog.ColumnID{allCols(tbl), {c[1].ID}, {c[4].ID}, {c[len(c)-1].ID}, {c[0].ID}, {}, {c[len(c)-1].ID, c[2].ID}}
					if e, ok := tbl.Column("e"); ok {
						colSets = append(colSets, []catalog.ColumnID{e.ID}, []catalog.ColumnID{c[1].ID, e.ID})
					}
					snap := h.e.Snapshot()
					defer snap.Release()
					newest := snap.Commit()
					// 0 is the snapshot's commit; the others are AS OF at
					// and just before the newest commits.
					for _, n := range []uint64{0, newest, newest - 1, newest - 2} {
						if n > 0 && mode == catalog.ModeUpsert {
							break
						}
						for _, cols := range colSets {
							for _, commit := range []bool{false, true} {
								spec := ScanSpec{Cols: cols, Commit: commit, AsOf: n}
								for k := 0; k < keys; k++ {
									key := []types.Value{types.NewInt64(int64(k))}
									get := func(slow bool) string {
										slowReads = slow
										defer func() { slowReads = false }()
										row, ok, err := snap.Lookup(context.Background(), tbl.ID, key, spec)
										if err != nil {
											t.Fatalf("%s: lookup %d: %v", stage, k, err)
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
}

// TestScanSkipsHistory: a scan at or after a merged run's newest commit
// resolves a key that newer sources touch from the run's current rows and
// the newer inputs, without their payloads unless two of its versions tie
// on their ordering values (resolveLight), and then reads the run's
// history only when a newer version
// ties with the current row of its group on every ordering value
// (mayRepeatHistory). Two ordered groups (one with REVISION BY) and the
// commit-ordered group default, in both keyed modes, over tiny domains:
// ties are frequent, earlier versions are re-delivered after the merges
// that moved them to history (at-least-once producers) and so are the
// run's winners (a tie that needs no history), keys are deleted
// and written again, a column is added and another dropped. Every scan is
// compared with the general path, for each group's columns alone and
// together, with and without _commit, over key ranges, in small batches;
// both the skipping and the history-reading cases must occur.
func TestScanSkipsHistory(t *testing.T) {
	for _, mode := range []catalog.Mode{catalog.ModeVersioned, catalog.ModeUpsert} {
		light0, alone0, hist0, rep0 := touchedLight.Load(), touchedAlone.Load(), touchedHistory.Load(), touchedRepeats.Load()
		ran := false // not when -run filters the subtests out
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprint(mode, seed), func(t *testing.T) {
				ran = true
				h := newHarness(t)
				h.mergePartRows = 16 // several parts per run
				h.reopen()
				h.create(groupsSpec(mode))
				tbl := h.table("t")
				rng := rand.New(rand.NewPCG(seed, 31))
				const keys = 24
				round := groupsRound(t, h, &tbl, rng, keys)
				check := func(stage string) {
					t.Helper()
					c := tbl.Columns
					colSets := [][]catalog.ColumnID{allCols(tbl), {c[1].ID}, {c[4].ID}, {c[len(c)-1].ID}, {c[0].ID}, {c[len(c)-1].ID, c[2].ID}}
					if e, ok := tbl.Column("e"); ok {
						colSets = append(colSets, []catalog.ColumnID{e.ID}, []catalog.ColumnID{c[1].ID, e.ID})
					}
					lo := types.AppendKey(nil, types.NewInt64(5))
					hi := types.AppendKey(nil, types.NewInt64(17))
					newest := h.e.LastCommit()
					for _, n := range []uint64{0, newest - 1, newest - 2} {
						if n > 0 && mode == catalog.ModeUpsert {
							break
						}
						for ci, cols := range colSets {
							for _, commit := range []bool{false, true} {
								for ri, rs := range [][]KeyRange{nil, {{Lo: lo, Hi: hi}}, {{Hi: lo}, {Lo: hi}}} {
									if ri > 0 && ci > 0 {
										break // ranges with every column only
									}
									spec := ScanSpec{Table: tbl.ID, Cols: cols, Commit: commit, AsOf: n, Ranges: rs, BatchRows: 3}
									readBoth(t, h, spec, fmt.Sprintf("%s: at %d, cols %v, _commit %v, ranges %d", stage, n, cols, commit, ri))
								}
							}
						}
					}
				}
				groupsSchedule(t, h, &tbl, round, check, func(merge int) {
					if ks := shardKinds(h, tbl.ID); !slices.Contains(ks, part.KindCurrent) {
						t.Fatalf("merge %d: parts %v hold no current run", merge, ks)
					}
				})
			})
		}
		if ran && (touchedLight.Load() == light0 || touchedAlone.Load() == alone0 || touchedHistory.Load() == hist0 || touchedRepeats.Load() == rep0) {
			t.Fatalf("%s: touched keys resolved without payloads %d; with them (a tie) without history %d (%d of them exact repeats), with it %d: each case must occur",
				mode, touchedLight.Load()-light0, touchedAlone.Load()-alone0, touchedRepeats.Load()-rep0, touchedHistory.Load()-hist0)
		}
	}
}

// groupsSpec is the table of TestLookupSkipsHistoryGroups and
// TestScanSkipsHistory: two ordered groups (g with REVISION BY, h) and the
// commit-ordered group default.
func groupsSpec(mode catalog.Mode) catalog.TableSpec {
	return catalog.TableSpec{
		Name: "t", Mode: mode,
		Columns: []catalog.ColumnSpec{
			{Name: "k", Type: types.Of(types.Int64), NotNull: true},
			{Name: "v", Type: types.Of(types.String)},
			{Name: "idx", Type: types.Of(types.Int64)},
			{Name: "rev", Type: types.Of(types.Int64)},
			{Name: "a", Type: types.Of(types.Int64)},
			{Name: "aidx", Type: types.Of(types.Int64)},
			{Name: "x", Type: types.Of(types.String)},
		},
		PrimaryKey: []string{"k"},
		Groups: []catalog.GroupSpec{
			{Name: "g", Columns: []string{"v", "idx", "rev"}, ValidBy: []string{"idx"}, RevisionBy: []string{"rev"}},
			{Name: "h", Columns: []string{"a", "aidx"}, ValidBy: []string{"aidx"}},
		},
	}
}

// groupsRound returns a function that commits one random round of writes
// to a groupsSpec table *tbl of keys keys: versions of groups g and h
// (with e when the table has it), exact re-deliveries of earlier ones,
// default-group rows (with x while it exists) and deletes.
func groupsRound(t *testing.T, h *harness, tbl **catalog.Table, rng *rand.Rand, keys int) func() {
	// Every line written to groups g and h, per key, for re-delivery.
	sent := map[string][][]string{"g": make([][]string, keys), "h": make([][]string, keys)}
	return func() {
		tbl := *tbl
		lines := map[string][]string{}
		var dels []string
		for k := 0; k < keys; k++ {
			var g, line string
			switch x := rng.IntN(14); {
			case x < 4:
				g, line = "g", fmt.Sprintf("k=%d v=%c idx=%d rev=%d", k, 'a'+rune(rng.IntN(2)), rng.IntN(2), rng.IntN(2))
				if _, ok := tbl.Column("e"); ok && rng.IntN(2) == 0 {
					line += fmt.Sprintf(" e=%d", rng.IntN(2))
				}
			case x < 7:
				g, line = "h", fmt.Sprintf("k=%d a=%d aidx=%d", k, rng.IntN(2), rng.IntN(2))
			case x < 9:
				// A re-delivery of an earlier version of g or h.
				g = []string{"g", "h"}[rng.IntN(2)]
				if old := sent[g][k]; len(old) > 0 {
					line = old[rng.IntN(len(old))]
				}
			case x < 11:
				g, line = "default", fmt.Sprintf("k=%d", k)
				if _, ok := tbl.Column("x"); ok {
					line += fmt.Sprintf(" x=%c", 'a'+rune(rng.IntN(2)))
				}
			case x == 11:
				dels = append(dels, fmt.Sprintf("k=%d", k))
			}
			if line != "" {
				lines[g] = append(lines[g], line)
				if g != "default" {
					sent[g][k] = append(sent[g][k], line)
				}
			}
		}
		var ws []Write
		for _, g := range []string{"g", "h", "default"} {
			if len(lines[g]) > 0 {
				w, err := versionWrite(tbl, g, lines[g])
				if err != nil {
					t.Fatal(err)
				}
				ws = append(ws, w)
			}
		}
		if len(dels) > 0 {
			w, err := deleteWrite(tbl, dels)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
		if len(ws) > 0 {
			h.mustCommit(&Txn{Kind: KindWrite, Writes: ws})
		}
	}
}

// groupsSchedule drives a groupsSpec table through three full merges,
// each followed by two flushed delta parts and a memtable, with an ADD
// COLUMN to group g after the first and a DROP COLUMN of x after the
// second, calling check at every stage; merged, when given, runs right
// after each merge. *tbl follows the DDL.
func groupsSchedule(t *testing.T, h *harness, tbl **catalog.Table, round func(), check func(string), merged func(int)) {
	t.Helper()
	for merge := 0; merge < 3; merge++ {
		for i := 0; i < 4; i++ {
			round()
		}
		if err := h.e.MergeNow(context.Background(), MergeFull); err != nil {
			t.Fatal(err)
		}
		if merged != nil {
			merged(merge)
		}
		check(fmt.Sprintf("merge %d", merge))
		for i := 0; i < 2; i++ {
			round()
			if err := h.e.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("merge %d + %d delta parts", merge, i+1))
		}
		round()
		check(fmt.Sprintf("merge %d + delta + memtable", merge))
		if merge == 0 {
			// A column added to group g: older parts lack it.
			h.ddl(func(c *catalog.Catalog, commit uint64) error {
				_, err := c.AddColumn(catalog.AddColumnSpec{Table: "t", Group: "g",
					Column: catalog.ColumnSpec{Name: "e", Type: types.Of(types.Int64)}}, commit)
				return err
			})
			*tbl = h.table("t")
			check("after ADD COLUMN")
		}
		if merge == 1 {
			// A column of group default dropped: parts keep it.
			h.ddl(func(c *catalog.Catalog, commit uint64) error {
				_, err := c.DropColumn(catalog.DropColumnSpec{Table: "t", Column: "x"}, commit)
				return err
			})
			*tbl = h.table("t")
			check("after DROP COLUMN")
		}
	}
}
