package wal

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/vfs"
)

// commitUntilPreallocated commits from next on, one commit per batch,
// until the Writer has started want segments from prepared files, giving
// the preparing goroutine time near each rotation; it returns the next
// commit number.
func commitUntilPreallocated(t *testing.T, w *Writer, next uint64, want uint64) uint64 {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); w.Stats().Preallocated < want; next++ {
		if time.Now().After(deadline) {
			t.Fatalf("only %d segments preallocated", w.Stats().Preallocated)
		}
		if err := w.Commit(ctx, next, payloadFor(next)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	return next
}

// TestPreallocate checks a preallocating Writer: segments start from a
// prepared zero-filled file of SegmentSize bytes, a sealed segment ends at
// its last record (Replay reads sealed segments strictly, so a zero tail
// in one would be ErrCorrupt), a crash leaves a log that replays every
// acknowledged commit with nothing cut or logged, and Close leaves no
// prepared file and an active segment as long as its records.
func TestPreallocate(t *testing.T) {
	const segSize = 8 << 10
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{SegmentSize: segSize, Preallocate: true})
	next := commitUntilPreallocated(t, w, 1, 3)
	active := filepath.Join(dir, SegmentName(uint64(w.Stats().Segments)))
	if size := fileSize(t, m, active); size != segSize {
		t.Fatalf("active segment is %d bytes, want the preallocated %d", size, segSize)
	}

	// A crash now: only what was synced survives.
	crashed := m.CrashClone()
	logger, logs := newLogger()
	got, sum, err := replayWith(t, crashed, dir, logger)
	if err != nil || sum.CutBytes != 0 {
		t.Fatalf("replay after a crash: %+v %v", sum, err)
	}
	checkRecords(t, got, seq(1, next-1))
	w2 := mustOpen(t, crashed, dir, Options{SegmentSize: segSize, Preallocate: true, Logger: logger})
	next2 := commitUntilPreallocated(t, w2, next, 2)
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Fatalf("a clean preallocated log was logged as cut: %q", logs.String())
	}
	got, _, err = replayAll(t, crashed, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, next2-1))

	// Close tidies: no prepared file, the active segment ends at its
	// last record.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stat(filepath.Join(dir, preallocName)); err == nil {
		t.Fatal("Close left the prepared segment")
	}
	names, err := m.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		n, ok := parseSegmentName(name)
		if !ok {
			continue
		}
		f, err := m.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = scanSegment(f, name, n, false, false, func(uint64, []byte) error { return nil })
		f.Close()
		if err != nil {
			t.Fatalf("after Close, %s read as sealed: %v", name, err)
		}
	}
	got, _, err = replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, next-1))
}

// TestPreallocateFails checks a Writer whose segment cannot be prepared
// (a full device) still commits, growing its segments as without
// Options.Preallocate, and says why in the log.
func TestPreallocateFails(t *testing.T) {
	m, dir := newMem(t)
	f := vfs.NewFault(m)
	f.Inject(vfs.Rule{Op: vfs.OpWrite, Match: preallocName, Repeat: true, Err: vfs.ErrNoSpace})
	logger, logs := newLogger()
	w := mustOpen(t, f, dir, Options{SegmentSize: 4 << 10, Preallocate: true, Logger: logger})
	ctx := context.Background()
	for c := uint64(1); c <= 200; c++ {
		if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond) // let the preparing goroutine fail
	}
	st := w.Stats()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st.Segments < 3 || st.Preallocated != 0 {
		t.Fatalf("%d segments, %d preallocated", st.Segments, st.Preallocated)
	}
	if !strings.Contains(logs.String(), "could not preallocate") {
		t.Fatalf("the failure was not logged: %q", logs.String())
	}
	got, _, err := replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, 200))
}
