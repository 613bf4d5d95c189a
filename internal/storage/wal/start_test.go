package wal

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/vfs"
)

// largePayloadFor is commit c's payload for the Start tests: 20 KiB that
// do not compress, so the stored record is past leadMax.
func largePayloadFor(c uint64) []byte {
	r := rand.New(rand.NewPCG(c, 7))
	p := make([]byte, 20<<10)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

// submitLarge submits commit c's large payload through SubmitCompressed.
func submitLarge(t *testing.T, w *Writer, c uint64) Pending {
	t.Helper()
	return submitPayload(t, w, c, largePayloadFor(c), leadMax)
}

// TestStartWritesEarly checks that Start writes a large record's batch to
// the segment at once but makes nothing durable, that Wait then syncs it
// (a crash after Wait keeps it, one before does not), and that the
// segment rotations Start meets are made durable as the flusher's are.
func TestStartWritesEarly(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{SegmentSize: 64 << 10})
	for c := uint64(1); c <= 12; c++ {
		p := submitLarge(t, w, c)
		before := segmentBytes(t, m, dir)
		p.Start()
		if p.st == nil {
			t.Fatalf("commit %d: Start did not write the batch", c)
		}
		if after := segmentBytes(t, m, dir); after < before+leadMax {
			t.Fatalf("commit %d: the segments hold %d bytes after Start, %d before", c, after, before)
		}
		crashed, _, err := replayAll(t, m.CrashClone(), dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkRecordsWith(t, crashed, seq(1, c-1), largePayloadFor)
		if err := p.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		crashed, _, err = replayAll(t, m.CrashClone(), dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkRecordsWith(t, crashed, seq(1, c), largePayloadFor)
	}
	st := w.Stats()
	if st.Started != 12 || st.Led != 12 || st.Batches != 12 || st.Fsyncs != 12 || st.Segments < 3 {
		t.Fatalf("stats %+v: want 12 batches started, led and synced over at least 3 segments", st)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStartBusy checks that Start, finding a flush running, leaves the
// batch to the flusher (which it wakes) and Wait returns once the flusher
// wrote it; and that Start does nothing for a small record, whose Wait
// writes it.
func TestStartBusy(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	defer w.Close()
	w.flushMu.Lock() // a flush in progress
	p := submitLarge(t, w, 1)
	p.Start()
	if p.st != nil {
		t.Fatal("Start wrote the batch while a flush ran")
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	w.flushMu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait never returned: the flusher was not woken")
	}
	small := submitSmall(t, w, 2)
	small.Start()
	if small.st != nil {
		t.Fatal("Start wrote a small record's batch")
	}
	if err := small.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Batches != 2 || st.Started != 0 || st.Led != 1 {
		t.Fatalf("%d batches, %d started, %d led; want 2, 0 and 1 (the small one)", st.Batches, st.Started, st.Led)
	}
	got, _, err := replayAll(t, m.CrashClone(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecordsWith(t, got, seq(1, 2), func(c uint64) []byte {
		if c == 1 {
			return largePayloadFor(c)
		}
		return payloadFor(c)
	})
}

// TestStartFaults checks a started batch whose write or whose sync fails:
// Wait reports the failure, the Writer is failed, nothing after the last
// acknowledged record replays, and a waiter ignoring ctx is not needed
// for the flush lock to be released (Close returns).
func TestStartFaults(t *testing.T) {
	for _, c := range []struct {
		name string
		rule vfs.Rule
	}{
		{"write", vfs.Rule{Op: vfs.OpWrite, Nth: 1, Keep: 100, Match: "wal-"}},
		{"sync", vfs.Rule{Op: vfs.OpSync, Nth: 1, Match: "wal-"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, dir := newMem(t)
			f := vfs.NewFault(m)
			w := mustOpen(t, f, dir, Options{})
			p := submitLarge(t, w, 1)
			p.Start()
			if err := p.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			f.Inject(c.rule)
			p = submitLarge(t, w, 2)
			p.Start()
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a started batch is synced whatever the context says
			err := p.Wait(ctx)
			if err == nil || errors.Is(err, context.Canceled) {
				t.Fatalf("Wait = %v, want the injected failure", err)
			}
			if w.Err() == nil {
				t.Fatal("the Writer is not failed")
			}
			if _, err := w.SubmitCompressed(3, new(Compressed)); err == nil {
				t.Fatal("a failed Writer took a record")
			}
			w.Close() //nolint:errcheck // reports the failure
			got, _, rerr := replayAll(t, m.CrashClone(), dir, 0)
			if rerr != nil {
				t.Fatal(rerr)
			}
			checkRecordsWith(t, got, seq(1, 1), largePayloadFor)
		})
	}
}

// segmentBytes is the size of the log's segment files as written, synced
// or not.
func segmentBytes(t *testing.T, m *vfs.Mem, dir string) int64 {
	t.Helper()
	names, err := m.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range names {
		if _, ok := parseSegmentName(name); ok {
			fi, err := m.Stat(dir + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}
