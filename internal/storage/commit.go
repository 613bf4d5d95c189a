package storage

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/wal"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// readyCommit is a durable commit waiting for its turn to be applied.
type readyCommit struct {
	rec  *commitRecord
	cat  *catalog.Catalog // the new catalog of a DDL commit, nil otherwise
	prep *commitPrep      // the writes' entries looked up during the fsync, or nil
	done chan error
}

// Commit makes txn one commit (R5.1) and returns its sequence once it is
// durable (R5.6) and visible in snapshots: Snapshot after Commit returns
// sees it, and every earlier commit.
//
// Under the ordering lock it runs txn.DDL on a clone of the newest catalog,
// checks CatalogVersion, assigns the sequence and submits the WAL record;
// the fsync is waited for outside the lock, so concurrent commits share
// fsyncs (group commit); then commits are applied and published strictly in
// sequence order (invariants 1–3 of doc.go). An error before the sequence is
// assigned (ctx done, DDL error, ErrSchemaChanged, ErrConflict,
// ErrInvalidTxn) takes no number and writes nothing. Once submitted, a
// commit waits for its fsync whatever ctx says, because a durable record
// will be replayed anyway. Every commit but one made under Exclusive
// (Txn.Exclusive) holds the commit gate shared from start to return.
// A failed fsync fails this commit and puts the engine in the failed state
// (ErrFailed): no later commit is accepted until it is reopened.
func (e *Engine) Commit(ctx context.Context, txn *Txn) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if txn.Kind < KindWrite || txn.Kind > KindTransformation {
		return 0, fmt.Errorf("%w: commit kind %d", ErrInvalidTxn, txn.Kind)
	}
	if txn.Exclusive {
		if !e.gateHeld.Load() {
			return 0, fmt.Errorf("%w: Exclusive set without Engine.Exclusive held", ErrInvalidTxn)
		}
	} else {
		e.gate.RLock()
		defer e.gate.RUnlock()
	}
	// The writes are encoded before taking the lock: encoding is the bulk
	// of the work and needs nothing of commit order. A commit without DDL
	// is compressed for the WAL before it too, with a commit time read
	// now: only if a commit that took the lock first got a later time
	// (commit times never go back) is it compressed again under the lock
	// with that time. The record is the same as if built under the lock.
	pb := payloads.Get().(*[]byte)
	payload := encodeWrites((*pb)[:0], txn.Writes)
	defer func() {
		// The WAL copies the record into its batch (or the compressed
		// form into its own), so nothing holds the payload by now.
		if cap(payload) <= maxPooledPayload {
			*pb = payload[:0]
			payloads.Put(pb)
		}
	}()
	body := len(payload)
	var pre wal.Compressed
	var preAt time.Time
	if txn.DDL == nil {
		preAt = e.now()
		payload = appendTrailer(payload, preAt, txn.Kind, txn.Rows, txn.Tables, nil, txn.Checkpoints)
		if len(payload) <= wal.MaxPayload {
			pre = wal.Compress(payload)
			defer pre.Release()
		}
	}

	// The keys of a commit are hashed before the lock too, when an open
	// Watch wants them recorded or the commit is checked against them
	// (conflict.go); a Watch opened meanwhile has them hashed under it.
	var keys, checks commitKeys
	checked := checksReads(txn.Writes) || len(txn.Checks) > 0
	if checked || e.watching.Load() > 0 {
		cat := e.cur.Load().cat
		keys.hashKeys(cat, txn.Writes)
		checks.hashKeys(cat, txn.Checks)
	}

	e.pipe.Lock()
	if e.pipe.closed {
		e.pipe.Unlock()
		return 0, ErrClosed
	}
	if e.pipe.failed != nil {
		err := e.pipe.failed
		e.pipe.Unlock()
		return 0, fmt.Errorf("%w: %v", ErrFailed, err)
	}
	seq := e.pipe.next
	cat := e.pipe.cat
	if txn.CatalogVersion != 0 && (len(txn.Checkpoints) > 0 && txn.CatalogVersion != cat.Commit() ||
		SchemaChanged(cat, txn.Writes, txn.CatalogVersion)) {
		// A transformation's step (Checkpoints) read its sources and its
		// own definition at CatalogVersion: any DDL since, a DROP
		// TRANSFORMATION or an ALTER of a source among them, makes it
		// step again.
		e.pipe.Unlock()
		// The DDL that made cat took its number, but may not be durable
		// and published yet; the caller plans again on the published
		// catalog, which without this wait could still be the one it
		// planned on, for every try it makes.
		e.waitCatalog(ctx, cat.Commit())
		return 0, fmt.Errorf("%w (planned at commit %d, now %d)", ErrSchemaChanged, txn.CatalogVersion, cat.Commit())
	}
	recording := len(e.kw.active) > 0
	if (checked || recording) && !keys.ready {
		keys.hashKeys(cat, txn.Writes)
	}
	if checked {
		err := e.checkConflictsLocked(txn.Writes, &keys)
		if err == nil {
			err = e.checkConflictsLocked(txn.Checks, &checks)
		}
		if err != nil {
			e.pipe.Unlock()
			return 0, err
		}
	}
	var newCat *catalog.Catalog
	var catBytes []byte
	if txn.DDL != nil {
		c := cat.Clone()
		if err := txn.DDL(c, seq); err != nil {
			e.pipe.Unlock()
			return 0, err
		}
		if err := checkEncodedTypes(cat, c); err != nil {
			e.pipe.Unlock()
			return 0, err
		}
		b, err := c.Encode()
		if err != nil {
			e.pipe.Unlock()
			return 0, fmt.Errorf("storage: encode catalog: %w", err)
		}
		newCat, catBytes, cat = c, b, c
	}
	if err := validateWrites(cat, txn.Writes); err != nil {
		e.pipe.Unlock()
		return 0, err
	}
	at := preAt
	if txn.DDL != nil {
		at = e.now()
	}
	if at.Before(e.pipe.lastAt) {
		at = e.pipe.lastAt // never back (R6.7, manifest invariant 5)
	}
	if txn.DDL != nil || !at.Equal(preAt) {
		pre.Release()
		payload = appendTrailer(payload[:body], at, txn.Kind, txn.Rows, txn.Tables, catBytes, txn.Checkpoints)
	}
	if len(payload) > wal.MaxPayload {
		e.pipe.Unlock()
		return 0, fmt.Errorf("storage: commit of %d bytes exceeds the %d-byte limit of one commit", len(payload), wal.MaxPayload)
	}
	var pending wal.Pending
	var err error
	if pre.Ready() {
		pending, err = e.wal.SubmitCompressed(seq, &pre)
	} else {
		pending, err = e.wal.Submit(seq, payload)
	}
	if err != nil {
		e.pipe.failed = err
		e.pipe.Unlock()
		return 0, fmt.Errorf("%w: %v", ErrFailed, err)
	}
	f := flight{writes: txn.Writes}
	if recording {
		e.recordLocked(&keys, seq)
		f.epoch = e.kw.epoch
	}
	if e.pipe.flying == nil {
		e.pipe.flying = map[uint64]flight{}
	}
	e.pipe.flying[seq] = f
	defer e.landed(seq)
	e.pipe.next++
	e.pipe.lastAt = at
	if newCat != nil {
		e.pipe.cat = newCat
	}
	e.inflight.Add(1)
	e.pipe.Unlock()
	defer e.inflight.Done()

	// A large record is written now and its fsync overlaps the lookups
	// below (wal.Pending.Start); Wait syncs it. While the WAL record is
	// written and fsynced, look up the memtable entries of the writes'
	// keys (prepare.go): reads only, so nothing of the commit is visible
	// or left behind if the fsync fails; the entries are applied only
	// once it is durable.
	pending.Start()
	var prep *commitPrep
	if newCat == nil {
		prep = e.prepare(txn.Writes)
		defer e.releasePrep(prep)
	}
	if err := pending.Wait(context.Background()); err != nil {
		e.fail(err)
		return 0, fmt.Errorf("%w: commit %d is not durable: %w", ErrFailed, seq, err)
	}
	rec := &commitRecord{commit: seq, at: at, kind: txn.Kind, tables: txn.Tables, rows: txn.Rows, catalog: catBytes, writes: txn.Writes, checkpoints: txn.Checkpoints}
	if err := e.applyInOrder(&readyCommit{rec: rec, cat: newCat, prep: prep, done: make(chan error, 1)}); err != nil {
		return seq, err
	}
	e.lastCommit.Store(int64(time.Since(e.opened)))
	return seq, nil
}

// waitCatalog waits until the published state's catalog is the one of
// commit at least, the engine fails or closes, or ctx ends. A DDL is
// published one fsync (and a manifest sync) after it took its number, so
// it polls, from 50 µs up to 2 ms apart; a DDL is rare, the wait short.
func (e *Engine) waitCatalog(ctx context.Context, commit uint64) {
	pause := 50 * time.Microsecond
	for e.cur.Load().cat.Commit() < commit {
		if ctx.Err() != nil || e.failed() != nil {
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, 2*time.Millisecond)
	}
}

// payloads pools commit payload buffers. A 1 000-row commit's payload is a
// few hundred KiB, which a new allocation clears (and, while the heap
// grows, maps in page by page) on the committing goroutine every commit.
var payloads = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledPayload is the largest payload buffer payloads keeps: a rare
// huge commit's is left to the collector.
const maxPooledPayload = 16 << 20

// now reads the clock for a commit time, to the microsecond, the precision
// system.commits shows (DATETIME64(6)), so AS OF TIMESTAMP of a
// committed_at read back from it finds that very commit (R6.7). Commits
// read it before taking the ordering lock, so clockMu keeps a Clock from
// being called by two at once, as it was under that lock.
func (e *Engine) now() time.Time {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	return e.opts.Clock().UTC().Truncate(time.Microsecond)
}

// applyInOrder queues a durable commit and applies every queued commit
// whose predecessors are applied, then waits for its own (invariant 3).
func (e *Engine) applyInOrder(rc *readyCommit) error {
	e.ap.Lock()
	e.ap.ready[rc.rec.commit] = rc
	for {
		next := e.ap.ready[e.ap.applied+1]
		if next == nil {
			break
		}
		if e.mustWaitLocked() {
			// A memtable is full while the previous one is still being
			// flushed: wait for that flush (back-pressure, flush.go). The
			// wait releases e.ap; whoever holds it next may apply next.
			e.fl.cond.Wait()
			continue
		}
		delete(e.ap.ready, next.rec.commit)
		err := e.applyRecord(next.rec, next.cat, next.prep, false)
		if err == nil && next.cat != nil {
			// Every DDL is a commit, and the catalog lives in the manifest
			// with the commits up to it.
			err = e.syncManifest(e.cur.Load())
			// A DDL may bind a placement policy, whose moves need no
			// write to start them (placement.go).
			e.kickMerges()
		}
		if err == nil {
			// A full memtable is frozen and flushed in the background.
			e.maybeFreezeLocked()
		}
		if err != nil {
			e.fail(err)
			err = fmt.Errorf("%w: commit %d is durable but could not be applied: %v", ErrFailed, next.rec.commit, err)
		}
		e.ap.applied = next.rec.commit
		next.done <- err
	}
	e.ap.Unlock()
	return <-rc.done
}

// applyRecord applies one commit to the memtables and publishes the state
// at it. On replay, writes to tables the catalog no longer has (dropped
// later) and to shards already flushed past the commit are skipped.
//
// prep, when not nil, holds the entries of the writes' keys looked up
// before the commit was durable (prepare.go); what of it still holds is
// used, the rest looked up again.
func (e *Engine) applyRecord(rec *commitRecord, cat *catalog.Catalog, prep *commitPrep, replay bool) error {
	old := e.cur.Load()
	st := &state{commit: max(old.commit, rec.commit), cat: old.cat, tables: old.tables, commits: old.commits, gen: old.gen}
	if cat != nil {
		st.cat = cat
		ms := e.man.Snapshot()
		st.tables = make(map[catalog.TableID]*tableData, len(old.tables)+1)
		for _, t := range cat.Tables() {
			if td, ok := old.tables[t.ID]; ok {
				st.tables[t.ID] = td
			} else {
				st.tables[t.ID] = e.newTableData(t, ms.Shards(uint64(t.ID)))
			}
		}
	}
	if rec.commit > uint64(len(old.commits)) {
		st.commits = append(old.commits, CommitInfo{Commit: rec.commit, At: rec.at, Kind: rec.kind, Tables: rec.tables, Rows: rec.rows})
	}
	var seq uint32
	var scratch []byte
	if len(rec.writes) > 0 {
		e.applyingAt.Store(rec.at.UnixNano())
		e.applyingCommit.Store(rec.commit)
		defer e.applyingCommit.Store(0)
	}
	for i := range rec.writes {
		w := &rec.writes[i]
		td := st.tables[w.Table]
		t, ok := st.cat.TableByID(w.Table)
		if td == nil || !ok {
			if replay {
				seq += uint32(w.Batch.Rows)
				continue
			}
			return fmt.Errorf("storage: commit %d writes unknown table %d", rec.commit, w.Table)
		}
		if err := e.applyWrite(td, t, w, rec.commit, seq, &scratch, prep.write(i)); err != nil {
			return err
		}
		seq += uint32(w.Batch.Rows)
	}
	e.ckpt.note(rec.commit, rec.checkpoints)
	e.cur.Store(st)
	return nil
}

// colPos returns the position of column id in w, -1 if w lacks it.
func colPos(w *Write, id catalog.ColumnID) int {
	for i, c := range w.Cols {
		if c == id {
			return i
		}
	}
	return -1
}

// routed reports whether routeRows places w's rows by their values alone,
// not round robin: then the placement a prepare computed is the one an
// apply would, as long as the shards are the same.
func routed(td *tableData, t *catalog.Table) bool {
	return len(td.shards) == 1 || len(t.ShardColumns()) > 0
}

// routeRows places the rows of w in td's shards by a hash of the SHARD BY
// columns' key encodings; a table with one shard, or no shard columns (an
// append table without SHARD BY, whose rows may go anywhere), skips
// hashing.
func routeRows(td *tableData, t *catalog.Table, w *Write, commit uint64, scratch *[]byte) ([][]int, error) {
	rows := w.Batch.Rows
	perShard := make([][]int, len(td.shards))
	shardCols := t.ShardColumns()
	if len(td.shards) == 1 || len(shardCols) == 0 {
		s := 0
		if len(td.shards) > 1 {
			s = int(td.rr.Add(1) % uint64(len(td.shards)))
		}
		all := make([]int, rows)
		for r := range all {
			all[r] = r
		}
		perShard[s] = all
		return perShard, nil
	}
	sp := make([]int, len(shardCols))
	for i, id := range shardCols {
		if sp[i] = colPos(w, id); sp[i] < 0 {
			return nil, fmt.Errorf("storage: commit %d: write lacks shard column %d", commit, id)
		}
	}
	for r := 0; r < rows; r++ {
		buf := (*scratch)[:0]
		for _, p := range sp {
			buf = types.AppendKeyAt(buf, w.Batch.Cols[p], r)
		}
		*scratch = buf
		s := td.shardOf(shardHash(buf))
		perShard[s] = append(perShard[s], r)
	}
	return perShard, nil
}

// keyPositions returns the batch positions of t's ORDER BY columns in w.
func keyPositions(t *catalog.Table, w *Write, commit uint64, dst []int) ([]int, error) {
	for _, id := range t.OrderBy {
		p := colPos(w, id)
		if p < 0 {
			return nil, fmt.Errorf("storage: commit %d: write lacks key column %d", commit, id)
		}
		dst = append(dst, p)
	}
	return dst, nil
}

// applyWrite places the rows of one write in their shards and applies them.
// wp is the write's prepare (prepare.go) or nil.
func (e *Engine) applyWrite(td *tableData, t *catalog.Table, w *Write, commit uint64, seq0 uint32, scratch *[]byte, wp *writePrep) error {
	if w.Batch.Rows == 0 {
		return nil
	}
	var perShard [][]int
	if wp.valid(td) {
		perShard = wp.perShard
	} else {
		wp = nil
		var err error
		if perShard, err = routeRows(td, t, w, commit, scratch); err != nil {
			return err
		}
	}
	flushed := func(sd *shardData) bool {
		return e.replayFlushed != nil && commit <= e.replayFlushed(t.ID, sd.num)
	}

	if !td.keyed {
		lay := &layout{cols: w.Cols, types: batchTypes(w.Batch), t: t}
		for s, rs := range perShard {
			if len(rs) > 0 && !flushed(td.shards[s]) {
				td.shards[s].app.add(w, lay, rs, commit)
			}
		}
		return nil
	}
	kw, err := newKeyedWrite(t, w, commit, seq0)
	if err != nil {
		return err
	}
	kw.ord.Horizon = e.horizonFn(t)
	for s, rs := range perShard {
		if len(rs) == 0 || flushed(td.shards[s]) {
			continue
		}
		m := td.shards[s].keyed
		var err error
		if w.Kind == WriteDelete {
			err = m.applyDeletes(kw, rs, commit, scratch)
		} else {
			err = m.applyVersions(kw, rs, commit, scratch, wp.shard(s))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// newKeyedWrite prepares keyed write w of t, at commit, for applying.
func newKeyedWrite(t *catalog.Table, w *Write, commit uint64, seq0 uint32) (*keyedWrite, error) {
	kw := &keyedWrite{w: w, seq0: seq0, groups: len(t.Groups)}
	var err error
	if kw.keyPos, err = keyPositions(t, w, commit, nil); err != nil {
		return nil, err
	}
	if w.Kind == WriteVersion {
		g, ok := t.GroupByID(w.Group)
		if !ok {
			return nil, fmt.Errorf("storage: commit %d: unknown group %d", commit, w.Group)
		}
		kw.ord = ordering(t, g)
		if err := versionPositions(t, g, w, commit, kw); err != nil {
			return nil, err
		}
		lay := &layout{t: t}
		for _, i := range kw.payPos {
			lay.cols = append(lay.cols, w.Cols[i])
			lay.types = append(lay.types, w.Batch.Cols[i].Type())
		}
		kw.lay = internLayout(lay)
	}
	return kw, nil
}

// versionPositions fills kw.ordPos and kw.payPos for a version write w to
// group g of t: the batch positions of g's VALID BY then REVISION BY
// columns, and of the payload (non-key) columns in ascending column id
// order, whatever order the write lists them in, so that a flushed
// version's payload can be rebuilt byte for byte from its part row and
// repeats are recognised across flushes (R3.4).
func versionPositions(t *catalog.Table, g *catalog.Group, w *Write, commit uint64, kw *keyedWrite) error {
	kw.ordPos, kw.payPos = kw.ordPos[:0], kw.payPos[:0]
	for _, ids := range [2][]catalog.ColumnID{g.ValidBy, g.RevisionBy} {
		for _, id := range ids {
			p := colPos(w, id)
			if p < 0 {
				return fmt.Errorf("storage: commit %d: write lacks ordering column %d", commit, id)
			}
			kw.ordPos = append(kw.ordPos, p)
		}
	}
	for i, id := range w.Cols {
		if !t.IsKey(id) {
			kw.payPos = append(kw.payPos, i)
		}
	}
	slices.SortFunc(kw.payPos, func(a, b int) int { return cmp.Compare(w.Cols[a], w.Cols[b]) })
	return nil
}

// SchemaChanged reports whether a DDL committed after since, the catalog
// commit writes were planned against, changed what they depend on: a
// table they write was created, altered (any ALTER TABLE: columns, types,
// defaults, groups, policies) or dropped since, or a transformation that
// maintains it was created since (R12.3). DDL on other objects does not:
// a transaction open across CREATE TABLE elsewhere still commits, as in
// PostgreSQL; the statement or transaction whose table changed is retried
// (ErrSchemaChanged, 40001).
func SchemaChanged(cat *catalog.Catalog, writes []Write, since uint64) bool {
	switch {
	case since == cat.Commit():
		return false
	case since > cat.Commit():
		return true // planned on no catalog this one descends from
	}
	for i := range writes {
		t, ok := cat.TableByID(writes[i].Table)
		if !ok || t.CreatedCommit > since || t.AlteredCommit > since {
			return true
		}
		for _, x := range cat.Transformations() {
			if x.Target == t.ID && x.CreatedCommit > since {
				return true
			}
		}
	}
	return false
}

// ordering is the version.Ordering of group g: its ordering columns' names
// and a printer of their encoded values for reasons (R7.1).
func ordering(t *catalog.Table, g *catalog.Group) version.Ordering {
	k := orderingKey{t, g.ID}
	orderings.mu.RLock()
	o, ok := orderings.m[k]
	orderings.mu.RUnlock()
	if ok {
		return o
	}
	o = buildOrdering(t, g)
	orderings.mu.Lock()
	if orderings.m == nil || len(orderings.m) >= maxOrderings {
		orderings.m = map[orderingKey]version.Ordering{}
	}
	orderings.m[k] = o
	orderings.mu.Unlock()
	return o
}

// Orderings are kept per catalog table and group: a read of one key's
// versions built its groups' orderings anew (names, types, a printer:
// a tenth of its allocations), as each commit did for the groups it
// writes. A catalog table is immutable (DDL makes a new one), so its
// pointer names what the ordering was built from; the cache is emptied
// when it passes maxOrderings entries, which bounds what it keeps of
// dropped tables.
var orderings struct {
	mu sync.RWMutex
	m  map[orderingKey]version.Ordering
}

type orderingKey struct {
	t *catalog.Table
	g catalog.GroupID
}

const maxOrderings = 1024

// buildOrdering is ordering without the cache.
func buildOrdering(t *catalog.Table, g *catalog.Group) version.Ordering {
	ids := append(append([]catalog.ColumnID(nil), g.ValidBy...), g.RevisionBy...)
	ts := make([]types.Type, len(ids))
	ord := version.Ordering{Same: sameValues}
	for i, id := range ids {
		name := fmt.Sprintf("column %d", id)
		if c, ok := t.AnyColumn(id); ok {
			name, ts[i] = c.Name, c.Type
		}
		if i < len(g.ValidBy) {
			ord.Valid = append(ord.Valid, name)
		} else {
			ord.Revision = append(ord.Revision, name)
		}
	}
	ord.Format = func(dst []byte, col int, enc []byte) []byte {
		if col < 0 || col >= len(ts) {
			return hex.AppendEncode(dst, enc)
		}
		v, _, err := types.DecodeKey(ts[col], enc)
		if err != nil {
			return hex.AppendEncode(dst, enc)
		}
		return types.AppendText(dst, v)
	}
	return ord
}

// shardHash hashes the key encoding of a row's shard columns. FNV-1a is
// stable across processes and builds (a row's shard must never move); the
// final mix spreads its weak high bits over the ranges.
func shardHash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func batchTypes(b *types.Batch) []types.Type {
	ts := make([]types.Type, len(b.Cols))
	for i, c := range b.Cols {
		ts[i] = c.Type()
	}
	return ts
}

// validateWrites checks the writes of a Txn against the catalog they will
// be applied under (api.go): the cheap, per-write checks that keep a bad
// Txn from taking a sequence. Values are the caller's to validate.
func validateWrites(cat *catalog.Catalog, ws []Write) error {
	for i := range ws {
		w := &ws[i]
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: write %d: %s", ErrInvalidTxn, i, fmt.Sprintf(format, args...))
		}
		t, ok := cat.TableByID(w.Table)
		if !ok {
			return bad("no table %d", w.Table)
		}
		if w.Batch == nil || len(w.Batch.Cols) != len(w.Cols) {
			return bad("batch does not match its %d columns", len(w.Cols))
		}
		cols := map[catalog.ColumnID]bool{}
		for c, id := range w.Cols {
			col, ok := t.ColumnByID(id)
			if !ok {
				return bad("table %s has no column %d", t.Name, id)
			}
			if cols[id] {
				return bad("column %s twice", col.Name)
			}
			cols[id] = true
			if vt := w.Batch.Cols[c].Type(); vt != col.Type {
				return bad("column %s holds %s, not its type %s", col.Name, vt, col.Type)
			}
			if w.Batch.Cols[c].Len() != w.Batch.Rows {
				return bad("column %s has %d rows, the batch %d", col.Name, w.Batch.Cols[c].Len(), w.Batch.Rows)
			}
		}
		switch w.Kind {
		case WriteAppend:
			if t.Keyed() {
				return bad("append to %s table %s", t.Mode, t.Name)
			}
		case WriteVersion, WriteDelete:
			if !t.Keyed() {
				return bad("keyed write to append table %s", t.Name)
			}
			for _, id := range t.Key {
				if !cols[id] {
					return bad("key column %d missing", id)
				}
			}
			if w.Kind == WriteDelete {
				if len(w.Cols) != len(t.Key) {
					return bad("a delete holds the key columns only")
				}
				continue
			}
			g, ok := t.GroupByID(w.Group)
			if !ok {
				return bad("table %s has no group %d", t.Name, w.Group)
			}
			for _, id := range w.Cols {
				if c, _ := t.ColumnByID(id); !t.IsKey(id) && c.Group != g.ID {
					return bad("column %s is not in group %s", c.Name, g.Name)
				}
			}
			for _, id := range append(append([]catalog.ColumnID(nil), g.ValidBy...), g.RevisionBy...) {
				if !cols[id] {
					return bad("ordering column %d of group %s missing", id, g.Name)
				}
			}
		default:
			return bad("write kind %d", w.Kind)
		}
	}
	return nil
}

// checkEncodedTypes refuses a DDL that changes the type of a column whose
// values storage keeps as memcmp encodings (ORDER BY/key, SHARD BY, VALID BY
// and REVISION BY columns) in a way that changes the encoding. Integer and
// float encodings do not depend on the width (types.AppendKey), so widening
// those keeps stored keys equal, ordered and in their shard; a DECIMAL scale
// change would not, and would need a rewrite of the data, which R8.2 rules
// out. The catalog refuses the same; this is the storage-side guard.
func checkEncodedTypes(old, cat *catalog.Catalog) error {
	for _, t := range cat.Tables() {
		ot, ok := old.TableByID(t.ID)
		if !ok {
			continue
		}
		encoded := append([]catalog.ColumnID(nil), t.OrderBy...)
		for _, g := range t.Groups {
			encoded = append(append(encoded, g.ValidBy...), g.RevisionBy...)
		}
		for _, id := range encoded {
			c, ok1 := t.AnyColumn(id)
			oc, ok2 := ot.AnyColumn(id)
			if ok1 && ok2 && !types.KeyStable(oc.Type, c.Type) {
				return &catalog.Error{Code: catalog.CodeFeatureNotSupported, Msg: fmt.Sprintf(
					"cannot change the type of column %s of table %s: it is an ORDER BY, key or ordering column, whose stored values are sorted by their encoding at the old width",
					c.Name, t.Name)}
			}
		}
	}
	return nil
}
