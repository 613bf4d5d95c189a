package wal

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/vfs"
)

// submitSmall submits commit c through SubmitCompressed, whose Wait may
// write the batch itself.
func submitSmall(t *testing.T, w *Writer, c uint64) Pending {
	t.Helper()
	return submitPayload(t, w, c, payloadFor(c), 0)
}

// submitPayload submits commit c with payload through SubmitCompressed,
// after checking it is stored in at least atLeast bytes.
func submitPayload(t *testing.T, w *Writer, c uint64, payload []byte, atLeast int) Pending {
	t.Helper()
	pre := Compress(payload)
	defer pre.Release()
	if len(pre.stored) < atLeast {
		t.Fatalf("stored %d bytes, want at least %d", len(pre.stored), atLeast)
	}
	p, err := w.SubmitCompressed(c, &pre)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLeadFlush checks a small record submitted through SubmitCompressed
// is durable when Wait returns, written by the waiting goroutine itself
// when no flush runs (the flusher is never started for it), and that a
// record nobody waits for is still written by Close.
func TestLeadFlush(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	ctx := context.Background()
	for c := uint64(1); c <= 50; c++ {
		if err := submitSmall(t, w, c).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		// Durable before anything else happens: a crash now keeps it.
		got, _, err := replayAll(t, m.CrashClone(), dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, seq(1, c))
	}
	if st := w.Stats(); st.Batches != 50 || st.Fsyncs != 50 || st.Led != 50 {
		t.Fatalf("%d batches, %d fsyncs, %d written by the waiter for 50 waited commits", st.Batches, st.Fsyncs, st.Led)
	}
	submitSmall(t, w, 51) // never waited for
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, 51))
}

// TestLeadFlushCanceled checks a Wait whose context is already done
// still has the record written (by the flusher, which it wakes).
func TestLeadFlushCanceled(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := submitSmall(t, w, 1)
	if err := p.Wait(ctx); err == nil {
		t.Fatal("Wait with a done context returned nil")
	}
	// The canceled Wait woke the flusher: the record becomes durable
	// with nobody waiting for it.
	for deadline := time.Now().Add(10 * time.Second); w.Stats().Batches == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a Wait whose context was done left its record unwritten")
		}
	}
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Led != 0 {
		t.Fatalf("%d batches written by a waiter, want 0", st.Led)
	}
	w.Close()
	got, _, err := replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, 1))
}

// TestLeadFlushBusy checks a Wait that finds a flush running wakes the
// flusher, which writes its record once that flush ends: without the
// wake, nobody would write it.
func TestLeadFlushBusy(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	defer w.Close()
	w.flushMu.Lock() // a flush in progress
	p := submitSmall(t, w, 1)
	done := make(chan error, 1)
	go func() { done <- p.Wait(context.Background()) }()
	time.Sleep(50 * time.Millisecond) // let Wait find the flush running
	w.flushMu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait never returned: the flusher was not woken")
	}
	if st := w.Stats(); st.Batches != 1 || st.Led != 0 {
		t.Fatalf("%d batches, %d written by the waiter; want 1 by the flusher", st.Batches, st.Led)
	}
}

// TestLeadFlushConcurrent has many goroutines submit small records in
// commit order and wait, some leading flushes while others find one
// running: every record is durable in order and none waits forever.
func TestLeadFlushConcurrent(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{SegmentSize: 8 << 10, Preallocate: true})
	var mu sync.Mutex
	next := uint64(1)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				mu.Lock()
				c := next
				next++
				var p Pending
				var err error
				if g%4 == 0 {
					p, err = w.Submit(c, payloadFor(c))
				} else {
					pre := Compress(payloadFor(c))
					p, err = w.SubmitCompressed(c, &pre)
					pre.Release()
				}
				mu.Unlock()
				if err == nil {
					err = p.Wait(context.Background())
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := w.Stats()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, 16*200))
	t.Logf("%d records in %d batches, %d written by a waiter", st.Records, st.Batches, st.Led)
}

// TestLeadFlushFails checks a failed fsync in a batch its own waiter
// writes fails that Wait, and stays: the next small record's Wait gets
// the same error without writing, Submit refuses, and only what was
// acknowledged replays.
func TestLeadFlushFails(t *testing.T) {
	m, dir := newMem(t)
	f := vfs.NewFault(m)
	w := mustOpen(t, f, dir, Options{})
	ctx := context.Background()
	for c := uint64(1); c <= 3; c++ {
		if err := submitSmall(t, w, c).Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f.Inject(vfs.Rule{Op: vfs.OpSync, Nth: 1, Match: "wal-"})
	if err := submitSmall(t, w, 4).Wait(ctx); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Wait on a failed fsync: %v", err)
	}
	if _, err := w.Submit(5, payloadFor(5)); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Submit after a failed fsync: %v", err)
	}
	if st := w.Stats(); st.Led != 3 || st.Records != 3 {
		t.Fatalf("%d written by a waiter, %d records durable; want 3 and 3", st.Led, st.Records)
	}
	if err := w.Close(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Close returned %v", err)
	}
	checkDurable(t, m, dir, map[uint64]error{1: nil, 2: nil, 3: nil}, map[uint64]error{4: nil})
}
