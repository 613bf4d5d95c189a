package storage

import (
	"context"
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
)

// TestStats checks the numbers /metrics shows against what the test did:
// commits, rows (as Txn.Rows records them), one histogram entry per WAL
// fsync, and per shard its memtable, then its part after a flush.
func TestStats(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	for i := range 3 {
		w := kvWrite(t, tbl, fmt.Sprintf("k=%d v=a idx=1", i), fmt.Sprintf("k=%d v=b idx=2", i+10))
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}, Tables: []string{"t"}, Rows: 2})
	}
	s := h.e.Stats()
	if s.Commit != 4 || s.RowsWritten != 6 {
		t.Errorf("Commit %d, RowsWritten %d; want 4 (a CREATE and 3 writes) and 6", s.Commit, s.RowsWritten)
	}
	var synced uint64
	for _, n := range s.WAL.SyncLatency {
		synced += n
	}
	if synced == 0 || synced != s.WAL.Fsyncs {
		t.Errorf("fsync histogram holds %d fsyncs, the WAL counted %d", synced, s.WAL.Fsyncs)
	}
	var mem uint64
	for _, sh := range s.Shards {
		if sh.Table != "t" || sh.Parts != 0 {
			t.Errorf("before a flush: shard %+v, want table t with no parts", sh)
		}
		mem += sh.MemtableBytes
	}
	if len(s.Shards) == 0 || mem == 0 {
		t.Fatalf("before a flush: shards %+v, want t's memtables to hold the rows", s.Shards)
	}

	if err := h.e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = h.e.Stats()
	parts := 0
	for _, sh := range s.Shards {
		parts += sh.Parts
		if sh.MemtableBytes != 0 || sh.MergeDue {
			t.Errorf("after one flush: shard %+v, want an empty memtable and no merge due", sh)
		}
	}
	if parts == 0 {
		t.Errorf("after a flush: shards %+v hold no part", s.Shards)
	}

	if err := h.e.Close(); err != nil {
		t.Fatal(err)
	}
	if s := h.e.Stats(); s.WAL.Fsyncs != 0 || s.Commit != 4 {
		t.Errorf("after Close: %+v, want the commit kept and no WAL counters", s)
	}
	h.e = nil
}

// BenchmarkStats is the cost of one /metrics scrape's engine part on a
// table after 20 000 commits: it walks the commit list once.
func BenchmarkStats(b *testing.B) {
	h := newHarness(b)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	for i := range 20_000 {
		w := kvWrite(b, tbl, fmt.Sprintf("k=%d v=a idx=1", i%500))
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}, Tables: []string{"t"}, Rows: 1})
	}
	b.ResetTimer()
	for b.Loop() {
		if s := h.e.Stats(); s.RowsWritten != 20_000 {
			b.Fatalf("rows written %d", s.RowsWritten)
		}
	}
}
