package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/merge"
	"github.com/strata-db/strata/internal/storage/part"
)

// MergeOption changes what MergeNow does.
type MergeOption uint8

// The options of MergeNow.
const (
	// MergeFull merges every shard down to its final runs instead of
	// stopping where the policy would: a versioned shard to one current and
	// one history run, an upsert shard to one current run, an append shard
	// to one run. Benchmarks and tests use it to read merged data.
	MergeFull MergeOption = iota + 1
)

// MergeNow flushes every memtable and then merges synchronously until
// nothing is left to do, then splits the SHARDS AUTO shards that outgrew
// Options.ShardSplitBytes (shardsplit.go): by default what the compaction policy
// (merge.Choose, with the table's bound compaction settings) asks for, with
// MergeFull every shard down to its final runs. It returns ctx's error if
// ctx ends between two merges; a merge already started is finished. Reads
// and commits go on meanwhile, and no result changes: a merge takes no
// commit number (R5.1) and only swaps parts for parts holding the same
// versions (docs/storage-merges.md). Merges are serialised with the
// background merger's.
func (e *Engine) MergeNow(ctx context.Context, opts ...MergeOption) error {
	full := slices.Contains(opts, MergeFull)
	if err := e.failed(); err != nil {
		return err
	}
	if err := e.Flush(ctx); err != nil {
		return err
	}
	e.mergeMu.Lock()
	defer e.mergeMu.Unlock()
	// The caller waits for the merges: it gets the shards the background
	// merger would leave once the engine went idle, folds included.
	return e.mergeLoop(ctx, full, false, func() bool { return true })
}

// mergeLoop runs merges until none is due. It runs under mergeMu, so the
// parts a job chose stay live until the job retires them: nothing else
// removes parts of a table that still exists. paced merges give way to
// foreground reads (paceMerge): the background merger's are, MergeNow's,
// which a caller waits for, are not. Once the policy wants no merge, a
// shard may be due a fold into its final runs (merge.Settles): settle,
// when not nil, is asked whether to run it now (the background merger
// folds only an idle engine); each shard is folded at most once per call.
func (e *Engine) mergeLoop(ctx context.Context, full, paced bool, settle func() bool) error {
	done := map[shardKey]bool{}
	// expiredNow holds the shards merged for retention by this call: once
	// is enough, and the policy's merges of them go on.
	expiredNow := map[shardKey]bool{}
	var expireAt time.Time // the instant of this call's merges for retention
	var expireUpTo uint64  // and the last commit before it
	flushed := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.failed(); err != nil {
			return err
		}
		job, ok := e.nextMerge(full, !paced, done, expiredNow)
		if !ok && !full && settle != nil {
			if job, ok = e.nextSettle(done); ok && !settle() {
				ok = false
			}
			// A fold takes in what the shard's memtables hold too: an
			// idle shard's last commits, left out, would be flushed later
			// into a delta too small to be folded again (SettleRatio),
			// and every lookup of its keys would take the parts path
			// (bench/ medium: 15 % of the keys, twice the cost). So the
			// memtables are flushed first, once per call, and the merges
			// chosen again with the new part.
			if ok && !flushed && e.memHolds(job.table, job.shard) {
				flushed = true
				if err := e.Flush(ctx); err != nil {
					return err
				}
				continue
			}
		}
		if !ok {
			// Splits come after merges: a split rewrites every part of
			// its shard, cheaper once they are merged. AS OF indexes
			// come last: a run a merge or split is about to rewrite
			// would lose its index at once.
			if err := e.splitLoop(); err != nil {
				return err
			}
			if err := e.indexLoop(ctx, paced); err != nil {
				return err
			}
			// Parts old enough move to their table's object store once
			// merges and AS OF indexes are done with them (tier.go).
			if err := e.tierLoop(ctx); err != nil {
				return err
			}
			// The rest go to their shard's placement volume (placement.go).
			if err := e.placeLoop(ctx); err != nil {
				return err
			}
			if settle == nil {
				return nil
			}
			return e.prewarmLoop(ctx, paced, settle)
		}
		if job.plan.Why == merge.Expire && e.keepsHistory(job.table) {
			// Versions expire only in a merge of every version of the
			// shard committed before the instant they are judged at
			// (merge.Expiry): take the instant, flush, merge it all. One
			// instant and one flush serve every such merge of this call:
			// no later commit is dated before the instant.
			if expireAt.IsZero() {
				at, upTo, err := e.expiryInstant(ctx)
				if err != nil {
					return err
				}
				if err := e.Flush(ctx); err != nil {
					return err
				}
				expireAt, expireUpTo = at, upTo
			}
			at := expireAt
			key := shardKey{job.table, job.shard}
			var ok bool
			if job, ok = e.shardJob(key.table, key.shard, merge.Expire); !ok {
				expiredNow[key] = true
				continue
			}
			job.expireAt, job.expireUpTo = at, expireUpTo
		}
		if err := e.runMerge(job, paced); err != nil {
			return err
		}
		if job.plan.Why == merge.Expire {
			expiredNow[shardKey{job.table, job.shard}] = true
		}
		if full || job.plan.Why == merge.Settle {
			// One full merge leaves a shard final; commits that arrive
			// meanwhile are for the next MergeNow, or the next idle spell.
			done[shardKey{job.table, job.shard}] = true
		}
	}
}

// memHolds reports whether shard of table has rows in its memtables (the
// frozen one included) in the published state.
func (e *Engine) memHolds(table catalog.TableID, shard uint32) bool {
	ts, ok := e.cur.Load().tables[table]
	if !ok {
		return false
	}
	for _, sd := range ts.shards {
		if sd.num != shard {
			continue
		}
		for _, m := range sd.memtables() {
			if !m.empty() {
				return true
			}
		}
	}
	return false
}

// shardKey names one shard of one table.
type shardKey struct {
	table catalog.TableID
	shard uint32
}

// mergeJob is one merge chosen for one shard.
type mergeJob struct {
	table  catalog.TableID
	shard  uint32
	plan   merge.Plan
	inputs []*partFile // in plan.Inputs order
	// expireAt, for a versioned table, is the instant its retention is
	// judged at for the merge, zero when the merge expires no version:
	// only a merge of every part after a flush may (merge.Expiry).
	expireAt time.Time
	// expireUpTo is the last commit made before expireAt: the retention
	// settings in force there are the merge's.
	expireUpTo uint64
}

// keepsHistory reports whether table id is a versioned table.
func (e *Engine) keepsHistory(id catalog.TableID) bool {
	t, ok := e.cur.Load().cat.TableByID(id)
	return ok && t.Mode == catalog.ModeVersioned
}

// shardJob is the merge of every part of shard num of table, for why.
func (e *Engine) shardJob(table catalog.TableID, num uint32, why merge.Why) (mergeJob, bool) {
	return e.firstJob(nil, func(_ *state, t *catalog.Table, n uint32, mps []manifest.Part) (merge.Plan, bool) {
		if t.ID != table || n != num {
			return merge.Plan{}, false
		}
		return merge.Full(mps, why), true
	})
}

// failed returns the error that put the engine in the failed state, or
// ErrClosed once Close began.
func (e *Engine) failed() error {
	e.pipe.Lock()
	defer e.pipe.Unlock()
	if e.pipe.failed != nil {
		return fmt.Errorf("%w: %v", ErrFailed, e.pipe.failed)
	}
	if e.pipe.closed {
		return ErrClosed
	}
	return nil
}

// nextMerge looks at every shard of the published state, tables and
// shards in id order, and returns the first merge due: to drop what
// retention expired (at once when expireNow, for MergeNow's caller), by
// the policy, or to final runs when full.
func (e *Engine) nextMerge(full, expireNow bool, done, expiredNow map[shardKey]bool) (mergeJob, bool) {
	set := func(st *state, t *catalog.Table) merge.Settings {
		return merge.SettingsOf(st.cat.Bound(t, catalog.RoleCompaction))
	}
	return e.firstJob(done, func(st *state, t *catalog.Table, num uint32, mps []manifest.Part) (merge.Plan, bool) {
		// A shard this call merged for retention already is not looked
		// at for it again.
		if !expiredNow[shardKey{t.ID, num}] {
			if h, ok := e.expiryDue(st, t, num, mps, expireNow); ok {
				if full || t.Mode == catalog.ModeVersioned {
					// A versioned shard expires whole (mergeLoop).
					return merge.Full(mps, merge.Expire), true
				}
				if p, ok := merge.Through(mps, h, merge.Expire); ok {
					return p, true
				}
			}
		}
		if full {
			if finalRuns(t, mps) {
				return merge.Plan{}, false
			}
			return merge.Full(mps, merge.Budget), true
		}
		return merge.Choose(mps, set(st, t))
	})
}

// nextSettle returns the first fold of an idle shard due (merge.Settles).
func (e *Engine) nextSettle(done map[shardKey]bool) (mergeJob, bool) {
	return e.firstJob(done, func(_ *state, t *catalog.Table, _ uint32, mps []manifest.Part) (merge.Plan, bool) {
		return merge.Settles(mps, finalRuns(t, mps))
	})
}

// firstJob runs choose over every shard with parts of the published state
// not in done, tables and shards in id order, and returns the first merge
// it plans.
func (e *Engine) firstJob(done map[shardKey]bool, choose func(st *state, t *catalog.Table, shard uint32, mps []manifest.Part) (merge.Plan, bool)) (mergeJob, bool) {
	st := e.cur.Load()
	for _, id := range st.tableIDs() {
		t, ok := st.cat.TableByID(id)
		if !ok {
			continue
		}
		for _, sd := range st.tables[id].shards {
			if len(sd.parts) == 0 || done[shardKey{id, sd.num}] {
				continue
			}
			mps := make([]manifest.Part, len(sd.parts))
			byID := make(map[uint64]*partFile, len(sd.parts))
			for i, pf := range sd.parts {
				mps[i] = pf.man
				byID[pf.man.ID] = pf
			}
			plan, ok := choose(st, t, sd.num, mps)
			if !ok {
				continue
			}
			job := mergeJob{table: id, shard: sd.num, plan: plan}
			for _, p := range plan.Inputs {
				job.inputs = append(job.inputs, byID[p.ID])
			}
			return job, true
		}
	}
	return mergeJob{}, false
}

// finalRuns reports whether a shard's parts are already what a full merge
// would write: one run, and for a keyed table no delta part in it.
func finalRuns(t *catalog.Table, parts []manifest.Part) bool {
	if len(merge.Runs(parts)) != 1 {
		return false
	}
	if !t.Keyed() {
		return true
	}
	for _, p := range parts {
		if p.Kind == manifest.KindDelta {
			return false
		}
	}
	return true
}

// runMerge merges one job's inputs into new parts, makes them durable,
// swaps them for the inputs in ONE manifest edit, publishes the state and
// retires the inputs with the generation that held them
// (docs/storage-merges.md, "A merge, step by step").
// A failure before the edit leaves the inputs live and removes every
// output; the engine goes on. A failed manifest commit fails the engine,
// as it does for a flush.
func (e *Engine) runMerge(job mergeJob, paced bool) error {
	st := e.cur.Load()
	t, ok := st.cat.TableByID(job.table)
	if !ok {
		return nil // dropped since the job was chosen
	}
	// Hold the inputs while reading them: under mergeMu no merge retires
	// them, but a DROP TABLE and the next flush may (the generation that
	// named them goes); then the job is stale.
	for i, pf := range job.inputs {
		if !pf.refs.acquire() {
			for _, q := range job.inputs[:i] {
				q.refs.release()
			}
			return nil
		}
	}
	defer func() {
		for _, pf := range job.inputs {
			pf.refs.release()
		}
	}()
	readers := make([]*part.Reader, len(job.inputs))
	lo, hi := job.inputs[0].man.MinCommit, job.inputs[0].man.MaxCommit
	for i, pf := range job.inputs {
		readers[i] = pf.r
		lo, hi = min(lo, pf.man.MinCommit), max(hi, pf.man.MaxCommit)
	}
	start := time.Now()
	var pace func()
	if paced {
		pace = e.paceMerge
	}
	// Append rows expire in any merge; versions only in one that holds
	// every version committed before its instant (job.expireAt).
	// judged is the clock reading the merge expires at, recorded with
	// its edit (manifest.Edit.RetentionClock).
	var (
		ret    Retention
		judged time.Time
	)
	switch {
	case t.Mode == catalog.ModeAppend:
		if retains(t) {
			// To the microsecond, as commit times are (e.now): the
			// reading floors them after a restart.
			judged = e.retentionClock().UTC().Truncate(time.Microsecond)
			ret = retentionOf(st.cat, t, judged, st.commit, st.commits[:min(len(st.commits), int(st.commit))])
		}
	case !job.expireAt.IsZero():
		if retains(t) {
			judged = job.expireAt
			ret = retentionOf(st.cat, t, judged, job.expireUpTo, st.commits[:min(len(st.commits), int(st.commit))])
		}
	}
	expire, err := expiryOf(t, ret)
	if err != nil {
		return fmt.Errorf("storage: merge table %s shard %d: %w", t.Name, job.shard, err)
	}
	// Where each output went (newPartSlot); Merge calls Create from this
	// goroutine, one output at a time.
	slots := map[string]partSlot{}
	outs, stats, err := merge.Merge(readers, merge.Options{
		Table: t, FS: e.fs, Shard: job.shard, Level: job.plan.Level, Oldest: job.plan.Oldest, Expire: expire, Horizon: e.horizonFn(t),
		PartRows: e.opts.MergePartRows,
		Write:    part.WriteOptions{BlockRows: flushBlockRows, Warm: e.warmMerge(job.plan.Why), Pace: pace, IndexCols: e.indexCols(t.ID)},
		Pace:     pace,
		Create: func(part.Kind) (string, uint64, error) {
			id, err := e.man.NextPartID()
			if err != nil {
				return "", 0, err
			}
			slot := e.newPartSlot(t, job.shard, id)
			slots[slot.path] = slot
			return slot.path, id, nil
		},
	})
	if err != nil {
		// A volume that failed gets no outputs of the next try
		// (placement.go).
		select {
		case <-e.closing:
		default:
			for _, slot := range slots {
				e.slotFailed(slot, err)
			}
		}
		return fmt.Errorf("storage: merge table %s shard %d: %w", t.Name, job.shard, err)
	}
	files := make([]*partFile, 0, len(outs))
	drop := func() {
		for _, pf := range files {
			_ = pf.r.Close()
		}
		for _, o := range outs {
			_ = e.fs.Remove(o.Part.File)
		}
	}
	now := time.Now().UTC()
	for _, o := range outs {
		path := o.Part.File
		r, err := part.OpenCached(e.fs, path, e.pages)
		if err != nil {
			drop()
			return fmt.Errorf("storage: merge table %s shard %d: %w", t.Name, job.shard, err)
		}
		mp := o.Part
		mp.File, mp.Location = slots[path].file, slots[path].loc
		mp.CreatedAt = now
		// Every output claims the whole commit range of the merge, so that
		// merge.Runs groups the outputs into one run again (a current part
		// and a history part, or two key ranges of one run, may hold
		// disjoint commits). A wider range only makes AS OF skip less.
		mp.MinCommit, mp.MaxCommit = lo, hi
		files = append(files, newPartFile(e.fs, path, mp, r))
	}
	var ed manifest.Edit
	if ret.Active() {
		ed.RetentionClock = judged
	}
	for _, pf := range job.inputs {
		ed.RemoveParts = append(ed.RemoveParts, pf.man.Ref())
	}
	for _, pf := range files {
		ed.AddParts = append(ed.AddParts, pf.man)
	}
	if err := e.publishMerge(job, ed, files); err != nil {
		drop()
		if errors.Is(err, errMergeStale) {
			return nil
		}
		return err
	}
	if ret.Active() && job.plan.Oldest && (job.plan.Why == merge.Expire || len(job.inputs) == shardParts(st, job.table, job.shard)) {
		if e.expired == nil {
			e.expired = map[shardKey]time.Time{}
		}
		e.expired[shardKey{t.ID, job.shard}] = ret.Cutoff
	}
	e.log.Debug("storage: merged", "table", t.Name, "shard", job.shard, "why", job.plan.Why.String(),
		"inputs", len(job.inputs), "outputs", len(files), "rows_in", stats.In, "rows_out", stats.Out,
		"expired", stats.Expired, "took", time.Since(start))
	return nil
}

// tableIDs returns the ids of st's tables in ascending order.
func (st *state) tableIDs() []catalog.TableID {
	ids := make([]catalog.TableID, 0, len(st.tables))
	for id := range st.tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// shardParts returns how many parts shard num of table holds in st.
func shardParts(st *state, table catalog.TableID, num uint32) int {
	if td, ok := st.tables[table]; ok {
		for _, sd := range td.shards {
			if sd.num == num {
				return len(sd.parts)
			}
		}
	}
	return -1
}

// errMergeStale says a merge's shard changed under it (the table was
// dropped or its inputs are gone); its outputs are dropped, nothing failed.
var errMergeStale = errors.New("storage: merge inputs are no longer live")

// publishMerge applies the merge's edit and publishes the state with the
// outputs in place of the inputs (publishShard).
//
// The shard's AS OF index follows its run: a merge that rewrote the run
// (an input is a current or history part) removes the old index in the
// same edit (the new run gets its own once merges are done, indexLoop);
// any other merge leaves the index as it was.
func (e *Engine) publishMerge(job mergeJob, ed manifest.Edit, outs []*partFile) error {
	err := e.publishShard(job.table, job.shard, "merge", func(sd *shardData) (manifest.Edit, *shardData, error) {
		inputs := make(map[*partFile]bool, len(job.inputs))
		for _, pf := range job.inputs {
			inputs[pf] = true
		}
		var parts []*partFile
		for _, pf := range sd.parts {
			if !inputs[pf] {
				parts = append(parts, pf)
			}
		}
		if len(parts)+len(job.inputs) != len(sd.parts) {
			return ed, nil, errMergeStale
		}
		asof := sd.asof
		if slices.ContainsFunc(job.inputs, func(pf *partFile) bool {
			return pf.man.Kind == manifest.KindCurrent || pf.man.Kind == manifest.KindHistory
		}) {
			for _, pf := range sd.asof {
				ed.RemoveParts = append(ed.RemoveParts, pf.man.Ref())
			}
			asof = nil
		}
		parts = append(parts, outs...)
		sortParts(parts)
		return ed, &shardData{num: sd.num, rng: sd.rng, keyed: sd.keyed, app: sd.app, frozen: sd.frozen, parts: parts, asof: asof}, nil
	})
	if err == nil {
		e.merges.Add(1)
	}
	return err
}

// publishShard replaces shard num of table tid by the shard data next
// derives from the published one, applying next's manifest edit first.
// Both happen under the apply lock, so a flush, which builds its state
// from the published one under the same lock, never loses the change,
// and the manifest and the published state change together. next runs
// under the lock and returns errMergeStale when the shard no longer is
// what the caller built its change for, as publishShard does when the
// table or the shard is gone. The change must not alter any read's
// result (merges, AS OF indexes): the resolved scans carry over. what
// names the change in errors.
func (e *Engine) publishShard(tid catalog.TableID, num uint32, what string, next func(sd *shardData) (manifest.Edit, *shardData, error)) error {
	e.ap.Lock()
	defer e.ap.Unlock()
	st := e.cur.Load()
	td := st.tables[tid]
	if td == nil {
		return errMergeStale
	}
	si := slices.IndexFunc(td.shards, func(sd *shardData) bool { return sd.num == num })
	if si < 0 {
		return errMergeStale
	}
	sd := td.shards[si]
	ed, nsd, err := next(sd)
	if err != nil {
		return err
	}
	// A dropped table's parts leave the published parts with this
	// publication; the manifest must not name them any more first.
	if err := e.syncManifest(st); err != nil {
		e.fail(err)
		return err
	}
	if err := e.man.Apply(ed); err != nil {
		err = fmt.Errorf("storage: %s: manifest: %w", what, err)
		if errors.Is(err, manifest.ErrFailed) {
			e.fail(err)
		}
		return err
	}
	ntd := &tableData{id: td.id, keyed: td.keyed, shards: slices.Clone(td.shards)}
	ntd.rr.Store(td.rr.Load())
	ntd.shards[si] = nsd
	tables := make(map[catalog.TableID]*tableData, len(st.tables))
	for id, x := range st.tables {
		tables[id] = x
	}
	tables[tid] = ntd
	e.publishParts(&state{commit: st.commit, cat: st.cat, tables: tables, commits: st.commits})
	e.scans.carry([][2]*shardData{{sd, nsd}})
	return nil
}

// sortParts orders a shard's parts oldest first: by commit range, then id,
// as merge.Runs does.
func sortParts(ps []*partFile) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := &ps[i].man, &ps[j].man
		if c := cmp.Compare(a.MinCommit, b.MinCommit); c != 0 {
			return c < 0
		}
		if c := cmp.Compare(a.MaxCommit, b.MaxCommit); c != 0 {
			return c < 0
		}
		return a.ID < b.ID
	})
}

// Pacing of background merges. On a machine with few cores a merge (and
// the goroutine writing its output) takes the cores a foreground read
// needs: the first scan after a burst of ingest ran at a third of its
// speed beside the merges the ingest set off, and point lookups' p99 grew
// with them. So while any Scan, Versions or Lookup runs (Engine.reads), a
// background merge pauses between slices of its input (merge.PaceRows),
// and its writer before each column chunk of its output
// (part.WriteOptions.Pace), a millisecond at a time and at most
// mergePauseMax per slice or chunk, so that a steady stream of reads slows
// merges down without stopping them.
const (
	mergePauseStep = time.Millisecond
	mergePauseMax  = 20 * time.Millisecond
)

// mergePauses counts the pauses paceMerge made, so tests can tell it ran.
var mergePauses atomic.Int64

// paceMerge holds a background merge back while foreground reads run.
func (e *Engine) paceMerge() {
	if e.reads.Load() == 0 || e.stopping.Load() {
		return
	}
	mergePauses.Add(1)
	for waited := time.Duration(0); e.reads.Load() > 0 && !e.stopping.Load() && waited < mergePauseMax; waited += mergePauseStep {
		time.Sleep(mergePauseStep)
	}
}
