package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// prepSpec is a versioned table whose every write here gives both
// groups, as W1's UPSERTs do: two writes of the same keys per commit.
func prepSpec() catalog.TableSpec {
	return catalog.TableSpec{
		Name: "t", Mode: catalog.ModeVersioned,
		Columns: []catalog.ColumnSpec{
			{Name: "k", Type: types.Of(types.Int64), NotNull: true},
			{Name: "v", Type: types.Of(types.String)},
			{Name: "idx", Type: types.Of(types.Int64)},
			{Name: "w", Type: types.Of(types.String)},
			{Name: "widx", Type: types.Of(types.Int64)},
		},
		PrimaryKey: []string{"k"},
		Groups: []catalog.GroupSpec{
			{Name: "g", Columns: []string{"v", "idx"}, ValidBy: []string{"idx"}},
			{Name: "h", Columns: []string{"w", "widx"}, ValidBy: []string{"widx"}},
		},
	}
}

// prepTxn builds a commit of both groups for rows random keys of 0..keys-1
// (repeats within the commit included), with ordering values from a small
// range so that late writes, ties and exact repeats (R3.1, R3.4) occur.
func prepTxn(t *testing.T, tab *catalog.Table, rng *rand.Rand, rows, keys int) *Txn {
	var gl, hl []string
	for range rows {
		k := rng.IntN(keys)
		gl = append(gl, fmt.Sprintf("k=%d v='g%d' idx=%d", k, rng.IntN(3), rng.IntN(6)))
		hl = append(hl, fmt.Sprintf("k=%d w='h%d' widx=%d", k, rng.IntN(3), rng.IntN(6)))
	}
	gw, err := versionWrite(tab, "g", gl)
	if err != nil {
		t.Fatal(err)
	}
	hw, err := versionWrite(tab, "h", hl)
	if err != nil {
		t.Fatal(err)
	}
	return &Txn{Kind: KindWrite, Writes: []Write{gw, hw}, Tables: []string{"t"}, Rows: uint64(2 * rows)}
}

// TestPrepareMatchesSequential checks the lookups a commit makes during its
// fsync (prepare.go) against commits that find them all still valid. Four
// committers write overlapping keys concurrently while memtables are
// frozen and flushed under them, so that prepares meet memtables with keys
// inserted since (the missing keys looked up again), memtables replaced
// (the prepare dropped) and busy memtables (the prepare skipped). A second
// engine then takes the same commits one at a time in commit order: every
// version (with what the rules decided, R3.1) and the current rows at
// several commits must be the same. The second engine's own state must in
// turn survive a crash and WAL replay, which applies without prepares.
func TestPrepareMatchesSequential(t *testing.T) {
	h := newHarness(t)
	h.create(prepSpec())
	tab := h.table("t")
	const committers, perCommitter = 4, 40
	var mu sync.Mutex
	bySeq := map[uint64]*Txn{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	flushed := make(chan int)
	go func() {
		// Freezes and flushes while the committers run: a prepare may
		// then find its memtable replaced at its apply.
		n := 0
		for {
			select {
			case <-stop:
				flushed <- n
				return
			default:
			}
			if err := h.e.Flush(context.Background()); err != nil {
				t.Error(err)
			}
			n++
		}
	}()
	for c := range committers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for range perCommitter {
				txn := prepTxn(t, tab, rng, 1+rng.IntN(60), 150)
				seq, err := h.e.Commit(context.Background(), txn)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				bySeq[seq] = txn
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	if n := <-flushed; n == 0 {
		t.Fatal("no flush ran beside the commits")
	}
	if t.Failed() {
		return
	}
	seqs := slices.Sorted(func(yield func(uint64) bool) {
		for s := range bySeq {
			if !yield(s) {
				return
			}
		}
	})

	ref := newHarness(t)
	ref.create(prepSpec())
	for _, s := range seqs {
		if got := ref.mustCommit(bySeq[s]); got != s {
			t.Fatalf("the reference took commit %d as %d", s, got)
		}
	}
	last := seqs[len(seqs)-1]
	check := func(what string, a, b *harness) {
		t.Helper()
		for _, at := range []uint64{0, seqs[len(seqs)/3], seqs[2*len(seqs)/3], last} {
			va, err := a.versions("t", at)
			if err != nil {
				t.Fatal(err)
			}
			vb, err := b.versions("t", at)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(va, vb) {
				t.Fatalf("%s: versions at %d differ:\n%v\nwant\n%v", what, at, va, vb)
			}
			sa, err := a.scan("t", at)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := b.scan("t", at)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sa, sb) {
				t.Fatalf("%s: rows at %d differ:\n%v\nwant\n%v", what, at, sa, sb)
			}
			if len(va) == 0 || len(sa) == 0 {
				t.Fatalf("%s: nothing to compare at %d", what, at)
			}
		}
	}
	check("concurrent with flushes vs one at a time", h, ref)
	before := newHarness(t)
	before.create(prepSpec())
	for _, s := range seqs {
		before.mustCommit(bySeq[s])
	}
	ref.crash()
	check("one at a time vs its WAL replay", ref, before)
}

// TestTwoGroupsMatchReplay checks the apply of commits writing both
// groups of the same rows, prepared during the fsync, against WAL replay,
// which has no prepares: commits over keys that repeat within and across
// commits with late writes, ties and repeats, must give the same versions
// (with their states and reasons) and current rows at every few commits.
func TestTwoGroupsMatchReplay(t *testing.T) {
	h := newHarness(t)
	h.create(prepSpec())
	tab := h.table("t")
	rng := rand.New(rand.NewPCG(3, 9))
	var seqs []uint64
	for range 12 {
		seqs = append(seqs, h.mustCommit(prepTxn(t, tab, rng, 256+rng.IntN(300), 700)))
	}
	var want [][]string
	for _, at := range seqs {
		v, err := h.versions("t", at)
		if err != nil {
			t.Fatal(err)
		}
		s, err := h.scan("t", at)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, v, s)
	}
	h.crash()
	for i, at := range seqs {
		v, err := h.versions("t", at)
		if err != nil {
			t.Fatal(err)
		}
		s, err := h.scan("t", at)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v, want[2*i]) || !slices.Equal(s, want[2*i+1]) {
			t.Fatalf("at commit %d replayed and paired differ:\nversions %v\nwant %v\nrows %v\nwant %v", at, v, want[2*i], s, want[2*i+1])
		}
	}
}

// dumpMem renders what a memtable holds for comparisons: its keys in
// order, each group's versions with what the rules decided, and the
// counts a flush sizes its part by (not the arena's bytes, which differ
// between the prepared block and arena copies by design).
func dumpMem(m *keyedMem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "keys %d rows %d sort %d order %d cols %v tied %v\n", m.list.n, m.rows, m.sortBytes, m.orderBytes, m.colBytes, m.tied)
	m.ordered()
	for e := m.list.first(); e != nil; e = e.next[0] {
		fmt.Fprintf(&b, "%x:", e.key)
		for _, g := range e.groups {
			fmt.Fprintf(&b, " g%d win %d", g.id, g.win)
			for i, v := range g.vers {
				fmt.Fprintf(&b, " [%d.%d %x %x %v]", v.v.Commit, v.v.Seq, v.v.Order, v.v.Values, g.res[i])
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestPrepareFallbacks checks the paths an apply takes when what a
// prepare looked up during the fsync no longer holds (prepare.go), each
// against the same writes applied without a prepare:
//   - keys the prepare found missing were inserted by a commit applied in
//     between: they are looked up again, not inserted twice;
//   - the memtable was busy: the prepare skipped it (TryRLock) rather than
//     wait, and the apply looks everything up;
//   - the memtable was replaced (a flush froze it): the apply uses none
//     of the old one's entries, and leaves the old one as it was.
func TestPrepareFallbacks(t *testing.T) {
	h := newHarness(t)
	h.create(prepSpec())
	tab := h.table("t")
	write := func(idx int, keys ...int) *Write {
		var lines []string
		for _, k := range keys {
			lines = append(lines, fmt.Sprintf("k=%d v='v%d' idx=%d", k, k%3, idx))
		}
		w, err := versionWrite(tab, "g", lines)
		if err != nil {
			t.Fatal(err)
		}
		return &w
	}
	apply := func(m *keyedMem, w *Write, commit uint64, sp *shardPrep) {
		t.Helper()
		kw, err := newKeyedWrite(tab, w, commit, 0)
		if err != nil {
			t.Fatal(err)
		}
		var scratch []byte
		if err := m.applyVersions(kw, allRows(w), commit, &scratch, sp); err != nil {
			t.Fatal(err)
		}
	}
	prepare := func(m *keyedMem, w *Write) *shardPrep {
		t.Helper()
		kw, err := newKeyedWrite(tab, w, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		sp := &shardPrep{keyPos: kw.keyPos}
		m.lookup(w.Batch, allRows(w), sp, nil)
		sp.encode(w.Batch, allRows(w), kw)
		return sp
	}
	first, between, prepared := write(1, 1, 2, 3, 4, 5), write(2, 7, 9, 2), write(3, 3, 4, 5, 6, 7, 8, 7)

	t.Run("keys inserted since", func(t *testing.T) {
		m, ref := newKeyedMem(true), newKeyedMem(true)
		apply(m, first, 1, nil)
		apply(ref, first, 1, nil)
		sp := prepare(m, prepared)
		if len(sp.missing) == 0 || sp.m != m {
			t.Fatalf("the prepare found no key missing (%d) or skipped the memtable", len(sp.missing))
		}
		apply(m, between, 2, nil) // inserts key 7, which sp found missing
		apply(ref, between, 2, nil)
		apply(m, prepared, 3, sp)
		apply(ref, prepared, 3, nil)
		if got, want := dumpMem(m), dumpMem(ref); got != want {
			t.Fatalf("with the prepare:\n%s\nwithout:\n%s", got, want)
		}
	})
	t.Run("busy memtable", func(t *testing.T) {
		m, ref := newKeyedMem(true), newKeyedMem(true)
		apply(m, first, 1, nil)
		apply(ref, first, 1, nil)
		m.mu.Lock() // an apply or flush holds it
		sp := prepare(m, prepared)
		m.mu.Unlock()
		if sp.m != nil || sp.vals != nil {
			t.Fatal("the prepare used a memtable whose lock was taken")
		}
		apply(m, prepared, 3, sp)
		apply(ref, prepared, 3, nil)
		if got, want := dumpMem(m), dumpMem(ref); got != want {
			t.Fatalf("with the prepare:\n%s\nwithout:\n%s", got, want)
		}
	})
	t.Run("memtable replaced", func(t *testing.T) {
		old, m, ref := newKeyedMem(true), newKeyedMem(true), newKeyedMem(true)
		apply(old, first, 1, nil)
		sp := prepare(old, prepared)
		before := dumpMem(old)
		apply(m, prepared, 3, sp)
		apply(ref, prepared, 3, nil)
		if got, want := dumpMem(m), dumpMem(ref); got != want {
			t.Fatalf("with the old memtable's prepare:\n%s\nwithout:\n%s", got, want)
		}
		if after := dumpMem(old); after != before {
			t.Fatalf("the apply changed the old memtable:\n%s\nwas\n%s", after, before)
		}
	})
}

func allRows(w *Write) []int {
	rs := make([]int, w.Batch.Rows)
	for i := range rs {
		rs[i] = i
	}
	return rs
}
