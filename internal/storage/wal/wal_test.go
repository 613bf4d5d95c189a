package wal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/vfs"
)

// payloadFor is a deterministic payload of varying length, so replay can
// check content as well as order.
func payloadFor(commit uint64) []byte {
	p := make([]byte, int(commit*7%300))
	for i := range p {
		p[i] = byte(commit) + byte(i)
	}
	return p
}

type rec struct {
	commit  uint64
	payload []byte
}

// logBuf keeps what a logger writes, for asserting that cuts are logged.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogger() (*slog.Logger, *logBuf) {
	lb := &logBuf{}
	return slog.New(slog.NewTextHandler(lb, nil)), lb
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func replayAll(t *testing.T, fsys vfs.FS, dir string, after uint64) ([]rec, Summary, error) {
	t.Helper()
	return replayFrom(t, fsys, dir, after, discard())
}

// replayWith replays the whole log, logging to logger.
func replayWith(t *testing.T, fsys vfs.FS, dir string, logger *slog.Logger) ([]rec, Summary, error) {
	t.Helper()
	return replayFrom(t, fsys, dir, 0, logger)
}

func replayFrom(t *testing.T, fsys vfs.FS, dir string, after uint64, logger *slog.Logger) ([]rec, Summary, error) {
	t.Helper()
	var out []rec
	sum, err := Replay(fsys, dir, after, logger, func(c uint64, p []byte) error {
		out = append(out, rec{c, append([]byte(nil), p...)})
		return nil
	})
	return out, sum, err
}

// checkRecords asserts the replayed records are exactly commits, in order,
// each with its payload.
func checkRecords(t *testing.T, got []rec, commits []uint64) {
	t.Helper()
	if len(got) != len(commits) {
		t.Fatalf("replayed %d records, want %d", len(got), len(commits))
	}
	for i, r := range got {
		if r.commit != commits[i] {
			t.Fatalf("record %d: commit %d, want %d", i, r.commit, commits[i])
		}
		if !bytes.Equal(r.payload, payloadFor(r.commit)) {
			t.Fatalf("record %d (commit %d): payload differs", i, r.commit)
		}
	}
}

func seq(from, to uint64) []uint64 {
	var s []uint64
	for c := from; c <= to; c++ {
		s = append(s, c)
	}
	return s
}

func newMem(t *testing.T) (*vfs.Mem, string) {
	t.Helper()
	m := vfs.NewMem()
	if err := m.MkdirAll("/db"); err != nil {
		t.Fatal(err)
	}
	return m, "/db/wal"
}

func fss(t *testing.T, test func(t *testing.T, fsys vfs.FS, dir string)) {
	t.Run("Mem", func(t *testing.T) { m, dir := newMem(t); test(t, m, dir) })
	t.Run("OS", func(t *testing.T) { test(t, vfs.OS{}, filepath.Join(t.TempDir(), "wal")) })
}

func mustOpen(t *testing.T, fsys vfs.FS, dir string, opts Options) *Writer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = discard()
	}
	w, err := Open(fsys, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestRoundTrip(t *testing.T) {
	fss(t, func(t *testing.T, fsys vfs.FS, dir string) {
		if got, sum, err := replayAll(t, fsys, dir, 0); err != nil || len(got) != 0 || sum.Segments != 0 {
			t.Fatalf("replay of a missing log: %v %+v %v", got, sum, err)
		}
		w := mustOpen(t, fsys, dir, Options{})
		ctx := context.Background()
		for c := uint64(1); c <= 10; c++ {
			if err := w.Append(c, payloadFor(c)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		for c := uint64(11); c <= 20; c++ {
			if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Sync(); err != nil { // nothing pending: returns at once
			t.Fatal(err)
		}
		if _, err := Replay(fsys, dir, 0, discard(), func(uint64, []byte) error { return nil }); !errors.Is(err, vfs.ErrLocked) {
			t.Fatalf("Replay while the Writer is open: %v", err)
		}
		st := w.Stats()
		if st.Records != 20 || st.Fsyncs == 0 || st.Fsyncs != st.Batches || st.Segments != 1 {
			t.Fatalf("stats %+v", st)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx, 21, nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("Commit after Close: %v", err)
		}
		got, sum, err := replayAll(t, fsys, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, seq(1, 20))
		if sum.LastCommit != 20 || sum.Records != 20 || sum.Skipped != 0 || sum.CutBytes != 0 {
			t.Fatalf("summary %+v", sum)
		}
		got, sum, err = replayAll(t, fsys, dir, 15)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, seq(16, 20))
		if sum.Skipped != 15 || sum.LastCommit != 20 {
			t.Fatalf("summary after 15: %+v", sum)
		}
		// Reopen and continue in the same segment.
		w = mustOpen(t, fsys, dir, Options{})
		for c := uint64(21); c <= 25; c++ {
			if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		got, sum, _ = replayAll(t, fsys, dir, 0)
		checkRecords(t, got, seq(1, 25))
		if sum.Segments != 1 {
			t.Fatalf("reopen started a new segment: %+v", sum)
		}
	})
}

func TestReplayCallbackError(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	for c := uint64(1); c <= 3; c++ {
		w.Append(c, payloadFor(c))
	}
	w.Close()
	stop := errors.New("stop")
	n := 0
	_, err := Replay(m, dir, 0, discard(), func(uint64, []byte) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || errors.Is(err, ErrCorrupt) || n != 2 {
		t.Fatalf("err %v after %d calls", err, n)
	}
}

func TestPayloadLimitAndContext(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	defer w.Close()
	if err := w.Append(1, make([]byte, MaxPayload+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized payload: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Commit(ctx, 1, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit with a done context: %v", err)
	}
	if err := w.Commit(context.Background(), 2, payloadFor(2)); err != nil {
		t.Fatalf("the writer must still work: %v", err)
	}
	if st := w.Stats(); st.Records != 1 {
		t.Fatalf("a cancelled or oversized record was written: %+v", st)
	}
}

func TestAppendIsDurableOnlyAfterSync(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	defer w.Close()
	w.Append(1, payloadFor(1))
	if got, _, err := replayAll(t, m.CrashClone(), dir, 0); err != nil || len(got) != 0 {
		t.Fatalf("an unsynced append survived a crash: %v %v", got, err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	got, _, err := replayAll(t, m.CrashClone(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, []uint64{1})
}

func TestRotation(t *testing.T) {
	fss(t, func(t *testing.T, fsys vfs.FS, dir string) {
		const limit = 2048
		w := mustOpen(t, fsys, dir, Options{SegmentSize: limit})
		ctx := context.Background()
		for c := uint64(1); c <= 100; c++ {
			if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
				t.Fatal(err)
			}
		}
		st := w.Stats()
		w.Close()
		names, _ := fsys.List(dir)
		var segs []string
		for _, n := range names {
			if _, ok := parseSegmentName(n); ok {
				segs = append(segs, n)
				info, _ := fsys.Stat(filepath.Join(dir, n))
				if info.Size() > limit {
					t.Errorf("%s is %d bytes, over the %d limit", n, info.Size(), limit)
				}
			}
		}
		if len(segs) < 5 || st.Segments != len(segs) || st.DirSyncs != uint64(len(segs)-1) {
			t.Fatalf("segments %v, stats %+v", segs, st)
		}
		if segs[0] != "wal-000000000001.log" {
			t.Fatalf("first segment is %s", segs[0])
		}
		got, sum, err := replayAll(t, fsys, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, seq(1, 100))
		if sum.Segments != len(segs) {
			t.Fatalf("summary %+v", sum)
		}
	})
}

// TestBigRecord puts a record larger than the segment size in a segment of
// its own.
func TestBigRecord(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{SegmentSize: 1024})
	// Random bytes: compression must not shrink it below the segment size.
	big := make([]byte, 5000)
	rand.NewChaCha8([32]byte{1}).Read(big)
	ctx := context.Background()
	w.Commit(ctx, 1, payloadFor(1))
	if err := w.Commit(ctx, 2, big); err != nil {
		t.Fatal(err)
	}
	w.Commit(ctx, 3, payloadFor(3))
	w.Close()
	var got []uint64
	sum, err := Replay(m, dir, 0, discard(), func(c uint64, p []byte) error {
		if c == 2 && !bytes.Equal(p, big) {
			t.Fatal("big payload differs")
		}
		got = append(got, c)
		return nil
	})
	if err != nil || len(got) != 3 || sum.Segments != 3 {
		t.Fatalf("got %v, %+v, %v", got, sum, err)
	}
}

func TestRemoveBefore(t *testing.T) {
	fss(t, func(t *testing.T, fsys vfs.FS, dir string) {
		w := mustOpen(t, fsys, dir, Options{SegmentSize: 1024})
		ctx := context.Background()
		for c := uint64(1); c <= 60; c++ {
			if err := w.Commit(ctx, c, payloadFor(c)); err != nil {
				t.Fatal(err)
			}
		}
		before := w.Stats().Segments
		if n, err := w.RemoveBefore(0); err != nil || n != 0 {
			t.Fatalf("RemoveBefore(0) removed %d: %v", n, err)
		}
		n, err := w.RemoveBefore(30)
		if err != nil || n == 0 {
			t.Fatalf("RemoveBefore(30) removed %d: %v", n, err)
		}
		if after := w.Stats().Segments; after != before-n {
			t.Fatalf("segments %d -> %d after removing %d", before, after, n)
		}
		w.Close()
		got, _, err := replayAll(t, fsys, dir, 30)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, seq(31, 60))
		all, _, _ := replayAll(t, fsys, dir, 0)
		if all[0].commit > 31 || all[0].commit == 1 {
			t.Fatalf("first remaining commit %d", all[0].commit)
		}
		// A new Writer learns the older segments' commits by reading them.
		w = mustOpen(t, fsys, dir, Options{SegmentSize: 1024})
		n, err = w.RemoveBefore(1000)
		if err != nil || w.Stats().Segments != 1 {
			t.Fatalf("RemoveBefore(1000) removed %d, %d left: %v", n, w.Stats().Segments, err)
		}
		if err := w.Commit(ctx, 61, payloadFor(61)); err != nil {
			t.Fatal(err)
		}
		w.Close()
		got, _, err = replayAll(t, fsys, dir, 60)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, []uint64{61})
	})
}

func TestRemoveBeforeIsDurable(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{SegmentSize: 512})
	defer w.Close()
	for c := uint64(1); c <= 40; c++ {
		w.Commit(context.Background(), c, payloadFor(c))
	}
	if _, err := w.RemoveBefore(20); err != nil {
		t.Fatal(err)
	}
	got, _, err := replayAll(t, m.CrashClone(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].commit == 1 || got[len(got)-1].commit != 40 {
		t.Fatalf("after a crash the log runs %d..%d", got[0].commit, got[len(got)-1].commit)
	}
}

// slowSync makes every Sync take a while, as a disk does, so concurrent
// writers pile up behind it and share fsyncs.
type slowSync struct {
	vfs.FS
	d time.Duration
}

func (s slowSync) Create(name string) (vfs.File, error) {
	f, err := s.FS.Create(name)
	return wrapSlow(f, err, s.d)
}
func (s slowSync) OpenAppend(name string) (vfs.File, error) {
	f, err := s.FS.OpenAppend(name)
	return wrapSlow(f, err, s.d)
}

type slowFile struct {
	vfs.File
	d time.Duration
}

func wrapSlow(f vfs.File, err error, d time.Duration) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return slowFile{f, d}, nil
}

func (f slowFile) Sync() error { time.Sleep(f.d); return f.File.Sync() }

func TestGroupCommitSixteenWriters(t *testing.T) {
	m, dir := newMem(t)
	fsys := slowSync{m, time.Millisecond}
	w := mustOpen(t, fsys, dir, Options{SegmentSize: 16 << 10})
	const writers, each = 16, 100
	var (
		mu   sync.Mutex
		next uint64 = 1
		wg   sync.WaitGroup
	)
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				// Take the number and submit under one lock, as the
				// engine's commit pipeline does; wait outside it.
				mu.Lock()
				c := next
				next++
				p, err := w.Submit(c, payloadFor(c))
				mu.Unlock()
				if err == nil {
					err = p.Wait(context.Background())
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := w.Stats()
	w.Close()
	if st.Records != writers*each || st.Batches*2 > st.Records || st.MaxBatch < 2 {
		t.Fatalf("no batching: %+v", st)
	}
	var hist uint64
	for _, n := range st.BatchSizes {
		hist += n
	}
	if hist != st.Batches {
		t.Fatalf("histogram holds %d batches, want %d", hist, st.Batches)
	}
	got, _, err := replayAll(t, m, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, seq(1, writers*each))
}

// TestGroupCommitConcurrentCommit has 16 goroutines call Commit directly
// with their own commit numbers: each record replays exactly once, and each
// goroutine's records in the order it made them.
func TestGroupCommitConcurrentCommit(t *testing.T) {
	fss(t, func(t *testing.T, fsys vfs.FS, dir string) {
		w := mustOpen(t, fsys, dir, Options{SegmentSize: 32 << 10})
		const writers, each = 16, 40
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for g := range uint64(writers) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range uint64(each) {
					c := g*1000 + i + 1
					if err := w.Commit(context.Background(), c, payloadFor(c)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		w.Close()
		got, _, err := replayAll(t, fsys, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != writers*each {
			t.Fatalf("replayed %d records", len(got))
		}
		last := map[uint64]uint64{}
		for _, r := range got {
			g := (r.commit - 1) / 1000
			if r.commit <= last[g] {
				t.Fatalf("writer %d: commit %d after %d", g, r.commit, last[g])
			}
			last[g] = r.commit
			if !bytes.Equal(r.payload, payloadFor(r.commit)) {
				t.Fatalf("commit %d: payload differs", r.commit)
			}
		}
		for g := range uint64(writers) {
			if last[g] != g*1000+each {
				t.Fatalf("writer %d ends at %d", g, last[g])
			}
		}
	})
}

func TestNoOSImport(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := vfs.ReadFile(vfs.OS{}, name)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("\t\"os\"\n")) || bytes.Contains(src, []byte("import \"os\"")) {
			t.Errorf("%s imports os; files go through vfs (invariant 8)", name)
		}
	}
	if len(names) == 0 {
		t.Fatal("no sources found")
	}
}

// syncPause yields for about the time of one slowSync fsync.
func syncPause() { time.Sleep(100 * time.Microsecond) }

// TestAppendFlushesWhenLarge checks unsynced appends do not pile up in
// memory without bound: past appendKick bytes the flusher writes them.
func TestAppendFlushesWhenLarge(t *testing.T) {
	m, dir := newMem(t)
	w := mustOpen(t, m, dir, Options{})
	defer w.Close()
	// Random, so that the framed bytes, which the threshold counts, are
	// not compressed far below it.
	payload := make([]byte, 64<<10)
	rand.NewChaCha8([32]byte{2}).Read(payload)
	for c := uint64(1); c <= appendKick/uint64(len(payload))+1; c++ {
		if err := w.Append(c, payload); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; w.Stats().Batches == 0; i++ {
		if i == 500 {
			t.Fatal("appends past the threshold were not flushed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// storedLen is the length payload takes on disk, compressed or not.
func storedLen(payload []byte) int {
	var buf []byte
	stored, _ := compress(&buf, payload)
	return len(stored)
}
