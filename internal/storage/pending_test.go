package storage

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"pgregory.net/rapid"
)

// pendingWrite draws one random write to table name (v and u: two groups,
// g ordered by idx, h by commit; a: append). Low idx values make late
// writes, repeated keys and values make repeats.
func pendingWrite(rt *rapid.T, tbl *catalog.Table, name string) Write {
	rows := rapid.IntRange(1, 4).Draw(rt, "rows")
	kind := rapid.IntRange(0, 5).Draw(rt, "kind")
	var lines []string
	for r := 0; r < rows; r++ {
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		v := rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "v")
		idx := rapid.IntRange(1, 4).Draw(rt, "idx")
		switch {
		case name == "a":
			lines = append(lines, fmt.Sprintf("k=%d v=%s idx=%d", k, v, idx))
		case kind == 0:
			lines = append(lines, fmt.Sprintf("k=%d", k))
		case kind <= 3:
			lines = append(lines, fmt.Sprintf("k=%d v=%s idx=%d", k, v, idx))
		default:
			lines = append(lines, fmt.Sprintf("k=%d w=%s", k, v))
		}
	}
	var w Write
	var err error
	switch {
	case name == "a":
		w, err = appendWrite(tbl, lines)
	case kind == 0:
		w, err = deleteWrite(tbl, lines)
	case kind <= 3:
		w, err = versionWrite(tbl, "g", lines)
	default:
		w, err = versionWrite(tbl, "h", lines)
	}
	if err != nil {
		rt.Fatal(err)
	}
	return w
}

// snapReads renders what the tests compare on one snapshot: scans of
// every table at each commit in ats (0 = now; the upsert table only now),
// versions() of v there, and a lookup of every key there.
func snapReads(rt *rapid.T, snap *Snapshot, ats []uint64) []string {
	return snapReadsForm(rt, snap, ats, 0)
}

// snapReadsForm is snapReads with each row put in pendingForm(n) before
// rows are sorted.
func snapReadsForm(rt *rapid.T, snap *Snapshot, ats []uint64, n uint64) []string {
	ctx := context.Background()
	var out []string
	for _, name := range []string{"v", "u", "a"} {
		t, _ := snap.Catalog().Table(name)
		for _, at := range ats {
			if name == "u" && at != 0 {
				continue
			}
			spec := ScanSpec{Table: t.ID, AsOf: at, Cols: allCols(t), Commit: true, BatchRows: 3}
			var bs []*types.Batch
			if _, err := snap.Scan(ctx, spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
				rt.Fatalf("scan %s at %d: %v", name, at, err)
			}
			rows := pendingForm(render(append(t.Names(spec.Cols), "_commit"), bs), n)
			sortStrings(rows)
			out = append(out, fmt.Sprintf("scan %s@%d %v", name, at, rows))
			if name != "v" {
				continue
			}
			spec.Commit = false
			bs = nil
			if _, err := snap.Versions(ctx, spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
				rt.Fatalf("versions at %d: %v", at, err)
			}
			rows = pendingForm(render(append(t.Names(spec.Cols), VersionsCols...), bs), n)
			sortStrings(rows)
			out = append(out, fmt.Sprintf("versions@%d %v", at, rows))
		}
		if name == "a" {
			continue
		}
		for _, at := range ats {
			if name == "u" && at != 0 {
				continue
			}
			for k := 1; k <= 6; k++ {
				row, ok, err := snap.Lookup(ctx, t.ID, []types.Value{types.NewInt64(int64(k))}, ScanSpec{AsOf: at, Cols: allCols(t), Commit: true})
				if err != nil {
					rt.Fatalf("lookup %s %d at %d: %v", name, k, at, err)
				}
				if !ok {
					out = append(out, fmt.Sprintf("lookup %s %d@%d none", name, k, at))
					continue
				}
				out = append(out, pendingForm([]string{fmt.Sprintf("lookup %s %d@%d %v _commit=%v", name, k, at, row[:len(row)-1], row[len(row)-1])}, n)[0])
			}
		}
	}
	return out
}

// TestWithPendingReadsAsCommitted checks WithPending against the engine
// itself (R5.1, R3). Two engines get the same random history — flushed,
// merged, in one or two shards. On the first, a snapshot is taken, other
// commits may follow it (as another session's would), and random pending
// writes (late ones, repeats, deletes, both groups, appends) are put on
// the snapshot; the twin commits those writes as its next commit. The
// pending snapshot must read now exactly what the twin reads after its
// commit, read every earlier commit exactly as the snapshot it was built
// on, and report that snapshot's commit; a snapshot taken meanwhile sees
// none of it.
func TestWithPendingReadsAsCommitted(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t)
		twin := newHarness(t)
		hs := []*harness{h, twin}
		for _, spec := range []catalog.TableSpec{twoGroupSpec("v", catalog.ModeVersioned), twoGroupSpec("u", catalog.ModeUpsert),
			{Name: "a", Mode: catalog.ModeAppend, Columns: kvSpec("", 0).Columns, ShardBy: []string{"k"}}} {
			spec.Shards = rapid.IntRange(1, 2).Draw(rt, "shards")
			for _, x := range hs {
				x.create(spec)
			}
		}
		names := []string{"v", "u", "a"}
		randomTxn := func(label string) []Write {
			var ws []Write
			for w, nw := 0, rapid.IntRange(1, 3).Draw(rt, label); w < nw; w++ {
				name := rapid.SampledFrom(names).Draw(rt, "table")
				ws = append(ws, pendingWrite(rt, h.table(name), name))
			}
			return ws
		}
		for c, commits := 0, rapid.IntRange(0, 8).Draw(rt, "commits"); c < commits; c++ {
			op := rapid.IntRange(0, 5).Draw(rt, "op")
			ws := randomTxn("writes")
			for _, x := range hs {
				switch op {
				case 0:
					if err := x.e.Flush(t.Context()); err != nil {
						rt.Fatal(err)
					}
				case 1:
					if err := x.e.MergeNow(t.Context(), MergeFull); err != nil {
						rt.Fatal(err)
					}
				}
				x.mustCommit(&Txn{Kind: KindWrite, Writes: ws})
			}
		}
		if rapid.Bool().Draw(rt, "flushLast") {
			for _, x := range hs {
				if err := x.e.Flush(t.Context()); err != nil {
					rt.Fatal(err)
				}
			}
		}
		var writes []Write
		if rapid.IntRange(0, 5).Draw(rt, "pending") > 0 {
			writes = randomTxn("pendingWrites")
		}

		base := h.e.Snapshot()
		defer base.Release()
		n := base.Commit()
		baseNow := snapReads(rt, base, []uint64{0})
		// Commits after the snapshot, to keys the pending writes may
		// touch too: the copy must leave them out.
		later := rapid.IntRange(0, 2).Draw(rt, "later")
		for i := 0; i < later; i++ {
			h.mustCommit(&Txn{Kind: KindWrite, Writes: randomTxn("laterWrites")})
		}
		ps, err := base.WithPending(writes)
		if err != nil {
			rt.Fatal(err)
		}
		defer ps.Release()
		if ps.Commit() != n || len(ps.Commits()) != len(base.Commits()) {
			rt.Fatalf("pending snapshot reports commit %d and %d commits, base %d and %d", ps.Commit(), len(ps.Commits()), n, len(base.Commits()))
		}
		var past []uint64
		for m := uint64(1); m <= n; m++ {
			past = append(past, m)
		}
		diffReads(rt, "AS OF the committed past", snapReads(rt, base, past), snapReads(rt, ps, past))
		pendingNow := snapReads(rt, ps, []uint64{0})

		if later == 0 {
			other := h.e.Snapshot()
			diffReads(rt, "another snapshot", baseNow, snapReads(rt, other, []uint64{0}))
			other.Release()
		}
		if len(writes) == 0 {
			diffReads(rt, "no pending writes", baseNow, pendingNow)
			return
		}
		c := twin.mustCommit(&Txn{Kind: KindWrite, Writes: writes})
		if c != n+1 {
			rt.Fatalf("the twin's commit took %d, want %d", c, n+1)
		}
		after := twin.e.Snapshot()
		defer after.Release()
		diffReads(rt, "now, against the twin's commit of the writes", snapReadsForm(rt, after, []uint64{0}, n), pendingForm(pendingNow, 0))
		for _, x := range hs {
			if err := x.e.Check(); err != nil {
				rt.Fatal(err)
			}
		}
	})
}

var (
	commitRef = regexp.MustCompile(`(_commit=|_superseded_by=|commit )(\d+)`)
	tieReason = regexp.MustCompile(`later (position in commit \d+|commit)`)
)

// pendingForm rewrites reads so that a pending snapshot's and the twin's
// after its commit compare equal: the twin's rows of commit n+1 read with
// the pending snapshot's number for them, n (n = 0 leaves numbers alone),
// and a tie broken by position in commit n or by a later commit reads the
// same (the pending rows sit in commit n until COMMIT).
func pendingForm(lines []string, n uint64) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if n > 0 {
			l = commitRef.ReplaceAllStringFunc(l, func(m string) string {
				sub := commitRef.FindStringSubmatch(m)
				if sub[2] == strconv.FormatUint(n+1, 10) {
					return sub[1] + strconv.FormatUint(n, 10)
				}
				return m
			})
		}
		out[i] = tieReason.ReplaceAllString(l, "later")
	}
	return out
}

func TestWithPendingErrors(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	snap := h.e.Snapshot()
	bad := kvWrite(t, tbl, "k=1 v=a idx=1")
	bad.Table = 999
	if _, err := snap.WithPending([]Write{bad}); !errors.Is(err, ErrInvalidTxn) {
		t.Fatalf("write to an unknown table: %v, want ErrInvalidTxn", err)
	}
	ps, err := snap.WithPending([]Write{kvWrite(t, tbl, "k=1 v=a idx=1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps.WithPending(nil); err == nil || !strings.Contains(err.Error(), "already has pending writes") {
		t.Fatalf("WithPending twice: %v", err)
	}
	ps.Release()
	snap.Release()
	if _, err := snap.WithPending(nil); !errors.Is(err, ErrReleased) {
		t.Fatalf("WithPending on a released snapshot: %v, want ErrReleased", err)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkWithPending measures the cost a transaction's read pays per
// statement: one pending row over a shard whose memtable holds keys
// committed keys (two versions each, one late), and, for comparison, over
// the same rows flushed to a part (the memtable empty: only the pending
// write is copied).
func BenchmarkWithPending(b *testing.B) {
	for _, keys := range []int{1_000, 100_000} {
		for _, flushed := range []bool{false, true} {
			b.Run(fmt.Sprintf("keys=%d/flushed=%v", keys, flushed), func(b *testing.B) {
				h := newHarness(b)
				h.create(kvSpec("t", catalog.ModeVersioned))
				tbl := h.table("t")
				for _, idx := range []int{2, 1} {
					for lo := 0; lo < keys; lo += 10_000 {
						var lines []string
						for k := lo; k < min(keys, lo+10_000); k++ {
							lines = append(lines, fmt.Sprintf("k=%d v=x idx=%d", k, idx))
						}
						h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(b, tbl, lines...)}})
					}
				}
				if flushed {
					if err := h.e.Flush(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
				writes := []Write{kvWrite(b, tbl, "k=7 v=y idx=3")}
				snap := h.e.Snapshot()
				defer snap.Release()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					ps, err := snap.WithPending(writes)
					if err != nil {
						b.Fatal(err)
					}
					ps.Release()
				}
			})
		}
	}
}

// TestWithPendingUnderConcurrentCommits copies memtables that commits are
// writing meanwhile (run it with -race): the pending snapshot reads its
// base's rows plus its own, never a commit after its base.
func TestWithPendingUnderConcurrentCommits(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			w := kvWrite(t, tbl, fmt.Sprintf("k=%d v=c idx=%d", 1+i%50, i), fmt.Sprintf("k=%d v=c idx=%d", 1+(i*7)%50, i))
			if _, err := h.e.Commit(context.Background(), &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
				errs <- err
				return
			}
		}
	}()
	ctx := context.Background()
	spec := ScanSpec{Table: tbl.ID, Cols: allCols(tbl), Commit: true}
	for i := 0; i < 200; i++ {
		base := h.e.Snapshot()
		var want []string
		if _, err := base.Scan(ctx, spec, func(b *types.Batch) error {
			want = append(want, render([]string{"k", "v", "idx", "_commit"}, []*types.Batch{b})...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ps, err := base.WithPending([]Write{kvWrite(t, tbl, fmt.Sprintf("k=0 v=p idx=%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if _, err := ps.Scan(ctx, spec, func(b *types.Batch) error {
			got = append(got, render([]string{"k", "v", "idx", "_commit"}, []*types.Batch{b})...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want = append([]string{fmt.Sprintf("k=0 v=p idx=%d _commit=%d", i, base.Commit())}, want...)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("round %d: the pending snapshot read\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		ps.Release()
		base.Release()
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}
