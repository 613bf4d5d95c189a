package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
)

// TestWatchConflicts: a write read at a snapshot taken under a Watch is
// refused (and takes no number) once a later commit wrote one of its
// keys, and commits when only other keys or tables were written.
func TestWatchConflicts(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	h.create(kvSpec("u", catalog.ModeVersioned))
	tt, tu := h.table("t"), h.table("u")
	h.mustWrite(tt, "g", []string{"k=1 v=a idx=1", "k=2 v=b idx=1"})
	if h.e.kw.keys != nil {
		t.Fatalf("keys recorded with no Watch open")
	}

	w, err := h.e.Watch()
	if err != nil {
		t.Fatal(err)
	}
	snap := h.e.Snapshot()
	at := snap.Commit()
	snap.Release()
	h.mustWrite(tt, "g", []string{"k=2 v=c idx=0"}) // late, but a write of k=2
	h.mustWrite(tu, "g", []string{"k=1 v=x idx=5"}) // same key, other table

	checked := func(lines ...string) *Txn {
		t.Helper()
		wr, err := versionWrite(tt, "g", lines)
		if err != nil {
			t.Fatal(err)
		}
		wr.ReadAt = at
		return &Txn{Kind: KindWrite, Writes: []Write{wr}}
	}
	next := h.e.pipe.next
	if _, err := h.commit(checked("k=1 v=a2 idx=2", "k=2 v=b2 idx=2")); !errors.Is(err, ErrConflict) {
		t.Fatalf("write of a key written since its read: %v, want ErrConflict", err)
	}
	if h.e.pipe.next != next {
		t.Fatalf("a refused commit took a number")
	}
	if _, err := h.commit(checked("k=1 v=a2 idx=2", "k=3 v=n idx=1")); err != nil {
		t.Fatalf("write of keys nobody wrote since: %v", err)
	}
	// Its own commit is recorded for the others.
	if _, err := h.commit(checked("k=1 v=a3 idx=3")); !errors.Is(err, ErrConflict) {
		t.Fatalf("second write read at the same commit: %v, want ErrConflict", err)
	}
	w.Release()
	w.Release()
	if h.e.OpenWatches() != 0 || h.e.kw.keys != nil {
		t.Fatalf("after Release: %d open, %d keys kept", h.e.OpenWatches(), len(h.e.kw.keys))
	}
	// A write read under no open Watch cannot be checked: a caller's bug.
	if _, err := h.commit(checked("k=4 v=z idx=1")); !errors.Is(err, ErrInvalidTxn) {
		t.Fatalf("checked write with no Watch: %v, want ErrInvalidTxn", err)
	}
}

// TestWatchPrunes: while Watches come and go, the record keeps only what
// the open ones can still conflict on.
func TestWatchPrunes(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeUpsert))
	tt := h.table("t")
	old, err := h.e.Watch()
	if err != nil {
		t.Fatal(err)
	}
	write := func(from, n int) {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf("k=%d v=x idx=1", from+i)
		}
		h.mustWrite(tt, "g", lines)
	}
	write(0, minPruneAt/2)
	w, err := h.e.Watch()
	if err != nil {
		t.Fatal(err)
	}
	old.Release()
	// The first batch's keys are older than the open Watch: dropped once
	// the record reaches its pruning size.
	write(minPruneAt, minPruneAt)
	if n := len(h.e.kw.keys); n != minPruneAt {
		t.Fatalf("%d keys kept, want the %d written under the open Watch", n, minPruneAt)
	}
	w.Release()
}

// TestExclusiveCancelled: a wait for Exclusive ends with its ctx, and the
// gate taken behind it is given back: commits go on.
func TestExclusiveCancelled(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeUpsert))
	tt := h.table("t")
	release, err := h.e.Exclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.e.Exclusive(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exclusive behind another: %v, want the deadline", err)
	}
	release()
	h.mustWrite(tt, "g", []string{"k=1 v=a idx=1"})
	release, err = h.e.Exclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wr, err := versionWrite(tt, "g", []string{"k=2 v=b idx=1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.commit(&Txn{Kind: KindWrite, Writes: []Write{wr}, Exclusive: true}); err != nil {
		t.Fatalf("the holder's own commit: %v", err)
	}
	release()
	if s := h.e.Stats(); s.Exclusives != 2 {
		t.Errorf("Exclusives %d, want 2", s.Exclusives)
	}
}
