package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/hugepage"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/storage/wal"
	"github.com/strata-db/strata/internal/vfs"
)

// Errors of the engine; test with errors.Is.
var (
	// ErrSchemaChanged is returned by Commit when a DDL committed since
	// Txn.CatalogVersion changed a table the writes were planned against
	// (SchemaChanged), and the caller plans them again.
	ErrSchemaChanged = errors.New("storage: schema changed since the statement was planned")
	// ErrClosed is returned by an engine after Close.
	ErrClosed = errors.New("storage: engine closed")
	// ErrFailed wraps the error that stopped the engine from taking
	// commits: a failed fsync or manifest write. Reads keep working on what
	// was acknowledged; Close and Open again to recover (doc.go, "Failure").
	ErrFailed = errors.New("storage: engine failed; close and reopen it")
	// ErrInvalidTxn is returned by Commit for a Txn that breaks the contract
	// of api.go (unknown table or column, wrong mode for the write kind,
	// missing key or ordering columns): a bug in the caller, not bad SQL.
	ErrInvalidTxn = errors.New("storage: invalid transaction")
)

// DefaultMemtableBytes is the memtable size at which a shard is flushed
// when Options.MemtableBytes is zero.
const DefaultMemtableBytes = 64 << 20

// DefaultHugePageBytes is how much of the heap Open readies for huge pages
// by default (at most a quarter of the machine's memory): bench/'s small
// ingest holds about 1 GiB, its medium one about 3.4 GiB. What the heap
// does not fill costs address space only.
const DefaultHugePageBytes = 4 << 30

// Options configure an Engine. The zero value is the defaults.
type Options struct {
	// FS holds the WAL and the part files; nil means the operating
	// system's. The manifest (bbolt) always uses the operating system.
	FS vfs.FS
	// Logger receives background events; slog.Default() if nil.
	Logger *slog.Logger
	// MemtableBytes is the memtable size at which a shard is flushed, in
	// the background; DefaultMemtableBytes if zero. A shard holds up to
	// two memtables of about this size while a flush runs.
	MemtableBytes int64
	// Clock gives commit times (system.commits, AS OF TIMESTAMP); time.Now
	// if nil. A clock that goes back is clamped: commit times never
	// decrease (R6.7). It is called by one goroutine at a time.
	Clock func() time.Time
	// WALSegmentSize is the WAL's segment size; wal.DefaultSegmentSize if 0.
	WALSegmentSize int64
	// NoBackgroundMerges turns the background merger off; MergeNow still
	// merges. Tests that count parts or inject faults at exact points use
	// it; a database run this way only grows its part count.
	NoBackgroundMerges bool
	// AsOfIndex makes the merge loop write an AS OF index of epochs for
	// each versioned shard's run (asofindex.go). It is off by default: it
	// makes the first read AS OF a past commit ~2–4× cheaper but costs
	// about 1.5× a full merge's CPU to build (docs/benchmarks.md) and, on data whose keys compress
	// poorly, several times the run's bytes (docs/storage-merges.md). With
	// it off, indexes already written are still read until their run is
	// merged away, and reads AS OF go through the run with the same
	// results: the index is only an accelerator.
	AsOfIndex bool
	// WarmWrites makes flushes and merges put the pages lookups read of the
	// delta and current parts they write into the page cache (part/warm.go),
	// so a lookup right after them decodes nothing. Off by default: in the
	// bench/ workload it cost 5–10 % of ingest throughput (the background
	// writer's CPU competes with commits on two cores) and the pages it
	// warmed were evicted by the next large scan before lookups came, so
	// R1's tail did not move (docs/benchmarks.md).
	WarmWrites bool
	// MergePartRows bounds the rows of one part a merge writes
	// (merge.DefaultPartRows if 0); a part is cut at a key boundary.
	MergePartRows int
	// ShardSplitBytes is the stored size (parts and memtable) at which a
	// shard of a SHARDS AUTO table is split in two; DefaultShardSplitBytes
	// if zero (shardsplit.go).
	ShardSplitBytes int64
	// PageCacheBytes bounds the cache of decoded part pages that point
	// lookups share (part.Cache) together with the resolved-scan cache
	// (scancache.go), which borrows up to a quarter of it:
	// part.DefaultCacheBytes (256 MiB) if zero, no caches if negative.
	PageCacheBytes int64
	// HugePageBytes is how much of the Go heap the first Open in a process
	// that asks for it readies for transparent huge pages (internal/hugepage):
	// DefaultHugePageBytes if zero, none if negative. It costs one garbage
	// collection at that Open and address space, not memory; the heap
	// fills it as it grows, in 2 MiB pages where the kernel's THP mode is
	// "madvise" or "always". The mark is the whole process's: an embedding
	// program's own heap shares it. Its risk, stalls of a first touch
	// while the kernel compacts fragmented memory, is in internal/hugepage.
	HugePageBytes int64
	// SettleAfter is how long no commit must arrive before the background
	// merger folds a shard's newer runs into its final runs
	// (merge.Settles, docs/storage-merges.md): DefaultSettleAfter if
	// zero, never in the background if negative (MergeNow still folds).
	SettleAfter time.Duration
}

// DefaultSettleAfter is Options.SettleAfter's default: a second without
// commits is long enough that a fold will not compete with an ingest that
// merely paused between batches, short enough that a database left alone
// reaches its settled size and lookup cost at once.
const DefaultSettleAfter = time.Second

// Engine is one open data directory: the commit pipeline, the memtables,
// the published snapshot and the metadata store. It is safe for concurrent
// use; see doc.go for its invariants.
type Engine struct {
	dir  string
	fs   vfs.FS
	opts Options
	log  *slog.Logger
	lock io.Closer
	// reads counts the foreground reads running (Scan, Versions,
	// Lookup), which background merges give way to (paceMerge).
	reads atomic.Int64
	// stopping is set when the background merger is told to stop: a
	// merge it is finishing no longer pauses for reads, so Close does not
	// wait out the pauses of a long merge behind a steady stream of reads.
	stopping atomic.Bool
	man      *manifest.Bolt
	wal      *wal.Writer
	// pages caches the pages lookups decode, for every part (nil: off).
	pages *part.Cache
	// scans caches resolved full current scans of shards (scancache.go).
	scans *scanCache

	// pipe owns commit order (invariant 1): the next sequence, the newest
	// catalog (including commits not yet published) and the last time.
	pipe struct {
		sync.Mutex
		next   uint64
		cat    *catalog.Catalog
		lastAt time.Time
		failed error
		closed bool
		// flying holds the writes of every commit numbered and not yet
		// published (and returned): a Watch registered meanwhile records
		// their keys (conflict.go).
		flying map[uint64]flight
	}
	// kw is the record of written keys while Watches are open
	// (conflict.go), guarded by pipe's lock; watching counts the open
	// Watches for the commits' look before taking it.
	kw       keyWatch
	watching atomic.Int32
	// gate is held shared by every Commit from its start to its return,
	// and alone by Exclusive; gateHeld says Exclusive holds it.
	gate     sync.RWMutex
	gateHeld atomic.Bool
	// conflicts and exclusives are Stats' counters of them.
	conflicts, exclusives atomic.Int64

	inflight sync.WaitGroup
	// retainMax is the latest clock reading retention was judged at, in
	// Unix nanoseconds (retentionClock).
	retainMax atomic.Int64
	// absDir is dir made absolute at Open.
	absDir string

	// stores are the object stores parts were moved to or read from,
	// by URL (tier.go).
	storesMu sync.Mutex
	stores   map[string]*objstore.Store
	// vols is what placement.go keeps of volumes that failed: when each
	// was last logged (volumeWarn) and until when a volume a part write
	// failed on gets no new parts (slotFailed).
	vols struct {
		sync.Mutex
		warned, down map[string]time.Time
	}
	// horizons caches each versioned table's horizonFn; applying is the
	// commit applyRecord is applying (horizonAt reads its time).
	horizons sync.Map
	// applyingCommit and applyingAt are the commit applyRecord is
	// applying and its time (one at a time, in commit order).
	applyingCommit atomic.Uint64
	applyingAt     atomic.Int64
	// clockMu serialises calls of Options.Clock (Engine.now).
	clockMu sync.Mutex

	// ckpt holds the transformation checkpoints (checkpoint.go).
	ckpt checkpoints
	// closing is closed when Close begins (Closing); Close waits for the
	// workers started by Go.
	closing chan struct{}
	workers sync.WaitGroup
	// ap applies durable commits to memtables in sequence order and
	// publishes each (invariant 3).
	ap struct {
		sync.Mutex
		ready   map[uint64]*readyCommit
		applied uint64
	}

	// cur is the published state: the newest applied commit.
	cur atomic.Pointer[state]

	// mergeMu serialises merges (MergeNow and the background merger), so
	// the parts a merge chose stay live until it retires them.
	mergeMu sync.Mutex
	// expired holds, per shard, the retention cutoff of the last merge of
	// all its parts, which dropped what had expired by then (expiryDue);
	// under mergeMu.
	expired map[shardKey]time.Time
	// asofRejected holds, per shard, the run (asofRunKey) whose AS OF
	// index build wrote nothing, so that indexLoop does not read it
	// again; under mergeMu.
	asofRejected map[shardKey]string
	// bg is the background merger (background.go); nil when disabled.
	bg *background
	// merges counts the merges published since Open (tests, logs).
	merges atomic.Int64
	// splits counts the shard splits published since Open.
	splits atomic.Int64
	// opened is when Open began; lastCommit is when the newest commit was
	// applied, as time since opened (monotonic), for the idle folds of
	// the background merger (background.go).
	opened     time.Time
	lastCommit atomic.Int64

	// replayFlushed, during recovery only, says up to which commit each
	// shard's writes are already in parts.
	replayFlushed func(t catalog.TableID, shard uint32) uint64

	// fl is the flush in progress (flush.go). Its fields change under ap;
	// cond (on ap) signals a job or an attempt ending.
	fl struct {
		job     *flushJob // the frozen memtables being flushed, nil if none
		running bool      // an attempt at job is under way, without ap
		halted  bool      // no more flushes start: closing, or failed
		cond    sync.Cond
		stop    chan struct{} // closed by Close: retries stop waiting
		workers sync.WaitGroup
		// walMark is the WAL's Appended when the last flush froze its
		// memtables: the log written since is what a flush would let go.
		walMark uint64
	}
}

// state is one published version of the engine: a commit, its catalog and
// the table data every snapshot at it reads. A state is never modified
// after it is published; the memtables it points to only grow, and reads
// filter them by commit (invariant 3).
type state struct {
	commit  uint64
	cat     *catalog.Catalog
	tables  map[catalog.TableID]*tableData
	commits []CommitInfo // commits 1..commit, shared append-only
	// gen holds the parts tables name (lifetime.go); states that share
	// their parts share it.
	gen *partGen
}

// tableData is the storage of one table: its shards.
type tableData struct {
	id     catalog.TableID
	keyed  bool
	shards []*shardData // ascending hash range
	rr     atomic.Uint64
}

// shardData is one shard: its hash range and its memtables.
type shardData struct {
	num   uint32
	rng   manifest.KeyRange
	keyed *keyedMem
	app   *appendMem
	// frozen is the shard's previous memtable while a flush writes it to
	// a part (flush.go), nil otherwise. It no longer changes; every read
	// takes it between the parts and the memtable, whose commits all
	// follow its own.
	frozen *memtable
	// parts are the shard's immutable parts, oldest first; a flush
	// publishes a new shardData with one more part and without frozen.
	parts []*partFile
	// asof are the parts of the AS OF index of the shard's run
	// (asofindex.go), nil when it has none. They repeat the run's rows, so
	// they are never among parts: only interval reads (runscan.go) and
	// Check open them, and they are held and retired with the parts.
	asof []*partFile
}

// memtables returns the shard's memtables in commit order: the frozen
// one, if a flush is writing it, then the current one.
func (s *shardData) memtables() []memtable {
	cur := memtable{keyed: s.keyed, app: s.app}
	if s.frozen != nil {
		return []memtable{*s.frozen, cur}
	}
	return []memtable{cur}
}

// memBytes is the memory of the shard's memtables, frozen one included.
func (s *shardData) memBytes() uint64 {
	n := s.activeBytes()
	if f := s.frozen; f != nil {
		n += f.bytes()
	}
	return n
}

// activeBytes is the memory of the memtable commits are applied to,
// which MemtableBytes bounds.
func (s *shardData) activeBytes() uint64 {
	return memtable{keyed: s.keyed, app: s.app}.bytes()
}

// Open opens or creates the database in dir: dir/LOCK, dir/manifest.db,
// dir/wal/ and dir/parts/. It loads the manifest, replays the WAL into
// memtables and removes part files no manifest names (doc.go, "Recovery").
func Open(dir string, opts Options) (*Engine, error) {
	if opts.FS == nil {
		opts.FS = vfs.OS{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MemtableBytes <= 0 {
		opts.MemtableBytes = DefaultMemtableBytes
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.PageCacheBytes == 0 {
		opts.PageCacheBytes = part.DefaultCacheBytes
	}
	if opts.HugePageBytes == 0 {
		opts.HugePageBytes = DefaultHugePageBytes
	}
	if opts.HugePageBytes > 0 {
		hugepage.Reserve(opts.HugePageBytes)
	}
	if opts.SettleAfter == 0 {
		opts.SettleAfter = DefaultSettleAfter
	}
	// The resolved-scan cache borrows what it holds from the page cache's
	// budget, up to a quarter of it.
	pages := part.NewCache(opts.PageCacheBytes)
	e := &Engine{dir: dir, fs: opts.FS, opts: opts, log: opts.Logger, opened: time.Now(), closing: make(chan struct{}),
		pages: pages, scans: newScanCache(pages, opts.PageCacheBytes/scanCacheShare)}
	e.fl.cond.L = &e.ap.Mutex
	e.fl.stop = make(chan struct{})
	if err := e.fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	// Placement volumes relative to the data directory resolve against
	// it (placement.go), whatever the working directory becomes.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	e.absDir = abs
	for _, sub := range []string{"wal", "parts"} {
		if err := e.fs.MkdirAll(filepath.Join(dir, sub)); err != nil {
			return nil, fmt.Errorf("storage: open %s: %w", dir, err)
		}
	}
	lock, err := e.fs.Lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("storage: database %s is in use: %w", dir, err)
	}
	e.lock = lock
	if err := e.open(); err != nil {
		e.closeFiles()
		return nil, err
	}
	e.startBackground()
	// Objects a crash or a failed delete left in the object stores go
	// once the database is open (tier.go).
	if !e.opts.NoBackgroundMerges {
		e.Go(e.sweepStores)
	}
	return e, nil
}

func (e *Engine) open() error {
	man, err := manifest.Open(filepath.Join(e.dir, manifest.FileName), manifest.Options{})
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	e.man = man
	ms := man.Snapshot()
	e.ckpt.load(ms)
	cat := catalog.New()
	if _, data := ms.Catalog(); data != nil {
		if cat, err = catalog.Decode(data); err != nil {
			return fmt.Errorf("storage: manifest catalog: %w", err)
		}
	}
	st := &state{commit: ms.LastCommit(), cat: cat, tables: map[catalog.TableID]*tableData{}}
	for _, c := range ms.Commits(1, ms.LastCommit()) {
		st.commits = append(st.commits, commitInfo(c))
	}
	for _, t := range cat.Tables() {
		td := e.newTableData(t, ms.Shards(uint64(t.ID)))
		st.tables[t.ID] = td
		for _, sd := range td.shards {
			for _, p := range ms.Parts(uint64(t.ID), sd.num) {
				fsys, path, err := e.partFS(p)
				if err != nil {
					return err
				}
				r, err := part.OpenCached(fsys, path, e.pages)
				if err != nil {
					return fmt.Errorf("storage: open part of table %s: %w", t.Name, err)
				}
				if p.Kind == manifest.KindAsOf {
					sd.asof = append(sd.asof, newPartFile(fsys, path, p, r))
					continue
				}
				sd.parts = append(sd.parts, newPartFile(fsys, path, p, r))
			}
		}
	}
	e.publishParts(st)
	e.ap.ready = map[uint64]*readyCommit{}
	e.ap.applied = st.commit

	// Replay the WAL after the lowest flushed point of any shard; records
	// at or below a shard's own flushed commit skip that shard.
	after := ms.WALCheckpoint()
	e.replayFlushed = func(t catalog.TableID, shard uint32) uint64 { return ms.FlushedThrough(uint64(t), shard) }
	walDir := filepath.Join(e.dir, "wal")
	var last uint64
	sum, err := wal.Replay(e.fs, walDir, after, e.log, func(commit uint64, payload []byte) error {
		if commit <= last {
			return fmt.Errorf("storage: wal holds commit %d after %d", commit, last)
		}
		last = commit
		rec, err := decodeRecord(commit, payload)
		if err != nil {
			return err
		}
		var rcat *catalog.Catalog
		if rec.catalog != nil && commit > e.cur.Load().cat.Commit() {
			if rcat, err = catalog.Decode(rec.catalog); err != nil {
				return fmt.Errorf("storage: commit %d catalog: %w", commit, err)
			}
		}
		return e.applyRecord(rec, rcat, nil, true)
	})
	e.replayFlushed = nil
	if err != nil {
		return fmt.Errorf("storage: recovery: %w", err)
	}
	st = e.cur.Load()
	e.ap.applied = st.commit
	e.pipe.next = max(st.commit, sum.LastCommit) + 1
	e.pipe.cat = st.cat
	if n := len(st.commits); n > 0 {
		e.pipe.lastAt = st.commits[n-1].At
	}
	// A merge that expired data judged retention at this clock reading
	// (manifest.Edit.RetentionClock): with the clock set back since, no
	// cutoff may move before it (the data is gone), and no commit may be
	// timed before it (expiryInstant's floor).
	if rc := e.man.Snapshot().RetentionClock(); !rc.IsZero() {
		// Commit times are whole microseconds (e.now), so AS OF
		// TIMESTAMP of a committed_at finds its commit; a reading with
		// more is rounded up.
		if t := rc.Truncate(time.Microsecond); t.Before(rc) {
			rc = t.Add(time.Microsecond)
		}
		e.retainMax.Store(rc.UnixNano())
		if rc.After(e.pipe.lastAt) {
			e.pipe.lastAt = rc
		}
	}
	if sum.LastCommit > st.commit {
		// A record that failed its fsync and could not be cut away
		// (wal.Writer): its number stays taken (R5.1).
		e.log.Warn("storage: wal ends past the last applied commit", "applied", st.commit, "wal", sum.LastCommit)
	}
	w, err := wal.Open(e.fs, walDir, wal.Options{SegmentSize: e.opts.WALSegmentSize, Logger: e.log, Preallocate: true})
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	e.wal = w
	if err := e.syncManifest(st); err != nil {
		return err
	}
	if err := e.removeStrayParts(); err != nil {
		return err
	}
	return e.removeStrayVolumeParts(e.cur.Load())
}

// removeStrayParts deletes files under parts/ that no manifest part names:
// a flush that crashed before its manifest edit (manifest invariant 1).
func (e *Engine) removeStrayParts() error {
	live := e.man.LiveFiles()
	dir := filepath.Join(e.dir, "parts")
	names, err := e.fs.List(dir)
	if err != nil {
		return fmt.Errorf("storage: list parts: %w", err)
	}
	removed := 0
	for _, n := range names {
		if _, ok := live[filepath.ToSlash(filepath.Join("parts", n))]; ok {
			continue
		}
		if err := e.fs.Remove(filepath.Join(dir, n)); err != nil {
			return fmt.Errorf("storage: remove stray part %s: %w", n, err)
		}
		removed++
	}
	if removed > 0 {
		e.log.Info("storage: removed part files no manifest names", "files", removed)
		return e.fs.SyncDir(dir)
	}
	return nil
}

func commitInfo(c manifest.Commit) CommitInfo {
	k := KindWrite
	switch c.Kind {
	case manifest.CommitDDL:
		k = KindDDL
	case manifest.CommitTransformation:
		k = KindTransformation
	}
	return CommitInfo{Commit: c.Seq, At: c.At, Kind: k, Tables: c.Tables, Rows: c.Rows}
}

func manifestKind(k CommitKind) string {
	switch k {
	case KindDDL:
		return manifest.CommitDDL
	case KindTransformation:
		return manifest.CommitTransformation
	}
	return manifest.CommitWrite
}

// shardRanges splits the hash space into n equal ranges; range i starts at
// ceil(i·2^64/n), so that shardOf's multiply agrees with it.
func shardRanges(n int) []manifest.KeyRange {
	rs := make([]manifest.KeyRange, n)
	for i := range rs {
		rs[i].Lo = rangeStart(uint64(i), uint64(n))
		if i+1 < n {
			rs[i].Hi = rangeStart(uint64(i+1), uint64(n))
		}
	}
	return rs
}

func rangeStart(i, n uint64) uint64 {
	if i == 0 {
		return 0
	}
	q, r := bits.Div64(i, 0, n)
	if r != 0 {
		q++
	}
	return q
}

// newTableData builds the storage of a table from its manifest shards, or,
// for a table the manifest does not know yet, from its SHARDS clause (AUTO
// starts with one shard).
func (e *Engine) newTableData(t *catalog.Table, ms []manifest.Shard) *tableData {
	td := &tableData{id: t.ID, keyed: t.Keyed()}
	if len(ms) == 0 {
		n := t.Shards
		if n < 1 || t.ShardsAuto {
			n = 1
		}
		for i, r := range shardRanges(n) {
			ms = append(ms, manifest.Shard{Table: uint64(t.ID), Shard: uint32(i), Range: r, State: manifest.StateActive})
		}
	}
	for _, s := range ms {
		if s.State != manifest.StateActive {
			continue
		}
		sd := &shardData{num: s.Shard, rng: s.Range}
		if td.keyed {
			sd.keyed = newKeyedMem(t.Mode == catalog.ModeVersioned)
		} else {
			sd.app = newAppendMem()
		}
		td.shards = append(td.shards, sd)
	}
	sort.Slice(td.shards, func(i, j int) bool { return td.shards[i].rng.Lo < td.shards[j].rng.Lo })
	return td
}

// shardOf returns the index in td.shards of the shard owning hash h.
func (td *tableData) shardOf(h uint64) int {
	// Ranges ascend and the last ends at Hi == 0 (2^64), so "h is below
	// the range's end" is false up to the owner and true from it on, as
	// sort.Search needs. (It once read Hi != 0 && h < Hi, which is false
	// for the last range and sent every row to the last shard.)
	i := sort.Search(len(td.shards), func(i int) bool {
		r := td.shards[i].rng
		return r.Hi == 0 || h < r.Hi
	})
	if i == len(td.shards) {
		i = len(td.shards) - 1
	}
	return i
}

// syncManifest records in the manifest what the state holds and the
// manifest does not: commits, the catalog, shards of new tables, removal
// of dropped tables' shards. It runs in commit order (under ap or before
// the engine takes commits).
func (e *Engine) syncManifest(st *state) error {
	ms := e.man.Snapshot()
	var ed manifest.Edit
	for _, c := range st.commits[min(int(ms.LastCommit()), len(st.commits)):] {
		ed.AppendCommits = append(ed.AppendCommits, manifest.Commit{Seq: c.Commit, At: c.At, Kind: manifestKind(c.Kind), Tables: c.Tables, Rows: c.Rows})
	}
	if cc, _ := ms.Catalog(); st.cat.Commit() > cc {
		data, err := st.cat.Encode()
		if err != nil {
			return fmt.Errorf("storage: encode catalog: %w", err)
		}
		ed.Catalog = &manifest.CatalogUpdate{Commit: st.cat.Commit(), Data: data}
	}
	for id, td := range st.tables {
		if len(ms.Shards(uint64(id))) > 0 {
			continue
		}
		for _, s := range td.shards {
			ed.SetShards = append(ed.SetShards, manifest.Shard{Table: uint64(id), Shard: s.num, Range: s.rng, State: manifest.StateActive})
		}
	}
	for _, id := range ms.Tables() {
		if _, ok := st.tables[catalog.TableID(id)]; ok {
			continue
		}
		for _, s := range ms.Shards(id) {
			for _, p := range ms.Parts(id, s.Shard) {
				ed.RemoveParts = append(ed.RemoveParts, p.Ref())
			}
			ed.RemoveShards = append(ed.RemoveShards, manifest.ShardRef{Table: id, Shard: s.Shard})
		}
	}
	if len(ed.AppendCommits) == 0 && ed.Catalog == nil && len(ed.SetShards) == 0 && len(ed.RemoveShards) == 0 {
		return nil
	}
	sort.Slice(ed.SetShards, func(i, j int) bool {
		a, b := ed.SetShards[i], ed.SetShards[j]
		return a.Table < b.Table || a.Table == b.Table && a.Shard < b.Shard
	})
	if err := e.man.Apply(ed); err != nil {
		return fmt.Errorf("storage: manifest: %w", err)
	}
	return nil
}

// Close stops taking commits, waits for the ones in flight, finishes the
// flush in progress (one attempt: a failure leaves its commits to the
// WAL's replay), records the commits in the manifest and closes the WAL,
// the manifest and the lock.
func (e *Engine) Close() error {
	e.pipe.Lock()
	if e.pipe.closed {
		e.pipe.Unlock()
		return ErrClosed
	}
	e.pipe.closed = true
	failed := e.pipe.failed
	e.pipe.Unlock()
	close(e.closing)
	// Commits waiting for a flush (back-pressure) go on, so that the ones
	// in flight end; then the flush in progress is finished.
	e.stopFlushes()
	e.inflight.Wait()
	// Workers see closing, and their commits fail with ErrClosed now.
	e.workers.Wait()
	e.closeFlushes()
	e.stopBackground()
	var errs []error
	if failed == nil {
		e.ap.Lock()
		if err := e.syncManifest(e.cur.Load()); err != nil {
			errs = append(errs, err)
		}
		e.ap.Unlock()
	}
	errs = append(errs, e.closeFiles())
	e.closeStores()
	return errors.Join(errs...)
}

func (e *Engine) closeFiles() error {
	var errs []error
	if e.wal != nil {
		if err := e.wal.Close(); err != nil && !errors.Is(err, wal.ErrClosed) && e.pipe.failed == nil {
			errs = append(errs, err)
		}
		e.wal = nil
	}
	if st := e.cur.Load(); st != nil {
		for _, td := range st.tables {
			for _, sd := range td.shards {
				for _, pf := range sd.parts {
					_ = pf.r.Close()
				}
				for _, pf := range sd.asof {
					_ = pf.r.Close()
				}
			}
		}
	}
	if e.man != nil {
		errs = append(errs, e.man.Close())
		e.man = nil
	}
	if e.lock != nil {
		errs = append(errs, e.lock.Close())
		e.lock = nil
	}
	return errors.Join(errs...)
}

// fail puts the engine in the failed state: later commits get ErrFailed.
func (e *Engine) fail(err error) {
	e.pipe.Lock()
	if e.pipe.failed == nil {
		e.pipe.failed = err
		e.log.Error("storage: engine failed; reopen to recover", "err", err)
	}
	e.pipe.Unlock()
}

// Dir returns the data directory.
func (e *Engine) Dir() string { return e.dir }

// Closing returns a channel closed when Close begins: background work
// built on the engine (transformations) stops then.
func (e *Engine) Closing() <-chan struct{} { return e.closing }

// Go runs fn on a goroutine of its own, which Close waits for once it has
// closed Closing() and the commits in flight have ended: work built on the
// engine that reads and commits (transformations) ends before the files
// it reads are closed. fn must return soon after Closing is closed. Go
// reports false, and runs nothing, once Close has begun.
func (e *Engine) Go(fn func()) bool {
	e.pipe.Lock()
	defer e.pipe.Unlock()
	if e.pipe.closed {
		return false
	}
	e.workers.Add(1)
	go func() {
		defer e.workers.Done()
		fn()
	}()
	return true
}

// LastCommit returns the newest published commit.
func (e *Engine) LastCommit() uint64 { return e.cur.Load().commit }

// Catalog returns the newest published catalog. Callers must not modify
// it (catalog invariant 3).
func (e *Engine) Catalog() *catalog.Catalog { return e.cur.Load().cat }
