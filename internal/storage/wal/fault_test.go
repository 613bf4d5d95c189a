package wal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/vfs"
)

// committers runs writers goroutines that take commit numbers and submit
// under one lock (log order = commit order) until one fails or each made
// `each` attempts. It returns the acknowledged and the failed commits.
func committers(w *Writer, writers, each int, first uint64) (acked, failed map[uint64]error) {
	acked, failed = map[uint64]error{}, map[uint64]error{}
	var (
		mu   sync.Mutex // takes numbers and submits
		res  sync.Mutex // guards acked, failed
		next = first
		wg   sync.WaitGroup
	)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				mu.Lock()
				c := next
				next++
				p, err := w.Submit(c, payloadFor(c))
				mu.Unlock()
				if err == nil {
					err = p.Wait(context.Background())
				}
				res.Lock()
				if err != nil {
					failed[c] = err
				} else {
					acked[c] = nil
				}
				res.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return acked, failed
}

// checkDurable replays and checks every acknowledged commit is there
// exactly once and in order, every record is whole, and no failed commit
// came back. It returns the largest commit replayed.
func checkDurable(t *testing.T, fsys vfs.FS, dir string, acked, failed map[uint64]error) uint64 {
	t.Helper()
	got, sum, err := replayAll(t, fsys, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	var prev uint64
	for _, r := range got {
		if r.commit <= prev {
			t.Fatalf("commit %d replayed after %d", r.commit, prev)
		}
		prev = r.commit
		if string(r.payload) != string(payloadFor(r.commit)) {
			t.Fatalf("commit %d: payload differs", r.commit)
		}
		if _, bad := failed[r.commit]; bad {
			t.Fatalf("commit %d failed but replays", r.commit)
		}
		seen[r.commit] = true
	}
	for c := range acked {
		if !seen[c] {
			t.Fatalf("acknowledged commit %d lost (replayed %d records)", c, len(got))
		}
	}
	return sum.LastCommit
}

func TestFailedFsyncFailsTheBatch(t *testing.T) {
	m, dir := newMem(t)
	f := vfs.NewFault(slowSync{m, 200 * time.Microsecond})
	w := mustOpen(t, f, dir, Options{})
	// Sync 1 is Open's header sync; fail a later batch's.
	f.Inject(vfs.Rule{Op: vfs.OpSync, Nth: 12, Match: "wal-"})
	acked, failed := committers(w, 8, 50, 1)
	if len(failed) != 8 || len(acked) == 0 {
		t.Fatalf("%d acked, %d failed", len(acked), len(failed))
	}
	for c, err := range failed {
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("commit %d: %v", c, err)
		}
	}
	if err := w.Commit(context.Background(), 9999, nil); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("a failed writer accepted a commit: %v", err)
	}
	if err := w.Sync(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Sync on a failed writer: %v", err)
	}
	if w.Err() == nil {
		t.Fatal("Err is nil after a failed fsync")
	}
	if err := w.Close(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Close returned %v", err)
	}
	st := w.Stats()
	if st.Records != uint64(len(acked)) {
		t.Fatalf("stats count %d durable records, %d were acknowledged", st.Records, len(acked))
	}
	last := checkDurable(t, m, dir, acked, failed)
	checkDurable(t, m.CrashClone(), dir, acked, failed)
	// Recovery: reopen and carry on after the burned numbers.
	w = mustOpen(t, f, dir, Options{})
	more, failed2 := committers(w, 4, 10, last+uint64(len(failed))+1)
	if len(failed2) != 0 {
		t.Fatalf("after reopen: %v", failed2)
	}
	w.Close()
	for c := range more {
		acked[c] = nil
	}
	checkDurable(t, m, dir, acked, failed)
}

func TestFailedWriteIsSticky(t *testing.T) {
	m, dir := newMem(t)
	f := vfs.NewFault(m)
	w := mustOpen(t, f, dir, Options{})
	ctx := context.Background()
	for c := uint64(1); c <= 3; c++ {
		if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
			t.Fatal(err)
		}
	}
	f.Inject(vfs.Rule{Op: vfs.OpWrite, Nth: 1, Keep: 7}) // a torn write
	if err := w.Commit(ctx, 4, payloadFor(4)); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("torn write: %v", err)
	}
	if err := w.Append(5, nil); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Append after failure: %v", err)
	}
	w.Close()
	checkDurable(t, m, dir, map[uint64]error{1: nil, 2: nil, 3: nil}, map[uint64]error{4: nil})
}

func TestNoSpace(t *testing.T) {
	m, dir := newMem(t)
	f := vfs.NewFault(m)
	w := mustOpen(t, f, dir, Options{})
	ctx := context.Background()
	acked := map[uint64]error{}
	for c := uint64(1); c <= 10; c++ {
		if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
			t.Fatal(err)
		}
		acked[c] = nil
	}
	f.LimitSpace(500)
	failed := map[uint64]error{}
	c := uint64(11)
	for ; ; c++ {
		err := w.Commit(ctx, c, payloadFor(c))
		if err != nil {
			if !errors.Is(err, vfs.ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("want ENOSPC, got %v", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, "wal: write") {
				t.Fatalf("unclear error: %q", msg)
			}
			failed[c] = err
			break
		}
		acked[c] = nil
	}
	if err := w.Commit(ctx, c+1, payloadFor(c+1)); !errors.Is(err, vfs.ErrNoSpace) {
		t.Fatalf("a full writer accepted a commit: %v", err)
	}
	failed[c+1] = nil
	f.UnlimitSpace()
	if err := w.Commit(ctx, c+2, nil); !errors.Is(err, vfs.ErrNoSpace) {
		t.Fatalf("the failure is sticky until reopen: %v", err)
	}
	failed[c+2] = nil
	w.Close()
	// Writes resume after reopen once space is back.
	w = mustOpen(t, f, dir, Options{})
	for k := c + 3; k < c+13; k++ {
		if err := w.Commit(ctx, k, payloadFor(k)); err != nil {
			t.Fatalf("after space returned: %v", err)
		}
		acked[k] = nil
	}
	w.Close()
	checkDurable(t, m, dir, acked, failed)
	checkDurable(t, m.CrashClone(), dir, acked, failed)
}

func TestRotationFailureIsSticky(t *testing.T) {
	m, dir := newMem(t)
	f := vfs.NewFault(m)
	w := mustOpen(t, f, dir, Options{SegmentSize: 600})
	f.Inject(vfs.Rule{Op: vfs.OpSyncDir, Nth: 1})
	acked, failed := committers(w, 1, 100, 1)
	if len(failed) != 1 || len(acked) == 0 {
		t.Fatalf("%d acked, %d failed", len(acked), len(failed))
	}
	w.Close()
	// The failed batch sits in a segment whose name was never made durable.
	checkDurable(t, m.CrashClone(), dir, acked, failed)
	checkDurable(t, m, dir, acked, failed)
}

// TestCrashCloneKeepsAcknowledged takes crash images while 8 goroutines
// commit: every commit acknowledged before an image was taken replays from
// it, whole, once and in order, and the image reopens for writing.
func TestCrashCloneKeepsAcknowledged(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, slowSync{m, 100 * time.Microsecond}, dir, Options{SegmentSize: 8 << 10})
	var (
		ackMu sync.Mutex
		acked = map[uint64]error{}
		mu    sync.Mutex
		next  uint64 = 1
		stop         = make(chan struct{})
		wg    sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				c := next
				next++
				p, err := w.Submit(c, payloadFor(c))
				mu.Unlock()
				if err == nil {
					err = p.Wait(context.Background())
				}
				if err != nil {
					t.Error(err)
					return
				}
				ackMu.Lock()
				acked[c] = nil
				ackMu.Unlock()
			}
		}()
	}
	type image struct {
		fs    *vfs.Mem
		acked map[uint64]error
	}
	var images []image
	for range 20 {
		for range 200 {
			ackMu.Lock()
			n := len(acked)
			ackMu.Unlock()
			if n > len(images)*20 {
				break
			}
			syncPause()
		}
		ackMu.Lock()
		snap := make(map[uint64]error, len(acked))
		for c := range acked {
			snap[c] = nil
		}
		ackMu.Unlock()
		images = append(images, image{m.CrashClone(), snap})
	}
	close(stop)
	wg.Wait()
	w.Close()
	for _, im := range images {
		last := checkDurable(t, im.fs, dir, im.acked, nil)
		w := mustOpen(t, im.fs, dir, Options{SegmentSize: 8 << 10})
		if err := w.Commit(context.Background(), last+1, payloadFor(last+1)); err != nil {
			t.Fatal(err)
		}
		w.Close()
		im.acked[last+1] = nil
		checkDurable(t, im.fs, dir, im.acked, nil)
	}
}
