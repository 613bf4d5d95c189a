package storage

import (
	"context"
	"errors"
	"fmt"
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
			rows := render(append(t.Names(spec.Cols), "_commit"), bs)
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
			rows = render(append(t.Names(spec.Cols), VersionsCols...), bs)
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
				out = append(out, fmt.Sprintf("lookup %s %d@%d %v %v", name, k, at, row, ok))
			}
		}
	}
	return out
}

// TestWithPendingReadsAsCommitted checks WithPending against the engine
// itself (R5.1, R3): after a random history — flushed, merged, in two
// shards — a snapshot with random pending writes (late ones, repeats,
// deletes, both groups, appends) reads now exactly what the engine reads
// after committing those writes as the next commit, reads every earlier
// commit exactly as the snapshot it was built on, and reports that
// snapshot's commit; a snapshot taken meanwhile sees none of it.
func TestWithPendingReadsAsCommitted(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t)
		for _, spec := range []catalog.TableSpec{twoGroupSpec("v", catalog.ModeVersioned), twoGroupSpec("u", catalog.ModeUpsert),
			{Name: "a", Mode: catalog.ModeAppend, Columns: kvSpec("", 0).Columns, ShardBy: []string{"k"}}} {
			spec.Shards = rapid.IntRange(1, 2).Draw(rt, "shards")
			h.create(spec)
		}
		names := []string{"v", "u", "a"}
		for c, commits := 0, rapid.IntRange(0, 8).Draw(rt, "commits"); c < commits; c++ {
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0:
				if err := h.e.Flush(t.Context()); err != nil {
					rt.Fatal(err)
				}
			case 1:
				if err := h.e.MergeNow(t.Context(), MergeFull); err != nil {
					rt.Fatal(err)
				}
			}
			txn := Txn{Kind: KindWrite}
			for w, nw := 0, rapid.IntRange(1, 3).Draw(rt, "writes"); w < nw; w++ {
				name := rapid.SampledFrom(names).Draw(rt, "table")
				txn.Writes = append(txn.Writes, pendingWrite(rt, h.table(name), name))
			}
			h.mustCommit(&txn)
		}
		if rapid.Bool().Draw(rt, "flushLast") {
			if err := h.e.Flush(t.Context()); err != nil {
				rt.Fatal(err)
			}
		}
		var writes []Write
		for w, nw := 0, rapid.IntRange(0, 5).Draw(rt, "pending"); w < nw; w++ {
			name := rapid.SampledFrom(names).Draw(rt, "table")
			writes = append(writes, pendingWrite(rt, h.table(name), name))
		}

		base := h.e.Snapshot()
		defer base.Release()
		n := base.Commit()
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
		baseNow := snapReads(rt, base, []uint64{0})
		pendingNow := snapReads(rt, ps, []uint64{0})

		other := h.e.Snapshot()
		diffReads(rt, "another snapshot before the commit", baseNow, snapReads(rt, other, []uint64{0}))
		other.Release()

		if len(writes) == 0 {
			diffReads(rt, "no pending writes", baseNow, pendingNow)
			return
		}
		c := h.mustCommit(&Txn{Kind: KindWrite, Writes: writes})
		if c != n+1 {
			rt.Fatalf("the commit took %d, want %d", c, n+1)
		}
		after := h.e.Snapshot()
		defer after.Release()
		diffReads(rt, "now, against the committed writes", snapReads(rt, after, []uint64{0}), pendingNow)
		// The pending snapshot is still what it was.
		diffReads(rt, "the pending snapshot after the commit", pendingNow, snapReads(rt, ps, []uint64{0}))
		if err := h.e.Check(); err != nil {
			rt.Fatal(err)
		}
	})
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
