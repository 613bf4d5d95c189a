package storage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/hugepage"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// flushBlockRows is the block size of flushed parts.
const flushBlockRows = 8192

// partFile is one live part of a shard, open for reading. refs counts the
// published state and the snapshots that hold it (lifetime.go).
type partFile struct {
	man  manifest.Part
	r    *part.Reader
	refs *partRefs
	// prewarmed is set once a prewarm pass took the part (prewarm.go).
	prewarmed atomic.Bool
}

// newPartFile wraps an open part the published state is about to name;
// path is the file on fs, deleted when the part is retired and released.
func newPartFile(fs vfs.FS, path string, man manifest.Part, r *part.Reader) *partFile {
	pf := &partFile{man: man, r: r}
	pf.refs = newPartRefs(fs, path, pf)
	return pf
}

// memtable is one memtable of a shard: keyed or append, by the table.
type memtable struct {
	keyed *keyedMem
	app   *appendMem
}

// bytes estimates the memory m holds.
func (m memtable) bytes() uint64 {
	if m.keyed != nil {
		m.keyed.mu.RLock()
		defer m.keyed.mu.RUnlock()
		return m.keyed.bytes()
	}
	m.app.mu.RLock()
	defer m.app.mu.RUnlock()
	return m.app.used
}

// empty reports whether m holds nothing.
func (m memtable) empty() bool {
	if m.keyed != nil {
		m.keyed.mu.RLock()
		defer m.keyed.mu.RUnlock()
		return m.keyed.list.n == 0
	}
	m.app.mu.RLock()
	defer m.app.mu.RUnlock()
	return len(m.app.chunks) == 0
}

func (sd *shardData) empty() bool { return memtable{keyed: sd.keyed, app: sd.app}.empty() }

// A flush (doc.go, "Flush") runs in three steps:
//
//  1. Freeze, under the apply lock, after the commit that took a memtable
//     past MemtableBytes or the WAL past walFlushBytes (or in Flush):
//     every non-empty memtable becomes its shard's frozen memtable, a
//     fresh one takes its place, and the state is published. Nothing is copied; reads see the same versions
//     before and after, now from two memtables.
//  2. Write, without any lock: one part per frozen memtable, each fsynced.
//  3. Install, under the apply lock: ONE manifest edit adds the parts and
//     moves every shard's flushed commit and the WAL checkpoint to the
//     frozen commit (manifest invariant 1); the state is published with
//     the parts in place of the frozen memtables; then, without the lock,
//     the WAL drops the segments behind the checkpoint.
//
// Steps 2 and 3 run on a goroutine of their own (flushWorker), or in Flush
// when it is called. One flush is in progress at a time: a commit that
// finds its memtable full while the previous one is still being written
// waits for it (back-pressure), so memory holds at most two memtables per
// shard. A failed attempt changes nothing and is retried after a pause
// that grows; a manifest failure (manifest.ErrFailed) fails the engine and
// stops flushing. The frozen data stays in the WAL until its part is
// installed, so no failure loses an acknowledged commit.

// flushJob is one flush: the memtables frozen at commit, and every shard
// that existed then, whose flushed commit it moves.
type flushJob struct {
	commit uint64
	cat    *catalog.Catalog
	shards []flushShard
	// fails counts failed attempts; the worker makes the next one at
	// retryAt. Under e.ap.
	fails   int
	retryAt time.Time
}

// flushShard is one shard of a flushJob; mem is nil for a shard whose
// memtable was empty.
type flushShard struct {
	table catalog.TableID
	num   uint32
	mem   *memtable
}

// Flush retries start after flushRetryMin, doubling up to flushRetryMax.
const (
	flushRetryMin = 100 * time.Millisecond
	flushRetryMax = 10 * time.Second
)

// Flush writes every memtable to parts (doc.go, "Flush") and truncates the
// WAL behind the flushed commit: it returns once every commit published
// when it was called is in parts named by the manifest, or with the error
// of its own attempt (the flush stays pending and is retried). Results
// never change: a read at any commit returns the same rows before and
// after.
func (e *Engine) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.ap.Lock()
	defer e.ap.Unlock()
	target := e.cur.Load().commit
	for {
		// The flush in progress first (the installation of one may start
		// the next, when a memtable filled meanwhile), then one of what is
		// left, until a flush has passed target.
		job := e.fl.job
		if job == nil {
			if e.fl.halted {
				if err := e.failed(); err != nil {
					return err
				}
				return ErrClosed
			}
			job = e.freezeLocked()
		}
		if err := e.finishLocked(job); err != nil {
			return err
		}
		if job.commit >= target {
			return nil
		}
	}
}

// finishLocked returns once job (nil: none) is installed, waiting for an
// attempt under way or making one; the error is its own attempt's. Under
// e.ap, which it releases while it waits or writes.
func (e *Engine) finishLocked(job *flushJob) error {
	for job != nil && e.fl.job == job {
		if e.fl.running {
			e.fl.cond.Wait()
			continue
		}
		if e.fl.halted {
			// Halted by Close, or by the engine's failure (a failed
			// manifest edit), which is the error to report.
			if err := e.failed(); err != nil {
				return err
			}
			return ErrClosed
		}
		if err := e.attemptLocked(job); err != nil {
			return err
		}
	}
	return nil
}

// overLimit reports whether a memtable of st has passed MemtableBytes.
func (e *Engine) overLimit(st *state) bool {
	for _, td := range st.tables {
		for _, sd := range td.shards {
			if int64(sd.activeBytes()) >= e.opts.MemtableBytes {
				return true
			}
		}
	}
	return false
}

// walOverLimit reports whether the WAL has grown by more than
// walFlushBytes since the last flush froze. MemtableBytes bounds each
// shard's memtable, but the log is shared: with many shards, none full,
// every commit since the last flush would stay in the log (on disk, and
// replayed after a crash) without bound. A flush then lets the log drop
// its segments (issue 6 S1, docs/benchmarks.md "Bytes on disk").
func (e *Engine) walOverLimit() bool {
	if e.wal == nil {
		return false
	}
	a := e.wal.Appended()
	return a > e.fl.walMark && a-e.fl.walMark >= e.walFlushBytes()
}

// walFlushBytes is how much log a flush may leave behind it:
// MemtableBytes/4, 16 MiB by default. A commit's compressed log record is
// several times smaller than what it adds to a memtable (about 65 against
// 430 bytes a version in the benchmark), so a single shard's memtable
// fills first; with many shards the log bound decides.
func (e *Engine) walFlushBytes() uint64 { return uint64(max(e.opts.MemtableBytes/4, 1)) }

// maybeFreezeLocked starts a flush when a memtable has passed
// MemtableBytes, or the WAL has grown by walFlushBytes since the last
// flush, and none is in progress. Under e.ap, after a commit is published.
// Only a full memtable makes commits wait for a flush (mustWaitLocked): a
// long log is no reason to stall them.
func (e *Engine) maybeFreezeLocked() {
	if e.fl.job == nil && !e.fl.halted && (e.overLimit(e.cur.Load()) || e.walOverLimit()) {
		e.freezeLocked()
	}
}

// mustWaitLocked reports whether applying another commit must wait for the
// flush in progress: a memtable is full again (back-pressure).
func (e *Engine) mustWaitLocked() bool {
	return e.fl.job != nil && !e.fl.halted && e.overLimit(e.cur.Load())
}

// freezeLocked freezes every non-empty memtable, publishes the state with
// fresh memtables in their place, and starts the flush of the frozen ones
// (step 1 above). Under e.ap. With a flush in progress it returns that
// one: its frozen memtables must stay in the state until it installs them.
func (e *Engine) freezeLocked() *flushJob {
	if e.fl.job != nil {
		return e.fl.job
	}
	st := e.cur.Load()
	job := &flushJob{commit: st.commit, cat: st.cat}
	if e.wal != nil {
		e.fl.walMark = e.wal.Appended()
	}
	tables := make(map[catalog.TableID]*tableData, len(st.tables))
	frozen := false
	var carried [][2]*shardData // (shard data, its replacement), for the scan cache
	for id, td := range st.tables {
		t, _ := st.cat.TableByID(id)
		ntd := &tableData{id: td.id, keyed: td.keyed}
		ntd.rr.Store(td.rr.Load())
		for _, sd := range td.shards {
			nsd := &shardData{num: sd.num, rng: sd.rng, keyed: sd.keyed, app: sd.app, parts: sd.parts, asof: sd.asof}
			fs := flushShard{table: id, num: sd.num}
			if !sd.empty() {
				fs.mem = &memtable{keyed: sd.keyed, app: sd.app}
				nsd.frozen = fs.mem
				if td.keyed {
					// The next memtable likely fills with as many keys.
					nsd.keyed = newKeyedMemSized(t.Mode == catalog.ModeVersioned, sd.keyed.keys())
				} else {
					nsd.app = newAppendMem()
				}
				frozen = true
			}
			job.shards = append(job.shards, fs)
			ntd.shards = append(ntd.shards, nsd)
			carried = append(carried, [2]*shardData{sd, nsd})
		}
		tables[id] = ntd
	}
	if frozen {
		// The parts are the same: the generation is shared.
		e.cur.Store(&state{commit: st.commit, cat: st.cat, tables: tables, commits: st.commits, gen: st.gen})
		e.scans.carry(carried)
	}
	e.fl.job = job
	e.fl.workers.Add(1)
	go e.flushWorker(job)
	return job
}

// flushWorker installs job, retrying failed attempts after a growing
// pause, until it is installed (by it or by Flush) or flushing halts.
func (e *Engine) flushWorker(job *flushJob) {
	defer e.fl.workers.Done()
	// Memtables turn over here: mark again the arenas seen so far, whose
	// parts the runtime mapped since lost the mark, before the next
	// memtable fills them.
	hugepage.Refresh()
	e.ap.Lock()
	defer e.ap.Unlock()
	for e.fl.job == job && !e.fl.halted {
		if e.fl.running {
			e.fl.cond.Wait()
			continue
		}
		if d := time.Until(job.retryAt); d > 0 {
			e.ap.Unlock()
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-e.fl.stop:
				t.Stop()
			}
			e.ap.Lock()
			continue
		}
		_ = e.attemptLocked(job) // a failure is logged and sets retryAt
	}
}

// attemptLocked writes job's parts and installs them (steps 2 and 3).
// Under e.ap, which it releases while it writes and while the WAL is
// truncated.
func (e *Engine) attemptLocked(job *flushJob) error {
	e.fl.running = true
	e.ap.Unlock()
	parts, err := e.writeJob(job)
	e.ap.Lock()
	if err == nil {
		err = e.installLocked(job, parts)
	} else {
		dropParts(e.fs, parts)
	}
	e.fl.running = false
	if err != nil {
		job.fails++
		job.retryAt = time.Now().Add(min(flushRetryMin<<min(job.fails-1, 16), flushRetryMax))
		if errors.Is(err, ErrFailed) {
			e.fl.halted = true
		}
		e.log.Warn("storage: flush failed; it is retried", "commit", job.commit, "attempt", job.fails, "err", err)
		e.fl.cond.Broadcast()
		return err
	}
	e.fl.job = nil
	// A memtable that filled while this flush ran is frozen now: the
	// commits waiting on it go on.
	e.maybeFreezeLocked()
	e.fl.cond.Broadcast()
	e.ap.Unlock()
	if _, err := e.wal.RemoveBefore(job.commit); err != nil {
		e.log.Warn("storage: flush: wal truncation failed; it is retried at the next flush", "err", err)
	}
	e.ap.Lock()
	return nil
}

// writeJob writes a part of each frozen memtable of job (step 2); parts[i]
// is job.shards[i]'s, nil for an empty one. On error it has removed what
// it wrote.
func (e *Engine) writeJob(job *flushJob) ([]*partFile, error) {
	parts := make([]*partFile, len(job.shards))
	for i, fs := range job.shards {
		if fs.mem == nil {
			continue
		}
		t, ok := job.cat.TableByID(fs.table)
		if !ok {
			dropParts(e.fs, parts)
			return nil, fmt.Errorf("storage: flush: no table %d at commit %d", fs.table, job.commit)
		}
		pf, err := e.writePart(t, fs.num, *fs.mem)
		if err != nil {
			dropParts(e.fs, parts)
			return nil, err
		}
		parts[i] = pf
	}
	return parts, nil
}

// dropParts closes and removes parts no manifest names; nil entries are
// skipped.
func dropParts(fsys vfs.FS, parts []*partFile) {
	for _, pf := range parts {
		if pf != nil {
			_ = pf.r.Close()
			_ = fsys.Remove(pf.refs.path)
		}
	}
}

// installLocked applies job's manifest edit and publishes the state with
// parts in place of the frozen memtables (step 3). A shard dropped or
// split since the freeze is skipped: its table's edit, or the split, took
// its data along, and its part is removed. On error parts are removed and
// nothing changed; an error wrapping ErrFailed has failed the engine.
// Under e.ap.
func (e *Engine) installLocked(job *flushJob, parts []*partFile) error {
	fail := func(err error) error {
		dropParts(e.fs, parts)
		if errors.Is(err, manifest.ErrFailed) || errors.Is(err, ErrFailed) {
			e.fail(err)
			return fmt.Errorf("%w: %w", ErrFailed, err)
		}
		return err
	}
	st := e.cur.Load()
	// The manifest records every commit the checkpoint passes (and the
	// catalog and shards of tables created since) before the edit.
	if err := e.syncManifest(st); err != nil {
		// Any failure of the metadata store is the engine's (as in
		// applyInOrder): its state is unknown.
		e.fail(err)
		dropParts(e.fs, parts)
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	ms := e.man.Snapshot()
	var ed manifest.Edit
	tables := make(map[catalog.TableID]*tableData, len(st.tables))
	maps.Copy(tables, st.tables)
	changed := map[catalog.TableID]*tableData{}
	var carried [][2]*shardData // (shard data, its replacement), for the scan cache
	for i, fs := range job.shards {
		td := st.tables[fs.table]
		si := -1
		if td != nil {
			si = slices.IndexFunc(td.shards, func(sd *shardData) bool { return sd.num == fs.num })
		}
		if si < 0 || fs.mem != nil && td.shards[si].frozen != fs.mem {
			// Dropped or split since the freeze.
			if parts[i] != nil {
				dropParts(e.fs, parts[i:i+1])
				parts[i] = nil
			}
			continue
		}
		if job.commit > ms.FlushedThrough(uint64(fs.table), fs.num) {
			ed.SetFlushed = append(ed.SetFlushed, manifest.Flushed{Table: uint64(fs.table), Shard: fs.num, Commit: job.commit})
		}
		if fs.mem == nil {
			continue
		}
		ntd := changed[fs.table]
		if ntd == nil {
			ntd = &tableData{id: td.id, keyed: td.keyed, shards: slices.Clone(td.shards)}
			ntd.rr.Store(td.rr.Load())
			changed[fs.table] = ntd
			tables[fs.table] = ntd
		}
		sd := td.shards[si]
		nsd := &shardData{num: sd.num, rng: sd.rng, keyed: sd.keyed, app: sd.app, parts: slices.Clone(sd.parts), asof: sd.asof}
		if pf := parts[i]; pf != nil {
			ed.AddParts = append(ed.AddParts, pf.man)
			nsd.parts = append(nsd.parts, pf)
			sortParts(nsd.parts)
		}
		ntd.shards[si] = nsd
		carried = append(carried, [2]*shardData{sd, nsd})
	}
	if job.commit > ms.WALCheckpoint() {
		ed.WALCheckpoint = job.commit
		// The WAL up to job.commit may go once this edit is applied: the
		// transformation checkpoints its records carried go into the
		// manifest with it.
		ed.SetTransforms = e.ckpt.pending(job.commit)
	}
	if len(ed.AddParts) == 0 && len(ed.SetFlushed) == 0 && ed.WALCheckpoint == 0 && len(changed) == 0 {
		return nil
	}
	if err := e.man.Apply(ed); err != nil {
		return fail(fmt.Errorf("storage: flush: manifest: %w", err))
	}
	if ed.WALCheckpoint != 0 {
		e.ckpt.recorded(ed.WALCheckpoint)
	}
	if len(changed) > 0 {
		e.publishParts(&state{commit: st.commit, cat: st.cat, tables: tables, commits: st.commits})
		e.scans.carry(carried)
	}
	if len(ed.AddParts) > 0 {
		e.kickMerges()
	}
	return nil
}

// stopFlushes halts flushing for Close: no flush starts, commits no longer
// wait for one, and a retry pause ends.
func (e *Engine) stopFlushes() {
	e.ap.Lock()
	e.fl.halted = true
	e.fl.cond.Broadcast()
	e.ap.Unlock()
	close(e.fl.stop)
}

// closeFlushes, in Close after the last commit, finishes the flush in
// progress (waiting for its attempt or making one) and waits for its
// worker. A flush that fails here is left to the WAL, which holds its
// commits: the next Open replays them.
func (e *Engine) closeFlushes() {
	e.ap.Lock()
	for job := e.fl.job; job != nil && e.fl.job == job; {
		if e.fl.running {
			e.fl.cond.Wait()
			continue
		}
		if err := e.failed(); err == nil || errors.Is(err, ErrClosed) {
			if err := e.attemptLocked(job); err != nil {
				e.log.Warn("storage: flush at close failed; its commits are replayed from the WAL at the next open", "err", err)
			}
		}
		break
	}
	e.ap.Unlock()
	e.fl.workers.Wait()
}

// writePart writes mem, a memtable of shard num of t, as a part and opens
// it.
func (e *Engine) writePart(t *catalog.Table, num uint32, mem memtable) (*partFile, error) {
	pid, err := e.man.NextPartID()
	if err != nil {
		return nil, fmt.Errorf("storage: flush: %w", err)
	}
	meta := part.Meta{Table: t.ID, Shard: num, Part: pid, Kind: part.KindDelta}
	var d *part.Data
	if mem.keyed != nil {
		d, err = keyedPartData(t, mem.keyed, &meta)
		// Ordering values are rebuilt from the table columns when every
		// row's match them (part/order.go): a delta of the bench/
		// balances table stored 3.4 bytes of ~25 a row in _order.
		meta.OrderFrom = part.GroupOrders(t, func(id catalog.ColumnID) bool { return meta.Column(id) >= 0 })
	} else {
		meta.Kind = part.KindAppend
		d, err = appendPartData(t, mem.app, &meta)
	}
	if err != nil {
		return nil, err
	}
	// Blocks of 8192 rows: a point lookup decodes one block per part, and
	// at 64 Ki rows (part.DefaultBlockRows) that is most of its cost.
	var info part.Info
	slot, err := e.writeSlot(t, num, pid, func(path string) (err error) {
		info, err = part.Write(e.fs, path, d, meta, part.WriteOptions{BlockRows: flushBlockRows, Warm: e.warmCache(), IndexCols: e.indexCols(t.ID)})
		return err
	})
	path := slot.path
	if err != nil {
		return nil, fmt.Errorf("storage: flush: %w", err)
	}
	r, err := part.OpenCached(e.fs, path, e.pages)
	if err != nil {
		_ = e.fs.Remove(path)
		return nil, fmt.Errorf("storage: flush: %w", err)
	}
	m := r.Meta()
	kind := manifest.KindDelta
	if meta.Kind == part.KindAppend {
		kind = manifest.KindAppend
	}
	return newPartFile(e.fs, path, manifest.Part{Table: uint64(t.ID), Shard: num, ID: pid, Kind: kind, Rows: info.Rows, Bytes: uint64(info.Bytes),
		MinCommit: m.MinCommit, MaxCommit: m.MaxCommit, MinKey: m.MinSort, MaxKey: m.MaxSort, File: slot.file,
		Location: slot.loc, CreatedAt: time.Now().UTC()}, r), nil
}

// partColumns describes the columns ids for a part, in id order, with
// their current types and codecs.
func partColumns(t *catalog.Table, ids map[catalog.ColumnID]bool) ([]part.ColumnMeta, error) {
	var out []part.ColumnMeta
	for id := range ids {
		c, ok := t.AnyColumn(id)
		if !ok {
			return nil, fmt.Errorf("storage: flush: table %s has no column %d", t.Name, id)
		}
		codec, err := catalog.ParseCodec(c.Codec, c.Type)
		if err != nil {
			codec = catalog.DefaultCodec(c.Type)
		}
		out = append(out, part.ColumnMeta{ID: id, Type: c.Type, Codec: codec})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func newPartData(cols []part.ColumnMeta, rows int) *part.Data {
	d := &part.Data{Sort: types.NewVector(types.Of(types.Bytes), rows), Order: types.NewVector(types.Of(types.Bytes), rows)}
	for _, c := range cols {
		d.IDs = append(d.IDs, c.ID)
		d.Cols = append(d.Cols, types.NewVector(c.Type, rows))
	}
	return d
}

// keyedPartData lays a keyed memtable out as part rows: per key, its
// versions and delete markers sorted by (group, commit, seq); a delete
// marker is a row of group default with Tomb set. Ordering values are
// stored length-prefixed in Order; each version's payload columns in the
// table columns, NULL where its group has none.
//
// A flush walks every version once, in key order, which for a memtable
// filled in arrival order is a walk over scattered memory: that walk, not
// the arithmetic, is the cost, so nothing else walks the versions. The
// part's columns are taken from the column sizes the memtable counted as
// versions arrived (colBytes); only if a version turns out to carry a
// column that count never saw is the memtable walked for its columns.
func keyedPartData(t *catalog.Table, m *keyedMem, meta *part.Meta) (*part.Data, error) {
	m.ordered()
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := make(map[catalog.ColumnID]bool, len(m.colBytes))
	for id := range m.colBytes {
		ids[id] = true
	}
	d, err := layoutKeyed(t, m, meta, ids)
	if errors.Is(err, errUncountedColumn) {
		d, err = layoutKeyed(t, m, meta, versionColumns(m))
	}
	return d, err
}

// errUncountedColumn is a version carrying a column outside the set the
// layout was given.
var errUncountedColumn = errors.New("storage: flush: version column not counted")

// versionColumns returns the columns of every version's payload in m.
func versionColumns(m *keyedMem) map[catalog.ColumnID]bool {
	ids := map[catalog.ColumnID]bool{}
	var last *layout // versions of one write share their layout
	for e := m.list.first(); e != nil; e = e.next[0] {
		for _, g := range e.groups {
			for i := range g.vers {
				if lay := g.vers[i].lay(); lay != last {
					for _, id := range lay.cols {
						ids[id] = true
					}
					last = lay
				}
			}
		}
	}
	return ids
}

// payloadPlan is where each payload value of one layout goes: cols[j] is
// the part column of payload value j, cast[j] whether it is cast there.
type payloadPlan struct {
	lay  *layout
	cols []int
	cast []bool
}

// planOf returns the plan of a layout with lay's columns and types, or
// nil. Every write has a layout of its own but the layouts of a table's
// writes are mostly a few over and over: a plan is made for each of those
// few, not for each write.
func (l *keyedLayout) planOf(lay *layout) *payloadPlan {
	for _, p := range l.plans {
		if p.lay == lay || slices.Equal(p.lay.cols, lay.cols) && slices.Equal(p.lay.types, lay.types) {
			return p
		}
	}
	return nil
}

// keyedLayout is the state of one layoutKeyed: the part data, the plans
// of the layouts met so far and scratch reused from key to key.
type keyedLayout struct {
	d     *part.Data
	cols  []part.ColumnMeta
	seen  []bool // part columns some version carries
	plans []*payloadPlan
	last  *layout
	plan  *payloadPlan
	order []byte
	rows  []keyedRow
	gs    []int
	sink  uint64 // touch's reads
}

// keyedRow is one part row of a key: a version, or a delete marker (v nil).
type keyedRow struct {
	group catalog.GroupID
	pos   version.Pos
	v     *memVersion
}

// layoutKeyed is keyedPartData over the part columns ids. It fails with
// errUncountedColumn if a version carries a column ids lacks; columns no
// version carries are left out of the part.
func layoutKeyed(t *catalog.Table, m *keyedMem, meta *part.Meta, ids map[catalog.ColumnID]bool) (*part.Data, error) {
	cols, err := partColumns(t, ids)
	if err != nil {
		return nil, err
	}
	n := int(m.rows + m.deletes)
	d := newPartData(cols, n)
	d.Group = make([]uint16, 0, n)
	d.Commit = make([]uint64, 0, n)
	d.Seq = make([]uint32, 0, n)
	d.Tomb = make([]bool, 0, n)
	// The byte columns are allocated once: grown by appends they would be
	// copied over and over.
	d.Sort.Reserve(int(m.sortBytes))
	d.Order.Reserve(int(m.orderBytes))
	for i, c := range cols {
		// Payload bytes are the binary encoding, a close upper bound of the
		// values' own bytes.
		d.Cols[i].Reserve(int(m.colBytes[c.ID]))
	}
	l := &keyedLayout{d: d, cols: cols, seen: make([]bool, len(cols))}
	var win [layoutAhead]*keyEntry
	for e := m.list.first(); e != nil; {
		n := 0
		for ; n < layoutAhead && e != nil; e = e.next[0] {
			win[n] = e
			n++
		}
		l.touch(win[:n])
		for _, we := range win[:n] {
			if err := l.key(we); err != nil {
				if errors.Is(err, errUncountedColumn) {
					return nil, err
				}
				return nil, fmt.Errorf("storage: flush table %s: %w", t.Name, err)
			}
		}
	}
	for _, c := range d.Cols {
		c.AppendNulls(d.Rows - c.Len())
	}
	// A column only discarded versions carried (a repeat, or a loser an
	// upsert table drops) was counted but has no place in the part.
	keep := 0
	for i := range cols {
		if l.seen[i] {
			cols[keep], d.IDs[keep], d.Cols[keep] = cols[i], d.IDs[i], d.Cols[i]
			keep++
		}
	}
	cols, d.IDs, d.Cols = cols[:keep], d.IDs[:keep], d.Cols[:keep]
	meta.Columns = cols
	return d, nil
}

// layoutAhead is how many keys layoutKeyed touches (keyedLayout.touch)
// before laying them out.
const layoutAhead = 32

// touch reads, for keys es about to be laid out, the memory key and row
// will read, a level at a time over all of es: the key's bytes and its
// groups' version lists, then each version's ordering-value slots and
// payload, then the ordering values' bytes. A memtable filled in arrival
// order puts each of these in a different place from one key to the
// next, and laying out one key after another waits for each of them in
// turn (a chain of four or five cache misses per key, the cost of a
// flush); read level by level over many keys, the misses of one level
// are independent and overlap, and row then finds the lines in the
// cache. What is read is summed into l.sink so that it is not optimised
// away.
func (l *keyedLayout) touch(es []*keyEntry) {
	var s uint64
	for _, e := range es {
		if len(e.key) > 0 {
			s += uint64(e.key[len(e.key)-1])
		}
		for gi := range e.groups {
			if g := &e.groups[gi]; len(g.vers) > 0 {
				s += g.vers[0].v.Commit + g.vers[len(g.vers)-1].v.Commit
			}
		}
	}
	for _, e := range es {
		for gi := range e.groups {
			vers := e.groups[gi].vers
			for i := range vers {
				v := &vers[i].v
				if len(v.Order) > 0 {
					s += uint64(len(v.Order[0]))
				}
				if len(v.Values) > 0 {
					s += uint64(v.Values[0])
				}
			}
		}
	}
	for _, e := range es {
		for gi := range e.groups {
			vers := e.groups[gi].vers
			for i := range vers {
				if o := vers[i].v.Order; len(o) > 0 && len(o[0]) > 0 {
					s += uint64(o[0][0])
				}
			}
		}
	}
	l.sink += s
}

// key appends the rows of e in (group, commit, seq) order. A group's
// versions and the key's deletes are each kept in position order, so the
// rows are merged from them rather than sorted; the groups are few.
func (l *keyedLayout) key(e *keyEntry) error {
	gs := l.gs[:0]
	for gi := range e.groups {
		gs = append(gs, gi)
	}
	for i := 1; i < len(gs); i++ { // insertion sort by group id
		for j := i; j > 0 && e.groups[gs[j]].id < e.groups[gs[j-1]].id; j-- {
			gs[j], gs[j-1] = gs[j-1], gs[j]
		}
	}
	l.gs = gs
	dels := e.dels
	for _, gi := range gs {
		g := &e.groups[gi]
		if g.id > catalog.DefaultGroup && len(dels) > 0 {
			// Delete markers belong to the default group, which e lacks.
			if err := l.merge(e.key, catalog.DefaultGroup, nil, dels); err != nil {
				return err
			}
			dels = nil
		}
		var gd []version.Pos
		if g.id == catalog.DefaultGroup {
			gd, dels = dels, nil
		}
		if err := l.merge(e.key, g.id, g.vers, gd); err != nil {
			return err
		}
	}
	if len(dels) > 0 {
		return l.merge(e.key, catalog.DefaultGroup, nil, dels)
	}
	return nil
}

// merge appends the rows of one (key, group): its versions vers and
// delete markers dels, each in position order, merged by position. Should
// either not be in order it falls back to sorting.
func (l *keyedLayout) merge(key []byte, group catalog.GroupID, vers []memVersion, dels []version.Pos) error {
	if len(dels) == 0 && inOrder(vers) {
		for i := range vers {
			if err := l.row(key, group, vers[i].v.Pos(), &vers[i]); err != nil {
				return err
			}
		}
		return nil
	}
	rows := l.rows[:0]
	for i := range vers {
		rows = append(rows, keyedRow{group: group, pos: vers[i].v.Pos(), v: &vers[i]})
	}
	for _, p := range dels {
		rows = append(rows, keyedRow{group: group, pos: p})
	}
	slices.SortStableFunc(rows, func(a, b keyedRow) int { return a.pos.Compare(b.pos) })
	l.rows = rows
	for _, r := range rows {
		if err := l.row(key, group, r.pos, r.v); err != nil {
			return err
		}
	}
	return nil
}

// inOrder reports whether vers is in strictly ascending position order.
func inOrder(vers []memVersion) bool {
	for i := 1; i < len(vers); i++ {
		a, b := &vers[i-1].v, &vers[i].v
		if a.Commit > b.Commit || a.Commit == b.Commit && a.Seq >= b.Seq {
			return false
		}
	}
	return true
}

// row appends one part row: version v of key, or a delete marker if v is
// nil.
func (l *keyedLayout) row(key []byte, group catalog.GroupID, pos version.Pos, v *memVersion) error {
	d := l.d
	d.Sort.AppendBytes(key)
	d.Group = append(d.Group, uint16(group))
	d.Commit = append(d.Commit, pos.Commit)
	d.Seq = append(d.Seq, pos.Seq)
	d.Tomb = append(d.Tomb, v == nil)
	buf := l.order[:0]
	if v != nil {
		for _, o := range v.v.Order {
			buf = binary.AppendUvarint(buf, uint64(len(o)))
			buf = append(buf, o...)
		}
	}
	l.order = buf
	d.Order.AppendBytes(buf)
	if v != nil {
		if err := l.payload(v); err != nil {
			return err
		}
	}
	d.Rows++
	return nil
}

// payload decodes a version's payload into the part columns of row
// d.Rows, casting values written under an older type; the columns it
// skips are caught up with NULLs when next written, or at the end.
func (l *keyedLayout) payload(v *memVersion) error {
	lay := v.lay()
	if lay != l.last {
		p := l.planOf(lay)
		if p == nil {
			p = &payloadPlan{lay: lay}
			for j, id := range lay.cols {
				ci, found := slices.BinarySearchFunc(l.cols, id, func(c part.ColumnMeta, id catalog.ColumnID) int { return cmp.Compare(c.ID, id) })
				if !found {
					return errUncountedColumn
				}
				l.seen[ci] = true
				p.cols = append(p.cols, ci)
				p.cast = append(p.cast, lay.types[j] != l.cols[ci].Type)
			}
			l.plans = append(l.plans, p)
		}
		l.last, l.plan = lay, p
	}
	d, b := l.d, v.v.Values
	for j, ci := range l.plan.cols {
		col := d.Cols[ci]
		col.AppendNulls(d.Rows - col.Len())
		if !l.plan.cast[j] {
			rest, err := types.DecodeBinaryTo(col, b)
			if err != nil {
				return err
			}
			b = rest
			continue
		}
		val, rest, err := types.DecodeBinary(lay.types[j], b)
		if err != nil {
			return err
		}
		b = rest
		if val, err = types.Cast(val, l.cols[ci].Type); err != nil {
			return err
		}
		col.Append(val)
	}
	return nil
}

// uvarintLen is the length of x's binary.AppendUvarint encoding.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// appendPartData lays an append memtable out as part rows in (sort key,
// commit, seq) order, seq counting rows within a commit.
func appendPartData(t *catalog.Table, m *appendMem, meta *part.Meta) (*part.Data, error) {
	chunks := m.view()
	ids := map[catalog.ColumnID]bool{}
	for _, c := range chunks {
		for _, id := range c.lay.cols {
			ids[id] = true
		}
	}
	cols, err := partColumns(t, ids)
	if err != nil {
		return nil, err
	}
	meta.Columns = cols
	type row struct {
		key    []byte
		c      *appendChunk
		r      int
		commit uint64
		seq    uint32
	}
	var rows []row
	seq := map[uint64]uint32{}
	for _, c := range chunks {
		keyCols := make([]int, len(t.OrderBy))
		for i, id := range t.OrderBy {
			keyCols[i] = c.lay.index(id)
		}
		for r := 0; r < c.rows; r++ {
			var key []byte
			for _, kc := range keyCols {
				if kc < 0 {
					key = append(key, 0xff)
					continue
				}
				key = types.AppendKeyAt(key, c.cols[kc], r)
			}
			rows = append(rows, row{key: key, c: c, r: r, commit: c.commit, seq: seq[c.commit]})
			seq[c.commit]++
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if k := bytes.Compare(rows[i].key, rows[j].key); k != 0 {
			return k < 0
		}
		if rows[i].commit != rows[j].commit {
			return rows[i].commit < rows[j].commit
		}
		return rows[i].seq < rows[j].seq
	})
	// A chunk written before a column was added lacks it; its rows read
	// the column's introduced default (R6.5), so the part stores that.
	intro := make([]types.Value, len(cols))
	added := make([]uint64, len(cols))
	for ci, cm := range cols {
		intro[ci] = types.Null(cm.Type)
		if c, ok := t.AnyColumn(cm.ID); ok {
			if intro[ci], err = introduced(c, cm.Type); err != nil {
				return nil, fmt.Errorf("storage: column %s: introduced default: %w", c.Name, err)
			}
			added[ci] = c.AddedCommit
		}
	}
	d := newPartData(cols, len(rows))
	for _, r := range rows {
		d.Sort.AppendBytes(r.key)
		d.Commit = append(d.Commit, r.commit)
		d.Seq = append(d.Seq, r.seq)
		for ci, cm := range cols {
			si := r.c.lay.index(cm.ID)
			switch {
			case si < 0 && r.commit <= added[ci]:
				d.Cols[ci].Append(intro[ci])
			case si < 0:
				d.Cols[ci].AppendNull()
			case r.c.lay.types[si] == cm.Type:
				d.Cols[ci].AppendFrom(r.c.cols[si], r.r)
			default:
				v, err := types.Cast(r.c.cols[si].Get(r.r), cm.Type)
				if err != nil {
					return nil, err
				}
				d.Cols[ci].Append(v)
			}
		}
		d.Rows++
	}
	d.Order = nil
	return d, nil
}
