package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// gateFS holds every fsync of a part file while its gate is shut, so a
// test can keep a background flush between its freeze and its manifest
// edit for as long as it needs, without timing.
type gateFS struct {
	vfs.FS
	mu      sync.Mutex
	gate    chan struct{} // nil: open
	waiting atomic.Int32  // part fsyncs held at the gate
}

func (g *gateFS) shut() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.mu.Unlock()
}

func (g *gateFS) open() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	f, err := g.FS.Create(name)
	if err != nil || !strings.Contains(filepath.ToSlash(name), "/parts/") {
		return f, err
	}
	return &gateFile{File: f, g: g}, nil
}

type gateFile struct {
	vfs.File
	g *gateFS
}

func (f *gateFile) Sync() error {
	f.g.mu.Lock()
	gate := f.g.gate
	f.g.mu.Unlock()
	if gate != nil {
		f.g.waiting.Add(1)
		<-gate
		f.g.waiting.Add(-1)
	}
	return f.File.Sync()
}

// waitFor polls cond until it holds; a condition that never does fails
// the test after a generous bound (a hang, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// flushModel is what the writes of flushWrite leave at each commit: write
// i (commit i+1, the table's DDL being commit 1) adds keys 20i..20i+19
// with v "v<i>", and a version of key 0 with idx i and v "v<i>", which
// wins over the earlier ones.
const flushModelRows = 20

func flushWrite(t testing.TB, tbl *catalog.Table, i int) Write {
	lines := []string{fmt.Sprintf("k=0 v=v%d idx=%d", i, i)}
	for j := 0; j < flushModelRows; j++ {
		lines = append(lines, fmt.Sprintf("k=%d v=v%d idx=1", i*flushModelRows+j, i))
	}
	w, err := versionWrite(tbl, "g", lines)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// checkFlushModel checks the reads of snap at commit n against the model:
// a scan (every key once, with its value), lookups of key 0 and of the
// newest key, and the versions of key 0.
func checkFlushModel(snap *Snapshot, tbl *catalog.Table, n uint64) error {
	ctx := context.Background()
	w := int(n) - 1 // writes in
	seen := map[int64]bool{}
	_, err := snap.Scan(ctx, ScanSpec{Table: tbl.ID, Cols: allCols(tbl), AsOf: n, BatchRows: 7}, func(b *types.Batch) error {
		ks, vs := b.Cols[0].Int64s(), b.Cols[1]
		for r := 0; r < b.Rows; r++ {
			k := ks[r]
			if seen[k] {
				return fmt.Errorf("key %d read twice", k)
			}
			seen[k] = true
			want := w
			if k != 0 {
				want = int(k) / flushModelRows
			}
			if got := string(vs.BytesAt(r)); got != fmt.Sprintf("v%d", want) {
				return fmt.Errorf("key %d reads %s, want v%d", k, got, want)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scan at %d: %w", n, err)
	}
	want := 0
	if w > 0 {
		want = 1 + flushModelRows*w
	}
	if len(seen) != want {
		return fmt.Errorf("scan at %d read %d keys, want %d", n, len(seen), want)
	}
	if w == 0 {
		return nil
	}
	for _, k := range []int64{0, int64(w*flushModelRows + flushModelRows - 1)} {
		row, ok, err := snap.Lookup(ctx, tbl.ID, []types.Value{types.NewInt64(k)}, ScanSpec{Cols: allCols(tbl), AsOf: n})
		if err != nil || !ok {
			return fmt.Errorf("lookup %d at %d: %v %v", k, n, ok, err)
		}
		want := w
		if k != 0 {
			want = int(k) / flushModelRows
		}
		if got := row[1].String(); got != fmt.Sprintf("v%d", want) {
			return fmt.Errorf("lookup %d at %d reads %s, want v%d", k, n, got, want)
		}
	}
	hi := types.AppendKey(nil, types.NewInt64(1))
	versions := 0
	_, err = snap.Versions(ctx, ScanSpec{Table: tbl.ID, Cols: allCols(tbl), AsOf: n, Ranges: []KeyRange{{Hi: hi}}}, func(b *types.Batch) error {
		versions += b.Rows
		return nil
	})
	if err != nil {
		return fmt.Errorf("versions at %d: %w", n, err)
	}
	if versions != w {
		return fmt.Errorf("versions of key 0 at %d: %d, want %d", n, versions, w)
	}
	return nil
}

// frozenShards counts the shards of st with a frozen memtable.
func frozenShards(st *state) int {
	n := 0
	for _, td := range st.tables {
		for _, sd := range td.shards {
			if sd.frozen != nil {
				n++
			}
		}
	}
	return n
}

// TestFlushInBackground holds a background flush at its part fsync and
// checks the handoff: the commit that froze the memtable returns; reads
// see every version once, from the frozen memtable, whether the snapshot
// was taken before the freeze, during the flush or after it; a commit
// that fills the next memtable waits for the flush instead of freezing a
// second one; and once the flush installs its part, the reads, a Check,
// and a reopen (replay after the new checkpoint) agree.
func TestFlushInBackground(t *testing.T) {
	dir := t.TempDir()
	gfs := &gateFS{FS: vfs.NewMem()}
	opts := Options{FS: gfs, MemtableBytes: 32 << 10, NoBackgroundMerges: true}
	e, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { gfs.open(); e.Close() }()
	ctx := t.Context()
	tbl := createKV(t, e)
	gfs.shut()
	commit := func(i int) uint64 {
		n, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, i)}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	flushing := func() *flushJob {
		e.ap.Lock()
		defer e.ap.Unlock()
		return e.fl.job
	}
	before := e.Snapshot()
	defer before.Release()
	i := 1
	for ; flushing() == nil; i++ {
		commit(i)
	}
	job := flushing()
	frozenAt := job.commit
	waitFor(t, "the flush to reach its part fsync", func() bool { return gfs.waiting.Load() > 0 })
	if got := frozenShards(e.cur.Load()); got != 1 {
		t.Fatalf("%d shards with a frozen memtable during the flush, want 1", got)
	}
	during := e.Snapshot()
	defer during.Release()
	for _, c := range []struct {
		snap *Snapshot
		n    uint64
	}{{before, before.Commit()}, {during, during.Commit()}, {during, frozenAt / 2}} {
		if err := checkFlushModel(c.snap, tbl, c.n); err != nil {
			t.Fatalf("during the flush: %v", err)
		}
	}

	// Fill the next memtable: the commit that finds it full waits.
	done := make(chan uint64, 1)
	go func() {
		var last uint64
		for j := i; ; j++ {
			n, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, j)}})
			if err != nil {
				t.Error(err)
				break
			}
			last = n
			e.ap.Lock()
			full := e.overLimit(e.cur.Load())
			e.ap.Unlock()
			if full {
				// The next commit is the one that must wait.
				n, err = e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, j+1)}})
				if err != nil {
					t.Error(err)
				}
				last = n
				break
			}
		}
		done <- last
	}()
	waitFor(t, "a commit to wait for the flush", func() bool {
		e.ap.Lock()
		defer e.ap.Unlock()
		return len(e.ap.ready) > 0 && e.mustWaitLocked()
	})
	if flushing() != job || frozenShards(e.cur.Load()) != 1 {
		t.Fatal("a second memtable was frozen while the first was being flushed")
	}
	select {
	case n := <-done:
		t.Fatalf("commit %d returned while its memtable was full and the flush held", n)
	default:
	}

	gfs.open()
	last := <-done
	if t.Failed() {
		t.FailNow()
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if ck := e.man.Snapshot().WALCheckpoint(); ck < last {
		t.Fatalf("WAL checkpoint %d after Flush, want %d", ck, last)
	}
	after := e.Snapshot()
	defer after.Release()
	if got := frozenShards(after.st); got != 0 {
		t.Fatalf("%d frozen memtables after Flush", got)
	}
	if len(after.Parts(tbl.ID)) < 2 {
		t.Fatalf("%d parts after two flushes", len(after.Parts(tbl.ID)))
	}
	for _, c := range []struct {
		snap *Snapshot
		n    uint64
	}{{before, before.Commit()}, {during, during.Commit()}, {after, frozenAt}, {after, frozenAt + 1}, {after, last}} {
		if err := checkFlushModel(c.snap, tbl, c.n); err != nil {
			t.Fatalf("after the flush: %v", err)
		}
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	before.Release()
	during.Release()
	after.Release()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	snap := e.Snapshot()
	defer snap.Release()
	if err := checkFlushModel(snap, tbl, last); err != nil {
		t.Fatalf("after reopen: %v", err)
	}
}

// TestCloseFinishesFlush: Close with a flush held mid-way finishes it, so
// the reopened engine has its part and replays only what followed.
func TestCloseFinishesFlush(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	t1 := h.table("t")
	for i := 1; i <= 3; i++ {
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, t1, i)}})
	}
	h.holdFlush()
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, t1, 4)}})
	h.reopen()
	snap := h.e.Snapshot()
	defer snap.Release()
	if n := len(snap.Parts(t1.ID)); n != 1 {
		t.Fatalf("%d parts after Close finished the held flush, want 1", n)
	}
	if ck := h.e.man.Snapshot().WALCheckpoint(); ck != 4 {
		t.Fatalf("WAL checkpoint %d, want 4 (the held flush's commit)", ck)
	}
	if err := checkFlushModel(snap, t1, 5); err != nil {
		t.Fatal(err)
	}
}

// TestReadsDuringBackgroundFlushes reads while a writer's commits flush in
// the background over and over (a small MemtableBytes), merges and splits
// run, and checks every read against the model at its snapshot's commit
// and at an earlier one. Run it with -race.
func TestReadsDuringBackgroundFlushes(t *testing.T) {
	dir := t.TempDir()
	e, tbl := openAutoKV(t, dir, Options{FS: vfs.NewMem(), MemtableBytes: 16 << 10, MergePartRows: 200, ShardSplitBytes: 64 << 10})
	defer e.Close()
	ctx := t.Context()
	const writes = 150
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var frozenSeen atomic.Int64
	errs := make(chan error, 4)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				snap := e.Snapshot()
				if frozenShards(snap.st) > 0 {
					frozenSeen.Add(1)
				}
				n := snap.Commit()
				err := checkFlushModel(snap, tbl, n)
				if err == nil && n > 2 {
					err = checkFlushModel(snap, tbl, 2+uint64(k)%(n-2))
				}
				snap.Release()
				if err != nil {
					errs <- err
					return
				}
			}
		}(r)
	}
	for i := 1; i <= writes; i++ {
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, i)}}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	snap := e.Snapshot()
	defer snap.Release()
	if err := checkFlushModel(snap, tbl, snap.Commit()); err != nil {
		t.Fatal(err)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads saw a frozen memtable; %d merges, %d splits, %d parts", frozenSeen.Load(), e.merges.Load(), e.splits.Load(), len(snap.Parts(tbl.ID)))
}

// TestSplitDuringFlush splits a SHARDS AUTO shard while a flush holds its
// memtable frozen: the split takes the frozen memtable along, and the
// flush, finding its shard gone, drops its part and still moves the
// checkpoint. Reads agree with the model throughout, no part file is left
// that the manifest does not name, and a reopen agrees too.
func TestSplitDuringFlush(t *testing.T) {
	h := newHarness(t)
	spec := kvSpec("t", catalog.ModeVersioned)
	spec.ShardsAuto = true
	h.create(spec)
	tbl := h.table("t")
	for i := 1; i <= 4; i++ {
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, i)}})
	}
	h.holdFlush()
	for i := 5; i <= 6; i++ {
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, i)}})
	}
	e := h.e
	if frozenShards(e.cur.Load()) != 1 {
		t.Fatal("no frozen memtable before the split")
	}
	e.mergeMu.Lock()
	err := e.splitShard(tbl.ID, 0)
	e.mergeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if e.splits.Load() != 1 || frozenShards(e.cur.Load()) != 0 {
		t.Fatalf("%d splits, %d frozen memtables after the split", e.splits.Load(), frozenShards(e.cur.Load()))
	}
	check := func(when string) {
		t.Helper()
		snap := h.e.Snapshot()
		defer snap.Release()
		for _, n := range []uint64{snap.Commit(), 5, 6} {
			if err := checkFlushModel(snap, tbl, n); err != nil {
				t.Fatalf("%s: %v", when, err)
			}
		}
	}
	check("after the split")
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, 7)}})
	if err := e.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	check("after the flush")
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	names, err := h.mem.List(filepath.Join(h.dir, "parts"))
	if err != nil {
		t.Fatal(err)
	}
	if live := e.man.LiveFiles(); len(names) != len(live) {
		t.Fatalf("%d part files, the manifest names %d", len(names), len(live))
	}
	h.reopen()
	check("after reopen")
}

// TestBackgroundFlushRetries: a background flush whose part cannot be
// made durable fails, changes nothing, and is retried until it succeeds;
// the commits never see the failure.
func TestBackgroundFlushRetries(t *testing.T) {
	dir := t.TempDir()
	fault := vfs.NewFault(vfs.NewMem())
	e, err := Open(dir, Options{FS: fault, MemtableBytes: 32 << 10, NoBackgroundMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := t.Context()
	tbl := createKV(t, e)
	fault.Inject(vfs.Rule{Op: vfs.OpSync, Nth: 1, Match: "parts"})
	job := func() *flushJob {
		e.ap.Lock()
		defer e.ap.Unlock()
		return e.fl.job
	}
	i := 1
	for ; job() == nil; i++ {
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{flushWrite(t, tbl, i)}}); err != nil {
			t.Fatal(err)
		}
	}
	j := job()
	waitFor(t, "the flush to be retried and installed", func() bool { return job() != j })
	e.ap.Lock()
	fails := j.fails
	e.ap.Unlock()
	if fails != 1 {
		t.Fatalf("the flush failed %d times, want 1 (the injected fault)", fails)
	}
	snap := e.Snapshot()
	defer snap.Release()
	if len(snap.Parts(tbl.ID)) != 1 {
		t.Fatalf("%d parts after the retried flush", len(snap.Parts(tbl.ID)))
	}
	if err := checkFlushModel(snap, tbl, snap.Commit()); err != nil {
		t.Fatal(err)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}
