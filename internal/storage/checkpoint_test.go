package storage

import (
	"context"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
)

// TestCheckpointRecord: a trailer with checkpoints decodes to them; one
// written before checkpoints existed (ending after the catalog) to none.
func TestCheckpointRecord(t *testing.T) {
	tbl := mustTable(t)
	w, err := versionWrite(tbl, "g", []string{"k=1 v='a' idx=3"})
	if err != nil {
		t.Fatal(err)
	}
	cs := []Checkpoint{{Name: "transformation/1", Processed: 9}, {Name: "transformation/4", Processed: 1 << 40}}
	p := appendTrailer(encodeWrites(nil, []Write{w}), time.Unix(1700000000, 0), KindTransformation, 1, []string{"t"}, nil, cs)
	rec, err := decodeRecord(10, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.checkpoints) != 2 || rec.checkpoints[0] != cs[0] || rec.checkpoints[1] != cs[1] {
		t.Fatalf("checkpoints decoded as %+v", rec.checkpoints)
	}
	old, err := decodeRecord(7, sampleRecord(t))
	if err != nil || old.checkpoints != nil {
		t.Fatalf("a record without checkpoints: %v, %+v", err, old.checkpoints)
	}
	// A damaged count is an error, not a panic or a huge allocation.
	bad := appendTrailer(encodeWrites(nil, []Write{w}), time.Unix(1700000000, 0), KindTransformation, 1, nil, nil, cs)
	// From the end: the length (4), processed 1<<40 (6), the second name
	// (17), processed 9 (1), the first name (17), then the count.
	bad[len(bad)-4-6-17-1-17-1] = 0x7f
	if _, err := decodeRecord(11, bad); err == nil {
		t.Fatalf("a damaged checkpoint list decoded")
	}
}

// TestCheckpointsDurable (R12.2): a checkpoint is there after a crash (from
// the WAL) and after a flush dropped the WAL records that carried it (from
// the manifest); it never moves back.
func TestCheckpointsDurable(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	commit := func(processed uint64, lines ...string) {
		w, err := versionWrite(tbl, "g", lines)
		if err != nil {
			t.Fatal(err)
		}
		h.mustCommit(&Txn{Kind: KindTransformation, Writes: []Write{w}, Checkpoints: []Checkpoint{{Name: "x", Processed: processed}}})
	}
	if _, ok := h.e.Checkpoint("x"); ok {
		t.Fatalf("a checkpoint before any was committed")
	}
	// A checkpoint names an earlier commit than the one carrying it, as a
	// transformation's does (commit 1 here is the CREATE TABLE).
	commit(1, "k=1 v='a' idx=1")
	h.crash()
	if p, ok := h.e.Checkpoint("x"); !ok || p != 1 {
		t.Fatalf("after a crash: %d %v, want 1", p, ok)
	}
	commit(3, "k=2 v='b' idx=1")
	commit(2, "k=3 v='c' idx=1") // an older checkpoint does not move it back
	if err := h.e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.e.man.Snapshot().WALCheckpoint() < h.e.LastCommit() {
		t.Fatalf("the flush left the WAL checkpoint at %d of %d", h.e.man.Snapshot().WALCheckpoint(), h.e.LastCommit())
	}
	h.crash()
	if p, ok := h.e.Checkpoint("x"); !ok || p != 3 {
		t.Fatalf("after a flush and a crash: %d %v, want 3", p, ok)
	}
	if _, _, ok := h.e.man.Snapshot().TransformProgress("x"); !ok {
		t.Fatalf("the flush that dropped the WAL left the checkpoint out of the manifest")
	}
	h.reopen()
	if p, _ := h.e.Checkpoint("x"); p != 3 {
		t.Fatalf("after a reopen: %d, want 3", p)
	}
}
