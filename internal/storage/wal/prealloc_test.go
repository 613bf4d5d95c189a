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

	// The first segment was not preallocated: it was sealed as soon as a
	// prepared one was ready, well before it was full.
	if size := fileSize(t, m, filepath.Join(dir, SegmentName(1))); size > segSize/2 {
		t.Fatalf("segment 1 is %d bytes: not sealed early for a preallocated one", size)
	}

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
	if _, err := m.Stat(filepath.Join(dir, preallocName)); err == nil {
		t.Fatal("a failed preparation left its file, holding the space it got")
	}
	st := w.Stats()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st.Segments < 3 || st.Preallocated != 0 {
		t.Fatalf("%d segments, %d preallocated", st.Segments, st.Preallocated)
	}
	// One try per segment at most, not one per batch.
	if n := strings.Count(logs.String(), "could not preallocate"); n == 0 || n > st.Segments {
		t.Fatalf("%d failures logged for %d segments: %q", n, st.Segments, logs.String())
	}
	got, _, err := replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, 200))
}

// TestPreallocateErrors checks the preallocating Writer's other failures:
// a prepared segment that cannot be renamed into place is logged and the
// Writer goes on with a grown segment; a header write that fails in a
// prepared segment fails the Writer, and Open of that log recovers every
// acknowledged commit instead of reading the segment as damaged.
func TestPreallocateErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("rename", func(t *testing.T) {
		m, dir := newMem(t)
		f := vfs.NewFault(m)
		f.Inject(vfs.Rule{Op: vfs.OpRename, Nth: 1})
		logger, logs := newLogger()
		w := mustOpen(t, f, dir, Options{SegmentSize: 4 << 10, Preallocate: true, Logger: logger})
		next := commitUntilPreallocated(t, w, 1, 1)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logs.String(), "could not use the preallocated segment") {
			t.Fatalf("the failed rename was not logged: %q", logs.String())
		}
		got, _, err := replayAll(t, m, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, seq(1, next-1))
	})
	t.Run("header", func(t *testing.T) {
		m, dir := newMem(t)
		f := vfs.NewFault(m)
		// The first write to segment 2, its header, keeps 10 bytes.
		f.Inject(vfs.Rule{Op: vfs.OpWrite, Nth: 1, Match: SegmentName(2), Keep: 10})
		w := mustOpen(t, f, dir, Options{SegmentSize: 4 << 10, Preallocate: true})
		var acked uint64
		for c := uint64(1); ; c++ {
			if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
				break
			}
			acked = c
			time.Sleep(100 * time.Microsecond)
			if c > 10000 {
				t.Fatal("the header write never failed")
			}
		}
		if w.Stats().Preallocated != 1 {
			t.Fatal("segment 2 was not the preallocated one")
		}
		w.Close()
		crashed := m.CrashClone()
		got, _, err := replayAll(t, crashed, dir, 0)
		if err != nil {
			t.Fatalf("replay after the failed header: %v", err)
		}
		checkRecords(t, got, seq(1, acked))
		// The same with the header's 10 bytes and the zeros on disk, as
		// a crash right after the failed write would leave them.
		seg2 := filepath.Join(dir, SegmentName(2))
		data := append(appendHeader(nil, 2)[:10], make([]byte, 4<<10)...)
		if err := vfs.WriteFile(crashed, seg2, data); err != nil {
			t.Fatal(err)
		}
		w2 := mustOpen(t, crashed, dir, Options{SegmentSize: 4 << 10, Preallocate: true})
		if err := w2.Commit(ctx, acked+1, payloadFor(acked+1)); err != nil {
			t.Fatal(err)
		}
		w2.Close()
		got, _, err = replayAll(t, crashed, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, seq(1, acked+1))
	})
}
