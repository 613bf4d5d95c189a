package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
	"pgregory.net/rapid"
)

// TestFlushNeverChangesResults feeds the same commits to two engines, one
// of which flushes (and sometimes crashes) at random points, and checks
// that every read — current, AS OF every commit, versions at every commit,
// lookups — is the same on both. A flush may also be held with its
// memtables frozen (holdFlush), so that reads, commits, crashes and
// reopens meet it in the middle.
func TestFlushNeverChangesResults(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		plain, flushed := newHarness(t), newHarness(t)
		for _, h := range []*harness{plain, flushed} {
			h.create(kvSpec("v", catalog.ModeVersioned))
			h.create(kvSpec("u", catalog.ModeUpsert))
			h.create(catalog.TableSpec{Name: "a", Mode: catalog.ModeAppend, Columns: kvSpec("", 0).Columns})
		}
		steps := rapid.IntRange(1, 14).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			switch rapid.IntRange(0, 6).Draw(rt, "op") {
			case 0:
				if err := flushed.e.Flush(t.Context()); err != nil {
					rt.Fatal(err)
				}
				continue
			case 6:
				flushed.holdFlush()
				continue
			case 1:
				if rapid.Bool().Draw(rt, "crash") {
					flushed.crash()
				} else {
					flushed.reopen()
				}
				continue
			}
			var lines, keys []string
			for r, n := 0, rapid.IntRange(1, 4).Draw(rt, "rows"); r < n; r++ {
				k := rapid.IntRange(1, 4).Draw(rt, "k")
				keys = append(keys, fmt.Sprintf("k=%d", k))
				lines = append(lines, fmt.Sprintf("k=%d v=%s idx=%d", k,
					rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "v"), rapid.IntRange(1, 3).Draw(rt, "idx")))
			}
			del := rapid.IntRange(0, 3).Draw(rt, "del") == 0
			for _, h := range []*harness{plain, flushed} {
				for _, name := range []string{"v", "u"} {
					var w Write
					var err error
					if del {
						w, err = deleteWrite(h.table(name), keys)
					} else {
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
		last := plain.e.LastCommit()
		if got := flushed.e.LastCommit(); got != last {
			rt.Fatalf("flushed engine at commit %d, plain at %d", got, last)
		}
		for _, name := range []string{"v", "u", "a"} {
			for at := uint64(0); at <= last; at++ {
				if name == "u" && at != 0 {
					continue
				}
				want, err1 := plain.scan(name, at)
				got, err2 := flushed.scan(name, at)
				if err1 != nil || err2 != nil {
					rt.Fatal(err1, err2)
				}
				if name == "a" {
					sortStrings(want)
					sortStrings(got)
				}
				if fmt.Sprint(want) != fmt.Sprint(got) {
					rt.Fatalf("scan %s at %d:\nplain   %v\nflushed %v", name, at, want, got)
				}
				if name == "v" {
					want, err1 := plain.versions(name, at)
					got, err2 := flushed.versions(name, at)
					if err1 != nil || err2 != nil {
						rt.Fatal(err1, err2)
					}
					if fmt.Sprint(want) != fmt.Sprint(got) {
						rt.Fatalf("versions at %d:\nplain   %v\nflushed %v", at, want, got)
					}
				}
			}
		}
		for k := 1; k <= 4; k++ {
			a, err1 := runLookup(plain, "v", k)
			b, err2 := runLookup(flushed, "v", k)
			if err1 != nil || err2 != nil || a != b {
				rt.Fatalf("lookup %d: %q %v / %q %v", k, a, err1, b, err2)
			}
		}
		if err := flushed.e.Check(); err != nil {
			rt.Fatal(err)
		}
	})
}

// TestFlushOnMemtableBytes: passing MemtableBytes flushes, the WAL is
// truncated behind the flushed commit, and a reopen replays only the rest.
func TestFlushOnMemtableBytes(t *testing.T) {
	dir := t.TempDir()
	// No background merges: the test counts the parts flushes wrote.
	e, err := Open(dir, Options{MemtableBytes: 32 << 10, WALSegmentSize: 16 << 10, NoBackgroundMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tbl := createKV(t, e)
	for i := 0; i < 200; i++ {
		w := benchWrite(tbl, i*10, 10, int64(i))
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
			t.Fatal(err)
		}
	}
	snap := e.Snapshot()
	parts := len(snap.Parts(tbl.ID))
	snap.Release()
	segs := e.wal.Stats().Segments
	if parts < 2 {
		t.Fatalf("%d parts after 200 commits with a 32 KiB memtable", parts)
	}
	if ck := e.man.Snapshot().WALCheckpoint(); ck == 0 {
		t.Fatal("WAL checkpoint did not move")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap = e.Snapshot()
	defer snap.Release()
	rows := 0
	if _, err := snap.Scan(ctx, ScanSpec{Table: tbl.ID, Cols: tbl.Key}, func(b *types.Batch) error { rows += b.Rows; return nil }); err != nil {
		t.Fatal(err)
	}
	if rows != 2000 {
		t.Fatalf("%d rows after reopen, want 2000", rows)
	}
	t.Logf("%d parts, %d WAL segments left", parts, segs)
}

// TestFlushedScriptsMatch: each testdata/engine_X_flushed is engine_X with
// a flush before every read; with the flush blocks removed, the two files
// (both checked by TestDataDriven) must be identical, so every expected
// result holds with and without parts.
func TestFlushedScriptsMatch(t *testing.T) {
	flushBlock := regexp.MustCompile(`(?m)^flush\n----\n(?:.+\n)*(?:\n|$)`)
	paths, _ := filepath.Glob("testdata/*_flushed")
	if len(paths) == 0 {
		t.Fatal("no flushed scripts")
	}
	for _, p := range paths {
		flushed, err1 := os.ReadFile(p)
		plain, err2 := os.ReadFile(strings.TrimSuffix(p, "_flushed"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := flushBlock.ReplaceAllString(string(flushed), ""); strings.TrimSpace(got) != strings.TrimSpace(string(plain)) {
			t.Errorf("%s differs from its unflushed script:\n%s", p, got)
		}
	}
}

// TestFlushFailureChangesNothing: a part that cannot be made durable fails
// the flush and leaves no part behind; the next flush succeeds. The
// memtable the failed flush froze stays frozen and becomes a part of its
// own, before the rows committed since.
func TestFlushFailureChangesNothing(t *testing.T) {
	dir := t.TempDir()
	fault := vfs.NewFault(vfs.NewMem())
	e, err := Open(dir, Options{FS: fault})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := t.Context()
	tbl := createKV(t, e)
	if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{benchWrite(tbl, 0, 100, 1)}}); err != nil {
		t.Fatal(err)
	}
	fault.Inject(vfs.Rule{Op: vfs.OpSync, Nth: 1, Match: "parts"})
	if err := e.Flush(ctx); err == nil {
		t.Fatal("flush over a failed part fsync succeeded")
	}
	snap := e.Snapshot()
	if n := len(snap.Parts(tbl.ID)); n != 0 {
		t.Fatalf("%d parts after a failed flush", n)
	}
	snap.Release()
	if names, _ := fault.List(filepath.Join(dir, "parts")); len(names) != 0 {
		t.Fatalf("failed flush left files %v", names)
	}
	fault.Clear()
	if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{benchWrite(tbl, 100, 100, 1)}}); err != nil {
		t.Fatalf("commit after a failed flush: %v", err)
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	snap = e.Snapshot()
	defer snap.Release()
	rows := 0
	if _, err := snap.Scan(ctx, ScanSpec{Table: tbl.ID, Cols: tbl.Key}, func(b *types.Batch) error { rows += b.Rows; return nil }); err != nil {
		t.Fatal(err)
	}
	ps := snap.Parts(tbl.ID)
	if rows != 200 || len(ps) != 2 || ps[0].MaxCommit != 2 || ps[1].MinCommit != 3 {
		t.Fatalf("%d rows in parts %+v after the retried flush, want 200 in commit 2's part and commit 3's", rows, ps)
	}
}

// TestKeyedPartDataColumns checks that a flush's columns do not depend on
// the memtable's column count being exact: a column the count lacks is
// found by walking the versions, one no retained version carries is left
// out of the part.
func TestKeyedPartDataColumns(t *testing.T) {
	e, err := Open(t.TempDir(), Options{MemtableBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tbl := createKV(t, e)
	for v := range 3 {
		w := benchWrite(tbl, v*5, 20, int64(3-v)) // later writes lose for some keys
		if _, err := e.Commit(t.Context(), &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
			t.Fatal(err)
		}
	}
	m := e.cur.Load().tables[tbl.ID].shards[0].keyed
	layout := func() (part.Meta, string) {
		var meta part.Meta
		d, err := keyedPartData(tbl, m, &meta)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for r := range d.Rows {
			fmt.Fprintf(&b, "%x %d %d %d %v", d.Sort.BytesAt(r), d.Group[r], d.Commit[r], d.Seq[r], d.Tomb[r])
			for _, c := range d.Cols {
				fmt.Fprintf(&b, " %s", c.Get(r))
			}
			b.WriteByte('\n')
		}
		return meta, b.String()
	}
	wantMeta, want := layout()
	if len(wantMeta.Columns) != 2 {
		t.Fatalf("columns %v, want v and idx", wantMeta.Columns)
	}
	counted := m.colBytes
	defer func() { m.colBytes = counted }()
	g, _ := tbl.Group("g")
	for name, c := range map[string]map[catalog.ColumnID]uint64{
		"missing": {g.Columns[0]: 1},
		"extra":   {g.Columns[0]: 1, g.Columns[1]: 1, tbl.Key[0]: 1},
	} {
		m.colBytes = c
		meta, got := layout()
		if fmt.Sprint(meta.Columns) != fmt.Sprint(wantMeta.Columns) || got != want {
			t.Errorf("%s: columns %v, rows\n%s\nwant %v\n%s", name, meta.Columns, got, wantMeta.Columns, want)
		}
	}
}

// TestFlushOnWALBytes: with many tables, none of whose memtables comes
// near MemtableBytes, the log's growth since the last flush starts one
// (walFlushBytes), so the WAL keeps a bounded number of segments instead
// of every commit since the engine opened (issue 6 S1). It counts the
// log's segments, the thing bounded, while the commits run: once the log
// spans many walFlushBytes, the flushes it started must have removed most
// of its segments. (A final Flush would remove them anyway.)
func TestFlushOnWALBytes(t *testing.T) {
	const tables, memtable, segment = 40, 128 << 10, 8 << 10
	e, err := Open(t.TempDir(), Options{MemtableBytes: memtable, WALSegmentSize: segment, NoBackgroundMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := t.Context()
	var tbls []*catalog.Table
	for i := range tables {
		name := fmt.Sprintf("t%d", i)
		if _, err := e.Commit(ctx, &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
			_, _, err := c.CreateTable(kvSpec(name, catalog.ModeVersioned), n)
			return err
		}}); err != nil {
			t.Fatal(err)
		}
		tbl, _ := e.Catalog().Table(name)
		tbls = append(tbls, tbl)
	}
	const commits = 1200
	var maxMem uint64
	segs := 0 // the most segments the log had in the second half
	for i := range commits {
		w := benchWrite(tbls[i%tables], i*10, 10, int64(i))
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
			t.Fatal(err)
		}
		if i >= commits/2 {
			segs = max(segs, e.wal.Stats().Segments)
		}
		if i == commits-1 {
			for _, sh := range e.Stats().Shards {
				maxMem = max(maxMem, sh.MemtableBytes)
			}
		}
	}
	wrote := e.wal.Appended()
	if wrote < 4*e.walFlushBytes() {
		t.Fatalf("the test wrote %d bytes of log, too few to pass walFlushBytes (%d) several times", wrote, e.walFlushBytes())
	}
	// The log spanned at least wrote/segment segments; without flushes
	// started by its growth (the memtables, each far below MemtableBytes,
	// start none) the second half would end with all of them. With them
	// it keeps about walFlushBytes of log and what the flush in progress
	// has yet to remove: the bound, three quarters of the segments, leaves
	// a flush worker slowed by a loaded machine a wide margin (7 to 10 of
	// 26 were seen at a load average of 13 on 2 cores).
	spanned := int(wrote / segment)
	if segs*4 > spanned*3 {
		t.Fatalf("the log had up to %d segments in the second half of %d bytes of log (%d segments of %d bytes, walFlushBytes %d), want at most %d",
			segs, wrote, spanned, segment, e.walFlushBytes(), spanned*3/4)
	}
	if maxMem*2 > memtable {
		t.Fatalf("a memtable held %d bytes: the test must keep them well below MemtableBytes (%d)", maxMem, memtable)
	}
	t.Logf("%d bytes of log over at least %d segments, at most %d at once in the second half; largest memtable %d bytes", wrote, spanned, segs, maxMem)
}

// TestDeltaOrderRebuilt: a flush of a versioned table whose versions
// arrive out of order writes delta parts that store no ordering values
// (part.Meta.OrderFrom names each group's VALID BY / REVISION BY columns),
// and lookups through them, which resolve the versions of a key by those
// values while asking for none of the ordering columns, give what they
// gave from the memtables, at every commit and after a reopen.
func TestDeltaOrderRebuilt(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	e, tbl := openBalancesEngine(t, dir)
	defer func() { _ = e.Close() }()
	const keys = 3000
	all := make([]int, keys)
	for i := range all {
		all[i] = i
	}
	var commits []uint64
	for _, round := range []int{2, 0, 3, 1} { // every key's later rounds arrive late
		c, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{balancesKeysWrite(tbl, all, round)}})
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, c)
	}
	probe := []int{0, 1, 2, 999, 1500, keys - 1}
	read := func() []string {
		var out []string
		for _, c := range commits {
			s, _ := lookupAmountsAt(t, e, tbl, probe, c, nil)
			out = append(out, s)
		}
		return out
	}
	want := read()
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	deltas := 0
	for _, sd := range e.cur.Load().tables[tbl.ID].shards {
		for _, pf := range sd.parts {
			if m := pf.r.Meta(); m.Kind == part.KindDelta {
				deltas++
				if len(m.OrderFrom) == 0 {
					t.Fatalf("delta part %d stores its ordering values", m.Part)
				}
			}
		}
	}
	if deltas == 0 {
		t.Fatal("the flush wrote no delta part")
	}
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("lookups through the delta parts:\n%v\nfrom the memtables:\n%v", got, want)
	}
	e = reopenQuiet(t, e, dir)
	if got := read(); !slices.Equal(got, want) {
		t.Fatalf("lookups after a reopen:\n%v\nbefore:\n%v", got, want)
	}
}
