package storage

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"pgregory.net/rapid"
)

// asofShards returns table name's shards as published.
func asofShards(h *harness, name string) []*shardData {
	return h.e.cur.Load().tables[h.table(name).ID].shards
}

// scanRows scans table id at n (the resolved-scan cache off) and returns
// one "k v idx _commit" line per row, sorted.
func scanRows(t testing.TB, h *harness, id catalog.TableID, n uint64) []string {
	t.Helper()
	scanCacheOff = true
	defer func() { scanCacheOff = false }()
	snap := h.e.Snapshot()
	defer snap.Release()
	tbl, _ := snap.Catalog().TableByID(id)
	var out []string
	_, err := snap.Scan(context.Background(), ScanSpec{Table: id, Cols: allCols(tbl), Commit: true, AsOf: n}, func(b *types.Batch) error {
		for r := 0; r < b.Rows; r++ {
			var f []string
			for _, c := range b.Cols {
				f = append(f, c.Get(r).String())
			}
			out = append(out, strings.Join(f, " "))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scan at %d: %v", n, err)
	}
	slices.Sort(out)
	return out
}

// TestAsOfIndexMatchesModel is the differential property of the AS OF
// index (issue 3, R3.3, R3.4, R5.4): for random histories of versions,
// exact repeats and deletes, cut by random flushes, policy merges and
// full merges, the scan AS OF every commit n through the index equals the
// scan that ignores it (noAsOfReads) and the replay of the commits ≤ n
// (version.Resolve of exactly those writes), _commit included; and Check,
// which re-derives every epoch from the run, passes.
func TestAsOfIndexMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t)
		h.mergePartRows = rapid.IntRange(2, 12).Draw(rt, "partRows") // several parts per run and per epoch
		h.reopen()
		h.create(kvSpec("t", catalog.ModeVersioned))
		tbl := h.table("t")
		g, _ := tbl.Group("g")
		ords := make([]version.Ordering, int(g.ID)+1)
		ords[g.ID] = version.Ordering{Valid: []string{"idx"}}
		var vs []version.Version
		var ds []version.Delete
		var rows []string // per version: "k v idx", as a scan prints it
		commits := rapid.IntRange(2, 24).Draw(rt, "commits")
		for c := 0; c < commits; c++ {
			var txn Txn
			txn.Kind = KindWrite
			var seq uint32
			for w, nw := 0, rapid.IntRange(1, 3).Draw(rt, "writes"); w < nw; w++ {
				del := rapid.IntRange(0, 5).Draw(rt, "kind") == 0
				var lines []string
				for r, nr := 0, rapid.IntRange(1, 5).Draw(rt, "rows"); r < nr; r++ {
					k := rapid.IntRange(1, 6).Draw(rt, "k")
					if del {
						lines = append(lines, fmt.Sprintf("k=%d", k))
						continue
					}
					lines = append(lines, fmt.Sprintf("k=%d v=%s idx=%d", k,
						rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "v"), rapid.IntRange(1, 4).Draw(rt, "idx")))
				}
				var wr Write
				var err error
				if del {
					wr, err = deleteWrite(tbl, lines)
				} else {
					wr, err = versionWrite(tbl, "g", lines)
				}
				if err != nil {
					rt.Fatal(err)
				}
				txn.Writes = append(txn.Writes, wr)
				for r := 0; r < wr.Batch.Rows; r++ {
					key := types.AppendKey(nil, wr.Batch.Cols[0].Get(r))
					if del {
						ds = append(ds, version.Delete{Key: key, Seq: seq})
					} else {
						vals := types.AppendBinary(nil, wr.Batch.Cols[1].Get(r))
						vals = types.AppendBinary(vals, wr.Batch.Cols[2].Get(r))
						order := [][]byte{types.AppendKey(nil, wr.Batch.Cols[2].Get(r))}
						vs = append(vs, version.Version{Key: key, Group: version.GroupID(g.ID), Order: order, Seq: seq, Values: vals})
						rows = append(rows, fmt.Sprintf("%s %s %s", wr.Batch.Cols[0].Get(r), wr.Batch.Cols[1].Get(r), wr.Batch.Cols[2].Get(r)))
					}
					seq++
				}
			}
			n := h.mustCommit(&txn)
			for i := range vs {
				if vs[i].Commit == 0 {
					vs[i].Commit = n
				}
			}
			for i := range ds {
				if ds[i].Commit == 0 {
					ds[i].Commit = n
				}
			}
			var err error
			switch rapid.IntRange(0, 5).Draw(rt, "then") {
			case 0:
				err = h.e.Flush(context.Background())
			case 1:
				err = h.e.MergeNow(context.Background())
			case 2:
				err = h.e.MergeNow(context.Background(), MergeFull)
			}
			if err != nil {
				rt.Fatal(err)
			}
		}
		if rapid.Bool().Draw(rt, "full merge at the end") {
			if err := h.e.MergeNow(context.Background(), MergeFull); err != nil {
				rt.Fatal(err)
			}
		}
		last := h.e.LastCommit()
		a0 := asofReads.Load()
		for n := uint64(1); n <= last; n++ {
			// The replay of commits ≤ n.
			var pv []version.Version
			var pr []string
			var pd []version.Delete
			for i, v := range vs {
				if v.Commit <= n {
					pv, pr = append(pv, v), append(pr, rows[i])
				}
			}
			for _, d := range ds {
				if d.Commit <= n {
					pd = append(pd, d)
				}
			}
			res, err := version.Resolve(ords, pv, pd)
			if err != nil {
				rt.Fatal(err)
			}
			var want []string
			for i, r := range res {
				if r.State == version.Current {
					want = append(want, fmt.Sprintf("%s %d", pr[i], pv[i].Commit))
				}
			}
			slices.Sort(want)
			got := scanRows(t, h, tbl.ID, n)
			noAsOfReads = true
			without := scanRows(t, h, tbl.ID, n)
			noAsOfReads = false
			if !slices.Equal(got, want) || !slices.Equal(without, want) {
				rt.Fatalf("AS OF %d:\nwith the index: %v\nwithout it:     %v\nreplay:         %v", n, got, without, want)
			}
		}
		if err := h.e.Check(); err != nil {
			rt.Fatal(err)
		}
		// When the last merge left a run with an index and commits it
		// covers, the index served some of these reads.
		for _, sd := range asofShards(h, "t") {
			if len(sd.asof) > 0 && asofReads.Load() == a0 {
				if rs, ok := classifyRun(sd); ok && rs.runMax > 1 {
					rt.Fatalf("a shard has an AS OF index (%d parts) that no read AS OF 1..%d used", len(sd.asof), last)
				}
			}
			for _, pf := range sd.parts {
				if pf.man.Kind == manifest.KindAsOf {
					rt.Fatalf("index part %d among the shard's parts", pf.man.ID)
				}
			}
		}
	})
}

// TestAsOfIndexLifetime: a full merge writes the index beside the run
// (never among its parts, nor in system.parts), a reopen loads it there
// again, a later full merge replaces it (the old index parts leave the
// manifest with the old run), a shard split drops it and the pass after
// the split indexes the halves' runs, Options.AsOfIndex off writes none and
// a later pass indexes those runs, while every read at every commit stays
// the same and Check passes.
func TestAsOfIndexLifetime(t *testing.T) {
	const n = 60
	h := newHarness(t)
	splitFixture(t, h, n)
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	want := allReads(t, h, n)
	index := func(stage string) []uint64 {
		t.Helper()
		var ids []uint64
		for _, sd := range asofShards(h, "v") {
			for _, pf := range sd.asof {
				ids = append(ids, pf.man.ID)
			}
		}
		// Only the versioned table has one.
		for _, name := range []string{"u", "a"} {
			for _, sd := range asofShards(h, name) {
				if len(sd.asof) > 0 {
					t.Fatalf("%s: table %s has an AS OF index", stage, name)
				}
			}
		}
		snap := h.e.Snapshot()
		defer snap.Release()
		for _, p := range snap.Parts(h.table("v").ID) {
			if slices.Contains(ids, p.Part) {
				t.Fatalf("%s: system.parts lists index part %d", stage, p.Part)
			}
		}
		if err := h.e.Check(); err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		if got := allReads(t, h, n); got != want {
			t.Fatalf("%s: reads changed:\n%s\nwant\n%s", stage, got, want)
		}
		return ids
	}
	first := index("merged")
	if len(first) == 0 {
		t.Fatal("a full merge of a versioned shard wrote no AS OF index")
	}
	h.reopen()
	if got := index("reopened"); !slices.Equal(got, first) {
		t.Fatalf("reopen: index parts %v, before %v", got, first)
	}
	// New versions, then a full merge: a new run and a new index.
	w, err := versionWrite(h.table("v"), "g", []string{"k=5 v=late idx=9", "k=6 v=late idx=0"})
	if err != nil {
		t.Fatal(err)
	}
	h.stage(w, "v")
	if _, err := h.commitPending(); err != nil {
		t.Fatal(err)
	}
	want = allReads(t, h, n)
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	second := index("merged again")
	if len(second) == 0 || slices.ContainsFunc(second, func(id uint64) bool { return slices.Contains(first, id) }) {
		t.Fatalf("second full merge: index parts %v, first %v", second, first)
	}
	live := h.e.man.LiveFiles()
	for _, id := range first {
		for f := range live {
			if strings.HasSuffix(f, fmt.Sprintf("-%d.part", id)) {
				t.Fatalf("the replaced index part %d is still in the manifest", id)
			}
		}
	}
	// A split drops the index; the halves read through their runs.
	h.splitBytes = 1 << 10
	h.reopen()
	if err := h.e.MergeNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	if shardCount(h, "v") < 2 {
		t.Fatal("no split")
	}
	for _, sd := range asofShards(h, "v") {
		for _, pf := range sd.asof {
			if slices.Contains(second, pf.man.ID) {
				t.Fatalf("split shard %d keeps index part %d of the shard split", sd.num, pf.man.ID)
			}
		}
	}
	if got := index("split"); len(got) == 0 {
		t.Fatal("the split shards' runs were not indexed")
	}
	// Without the option's index, a full merge writes none.
	h.splitBytes = 1 << 30
	h.reopen()
	h.e.opts.AsOfIndex = false
	w, err = versionWrite(h.table("v"), "g", []string{"k=7 v=later idx=9"})
	if err != nil {
		t.Fatal(err)
	}
	h.stage(w, "v")
	if _, err := h.commitPending(); err != nil {
		t.Fatal(err)
	}
	want = allReads(t, h, n)
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	for _, sd := range asofShards(h, "v") {
		if len(sd.asof) > 0 && slices.ContainsFunc(sd.parts, func(pf *partFile) bool {
			return pf.man.Kind == manifest.KindCurrent && pf.man.MaxCommit == h.e.LastCommit()
		}) {
			t.Fatalf("AsOfIndex off: shard %d's new run got an index", sd.num)
		}
	}
	index("AsOfIndex off")
	// Every shard is final already, so no merge runs; the pass after the
	// merges indexes the runs that have no index.
	h.e.opts.AsOfIndex = true
	m0 := h.e.merges.Load()
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	if h.e.merges.Load() != m0 {
		t.Fatal("MergeFull merged final shards")
	}
	if got := index("runs indexed after the fact"); len(got) == 0 {
		t.Fatal("runs without an index were not indexed")
	}
}

// commitRound commits round c of versions of keys 1..keys of a kvSpec
// table, each key's idx varying from round to round so that some rounds'
// versions win and others lose.
func commitRound(t *testing.T, h *harness, tbl *catalog.Table, c, keys int) {
	t.Helper()
	var lines []string
	for k := 1; k <= keys; k++ {
		lines = append(lines, fmt.Sprintf("k=%d v=c%d idx=%d", k, c, (c*7+k)%5))
	}
	w, err := versionWrite(tbl, "g", lines)
	if err != nil {
		t.Fatal(err)
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
}

// TestAsOfIndexCheckFindsDamage: Check compares each epoch with the run,
// so an index that lacks a part, claims the wrong epoch, or belongs to
// another run is reported.
func TestAsOfIndexCheckFindsDamage(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	for c := range 20 {
		commitRound(t, h, tbl, c, 30)
	}
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	sd := asofShards(h, "t")[0]
	if len(sd.asof) < 3 {
		t.Fatalf("%d index parts; want several epochs", len(sd.asof))
	}
	if err := checkAsOf(sd); err != nil {
		t.Fatalf("sound index: %v", err)
	}
	damaged := func(what string, f func(x *shardData)) {
		t.Helper()
		x := &shardData{num: sd.num, parts: sd.parts}
		for _, pf := range sd.asof {
			x.asof = append(x.asof, &partFile{man: pf.man, r: pf.r, refs: pf.refs})
		}
		f(x)
		if err := checkAsOf(x); err == nil {
			t.Fatalf("%s: Check passed", what)
		}
		// A read must not use it either when it is not the run's.
		if rs, ok := classifyRun(x); ok && what == "another run's index" {
			for n := uint64(0); n < rs.runMax; n++ {
				if x.asofParts(rs, n) != nil {
					t.Fatalf("%s: read AS OF %d would use it", what, n)
				}
			}
		}
	}
	damaged("a part missing", func(x *shardData) { x.asof = x.asof[1:] })
	damaged("an epoch shifted", func(x *shardData) { x.asof[1].man.EpochFrom++ })
	damaged("another run's index", func(x *shardData) {
		for _, pf := range x.asof {
			pf.man.MaxCommit++
		}
	})
	damaged("two epochs swapped", func(x *shardData) {
		a, b := &x.asof[0].man, &x.asof[len(x.asof)-1].man
		a.EpochFrom, a.EpochTo, b.EpochFrom, b.EpochTo = b.EpochFrom, b.EpochTo, a.EpochFrom, a.EpochTo
	})
}

// TestCheckRejectsAsOfIndexOnUnversioned: an AS OF index part in the
// manifest of an upsert table's shard (no merge writes one; only a wrong
// edit could) is reported by Check and CheckDir, naming the table, the
// shard and the part, although the index repeats the shard's run row for
// row.
func TestCheckRejectsAsOfIndexOnUnversioned(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("u", catalog.ModeUpsert))
	tbl := h.table("u")
	for c := range 3 {
		w, err := versionWrite(tbl, "g", []string{fmt.Sprintf("k=1 v=c%d idx=%d", c, c), fmt.Sprintf("k=2 v=c%d idx=%d", c, c)})
		if err != nil {
			t.Fatal(err)
		}
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
	}
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	if err := h.e.Check(); err != nil {
		t.Fatalf("before: %v", err)
	}
	sd := asofShards(h, "u")[0]
	var run []*partFile
	for _, pf := range sd.parts {
		if pf.man.Kind == manifest.KindCurrent {
			run = append(run, pf)
		}
	}
	if len(run) == 0 {
		t.Fatal("a full merge of an upsert shard wrote no current run")
	}
	// One index part holding the run's rows, claiming its commit range
	// and every commit, published as the index merges publish.
	cols := run[0].r.Meta().Columns
	ids := make([]catalog.ColumnID, len(cols))
	for i, c := range cols {
		ids[i] = c.ID
	}
	rows := runRows{parts: run, fixed: asofFixed, ids: ids}
	d := newAsOfData(cols)
	for err := rows.start(); rows.ok; err = rows.next() {
		if err != nil {
			t.Fatal(err)
		}
		copyRow(d, &rows.d, rows.i, asofFixed)
	}
	pf, err := h.e.writeAsOfPart(tbl, sd.num, run[0].man.Level, cols, d, run[0].man.MinCommit, run[0].man.MaxCommit)
	if err != nil {
		t.Fatal(err)
	}
	pf.man.EpochFrom, pf.man.EpochTo = 0, math.MaxUint64
	if err := h.e.publishIndex(tbl.ID, sd.num, run, []*partFile{pf}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("table u shard %d: AS OF index part %d (%s) on a table in upsert mode", sd.num, pf.man.ID, pf.man.File)
	expect := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v; want an error saying %q", what, err, want)
		}
	}
	expect("Check", h.e.Check())
	h.reopen()
	expect("Check after reopen", h.e.Check())
	if err := h.e.Close(); err != nil {
		t.Fatal(err)
	}
	h.e = nil
	expect("CheckDir", CheckDir(h.dir, Options{FS: h.mem}))
}

// TestAsOfIndexRejectedRunReadOnce: a run the index build rejects (only
// delete markers of keys never written: no row of it ever won) is read by
// the first pass after its merge and by no later pass while the shard
// keeps it; the shard's next run is built again.
func TestAsOfIndexRejectedRunReadOnce(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	w, err := deleteWrite(tbl, []string{"k=1", "k=2", "k=3"})
	if err != nil {
		t.Fatal(err)
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
	tries, built := asofTries.Load(), asofBuilt.Load()
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	sd := asofShards(h, "t")[0]
	if !slices.ContainsFunc(sd.parts, func(pf *partFile) bool { return pf.man.Kind == manifest.KindHistory }) || len(sd.asof) > 0 {
		t.Fatalf("want a run of delete markers without an index; parts %d, index parts %d", len(sd.parts), len(sd.asof))
	}
	if n := asofTries.Load() - tries; n != 1 {
		t.Fatalf("the merge's pass read the run %d times, want once", n)
	}
	// Idle passes: nothing to merge, the run already rejected.
	for range 3 {
		if err := h.e.MergeNow(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := asofTries.Load() - tries; n != 1 {
		t.Fatalf("idle passes read the rejected run: %d reads in all, want 1", n)
	}
	// A new run is tried (and, with versions that won, indexed).
	w, err = versionWrite(tbl, "g", []string{"k=1 v=a idx=1", "k=4 v=b idx=2"})
	if err != nil {
		t.Fatal(err)
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
	if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
		t.Fatal(err)
	}
	if n := asofTries.Load() - tries; n != 2 || asofBuilt.Load() != built+1 {
		t.Fatalf("after a new run: %d reads, %d indexes built; want 2 and 1", n, asofBuilt.Load()-built)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
}
