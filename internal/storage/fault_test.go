package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// TestDiskFull: a full disk fails the commit with an error that says the
// disk is full (and wraps ENOSPC); reads keep serving what was acknowledged;
// once space returns, a reopen recovers and writes resume. The engine stays
// failed until reopen by design: after a short WAL write it cannot know what
// reached the file, so only recovery may decide (vfs invariant 2).
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	mem := vfs.NewMem()
	fault := vfs.NewFault(mem)
	e, err := Open(dir, Options{FS: fault})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tbl := createKV(t, e)
	if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=1")}}); err != nil {
		t.Fatal(err)
	}
	fault.LimitSpace(0)
	_, err = e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=2 v=b idx=1")}})
	if err == nil {
		t.Fatal("commit on a full disk succeeded")
	}
	if !errors.Is(err, vfs.ErrNoSpace) || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("commit on a full disk: %v, want an error naming the full disk", err)
	}
	if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=3 v=c idx=1")}}); !errors.Is(err, ErrFailed) {
		t.Fatalf("commit after a full disk: %v, want ErrFailed", err)
	}
	snap := e.Snapshot()
	if snap.Commit() != 2 {
		t.Fatalf("snapshot on a full disk at %d, want 2", snap.Commit())
	}
	rows := 0
	if _, err := snap.Scan(ctx, ScanSpec{Table: tbl.ID, Cols: allCols(tbl)}, func(b *types.Batch) error { rows += b.Rows; return nil }); err != nil || rows != 1 {
		t.Fatalf("scan on a full disk: %d rows, %v; want 1 row", rows, err)
	}
	snap.Release()
	_ = e.Close()
	fault.UnlimitSpace()
	e, err = Open(dir, Options{FS: fault})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if c := e.LastCommit(); c != 2 {
		t.Fatalf("after reopen at commit %d, want 2", c)
	}
	if n, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=2 v=b idx=1")}}); err != nil || n != 3 {
		t.Fatalf("commit after space returned: %d, %v", n, err)
	}
}

// TestPartBitFlip: one flipped bit in a flushed part file is reported as
// corruption naming the file, by Check and by a scan, and never read as
// data.
func TestPartBitFlip(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	for i := range 50 {
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, fmt.Sprintf("k=%d v=value%d idx=1", i, i))}})
	}
	if err := h.e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.scan("t", 0); err != nil {
		t.Fatalf("scan before the flip: %v", err)
	}
	h.reopen()
	names, err := h.mem.List(filepath.Join(h.dir, "parts"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no part files: %v %v", names, err)
	}
	name := filepath.Join(h.dir, "parts", names[0])
	data, err := vfs.ReadFile(h.mem, name)
	if err != nil {
		t.Fatal(err)
	}
	// A byte of the data region, whose stripe every block read verifies:
	// the open reader checked the footer and page index when it opened,
	// so a flip there is Check's to find, not the scan's (part/doc.go).
	// The part's data starts after the 4-byte magic.
	data[16] ^= 0x10
	if err := vfs.WriteFile(h.mem, name, data); err != nil {
		t.Fatal(err)
	}
	err = h.e.Check()
	if err == nil || !strings.Contains(err.Error(), names[0]) {
		t.Fatalf("Check over a flipped bit: %v, want an error naming %s", err, names[0])
	}
	rows, err := h.scan("t", 0)
	if err == nil {
		t.Fatalf("scan over a flipped bit read %d rows without an error", len(rows))
	}
	if !errors.Is(err, part.ErrCorrupt) || !strings.Contains(err.Error(), names[0]) {
		t.Fatalf("scan over a flipped bit: %v, want a corruption error naming %s", err, names[0])
	}
}

// TestDiskFullFlush: a flush on a full disk fails with ENOSPC and changes
// nothing, reads still see every row, and the next flush after space
// returns succeeds without a reopen (the WAL is untouched by a flush).
func TestDiskFullFlush(t *testing.T) {
	dir := t.TempDir()
	fault := vfs.NewFault(vfs.NewMem())
	e, err := Open(dir, Options{FS: fault})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	tbl := createKV(t, e)
	for i := range 20 {
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, fmt.Sprintf("k=%d v=v%d idx=1", i, i))}}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		snap := e.Snapshot()
		defer snap.Release()
		rows := 0
		if _, err := snap.Scan(ctx, ScanSpec{Table: tbl.ID, Cols: allCols(tbl)}, func(b *types.Batch) error { rows += b.Rows; return nil }); err != nil {
			t.Fatalf("scan: %v", err)
		}
		return rows
	}
	fault.LimitSpace(0)
	if err := e.Flush(ctx); !errors.Is(err, vfs.ErrNoSpace) {
		t.Fatalf("flush on a full disk: %v, want ENOSPC", err)
	}
	if n := count(); n != 20 {
		t.Fatalf("after a failed flush %d rows, want 20", n)
	}
	fault.UnlimitSpace()
	if err := e.Flush(ctx); err != nil {
		t.Fatalf("flush after space returned: %v", err)
	}
	if n := count(); n != 20 {
		t.Fatalf("after the flush %d rows, want 20", n)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}
