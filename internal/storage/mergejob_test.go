package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/merge"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
	"pgregory.net/rapid"
)

// twoGroupSpec is a keyed table with two attribute groups: g ordered by
// idx (so writes arrive late when idx goes down) and h by commit alone.
func twoGroupSpec(name string, mode catalog.Mode) catalog.TableSpec {
	return catalog.TableSpec{
		Name: name, Mode: mode,
		Columns: []catalog.ColumnSpec{
			{Name: "k", Type: types.Of(types.Int64), NotNull: true},
			{Name: "v", Type: types.Of(types.String)},
			{Name: "idx", Type: types.Of(types.Int64)},
			{Name: "w", Type: types.Of(types.String)},
		},
		PrimaryKey: []string{"k"},
		Groups: []catalog.GroupSpec{
			{Name: "g", Columns: []string{"v", "idx"}, ValidBy: []string{"idx"}},
			{Name: "h", Columns: []string{"w"}},
		},
	}
}

// readAll renders every read the tests compare: scans at every commit (the
// upsert table only current, it keeps no history), versions() at every
// commit, and lookups of every key.
func readAll(rt *rapid.T, h *harness, last uint64, keys int) []string {
	var out []string
	for _, name := range []string{"v", "u", "a"} {
		for at := uint64(0); at <= last; at++ {
			if name == "u" && at != 0 {
				continue
			}
			rows, err := h.scan(name, at)
			if err != nil {
				rt.Fatalf("scan %s at %d: %v", name, at, err)
			}
			// Rows come shard after shard, and a split changes the shards.
			sortStrings(rows)
			out = append(out, fmt.Sprintf("scan %s@%d %v", name, at, rows))
			if name == "v" {
				vs, err := h.versions(name, at)
				if err != nil {
					rt.Fatalf("versions at %d: %v", at, err)
				}
				sortStrings(vs)
				out = append(out, fmt.Sprintf("versions@%d %v", at, vs))
			}
		}
	}
	for _, name := range []string{"v", "u"} {
		for k := 1; k <= keys; k++ {
			row, err := runLookup(h, name, k)
			if err != nil {
				rt.Fatalf("lookup %s %d: %v", name, k, err)
			}
			out = append(out, fmt.Sprintf("lookup %s %d %s", name, k, row))
		}
	}
	return out
}

func diffReads(rt *rapid.T, what string, want, got []string) {
	if len(want) != len(got) {
		rt.Fatalf("%s: %d reads, want %d", what, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			rt.Fatalf("%s:\nwant %s\ngot  %s", what, want[i], got[i])
		}
	}
}

// TestMergesNeverChangeResults feeds the same commits to two engines: one
// never flushes nor merges, the other flushes, merges by the policy, merges
// fully, reopens and crashes at random points, with the background merger
// on, output parts cut every few rows, and SHARDS AUTO shards split at a
// small size (and split again, and survive restarts and crashes mid-way).
// Every read at every commit must
// be the same on both after each step (a merge never changes a result, and
// takes no commit: R5.1), and a snapshot taken before a merge must read
// the same after it, from the parts it holds (part lifetime).
func TestMergesNeverChangeResults(t *testing.T) {
	var splits atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		plain := newHarness(t)
		merged := &harness{t: t, dir: t.TempDir(), mem: vfs.NewMem(), clock: plain.clock,
			bgMerges: rapid.Bool().Draw(rt, "background"), mergePartRows: rapid.IntRange(1, 6).Draw(rt, "partRows"),
			splitBytes: rapid.SampledFrom([]int64{0, 6000, 20000}).Draw(rt, "splitBytes")}
		merged.open()
		t.Cleanup(func() {
			if merged.e != nil {
				_ = merged.e.Close()
			}
		})
		// Every table is SHARDS AUTO: the plain engine never splits (the
		// default size is far away), the merged one may split often.
		for _, h := range []*harness{plain, merged} {
			for _, spec := range []catalog.TableSpec{twoGroupSpec("v", catalog.ModeVersioned), twoGroupSpec("u", catalog.ModeUpsert),
				{Name: "a", Mode: catalog.ModeAppend, Columns: kvSpec("", 0).Columns, ShardBy: []string{"k"}}} {
				spec.ShardsAuto = true
				h.create(spec)
			}
		}
		const keys = 5
		var held *Snapshot
		var heldWant []string
		steps := rapid.IntRange(1, 24).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0:
				if err := merged.e.Flush(t.Context()); err != nil {
					rt.Fatal(err)
				}
				continue
			case 1:
				if err := merged.e.MergeNow(t.Context()); err != nil {
					rt.Fatal(err)
				}
			case 2:
				if err := merged.e.MergeNow(t.Context(), MergeFull); err != nil {
					rt.Fatal(err)
				}
			case 3:
				if held != nil {
					held.Release()
					held = nil
				}
				switch rapid.IntRange(0, 2).Draw(rt, "restart") {
				case 0:
					merged.crash()
				case 1:
					merged.reopen()
				default:
					// Hold a snapshot across the merges that follow.
					held = merged.e.Snapshot()
					var err error
					if heldWant, err = plain.scan("v", held.Commit()); err != nil {
						rt.Fatal(err)
					}
					sortStrings(heldWant)
				}
				continue
			default:
				commitRandom(rt, plain, merged, keys)
				continue
			}
			if held != nil {
				// The held snapshot reads its commit from the parts it
				// held, though the merge retired them.
				got := readSnapshot(rt, merged, held)
				sortStrings(got)
				diffReads(rt, "held snapshot", heldWant, got)
			}
		}
		if held != nil {
			held.Release()
		}
		last := plain.e.LastCommit()
		if got := merged.e.LastCommit(); got != last {
			rt.Fatalf("merged engine at commit %d, plain at %d", got, last)
		}
		diffReads(rt, "after merges", readAll(rt, plain, last, keys), readAll(rt, merged, last, keys))
		if err := merged.e.MergeNow(t.Context(), MergeFull); err != nil {
			rt.Fatal(err)
		}
		diffReads(rt, "after a full merge", readAll(rt, plain, last, keys), readAll(rt, merged, last, keys))
		if err := merged.e.Check(); err != nil {
			rt.Fatal(err)
		}
		for _, name := range []string{"v", "u", "a"} {
			if n := len(merged.e.cur.Load().tables[merged.table(name).ID].shards); n > 1 {
				splits.Add(1)
			}
		}
	})
	if splits.Load() == 0 {
		t.Error("no run split a shard")
	}
}

// readSnapshot reads the versioned table through an old snapshot, as
// harness.scan renders it.
func readSnapshot(rt *rapid.T, h *harness, snap *Snapshot) []string {
	t := h.table("v")
	spec := ScanSpec{Table: t.ID, Cols: allCols(t), Commit: true, BatchRows: 3}
	var bs []*types.Batch
	if _, err := snap.Scan(rt.Context(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
		rt.Fatalf("held snapshot scan: %v", err)
	}
	return render(append(t.Names(spec.Cols), "_commit"), bs)
}

// commitRandom commits the same random statement to both harnesses: upserts
// of either group (late when idx goes down, repeats when values recur) or
// deletes to both keyed tables, and rows to the append table.
func commitRandom(rt *rapid.T, plain, merged *harness, keys int) {
	var lines, klines, wlines []string
	for r, n := 0, rapid.IntRange(1, 4).Draw(rt, "rows"); r < n; r++ {
		k := rapid.IntRange(1, keys).Draw(rt, "k")
		klines = append(klines, fmt.Sprintf("k=%d", k))
		lines = append(lines, fmt.Sprintf("k=%d v=%s idx=%d", k,
			rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "v"), rapid.IntRange(1, 3).Draw(rt, "idx")))
		wlines = append(wlines, fmt.Sprintf("k=%d w=%s", k, rapid.SampledFrom([]string{"x", "y"}).Draw(rt, "w")))
	}
	op := rapid.IntRange(0, 4).Draw(rt, "write")
	for _, h := range []*harness{plain, merged} {
		for _, name := range []string{"v", "u"} {
			var w Write
			var err error
			switch op {
			case 0:
				w, err = deleteWrite(h.table(name), klines)
			case 1:
				w, err = versionWrite(h.table(name), "h", wlines)
			default:
				w, err = versionWrite(h.table(name), "g", lines)
			}
			if err != nil {
				rt.Fatal(err)
			}
			h.stage(w, name)
		}
		aw, err := appendWrite(h.table("a"), lines)
		if err != nil {
			rt.Fatal(err)
		}
		h.stage(aw, "a")
		if _, err := h.commitPending(); err != nil {
			rt.Fatal(err)
		}
	}
}

// partKinds lists the kinds of a table's parts per shard, oldest first.
func partKinds(h *harness, table string) []string {
	st := h.e.cur.Load()
	var out []string
	for _, sd := range st.tables[h.table(table).ID].shards {
		s := ""
		for _, pf := range sd.parts {
			s += pf.man.Kind.String() + " "
		}
		out = append(out, s)
	}
	return out
}

// TestMergeNowFull: a full merge leaves a versioned shard with current and
// history parts only, an upsert shard with current parts, an append shard
// with one run; it takes no commit number (R5.1), and a retired input's
// file lives while a snapshot holds it and goes with its Release.
func TestMergeNowFull(t *testing.T) {
	h := newHarness(t)
	h.create(twoGroupSpec("v", catalog.ModeVersioned))
	h.create(twoGroupSpec("u", catalog.ModeUpsert))
	h.create(catalog.TableSpec{Name: "a", Mode: catalog.ModeAppend, Columns: kvSpec("", 0).Columns})
	for i := 0; i < 3; i++ {
		for _, name := range []string{"v", "u"} {
			w, err := versionWrite(h.table(name), "g", []string{fmt.Sprintf("k=1 v=a idx=%d", 3-i), "k=2 v=b idx=1"})
			if err != nil {
				t.Fatal(err)
			}
			h.stage(w, name)
		}
		aw, err := appendWrite(h.table("a"), []string{"k=1 v=a idx=1"})
		if err != nil {
			t.Fatal(err)
		}
		h.stage(aw, "a")
		if _, err := h.commitPending(); err != nil {
			t.Fatal(err)
		}
		if err := h.e.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	last := h.e.LastCommit()
	before := map[string][]string{}
	for _, name := range []string{"v", "u", "a"} {
		rows, err := h.scan(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = rows
	}
	old := h.e.Snapshot()
	var oldFiles []string
	for _, pf := range h.e.cur.Load().tables[h.table("v").ID].shards[0].parts {
		oldFiles = append(oldFiles, pf.refs.path)
	}
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	if n := h.e.LastCommit(); n != last {
		t.Fatalf("merge took commit numbers: last commit %d, was %d", n, last)
	}
	if got := h.e.merges.Load(); got != 3 {
		t.Fatalf("%d merges, want one per table", got)
	}
	for name, want := range map[string]string{"v": "current history ", "u": "current ", "a": "append "} {
		if got := partKinds(h, name); len(got) != 1 || got[0] != want {
			t.Errorf("table %s: parts %q after a full merge, want %q", name, got, want)
		}
	}
	for _, f := range oldFiles {
		if _, err := h.mem.Open(f); err != nil {
			t.Fatalf("input %s deleted while a snapshot holds it: %v", f, err)
		}
	}
	rows, err := readSnapshotTable(h, old, "v")
	if err != nil || fmt.Sprint(rows) != fmt.Sprint(before["v"]) {
		t.Fatalf("old snapshot after merge: %v %v, want %v", rows, err, before["v"])
	}
	old.Release()
	for _, f := range oldFiles {
		if _, err := h.mem.Open(f); err == nil {
			t.Fatalf("input %s kept after the last snapshot released it", f)
		}
	}
	for _, name := range []string{"v", "u", "a"} {
		rows, err := h.scan(name, 0)
		if err != nil || fmt.Sprint(rows) != fmt.Sprint(before[name]) {
			t.Fatalf("%s after merge: %v %v, want %v", name, rows, err, before[name])
		}
	}
	// Already final: a second full merge does nothing.
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil || h.e.merges.Load() != 3 {
		t.Fatalf("second full merge: %v, %d merges", err, h.e.merges.Load())
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	for _, name := range []string{"v", "u", "a"} {
		rows, err := h.scan(name, 0)
		if err != nil || fmt.Sprint(rows) != fmt.Sprint(before[name]) {
			t.Fatalf("%s after reopen: %v %v, want %v", name, rows, err, before[name])
		}
	}
}

func readSnapshotTable(h *harness, snap *Snapshot, table string) ([]string, error) {
	t := h.table(table)
	spec := ScanSpec{Table: t.ID, Cols: allCols(t), Commit: true, BatchRows: 3}
	var bs []*types.Batch
	_, err := snap.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil })
	return render(append(t.Names(spec.Cols), "_commit"), bs), err
}

// TestMergeFaults: a merge whose part write, fsync or directory fsync
// fails reports the error, leaves the inputs live and the outputs gone,
// changes no read, and leaves the engine taking commits; the same merge
// succeeds once the fault is gone. Each point a merge syncs is failed in
// turn (output parts are cut every 2 rows, so a merge writes several).
func TestMergeFaults(t *testing.T) {
	ctx := context.Background()
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpSyncDir} {
		for nth := 1; nth <= 4; nth++ {
			t.Run(fmt.Sprintf("%s%d", op, nth), func(t *testing.T) {
				dir := t.TempDir()
				fault := vfs.NewFault(vfs.NewMem())
				e, err := Open(dir, Options{FS: fault, NoBackgroundMerges: true, MergePartRows: 2})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				tbl := createKV(t, e)
				for i := 1; i <= 3; i++ {
					w := kvWrite(t, tbl, fmt.Sprintf("k=1 v=a idx=%d", 4-i), fmt.Sprintf("k=%d v=b idx=1", i+1), "k=9 v=c idx=1")
					if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
						t.Fatal(err)
					}
					if err := e.Flush(ctx); err != nil {
						t.Fatal(err)
					}
				}
				read := func() string {
					var out []string
					for at := uint64(0); at <= e.LastCommit(); at++ {
						snap := e.Snapshot()
						var bs []*types.Batch
						spec := ScanSpec{Table: tbl.ID, AsOf: at, Cols: allCols(tbl), Commit: true}
						if _, err := snap.Versions(ctx, spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
							t.Fatal(err)
						}
						snap.Release()
						out = append(out, render(append(tbl.Names(spec.Cols), VersionsCols...), bs)...)
					}
					return fmt.Sprint(out)
				}
				want := read()
				before := fmt.Sprint(partKindsOf(e, tbl.ID))
				fault.Inject(vfs.Rule{Op: op, Nth: nth, Match: "parts"})
				err = e.MergeNow(ctx, MergeFull)
				fault.Clear()
				if err == nil {
					t.Skipf("the merge did not reach %s number %d", op, nth)
				}
				if !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("merge error %v does not wrap the injected fault", err)
				}
				if got := fmt.Sprint(partKindsOf(e, tbl.ID)); got != before {
					t.Fatalf("parts after a failed merge: %s, want %s", got, before)
				}
				if got := read(); got != want {
					t.Fatalf("reads after a failed merge:\n%s\nwant\n%s", got, want)
				}
				if err := e.Check(); err != nil {
					t.Fatal(err)
				}
				names, err := fault.List(filepath.Join(dir, "parts"))
				if err != nil {
					t.Fatal(err)
				}
				if live := e.man.LiveFiles(); len(names) != len(live) {
					t.Fatalf("%d files in parts/, the manifest names %d: outputs of the failed merge left behind", len(names), len(live))
				}
				if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=5 v=z idx=9")}}); err != nil {
					t.Fatalf("commit after a failed merge: %v", err)
				}
				want = read()
				if err := e.MergeNow(ctx, MergeFull); err != nil {
					t.Fatal(err)
				}
				if got := read(); got != want {
					t.Fatalf("reads after the retried merge:\n%s\nwant\n%s", got, want)
				}
				if err := e.Check(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// partKindsOf lists a table's parts (id and kind), oldest first.
func partKindsOf(e *Engine, id catalog.TableID) []string {
	var out []string
	for _, sd := range e.cur.Load().tables[id].shards {
		for _, pf := range sd.parts {
			out = append(out, fmt.Sprintf("%d:%s", pf.man.ID, pf.man.Kind))
		}
	}
	return out
}

// TestMergeNowAfterClose: MergeNow on a closed engine says so.
func TestMergeNowAfterClose(t *testing.T) {
	e, err := Open(t.TempDir(), Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	createKV(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.MergeNow(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("MergeNow after Close: %v, want ErrClosed", err)
	}
}

// TestMergesUnderLoad commits from two goroutines while two others read
// (each read on its own Snapshot, released after) and the background
// merger and MergeNow merge and split: no read fails (a retired part is
// never closed under a reader), every read sees every key committed
// before its snapshot exactly once, and Check passes at the end. Run it
// with -race.
func TestMergesUnderLoad(t *testing.T) {
	dir := t.TempDir()
	e, tbl := openAutoKV(t, dir, Options{FS: vfs.NewMem(), MemtableBytes: 8 << 10, MergePartRows: 64, ShardSplitBytes: 16 << 10})
	defer e.Close()
	ctx := context.Background()
	const writers, perWriter = 2, 150
	var committed atomic.Int64 // keys 0..committed-1 of each writer are in
	done := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				k := w*perWriter + i
				wr, err := versionWrite(tbl, "g", []string{fmt.Sprintf("k=%d v=x idx=1", k), fmt.Sprintf("k=%d v=y idx=0", k)})
				if err != nil {
					errs <- err
					return
				}
				if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{wr}}); err != nil {
					errs <- err
					return
				}
				committed.Add(1)
			}
		}(w)
	}
	var readers sync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				least := committed.Load()
				snap := e.Snapshot()
				seen := map[int64]int{}
				_, err := snap.Scan(ctx, ScanSpec{Table: tbl.ID, Cols: allCols(tbl)}, func(b *types.Batch) error {
					ks, vs := b.Cols[0].Int64s(), b.Cols[1]
					for i := 0; i < b.Rows; i++ {
						seen[ks[i]]++
						if string(vs.BytesAt(i)) != "x" {
							return fmt.Errorf("key %d reads %q, want the on-time version x", ks[i], vs.BytesAt(i))
						}
					}
					return nil
				})
				snap.Release()
				if err != nil {
					errs <- err
					return
				}
				for k, n := range seen {
					if n != 1 {
						errs <- fmt.Errorf("key %d read %d times", k, n)
						return
					}
				}
				if int64(len(seen)) < least {
					errs <- fmt.Errorf("read %d keys, %d were committed before the snapshot", len(seen), least)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; committed.Load() < writers*perWriter; i++ {
			var opts []MergeOption
			if i%2 == 1 {
				opts = append(opts, MergeFull)
			}
			if err := e.MergeNow(ctx, opts...); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := e.MergeNow(ctx, MergeFull); err != nil {
		t.Fatal(err)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d merges, %d splits, %d shards", e.merges.Load(), e.splits.Load(), len(e.cur.Load().tables[tbl.ID].shards))
}

// TestDroppedTablePartsDeleted: a dropped table's part files are deleted
// once the generation naming them is retired (the next flush), not kept
// until a reopen; a snapshot taken before the DROP still reads them.
func TestDroppedTablePartsDeleted(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	h.create(kvSpec("other", catalog.ModeVersioned))
	w, err := versionWrite(h.table("t"), "g", []string{"k=1 v=a idx=1"})
	if err != nil {
		t.Fatal(err)
	}
	h.stage(w, "t")
	if _, err := h.commitPending(); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pf := range h.e.cur.Load().tables[h.table("t").ID].shards[0].parts {
		files = append(files, pf.refs.path)
	}
	if len(files) == 0 {
		t.Fatal("no part flushed")
	}
	old := h.e.Snapshot()
	want, err := readSnapshotTable(h, old, "t")
	if err != nil {
		t.Fatal(err)
	}
	tbl := h.table("t")
	h.ddl(func(c *catalog.Catalog, n uint64) error { _, err := c.DropTable("t", false, n); return err })
	w, err = versionWrite(h.table("other"), "g", []string{"k=1 v=a idx=1"})
	if err != nil {
		t.Fatal(err)
	}
	h.stage(w, "other")
	if _, err := h.commitPending(); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The old snapshot still holds the dropped table's parts.
	spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true, BatchRows: 3}
	var bs []*types.Batch
	if _, err := old.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := render(append(tbl.Names(spec.Cols), "_commit"), bs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("old snapshot of a dropped table reads %v, want %v", got, want)
	}
	old.Release()
	for _, f := range files {
		if _, err := h.mem.Open(f); err == nil {
			t.Fatalf("dropped table's part %s kept after its last holder left", f)
		}
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
	h.reopen()
}

// TestBackgroundMerges: with the merger on, FanIn flushes of similar size
// get merged without anyone asking, reads stay the same, and Close stops
// the merger.
func TestBackgroundMerges(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), mem: vfs.NewMem(), bgMerges: true}
	h.open()
	defer func() { _ = h.e.Close() }()
	h.create(kvSpec("t", catalog.ModeVersioned))
	for i := 0; i < merge.FanIn; i++ {
		w, err := versionWrite(h.table("t"), "g", []string{fmt.Sprintf("k=%d v=a idx=1", i), "k=9 v=b idx=" + fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		h.stage(w, "t")
		if _, err := h.commitPending(); err != nil {
			t.Fatal(err)
		}
		if i == merge.FanIn-1 {
			break
		}
		if err := h.e.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	want, err := h.scan("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.e.merges.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no background merge after %d flushes; parts %v", merge.FanIn, partKinds(h, "t"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	got, err := h.scan("t", 0)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a background merge: %v %v, want %v", got, err, want)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
}

// openAutoKV opens an engine on dir with opts and creates the versioned
// key/value table "t" with SHARDS AUTO (kvSpec).
func openAutoKV(t *testing.T, dir string, opts Options) (*Engine, *catalog.Table) {
	t.Helper()
	e, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	spec := kvSpec("t", catalog.ModeVersioned)
	spec.ShardsAuto = true
	if _, err := e.Commit(t.Context(), &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
		_, _, err := c.CreateTable(spec, n)
		return err
	}}); err != nil {
		_ = e.Close()
		t.Fatal(err)
	}
	tbl, _ := e.Catalog().Table("t")
	return e, tbl
}

// TestBackgroundMergesGiveWayToReads: while a foreground read runs, a
// background merge pauses between slices of its input (paceMerge), and
// still finishes; what it publishes reads the same.
func TestBackgroundMergesGiveWayToReads(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), mem: vfs.NewMem(), bgMerges: true}
	h.open()
	defer func() { _ = h.e.Close() }()
	h.create(kvSpec("t", catalog.ModeVersioned))
	// A read is running throughout (Engine.reads, as Scan and Lookup
	// count themselves).
	h.e.reads.Add(1)
	done := func() { h.e.reads.Add(-1) }
	defer func() {
		if done != nil {
			done()
		}
	}()
	pauses := mergePauses.Load()
	perFlush := 2*merge.PaceRows/merge.FanIn + 1
	for i := 0; i < merge.FanIn; i++ {
		var rows []string
		for k := range perFlush {
			rows = append(rows, fmt.Sprintf("k=%d v=a%d idx=%d", k, i, i))
		}
		w, err := versionWrite(h.table("t"), "g", rows)
		if err != nil {
			t.Fatal(err)
		}
		h.stage(w, "t")
		if _, err := h.commitPending(); err != nil {
			t.Fatal(err)
		}
		if i < merge.FanIn-1 {
			if err := h.e.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := h.scan("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for h.e.merges.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if mergePauses.Load() == pauses {
		t.Fatalf("a background merge of %d rows made no pause while a read ran", merge.FanIn*perFlush)
	}
	done()
	done = nil
	got, err := h.scan("t", 0)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a paced background merge: %v %v, want %v", got, err, want)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
}

// settleWriter returns a function that commits write i to table t of h:
// a version of one of seven keys and a late version of one of five.
func settleWriter(t *testing.T, h *harness) func(i int) {
	return func(i int) {
		t.Helper()
		w, err := versionWrite(h.table("t"), "g", []string{fmt.Sprintf("k=%d v=a idx=%d", i%7, i), fmt.Sprintf("k=%d v=late idx=0", i%5)})
		if err != nil {
			t.Fatal(err)
		}
		h.stage(w, "t")
		if _, err := h.commitPending(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBackgroundSettle: the background merger folds an idle shard's delta
// run into its final runs (merge.Settles) once no commit has arrived for
// Options.SettleAfter, not while commits keep arriving, and the fold
// changes no read: current, AS OF every commit, versions.
func TestBackgroundSettle(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), mem: vfs.NewMem(), bgMerges: true, settleAfter: time.Second}
	h.open()
	defer func() { _ = h.e.Close() }()
	h.create(kvSpec("t", catalog.ModeVersioned))
	write := settleWriter(t, h)
	write(0)
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Commits every 10 ms for 1.5 s: the engine is never idle for
	// SettleAfter, so the flushed delta run stays as it is.
	for i := 1; i <= 150; i++ {
		write(i)
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.e.merges.Load(); n != 0 {
		t.Fatalf("%d merges while commits kept arriving; parts %v", n, partKinds(h, "t"))
	}
	last := h.e.cur.Load().commit
	read := func() []string {
		t.Helper()
		var out []string
		for n := uint64(1); n <= last; n++ {
			rows, err := h.scan("t", n)
			if err != nil {
				t.Fatal(err)
			}
			vs, err := h.versions("t", n)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(n, rows, vs))
		}
		return out
	}
	want := read()
	// The memtable's commits go to a part too, then the shard settles.
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := h.e.cur.Load()
		sd := st.tables[h.table("t").ID].shards[0]
		mps := make([]manifest.Part, len(sd.parts))
		for i, pf := range sd.parts {
			mps[i] = pf.man
		}
		if finalRuns(h.table("t"), mps) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard not folded after idling; parts %v", partKinds(h, "t"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("reads changed by the fold:\n got %v\nwant %v", got, want)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("reads changed after reopen:\n got %v\nwant %v", got, want)
	}
}

// TestBackgroundSettleTakesMemtable: the fold of an idle shard takes in
// the commits its memtable holds (they are flushed first), so the shard
// is left as one final run with nothing beside it; left out, they would
// become a delta too small to be folded again (merge.SettleRatio), and
// every lookup of their keys would take the parts path. Reads are the
// same before and after, and after a reopen.
func TestBackgroundSettleTakesMemtable(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), mem: vfs.NewMem(), bgMerges: true, settleAfter: 200 * time.Millisecond}
	h.open()
	defer func() { _ = h.e.Close() }()
	h.create(kvSpec("t", catalog.ModeVersioned))
	write := settleWriter(t, h)
	for i := range 5 {
		write(i)
	}
	if err := h.e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// More commits, left in the memtable, then the engine goes idle.
	for i := 5; i < 12; i++ {
		write(i)
	}
	last := h.e.cur.Load().commit
	read := func() string {
		t.Helper()
		rows, err := h.scan("t", last)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := h.versions("t", last)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(rows, vs)
	}
	want := read()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sd := h.e.cur.Load().tables[h.table("t").ID].shards[0]
		mps := make([]manifest.Part, len(sd.parts))
		for i, pf := range sd.parts {
			mps[i] = pf.man
		}
		empty := true
		for _, m := range sd.memtables() {
			empty = empty && m.empty()
		}
		if finalRuns(h.table("t"), mps) && empty {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard not folded with its memtable after idling (memtable empty: %v); parts %v", empty, partKinds(h, "t"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := read(); got != want {
		t.Fatalf("reads changed by the fold:\n got %s\nwant %s", got, want)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
	h.reopen()
	if got := read(); got != want {
		t.Fatalf("reads changed after reopen:\n got %s\nwant %s", got, want)
	}
}
