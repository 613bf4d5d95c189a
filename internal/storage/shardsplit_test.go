package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/vfs"
)

// TestShardsSpreadRows: SHARDS 4 places rows in all four shards by the
// hash of the key, and a lookup finds each key in its shard (R11.1).
func TestShardsSpreadRows(t *testing.T) {
	h := newHarness(t)
	spec := kvSpec("t", catalog.ModeVersioned)
	spec.Shards = 4
	h.create(spec)
	var lines []string
	for k := 1; k <= 64; k++ {
		lines = append(lines, fmt.Sprintf("k=%d v=a idx=1", k))
	}
	w, err := versionWrite(h.table("t"), "g", lines)
	if err != nil {
		t.Fatal(err)
	}
	h.stage(w, "t")
	if _, err := h.commitPending(); err != nil {
		t.Fatal(err)
	}
	snap := h.e.Snapshot()
	defer snap.Release()
	for _, s := range snap.Shards(h.table("t").ID) {
		if s.Rows == 0 || s.Rows == 64 {
			t.Fatalf("shard %d holds %d of 64 rows", s.Shard, s.Rows)
		}
	}
	for k := 1; k <= 64; k++ {
		if got, err := runLookup(h, "t", k); err != nil || got[len(got)-4:] != "true" {
			t.Fatalf("lookup %d: %s %v", k, got, err)
		}
	}
}

// splitFixture creates SHARDS AUTO tables of every mode and writes keys
// 1..n over a few commits and flushes, with late writes and deletes.
func splitFixture(t *testing.T, h *harness, n int) {
	t.Helper()
	for _, spec := range []catalog.TableSpec{twoGroupSpec("v", catalog.ModeVersioned), twoGroupSpec("u", catalog.ModeUpsert),
		{Name: "a", Mode: catalog.ModeAppend, Columns: kvSpec("", 0).Columns, ShardBy: []string{"k"}}} {
		spec.ShardsAuto = true
		h.create(spec)
	}
	for round := 0; round < 3; round++ {
		var lines, keys []string
		for k := 1; k <= n; k++ {
			lines = append(lines, fmt.Sprintf("k=%d v=r%d idx=%d", k, round, 3-round))
			if k%7 == round {
				keys = append(keys, fmt.Sprintf("k=%d", k))
			}
		}
		for _, name := range []string{"v", "u"} {
			w, err := versionWrite(h.table(name), "g", lines)
			if err != nil {
				t.Fatal(err)
			}
			h.stage(w, name)
		}
		aw, err := appendWrite(h.table("a"), lines)
		if err != nil {
			t.Fatal(err)
		}
		h.stage(aw, "a")
		if _, err := h.commitPending(); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"v", "u"} {
			w, err := deleteWrite(h.table(name), keys)
			if err != nil {
				t.Fatal(err)
			}
			h.stage(w, name)
		}
		if _, err := h.commitPending(); err != nil {
			t.Fatal(err)
		}
		if round < 2 {
			if err := h.e.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// allReads renders every read of the fixture's tables, rows sorted (a
// split changes the order shards come in).
func allReads(t *testing.T, h *harness, n int) string {
	t.Helper()
	var out []string
	last := h.e.LastCommit()
	for _, name := range []string{"v", "u", "a"} {
		for at := uint64(0); at <= last; at++ {
			if name == "u" && at != 0 {
				continue
			}
			rows, err := h.scan(name, at)
			if err != nil {
				t.Fatalf("scan %s at %d: %v", name, at, err)
			}
			sortStrings(rows)
			out = append(out, fmt.Sprint(name, at, rows))
			if name == "v" {
				vs, err := h.versions(name, at)
				if err != nil {
					t.Fatal(err)
				}
				sortStrings(vs)
				out = append(out, fmt.Sprint("versions", at, vs))
			}
		}
	}
	for k := 1; k <= n; k++ {
		for _, name := range []string{"v", "u"} {
			row, err := runLookup(h, name, k)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, row)
		}
	}
	return fmt.Sprint(out)
}

func shardCount(h *harness, name string) int {
	return len(h.e.cur.Load().tables[h.table(name).ID].shards)
}

// TestShardsAutoSplit: a SHARDS AUTO shard over ShardSplitBytes is split
// (and split again) by MergeNow without changing any read at any commit;
// the split survives a reopen, later writes go to the new shards, and
// Check passes.
func TestShardsAutoSplit(t *testing.T) {
	const n = 60
	h := newHarness(t)
	splitFixture(t, h, n)
	want := allReads(t, h, n)
	// Over the size of each table once MergeNow has folded it (merge.Settles).
	h.splitBytes = 2 << 10
	h.reopen()
	if err := h.e.MergeNow(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"v", "u", "a"} {
		if c := shardCount(h, name); c < 2 {
			t.Fatalf("table %s has %d shards after MergeNow over the split size", name, c)
		}
	}
	if got := allReads(t, h, n); got != want {
		t.Fatalf("reads changed by the split:\n%s\nwant\n%s", got, want)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
	shards := shardCount(h, "v")
	h.splitBytes = 1 << 30
	h.reopen()
	if c := shardCount(h, "v"); c != shards {
		t.Fatalf("%d shards after reopen, %d before", c, shards)
	}
	if got := allReads(t, h, n); got != want {
		t.Fatalf("reads changed by the reopen after a split:\n%s\nwant\n%s", got, want)
	}
	// Writes after the split land in the shards that own their hash: a
	// later version replaces the earlier one, never shows beside it.
	w, err := versionWrite(h.table("u"), "g", []string{"k=5 v=late idx=9"})
	if err != nil {
		t.Fatal(err)
	}
	h.stage(w, "u")
	if _, err := h.commitPending(); err != nil {
		t.Fatal(err)
	}
	if got, err := runLookup(h, "u", 5); err != nil || !strings.Contains(got, "late") {
		t.Fatalf("lookup after a write to a split table: %s %v", got, err)
	}
	rows, err := h.scan("u", 0)
	if err != nil {
		t.Fatal(err)
	}
	fives := 0
	for _, r := range rows {
		if strings.HasPrefix(r, "k=5 ") {
			fives++
		}
	}
	if fives != 1 {
		t.Fatalf("key 5 appears %d times after a write to a split table: %v", fives, rows)
	}
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestShardSplitFaults: a split whose part write or fsync fails changes
// nothing (the old shard and its parts stay, the outputs go), and after a
// reopen, which removes what a crash would have left, the split succeeds.
func TestShardSplitFaults(t *testing.T) {
	const n = 40
	for _, op := range []vfs.Op{vfs.OpSync, vfs.OpSyncDir, vfs.OpWrite} {
		for nth := 1; nth <= 6; nth += 2 {
			t.Run(fmt.Sprintf("%s%d", op, nth), func(t *testing.T) {
				h := newHarness(t)
				fault := vfs.NewFault(h.mem)
				h.e.Close()
				h.e = nil
				open := func(split int64) {
					e, err := Open(h.dir, Options{FS: fault, NoBackgroundMerges: true, ShardSplitBytes: split})
					if err != nil {
						t.Fatal(err)
					}
					h.e = e
				}
				open(0)
				splitFixture(t, h, n)
				want := allReads(t, h, n)
				if err := h.e.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				h.e.Close()
				open(4 << 10)
				fault.Inject(vfs.Rule{Op: op, Nth: nth, Match: "parts"})
				err := h.e.MergeNow(context.Background())
				fault.Clear()
				if err == nil {
					t.Skipf("the split did not reach %s number %d", op, nth)
				}
				if !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("split error %v does not wrap the injected fault", err)
				}
				if got := allReads(t, h, n); got != want {
					t.Fatalf("reads changed by a failed split:\n%s\nwant\n%s", got, want)
				}
				if err := h.e.Check(); err != nil {
					t.Fatal(err)
				}
				h.e.Close()
				open(4 << 10)
				if err := h.e.MergeNow(context.Background()); err != nil {
					t.Fatal(err)
				}
				if c := shardCount(h, "v"); c < 2 {
					t.Fatalf("%d shards after the retried split", c)
				}
				if got := allReads(t, h, n); got != want {
					t.Fatalf("reads changed by the retried split:\n%s\nwant\n%s", got, want)
				}
				if err := h.e.Check(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
