package wal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/bits"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/vfs"
)

// Options configure a Writer. The zero value is the defaults.
type Options struct {
	// SegmentSize is the size at which the Writer starts a new segment,
	// DefaultSegmentSize if zero. A segment exceeds it only when a single
	// batch is larger.
	SegmentSize int64
	// Logger receives a line when Open cuts a torn tail or when cleaning up
	// after a failed write fails too; slog.Default() if nil.
	Logger *slog.Logger
	// Preallocate has a background goroutine write the next segment full
	// of zeros and sync it before the Writer needs it, so a batch's fsync
	// writes data into blocks the file already has instead of growing it:
	// no metadata to journal (on this project's ext4 test machine a 68 KB
	// batch syncs in ~110 µs instead of ~200, a 100-byte one in ~95
	// instead of ~135). Each segment's bytes are then written twice, once
	// as zeros off the commit path.
	Preallocate bool
}

// preallocName is the file a Writer prepares its next segment in; the
// name is not a segment's, so listing and Replay ignore it.
const preallocName = "next-segment.tmp"

// zeroChunk is what a preallocated segment is written with.
var zeroChunk = make([]byte, 256<<10)

// batchBuckets is the number of buckets of Stats.BatchSizes.
const batchBuckets = 12

// appendKick is how many bytes Append lets accumulate before it starts a
// flush without waiting for Sync, bounding the memory unsynced appends use.
const appendKick = 1 << 20

// spareLimit caps the batch buffer a Writer keeps for reuse, so one huge
// batch does not pin its memory for the Writer's lifetime.
const spareLimit = 8 << 20

// Stats count what a Writer made durable, for tests and metrics.
type Stats struct {
	Records  uint64 // records made durable
	Bytes    uint64 // framed record bytes made durable (headers included)
	Batches  uint64 // batches written; each ends with one fsync
	Fsyncs   uint64 // successful fsyncs of segment files
	DirSyncs uint64 // successful fsyncs of the log directory
	// Preallocated counts segments started from a prepared, zero-filled
	// file (Options.Preallocate).
	Preallocated uint64
	// Led counts the batches of Batches written by a committer for its
	// own record (Pending.Start or Pending.Wait after SubmitCompressed)
	// rather than by the flusher.
	Led uint64
	// Started counts the batches of Led a committer wrote early
	// (Pending.Start), syncing them only when it waited.
	Started  uint64
	MaxBatch int // records in the largest batch
	// BatchSizes[i] counts batches of [2^i, 2^(i+1)) records; the last
	// bucket also holds every larger batch.
	BatchSizes [batchBuckets]uint64
	Segments   int // segment files in the log now
	// SyncLatency[i] counts successful segment fsyncs that took less than
	// SyncBucketBound(i) (and at least the bound before); the last bucket
	// also holds every slower one. SyncTime is their total duration. They
	// feed the WAL fsync histogram of /metrics.
	SyncLatency [SyncBuckets]uint64
	SyncTime    time.Duration
}

// SyncBuckets is the number of buckets of Stats.SyncLatency.
const SyncBuckets = 16

// SyncBucketBound is the exclusive upper bound of Stats.SyncLatency[i]:
// 64µs doubling up to about 2.1s, which spans a tmpfs to a slow disk.
func SyncBucketBound(i int) time.Duration { return time.Duration(64<<i) * time.Microsecond }

// Writer appends records to the log in dir. Records reach the disk in
// batches: a background flusher (or a committer waiting on a small record
// of its own, see SubmitCompressed) takes every record appended since the
// last batch, writes them with one write and makes them durable with one
// fsync (group commit, invariant 6). It is safe for concurrent use.
//
// A failed write or fsync puts the Writer in a failed state: every caller
// waiting on that batch and every later call gets the same error (invariant
// 7). To recover, the engine closes the Writer and opens a new one, which
// cuts whatever the failed batch left at the tail; everything acknowledged
// before the failure is intact, and the engine's memtables already hold it,
// so no replay is needed (an engine that cannot trust its memory restarts
// instead: Replay, then Open). The commit numbers of failed records must not be
// reused (SPEC R5.1): the flusher truncates a failed batch away, but if that
// cleanup fails as well the records may still replay after a restart.
type Writer struct {
	fsys   vfs.FS
	dir    string
	opts   Options
	lock   io.Closer
	kick   chan struct{}
	exited chan struct{}

	// flushMu is held by whoever writes a batch: the flusher goroutine,
	// or a committer leading the flush of its own batch (Pending.Wait).
	flushMu sync.Mutex

	// These are used only under flushMu after Open returns; Close takes
	// it after the flusher has exited.
	seg         vfs.File
	segNum      uint64
	segSize     int64
	segMax      uint64
	needDirSync bool
	// segCap is the active segment's preallocated size, 0 if it was not
	// preallocated; rotate cuts the unwritten rest off before sealing it.
	segCap int64
	// prep reports the result of the goroutine preparing the next
	// segment (Options.Preallocate); nil when none is running. prepReady
	// says a prepared segment waits in preallocName.
	prep      chan error
	prepReady bool
	// prepFailed is the segment during which a preparation failed; none
	// is tried again until the next one, so a full device is not filled
	// with zeros after every batch.
	prepFailed uint64

	removeMu sync.Mutex // serialises RemoveBefore

	// appended counts the framed bytes appended since Open (Appended).
	appended atomic.Uint64

	mu struct {
		sync.Mutex
		pending  *batch // records not yet handed to the flusher
		inflight *batch // the batch being written, if any
		spare    []byte
		err      error // sticky failure
		closing  bool
		stats    Stats
		sealed   []sealedSegment // segments before the active one, oldest first
	}
}

type sealedSegment struct {
	num       uint64
	maxCommit uint64
	known     bool // maxCommit has been read
}

// batch is a group of records written and synced together. err is set
// before done is closed and read only after.
type batch struct {
	buf       []byte
	records   int
	maxCommit uint64
	done      chan struct{}
	err       error
}

// Pending is a record submitted to the log but not yet known durable. It is
// a small value; copying it is fine.
type Pending struct {
	b *batch
	w *Writer // set when Wait may write the batch itself (SubmitCompressed)
	// early says Start may write the batch now (a large record).
	early bool
	// st is set once Start has written the batch; Start then holds
	// flushMu until Wait has synced it.
	st *started
}

// started is a batch Start wrote: good is where the segment ended before
// it (what a failed sync cuts back to), err a failure of the write.
type started struct {
	good int64
	err  error
}

// Start writes the record's batch now, on the calling goroutine, if the
// record is large (SubmitCompressed), no flush is running and the batch is
// not taken yet, and asks the device to start writing it
// (vfs.StartWriteback) without waiting; Wait then syncs it, by which time
// the I/O has overlapped what the caller did in between. Otherwise it
// wakes the flusher, which writes the batch. After Start the caller must
// Wait: until then no other batch is written.
//
// Why not leave it to the flusher: a woken goroutine runs when a
// processor is free, and with the cores busy (a committer on one, a
// background flush or merge on the other) that is when the committer
// itself waits, so the write the flusher was woken for began only then
// (bench/'s ingest: ~0.8 ms from the wake to the write, per 1 000-row
// commit).
func (p *Pending) Start() {
	if p.w == nil || !p.early || p.st != nil {
		return
	}
	w := p.w
	if w.flushMu.TryLock() {
		if b, err, ok := w.take(p.b); ok {
			st := &started{err: err}
			if err == nil {
				st.good, st.err = w.writeData(b)
				if st.err == nil {
					vfs.StartWriteback(w.seg, st.good, int64(len(b.buf)))
				}
			}
			p.st = st
			return
		}
		w.flushMu.Unlock()
	}
	w.wake()
}

// Wait returns nil once an fsync covering the record has succeeded, or the
// error that failed its batch. If ctx ends first it returns an error
// wrapping ctx.Err(); the record may still become durable.
func (p Pending) Wait(ctx context.Context) error {
	if p.st != nil {
		// Start wrote the batch and holds flushMu: nobody else can sync
		// it, so it is synced whatever ctx says.
		p.w.syncStarted(p.b, p.st)
		return p.b.err
	}
	if p.w != nil && (ctx.Err() != nil || !p.w.lead(p.b)) {
		p.w.wake() // whoever holds the flush, the flusher takes b after it
	}
	select {
	case <-p.b.done:
		return p.b.err
	case <-ctx.Done():
		return fmt.Errorf("wal: waiting for fsync: outcome unknown: %w", ctx.Err())
	}
}

// Open opens the log in dir for appending, creating dir and the first
// segment if needed. It takes the log's lock (another Open or a Replay
// fails while the Writer is open), cuts a torn tail of the last segment the
// way Replay does, and continues appending to that segment. Open does not
// read older segments; Replay validates those.
func Open(fsys vfs.FS, dir string, opts Options) (*Writer, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	_, statErr := fsys.Stat(dir)
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
			return nil, fmt.Errorf("wal: open %s: %w", dir, err)
		}
	}
	lock, err := fsys.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	w := &Writer{fsys: fsys, dir: dir, opts: opts, lock: lock,
		kick: make(chan struct{}, 1), exited: make(chan struct{})}
	if err := w.resume(); err != nil {
		if w.seg != nil {
			w.seg.Close()
		}
		lock.Close()
		return nil, err
	}
	w.mu.pending = w.newBatchLocked()
	go w.run()
	return w, nil
}

// startPrealloc starts preparing the next segment, if the Writer
// preallocates, the active segment is a quarter full and no preparation
// is running or ready. Waiting for the quarter keeps a log that is
// opened, written a little and closed (most of the tests' engines) from
// writing a segment of zeros it never uses, and still leaves the
// preparation three quarters of a segment's writes to finish in.
func (w *Writer) startPrealloc() {
	if !w.opts.Preallocate || w.prep != nil || w.prepReady || w.prepFailed == w.segNum ||
		w.segSize < w.opts.SegmentSize/4 {
		return
	}
	ch := make(chan error, 1)
	w.prep = ch
	go func() { ch <- w.prealloc() }()
}

// prealloc writes preallocName full of zeros, SegmentSize bytes, and
// syncs it. Its name need not be durable: rotate renames it and the
// first batch's SyncDir makes the new name durable. A failed one is
// removed, so a device that filled up gets its space back for the log.
func (w *Writer) prealloc() (err error) {
	name := filepath.Join(w.dir, preallocName)
	f, err := w.fsys.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			w.fsys.Remove(name) //nolint:errcheck // best effort; Close removes it too
		}
	}()
	for left := w.opts.SegmentSize; left > 0 && err == nil; {
		n := min(left, int64(len(zeroChunk)))
		_, err = f.Write(zeroChunk[:n])
		left -= n
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// preallocReady reports whether a prepared segment is ready, without
// waiting. A failed preparation is logged and the Writer goes on growing
// its segments as it would without Options.Preallocate; the next segment
// tries again.
func (w *Writer) preallocReady() bool {
	if w.prep != nil {
		select {
		case err := <-w.prep:
			w.prep = nil
			if err != nil {
				w.prepFailed = w.segNum
				w.opts.Logger.Warn("wal: could not preallocate a segment", "err", err)
			} else {
				w.prepReady = true
			}
		default:
		}
	}
	return w.prepReady
}

// takePrealloc returns the prepared segment renamed to segment n, open at
// offset 0, or nil when none is ready.
func (w *Writer) takePrealloc(n uint64) (vfs.File, error) {
	if !w.preallocReady() {
		return nil, nil
	}
	w.prepReady = false
	if err := w.fsys.Rename(filepath.Join(w.dir, preallocName), w.path(n)); err != nil {
		w.prepFailed = n
		w.opts.Logger.Warn("wal: could not use the preallocated segment", "err", err)
		return nil, nil
	}
	// Should this fail, the renamed file holds only zeros: Open cuts it
	// as the torn start of a segment.
	return w.fsys.OpenReadWrite(w.path(n))
}

func (w *Writer) path(n uint64) string { return filepath.Join(w.dir, SegmentName(n)) }

// resume makes the last segment the active one, cutting a torn tail, or
// creates segment 1 in an empty log.
func (w *Writer) resume() error {
	nums, err := listSegments(w.fsys, w.dir)
	if err != nil {
		return err
	}
	var last uint64 = 1
	var sc segmentScan
	if len(nums) > 0 {
		last = nums[len(nums)-1]
		for _, n := range nums[:len(nums)-1] {
			w.mu.sealed = append(w.mu.sealed, sealedSegment{num: n})
		}
		if sc, err = w.repair(last); err != nil {
			return err
		}
	}
	if sc.end >= headerSize && sc.version != formatVersion {
		// An older format's segment is sealed as it is and the records
		// go on in a new one: each segment has one format.
		w.mu.sealed = append(w.mu.sealed, sealedSegment{num: last, maxCommit: sc.maxCommit, known: true})
		last++
		if w.seg, err = w.fsys.Create(w.path(last)); err != nil {
			return fmt.Errorf("wal: open: %w", err)
		}
		sc = segmentScan{}
	} else if w.seg, err = w.fsys.OpenAppend(w.path(last)); err != nil {
		return fmt.Errorf("wal: open: %w", err)
	}
	w.segNum, w.segSize, w.segMax = last, sc.end, sc.maxCommit
	if sc.end < headerSize {
		// An empty (or cut to empty) segment gets its header now.
		if err := w.writeHeader(); err != nil {
			return err
		}
		if err := w.seg.Sync(); err != nil {
			return fmt.Errorf("wal: open: sync %s: %w", SegmentName(last), err)
		}
	}
	// The entry may date from a run that crashed before syncing the
	// directory; make it durable before anything in it is acknowledged.
	if err := w.fsys.SyncDir(w.dir); err != nil {
		return fmt.Errorf("wal: open: %w", err)
	}
	return nil
}

// repair scans the last segment and cuts its torn tail, as Replay would.
func (w *Writer) repair(n uint64) (segmentScan, error) {
	f, err := w.fsys.OpenReadWrite(w.path(n))
	if err != nil {
		return segmentScan{}, fmt.Errorf("wal: open: %w", err)
	}
	defer f.Close()
	sc, err := scanSegment(f, SegmentName(n), n, true, false, func(uint64, []byte) error { return nil })
	switch {
	case err != nil:
	case sc.torn != "":
		err = cutTail(f, SegmentName(n), sc, w.opts.Logger)
	case sc.zeroTail:
		// The unwritten rest of a preallocated segment: cut quietly,
		// so appends (which go to the file's end) follow the last
		// record.
		if err = f.Truncate(sc.end); err == nil {
			err = f.Sync()
		}
		if err != nil {
			err = fmt.Errorf("wal: open: cut the unwritten rest of %s: %w", SegmentName(n), err)
		}
	}
	return sc, err
}

func (w *Writer) writeHeader() error {
	n, err := w.seg.Write(appendHeader(nil, w.segNum))
	w.segSize += int64(n)
	if err != nil {
		return fmt.Errorf("wal: write header of %s: %w", SegmentName(w.segNum), err)
	}
	return nil
}

func (w *Writer) newBatchLocked() *batch {
	b := &batch{buf: w.mu.spare, done: make(chan struct{})}
	w.mu.spare = nil
	return b
}

func (w *Writer) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// appendLocked frames a record into the pending batch; stored is payload
// as compress returned it.
func (w *Writer) appendLocked(commit uint64, payload, stored []byte, s2 bool) (*batch, error) {
	switch {
	case w.mu.closing:
		return nil, ErrClosed
	case w.mu.err != nil:
		return nil, w.mu.err
	case len(payload) > MaxPayload:
		return nil, fmt.Errorf("%w: commit %d has %d bytes, the limit is %d", ErrTooLarge, commit, len(payload), MaxPayload)
	}
	b := w.mu.pending
	b.buf = appendRecord(b.buf, commit, stored, s2, b.records == 0)
	w.appended.Add(uint64(recordHeaderSize + len(stored)))
	b.records++
	b.maxCommit = max(b.maxCommit, commit)
	return b, nil
}

// Append adds a record without waiting for it to be durable; Sync waits.
// Records are written in the order Append, Submit and Commit calls take
// the Writer's lock. The payload is copied before Append returns.
func (w *Writer) Append(commit uint64, payload []byte) error {
	scratch := encoders.Get().(*[]byte)
	defer encoders.Put(scratch)
	stored, s2 := compress(scratch, payload)
	w.mu.Lock()
	b, err := w.appendLocked(commit, payload, stored, s2)
	big := err == nil && len(b.buf) >= appendKick
	w.mu.Unlock()
	if big {
		w.wake()
	}
	return err
}

// Submit adds a record, starts a flush and returns at once; the Pending's
// Wait reports when the record is durable. A commit pipeline that owns
// commit order calls Submit in that order and lets each session Wait, so
// the log is in commit order and no fsync blocks the pipeline.
func (w *Writer) Submit(commit uint64, payload []byte) (Pending, error) {
	scratch := encoders.Get().(*[]byte)
	defer encoders.Put(scratch)
	stored, s2 := compress(scratch, payload)
	w.mu.Lock()
	b, err := w.appendLocked(commit, payload, stored, s2)
	w.mu.Unlock()
	if err != nil {
		return Pending{}, err
	}
	w.wake()
	return Pending{b: b}, nil
}

// Compressed is a payload made ready for the log ahead of SubmitCompressed
// (Compress): a caller that appends records in an order it keeps under a
// lock of its own compresses outside that lock, leaving only the framing
// and the copy into the batch inside it. The record is the same as
// Submit's of the same payload.
type Compressed struct {
	payload, stored []byte
	s2              bool
	scratch         *[]byte
}

// Compress compresses payload as Submit would. payload must not change
// until the Compressed is submitted; Release returns its buffer.
func Compress(payload []byte) Compressed {
	scratch := encoders.Get().(*[]byte)
	stored, s2 := compress(scratch, payload)
	return Compressed{payload: payload, stored: stored, s2: s2, scratch: scratch}
}

// Ready reports whether c holds a compressed payload, not yet released.
func (c *Compressed) Ready() bool { return c.scratch != nil }

// Release returns c's buffer for reuse; c must not be used after.
func (c *Compressed) Release() {
	if c.scratch != nil {
		encoders.Put(c.scratch)
		*c = Compressed{}
	}
}

// SubmitCompressed is Submit of a payload already compressed by Compress,
// with one difference: it does not start a flush, so the caller must
// Wait (or Sync). A small record's (stored in under leadMax bytes) Wait
// writes and syncs the batch itself when no flush is running; a larger
// record's batch is written by Pending.Start, which the caller calls when
// it has work to do before it waits (its fsync overlaps that work), and
// otherwise by Wait as a small one's.
func (w *Writer) SubmitCompressed(commit uint64, c *Compressed) (Pending, error) {
	w.mu.Lock()
	b, err := w.appendLocked(commit, c.payload, c.stored, c.s2)
	w.mu.Unlock()
	if err != nil {
		return Pending{}, err
	}
	return Pending{b: b, w: w, early: len(c.stored) >= leadMax}, nil
}

// leadMax is the stored size from which Pending.Start writes the batch
// rather than leave it to Wait: a one-row commit's record is a few hundred
// bytes, a 1 000-row one tens of KB.
const leadMax = 16 << 10

// Commit adds a record and returns once an fsync covering it has succeeded.
// Many goroutines may call Commit at once; their records share batches and
// fsyncs. If ctx is already done nothing is written; if it ends while
// waiting, see Pending.Wait.
func (w *Writer) Commit(ctx context.Context, commit uint64, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	scratch := encoders.Get().(*[]byte)
	stored, s2 := compress(scratch, payload)
	w.mu.Lock()
	b, err := w.appendLocked(commit, payload, stored, s2)
	w.mu.Unlock()
	encoders.Put(scratch)
	if err != nil {
		return err
	}
	w.wake()
	return Pending{b: b}.Wait(ctx)
}

// Sync returns once every record appended before it is durable.
func (w *Writer) Sync() error {
	w.mu.Lock()
	if w.mu.closing {
		w.mu.Unlock()
		return ErrClosed
	}
	b := w.mu.pending
	if b.records == 0 {
		b = w.mu.inflight // batches finish in order: waiting on the newest suffices
	}
	err := w.mu.err
	w.mu.Unlock()
	if b == nil {
		return err
	}
	w.wake()
	<-b.done
	return b.err
}

// Appended returns the bytes of records (framing included, payloads as
// stored) appended since Open, durable or not. It only grows; the engine
// compares it with its value at the last flush to bound how much log a
// flush leaves behind it (storage flush.go, walFlushBytes). Cheap: one
// atomic load.
func (w *Writer) Appended() uint64 { return w.appended.Load() }

// Err returns the error that failed the Writer, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mu.err
}

// Stats returns a snapshot of the counters.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.mu.stats
	s.Segments = len(w.mu.sealed) + 1
	return s
}

// run is the flusher: woken by a kick, it writes and syncs one batch at
// a time until none is pending, and returns once Close has asked and
// nothing is left. It writes only when kicked: a small record that
// SubmitCompressed left for its own Wait to write is not taken from under
// that Wait by a flusher that happens to be looping (a kick comes from
// every Submit and Commit, from Sync and Close, and from a Wait that
// cannot lead). No kick is lost: wake follows the append it announces,
// so either this loop sees the record after taking the kick, or the kick
// waits in the channel for the next round.
func (w *Writer) run() {
	defer close(w.exited)
	for {
		<-w.kick
		for {
			w.mu.Lock()
			empty, closing := w.mu.pending.records == 0, w.mu.closing
			w.mu.Unlock()
			if empty {
				if closing {
					return // drained; appends are refused from here on
				}
				break
			}
			w.flushMu.Lock()
			if b, err, ok := w.take(nil); ok {
				w.flush(b, err)
			}
			w.flushMu.Unlock()
		}
	}
}

// lead writes and syncs b on the calling goroutine if no flush is
// running and b has not been taken yet, and reports whether it did: a
// committer waiting for a lone small record then pays no hand-off to the
// flusher goroutine and back. Otherwise the flusher or another leader
// writes it.
func (w *Writer) lead(b *batch) bool {
	if !w.flushMu.TryLock() {
		return false
	}
	defer w.flushMu.Unlock()
	if b, err, ok := w.take(b); ok {
		w.flush(b, err)
		if b.err == nil { // counted as Batches is: only batches made durable
			w.mu.Lock()
			w.mu.stats.Led++
			w.mu.Unlock()
		}
		return true
	}
	return false
}

// take hands the pending batch to the caller, which holds flushMu, if it
// has records (and is want, when want is not nil). err is the Writer's
// sticky failure, if any.
func (w *Writer) take(want *batch) (b *batch, err error, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b = w.mu.pending
	if b.records == 0 || want != nil && b != want {
		return nil, nil, false
	}
	w.mu.pending = w.newBatchLocked()
	w.mu.inflight = b
	return b, w.mu.err, true
}

// flush writes and syncs b (unless err already failed the Writer),
// counts it and releases its waiters. The caller holds flushMu.
func (w *Writer) flush(b *batch, err error) {
	if err == nil {
		err = w.write(b)
	}
	w.finish(b, err)
}

// syncStarted syncs b, which Start wrote (st), counts it and releases its
// waiters and flushMu.
func (w *Writer) syncStarted(b *batch, st *started) {
	err := st.err
	if err == nil {
		err = w.syncData(b, st.good)
	}
	w.finish(b, err)
	if err == nil {
		w.mu.Lock()
		w.mu.stats.Led++
		w.mu.stats.Started++
		w.mu.Unlock()
	}
	w.flushMu.Unlock()
}

// finish counts b, written and synced unless err, and releases its
// waiters. The caller holds flushMu.
func (w *Writer) finish(b *batch, err error) {

	w.mu.Lock()
	w.mu.inflight = nil
	if err != nil {
		if w.mu.err == nil {
			w.mu.err = err
		}
	} else {
		st := &w.mu.stats
		st.Records += uint64(b.records)
		st.Bytes += uint64(len(b.buf))
		st.Batches++
		st.Fsyncs++
		st.MaxBatch = max(st.MaxBatch, b.records)
		st.BatchSizes[min(bits.Len(uint(b.records))-1, batchBuckets-1)]++
	}
	if cap(b.buf) <= spareLimit {
		w.mu.spare = b.buf[:0]
	}
	b.buf = nil
	w.mu.Unlock()
	b.err = err
	close(b.done)
}

// write puts one batch in the active segment, rotating first if it would
// overflow, and syncs it (and the directory after a rotation).
func (w *Writer) write(b *batch) error {
	good, err := w.writeData(b)
	if err != nil {
		return err
	}
	return w.syncData(b, good)
}

// writeData is write's first half: it puts b in the active segment,
// rotating first if it would overflow, and returns where the segment
// ended before it. A failed write is cut off again.
func (w *Writer) writeData(b *batch) (int64, error) {
	// A segment that was not preallocated (the first of a new log, the
	// one Open resumed) is sealed early once a prepared one is ready:
	// a few small segments cost nothing, growing ones cost every fsync.
	if w.segSize > headerSize && (w.segSize+int64(len(b.buf)) > w.opts.SegmentSize ||
		w.segCap == 0 && w.opts.Preallocate && w.preallocReady()) {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	good := w.segSize
	n, err := w.seg.Write(b.buf)
	w.segSize += int64(n)
	if err != nil {
		w.undo(good)
		return good, fmt.Errorf("wal: write %d records to %s: %w", b.records, SegmentName(w.segNum), err)
	}
	return good, nil
}

// syncData is write's second half: it syncs the active segment, which
// writeData left ending in b (good before it), and the directory after a
// rotation. A failed sync cuts b off again.
func (w *Writer) syncData(b *batch, good int64) error {
	start := time.Now()
	err := w.seg.Sync()
	if err != nil {
		err = fmt.Errorf("sync: %w", err)
	} else {
		w.observeSync(time.Since(start))
	}
	if err == nil && w.needDirSync {
		if err = w.fsys.SyncDir(w.dir); err == nil {
			w.needDirSync = false
			w.mu.Lock()
			w.mu.stats.DirSyncs++
			w.mu.Unlock()
		}
	}
	if err != nil {
		w.undo(good)
		return fmt.Errorf("wal: write %d records to %s: %w", b.records, SegmentName(w.segNum), err)
	}
	w.segMax = max(w.segMax, b.maxCommit)
	w.startPrealloc()
	return nil
}

// observeSync counts one successful segment fsync that took d.
func (w *Writer) observeSync(d time.Duration) {
	i := 0
	for i < SyncBuckets-1 && d >= SyncBucketBound(i) {
		i++
	}
	w.mu.Lock()
	w.mu.stats.SyncLatency[i]++
	w.mu.stats.SyncTime += d
	w.mu.Unlock()
}

// undo cuts a failed batch off the active segment, best effort, so its
// records do not replay as if they had been acknowledged.
func (w *Writer) undo(good int64) {
	w.segCap = 0
	err := w.seg.Truncate(good)
	if err == nil {
		err = w.seg.Sync()
	}
	if err != nil {
		w.opts.Logger.Warn("wal: could not cut a failed batch; its records may replay",
			"segment", SegmentName(w.segNum), "offset", good, "err", err)
		return
	}
	w.segSize = good
}

// rotate seals the active segment, which every earlier batch has synced,
// and starts the next. The new name is made durable by the SyncDir after
// the first batch's fsync, before any record in it is acknowledged.
func (w *Writer) rotate() error {
	if w.segCap > w.segSize {
		// A sealed segment ends at its last record: only the last
		// segment may have a zero tail (doc.go, invariant 3), and the
		// cut is synced before the next segment exists.
		if err := w.seg.Truncate(w.segSize); err != nil {
			return fmt.Errorf("wal: seal %s: %w", SegmentName(w.segNum), err)
		}
		if err := w.seg.Sync(); err != nil {
			return fmt.Errorf("wal: seal %s: sync: %w", SegmentName(w.segNum), err)
		}
	}
	if err := w.seg.Close(); err != nil {
		return fmt.Errorf("wal: close %s: %w", SegmentName(w.segNum), err)
	}
	w.seg = nil
	w.mu.Lock()
	w.mu.sealed = append(w.mu.sealed, sealedSegment{num: w.segNum, maxCommit: w.segMax, known: true})
	w.mu.Unlock()
	w.segNum++
	f, err := w.takePrealloc(w.segNum)
	w.segCap = 0
	if f != nil {
		w.segCap = w.opts.SegmentSize
		w.mu.Lock()
		w.mu.stats.Preallocated++
		w.mu.Unlock()
	} else if err == nil {
		f, err = w.fsys.Create(w.path(w.segNum))
	}
	if err != nil {
		return fmt.Errorf("wal: rotate: %w", err)
	}
	w.seg, w.segSize, w.segMax, w.needDirSync = f, 0, 0, true
	if err := w.writeHeader(); err != nil {
		// Best effort: a segment holding no whole header and nothing
		// else is cut at Open in any case.
		if w.seg.Truncate(0) == nil {
			w.segSize = 0
		}
		return err
	}
	return nil
}

// RemoveBefore removes whole sealed segments, oldest first, while every
// record in them has a commit at or before commit (a checkpoint the
// engine has flushed), then syncs the directory. The active segment is
// never removed, and removal stops at the first segment that must stay, so
// the log remains a run of consecutive segments (invariant 5). It returns
// how many segments it removed.
func (w *Writer) RemoveBefore(commit uint64) (int, error) {
	w.removeMu.Lock()
	defer w.removeMu.Unlock()
	w.mu.Lock()
	if w.mu.closing {
		w.mu.Unlock()
		return 0, ErrClosed
	}
	sealed := append([]sealedSegment(nil), w.mu.sealed...)
	w.mu.Unlock()

	removed := 0
	var err error
	for i := range sealed {
		s := &sealed[i]
		if !s.known {
			if s.maxCommit, err = w.maxCommitOf(s.num); err != nil {
				break
			}
			s.known = true
		}
		if s.maxCommit > commit {
			break
		}
		if err = w.fsys.Remove(w.path(s.num)); err != nil {
			err = fmt.Errorf("wal: remove segment: %w", err)
			break
		}
		removed++
	}
	if removed > 0 {
		if serr := w.fsys.SyncDir(w.dir); serr != nil && err == nil {
			err = fmt.Errorf("wal: remove segments: %w", serr)
		}
	}
	// Rotation only appends to sealed and removeMu excludes other
	// removals, so the prefix we copied is still the prefix.
	w.mu.Lock()
	copy(w.mu.sealed, sealed)
	w.mu.sealed = w.mu.sealed[removed:]
	w.mu.Unlock()
	return removed, err
}

// maxCommitOf reads a sealed segment written before this Writer opened.
func (w *Writer) maxCommitOf(n uint64) (uint64, error) {
	f, err := w.fsys.Open(w.path(n))
	if err != nil {
		return 0, fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	sc, err := scanSegment(f, SegmentName(n), n, false, false, func(uint64, []byte) error { return nil })
	return sc.maxCommit, err
}

// Close flushes and syncs what was appended, stops the flusher, closes the
// active segment and releases the lock. It returns the error that failed
// the Writer, if any.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.mu.closing {
		w.mu.Unlock()
		return ErrClosed
	}
	w.mu.closing = true
	w.mu.Unlock()
	w.wake()
	<-w.exited
	// A committer leading a flush may still be writing.
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	err := w.mu.err
	w.mu.Unlock()
	if w.prep != nil {
		<-w.prep
		w.prep = nil
	}
	// Best effort: an unused prepared segment is only disk space, and a
	// next Open prepares a fresh one.
	w.fsys.Remove(filepath.Join(w.dir, preallocName)) //nolint:errcheck
	if w.seg != nil && err == nil && w.segCap > w.segSize {
		// Leave the active segment as long as its records, as Open
		// would; a failure here loses nothing (Open cuts zeros too).
		if terr := w.seg.Truncate(w.segSize); terr == nil {
			w.seg.Sync() //nolint:errcheck
		}
	}
	if w.seg != nil {
		if cerr := w.seg.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("wal: close: %w", cerr)
		}
	}
	if lerr := w.lock.Close(); lerr != nil && err == nil {
		err = fmt.Errorf("wal: unlock: %w", lerr)
	}
	return err
}
