package storage

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
)

// The AS OF index of epochs (docs/storage-merges.md, "AS OF reads and the
// history layout").
//
// A read AS OF n before a merged run's newest commit takes, per key and
// group, the one row of the current or history run whose interval
// [WonAt, EndedAt) holds n (runscan.go, scanInterval). The history run is
// sorted by key, so each of its blocks holds versions of every age and the
// read decodes the whole history to emit one row per key. The index cuts
// the commit line into epochs and stores, per epoch and sorted by key,
// every row of the run whose interval meets the epoch: a read at n opens
// only the epoch holding n and range-checks it alone, about K·(1 + U/B)
// rows for K keys updated U times over B epochs, against K for a current
// scan.
//
// Safety rests on the index being an optional accelerator:
//
//   - When Options.AsOfIndex is set (indexes already written are read
//     either way), the merge loop writes the index of a versioned shard's
//     run once no merge or split is due (indexLoop), from the run's parts, in a
//     manifest edit of its own that checks the run is still the shard's;
//     every edit that removes the run (a later Oldest merge, a split, a
//     DROP) removes the index too. So a run has at most one index, and
//     one without (written before the index, or a shard just split) is
//     read as before.
//     Its parts are KindAsOf, held in shardData.asof beside the run, never
//     in shardData.parts: nothing that reads a shard's parts (current scans,
//     lookups, versions(), the general path, merges, splits, system tables'
//     row counts) sees them.
//   - A read uses an index only when it is the run's (its parts claim the
//     run's commit range, as every part of the run does) and the epoch
//     holding n is there and laid out for the interval stream (key-disjoint
//     parts, KeyBlocks). Otherwise, or with noAsOfReads, it reads the run
//     as before, with the same result.
//   - Check re-derives every epoch from the run and compares row by row.
//
// Epoch bounds are quantiles of the run's WonAt (so each epoch sees about
// as many new versions), the first epoch starting at 0 and the last
// ending at MaxUint64: together they cover every commit. An epoch no row
// meets adds no row (part.Write needs one): it is folded into the epoch
// before it, or, before the first epoch that has rows, into that one,
// whose range then starts at 0. Index parts store what the interval stream reads — sort
// key, group, commit, seq (the _commit column), WonAt, EndedAt and the
// table columns — and leave the other fixed columns empty (zero): delete
// markers and versions that never won have empty intervals and are not
// stored.

// asofEpochs is B, the number of epochs a run's index is cut into: ~1.5×
// a current scan's rows at 9 updates per key (storage-merges.md).
const asofEpochs = 16

// asofSamples bounds the WonAt samples the epoch bounds are chosen from.
const asofSamples = 1 << 16

// asofFixed are the fixed columns an index part stores.
const asofFixed = part.FixSort | part.FixGroup | part.FixCommit | part.FixSeq | part.FixWonAt | part.FixEndedAt

// noAsOfReads, set by tests, makes interval reads ignore AS OF indexes,
// so that both ways are compared on the same data.
var noAsOfReads bool

// asofReads counts the interval reads an index served, asofBuilt the
// indexes merges wrote and asofTries the runs a build read, so tests can
// tell that they ran.
var asofReads, asofBuilt, asofTries atomic.Int64

// asofParts returns the parts of the epoch of sd's index that holds n,
// in key order, or nil when the read must go through the run itself: no
// index, one that is not the run's, or an epoch not laid out for the
// interval stream.
func (sd *shardData) asofParts(rs runShard, n uint64) []*partFile {
	if noAsOfReads || len(sd.asof) == 0 {
		return nil
	}
	lo, hi := sd.asof[0].man.MinCommit, sd.asof[0].man.MaxCommit
	for _, ps := range [][]*partFile{rs.cur, rs.hist, sd.asof} {
		for _, pf := range ps {
			if pf.man.MinCommit != lo || pf.man.MaxCommit != hi {
				return nil
			}
		}
	}
	var out []*partFile
	var from, to uint64
	for _, pf := range sd.asof {
		m := &pf.man
		if m.EpochFrom > n || n >= m.EpochTo {
			continue
		}
		if len(out) > 0 && (m.EpochFrom != from || m.EpochTo != to) {
			return nil // two epochs hold n: not an index this engine wrote
		}
		from, to = m.EpochFrom, m.EpochTo
		if !pf.r.Meta().KeyBlocks {
			return nil
		}
		out = append(out, pf)
	}
	if len(out) == 0 || !disjoint(out) {
		return nil
	}
	return out
}

// indexLoop writes the AS OF index of every versioned shard's run that
// has none, once no merge or split is due (mergeLoop, under mergeMu): a
// burst of ingest makes the background merger rewrite a shard's run many
// times, and indexing each of those runs would have doubled the merges'
// work for indexes dropped at the next one. A run the build rejects
// (unfit: buildAsOf writes nothing; or failed) is remembered in
// e.asofRejected until the shard has another run, so that the passes
// every flush kicks do not read it again.
func (e *Engine) indexLoop(ctx context.Context, paced bool) error {
	if !e.opts.AsOfIndex {
		return nil
	}
	e.pruneAsOfRejected()
	tried := map[uint64]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.failed(); err != nil {
			return err
		}
		tid, num, run, ok := e.nextIndex(tried)
		if !ok {
			return nil
		}
		tried[run[0].man.ID] = true
		if err := e.indexRun(tid, num, run, paced); err != nil {
			return err
		}
	}
}

// asofRunKey names a run by its parts' ids: a merge or split writes a
// run's parts anew, and part ids are never reused, so a shard with the
// same key still has the same run.
func asofRunKey(run []*partFile) string {
	b := make([]byte, 0, 8*len(run))
	for _, pf := range run {
		b = strconv.AppendUint(b, pf.man.ID, 10)
		b = append(b, ',')
	}
	return string(b)
}

// pruneAsOfRejected forgets the rejections of shards that are gone (a
// DROP, a split), so that the map stays as small as the shards.
func (e *Engine) pruneAsOfRejected() {
	st := e.cur.Load()
	for k := range e.asofRejected {
		td := st.tables[k.table]
		if td == nil || !slices.ContainsFunc(td.shards, func(sd *shardData) bool { return sd.num == k.shard }) {
			delete(e.asofRejected, k)
		}
	}
}

// nextIndex returns the first versioned shard, tables and shards in id
// order, whose run has no AS OF index, was not tried in this pass and
// was not rejected before: its current and history parts.
func (e *Engine) nextIndex(tried map[uint64]bool) (catalog.TableID, uint32, []*partFile, bool) {
	st := e.cur.Load()
	ids := make([]catalog.TableID, 0, len(st.tables))
	for id := range st.tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		t, ok := st.cat.TableByID(id)
		if !ok || t.Mode != catalog.ModeVersioned {
			continue
		}
		for _, sd := range st.tables[id].shards {
			if len(sd.asof) > 0 {
				continue
			}
			var run []*partFile
			for _, pf := range sd.parts {
				if k := pf.man.Kind; k == manifest.KindCurrent || k == manifest.KindHistory {
					run = append(run, pf)
				}
			}
			if len(run) == 0 || tried[run[0].man.ID] {
				continue
			}
			if key, ok := e.asofRejected[shardKey{id, sd.num}]; ok && key == asofRunKey(run) {
				continue
			}
			return id, sd.num, run, true
		}
	}
	return 0, 0, nil, false
}

// indexRun writes the AS OF index of run, shard num of table tid, and
// publishes it in one manifest edit, if the shard still has that run and
// no index. A failure to write the index is logged and leaves the run
// without one (reads go through the run); a failed manifest commit fails
// the engine, as for a merge.
func (e *Engine) indexRun(tid catalog.TableID, num uint32, run []*partFile, paced bool) error {
	t, ok := e.cur.Load().cat.TableByID(tid)
	if !ok {
		return nil
	}
	// Held while read: a DROP and the next flush may retire them.
	for i, pf := range run {
		if !pf.refs.acquire() {
			for _, q := range run[:i] {
				q.refs.release()
			}
			return nil
		}
	}
	defer func() {
		for _, pf := range run {
			pf.refs.release()
		}
	}()
	var pace func()
	if paced {
		pace = e.paceMerge
	}
	start := time.Now()
	level := run[0].man.Level
	for _, pf := range run {
		level = max(level, pf.man.Level)
	}
	asofTries.Add(1)
	index, err := e.buildAsOf(t, num, level, run, pace)
	if err != nil || len(index) == 0 {
		// Reads go through the run meanwhile. A failed build is retried
		// only with the next run (or open): reading the whole run again
		// at every flush would cost more than the index saves.
		if err != nil {
			e.log.Warn("storage: no AS OF index written", "table", t.Name, "shard", num, "err", err)
		}
		if e.asofRejected == nil {
			e.asofRejected = map[shardKey]string{}
		}
		e.asofRejected[shardKey{tid, num}] = asofRunKey(run)
		return nil
	}
	drop := func() {
		for _, pf := range index {
			_ = pf.r.Close()
			_ = e.fs.Remove(pf.refs.path)
		}
	}
	if err := e.publishIndex(tid, num, run, index); err != nil {
		drop()
		if errors.Is(err, errMergeStale) {
			return nil
		}
		return err
	}
	e.log.Debug("storage: AS OF index written", "table", t.Name, "shard", num, "parts", len(index), "took", time.Since(start))
	return nil
}

// publishIndex adds index to the shard in one manifest edit and publishes
// the state with it (publishShard); it returns errMergeStale when the
// shard no longer has run or already has an index.
func (e *Engine) publishIndex(tid catalog.TableID, num uint32, run, index []*partFile) error {
	return e.publishShard(tid, num, "AS OF index", func(sd *shardData) (manifest.Edit, *shardData, error) {
		var ed manifest.Edit
		if len(sd.asof) > 0 {
			return ed, nil, errMergeStale
		}
		for _, pf := range run {
			if !slices.Contains(sd.parts, pf) {
				return ed, nil, errMergeStale
			}
		}
		for _, pf := range sd.parts {
			if k := pf.man.Kind; (k == manifest.KindCurrent || k == manifest.KindHistory) && !slices.Contains(run, pf) {
				return ed, nil, errMergeStale
			}
		}
		for _, pf := range index {
			ed.AddParts = append(ed.AddParts, pf.man)
		}
		return ed, &shardData{num: sd.num, rng: sd.rng, keyed: sd.keyed, app: sd.app, frozen: sd.frozen, parts: sd.parts, asof: index}, nil
	})
}

// runRows walks the rows of one run's parts (key-disjoint, in key order)
// block by block, with the fixed columns fixed and the table columns ids.
type runRows struct {
	parts  []*partFile
	fixed  part.Fixed
	ids    []catalog.ColumnID
	pi, bi int
	d      part.Data
	i      int
	ok     bool // d holds a row at i
}

// start loads the first row.
func (r *runRows) start() error {
	r.i, r.ok = -1, false
	return r.next()
}

// next moves to the following row; ok is false past the last.
func (r *runRows) next() error {
	r.i++
	for r.i >= r.d.Rows || !r.ok {
		if r.ok {
			r.bi++
		}
		for r.pi < len(r.parts) && r.bi >= len(r.parts[r.pi].r.Blocks()) {
			r.pi, r.bi = r.pi+1, 0
		}
		if r.pi == len(r.parts) {
			r.ok = false
			return nil
		}
		if err := r.parts[r.pi].r.ReadBlockFixed(r.bi, r.fixed, r.ids, &r.d); err != nil {
			return err
		}
		r.i, r.ok = 0, true
		if r.d.Rows > 0 {
			break
		}
	}
	return nil
}

// cmpRows orders row i of a and row j of b by (sort, group, commit, seq),
// the order of every part.
func cmpRows(a *part.Data, i int, b *part.Data, j int) int {
	if c := bytes.Compare(a.Sort.BytesAt(i), b.Sort.BytesAt(j)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Group[i], b.Group[j]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Commit[i], b.Commit[j]); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq[i], b.Seq[j])
}

// runStream merges a run's current and history rows in part order.
type runStream struct{ cur, hist runRows }

// newRunStream starts a stream over the run's parts, reading fixed and
// the table columns ids.
func newRunStream(cur, hist []*partFile, fixed part.Fixed, ids []catalog.ColumnID) (*runStream, error) {
	s := &runStream{cur: runRows{parts: cur, fixed: fixed, ids: ids}, hist: runRows{parts: hist, fixed: fixed, ids: ids}}
	if err := s.cur.start(); err != nil {
		return nil, err
	}
	return s, s.hist.start()
}

// head returns the stream's next row, nil at the end.
func (s *runStream) head() *runRows {
	switch {
	case !s.cur.ok && !s.hist.ok:
		return nil
	case !s.hist.ok:
		return &s.cur
	case !s.cur.ok:
		return &s.hist
	case cmpRows(&s.cur.d, s.cur.i, &s.hist.d, s.hist.i) <= 0:
		return &s.cur
	}
	return &s.hist
}

// splitRun returns a run's current and history parts in key order, and
// whether they are laid out as a merge writes them: key-disjoint runs
// whose blocks end at keys, with the same columns and the same claimed
// commit range (the index claims it too, which is how reads tell it is
// the run's).
func splitRun(run []*partFile) (cur, hist []*partFile, ok bool) {
	for _, pf := range run {
		if pf.man.MinCommit != run[0].man.MinCommit || pf.man.MaxCommit != run[0].man.MaxCommit {
			return nil, nil, false
		}
		switch pf.man.Kind {
		case manifest.KindCurrent:
			cur = append(cur, pf)
		case manifest.KindHistory:
			hist = append(hist, pf)
		default:
			return nil, nil, false
		}
		if !pf.r.Meta().KeyBlocks {
			return nil, nil, false
		}
	}
	if len(run) == 0 || !disjoint(cur) || !disjoint(hist) {
		return nil, nil, false
	}
	cols := run[0].r.Meta().Columns
	for _, pf := range run[1:] {
		if !slices.EqualFunc(cols, pf.r.Meta().Columns, func(a, b part.ColumnMeta) bool { return a.ID == b.ID && a.Type == b.Type }) {
			return nil, nil, false
		}
	}
	return cur, hist, true
}

// epochBounds returns the epoch bounds b[0] = 0 < b[1] < … < b[k] =
// MaxUint64 (epoch e is [b[e], b[e+1])): quantiles of the WonAt of the
// run's rows that ever won, read from every row-th sample.
func epochBounds(cur, hist []*partFile) ([]uint64, error) {
	var total uint64
	for _, pf := range slices.Concat(cur, hist) {
		total += pf.r.Meta().Rows
	}
	stride := max(1, total/asofSamples)
	var samples []uint64
	var seen uint64
	for _, run := range [][]*partFile{cur, hist} {
		var d part.Data
		for _, pf := range run {
			for bi := range pf.r.Blocks() {
				if err := pf.r.ReadBlockFixed(bi, part.FixWonAt|part.FixEndedAt, nil, &d); err != nil {
					return nil, err
				}
				for i := range d.Rows {
					if d.WonAt[i] < d.EndedAt[i] {
						if seen%stride == 0 {
							samples = append(samples, d.WonAt[i])
						}
						seen++
					}
				}
			}
		}
	}
	slices.Sort(samples)
	b := []uint64{0}
	for e := 1; e < asofEpochs && len(samples) > 0; e++ {
		if x := samples[e*len(samples)/asofEpochs]; x > b[len(b)-1] && x < math.MaxUint64 {
			b = append(b, x)
		}
	}
	return append(b, math.MaxUint64), nil
}

// epochSpan returns the epochs [first, last] that the interval [won,
// ended) meets, given the bounds; first > last when none.
func epochSpan(b []uint64, won, ended uint64) (int, int) {
	first, last := 0, -1
	if won >= ended {
		// Never won (a loser, a delete marker): no read at any n takes it.
		return first, last
	}
	for first < len(b)-1 && b[first+1] <= won {
		first++
	}
	for e := first; e < len(b)-1 && b[e] < ended; e++ {
		last = e
	}
	return first, last
}

// asofOut accumulates the rows of one epoch, written as parts of about
// rows rows.
type asofOut struct {
	d     *part.Data
	parts []*partFile
}

// buildAsOf writes the AS OF index of run, a shard's current and history
// parts (their manifest records claiming the run's commit range), and
// returns its parts, open and with their manifest records. It returns
// none when the run is not laid out as a merge writes it or no row of it
// ever won. On error every part it wrote is closed and removed.
func (e *Engine) buildAsOf(t *catalog.Table, shard uint32, level uint8, run []*partFile, pace func()) (out []*partFile, err error) {
	cur, hist, ok := splitRun(run)
	if !ok {
		return nil, nil
	}
	b, err := epochBounds(cur, hist)
	if err != nil {
		return nil, err
	}
	cols := run[0].r.Meta().Columns
	ids := make([]catalog.ColumnID, len(cols))
	for i, c := range cols {
		ids[i] = c.ID
	}
	rows := defaultAsOfPartRows
	if e.opts.MergePartRows > 0 {
		rows = max(1, e.opts.MergePartRows/4)
	}
	epochs := make([]asofOut, len(b)-1)
	for i := range epochs {
		epochs[i].d = newAsOfData(cols)
	}
	defer func() {
		if err != nil {
			for _, ep := range epochs {
				for _, pf := range ep.parts {
					_ = pf.r.Close()
					_ = e.fs.Remove(pf.refs.path)
				}
			}
			out = nil
		}
	}()
	lo, hi := run[0].man.MinCommit, run[0].man.MaxCommit
	write := func(ep *asofOut) error {
		pf, err := e.writeAsOfPart(t, shard, level, cols, ep.d, lo, hi)
		if err != nil {
			return err
		}
		ep.parts = append(ep.parts, pf)
		ep.d.Reset() // written and synced: the buffers serve the next part
		return nil
	}
	s, err := newRunStream(cur, hist, asofFixed, ids)
	if err != nil {
		return nil, err
	}
	var key []byte
	for n := 0; ; n++ {
		r := s.head()
		if pace != nil && n%asofPaceRows == 0 {
			pace()
		}
		if r == nil || !bytes.Equal(key, r.d.Sort.BytesAt(r.i)) {
			// A key boundary: parts are cut only here (KeyBlocks).
			for i := range epochs {
				if ep := &epochs[i]; ep.d.Rows >= rows || r == nil && ep.d.Rows > 0 {
					if err := write(ep); err != nil {
						return nil, err
					}
				}
			}
			if r == nil {
				break
			}
			key = append(key[:0], r.d.Sort.BytesAt(r.i)...)
		}
		d, i := &r.d, r.i
		first, last := epochSpan(b, d.WonAt[i], d.EndedAt[i])
		for ep := first; ep <= last; ep++ {
			copyRow(epochs[ep].d, d, i, asofFixed)
		}
		if err := r.next(); err != nil {
			return nil, err
		}
	}
	// Each epoch's range, an empty one folded into the one before it (the
	// first non-empty one reaching back to 0).
	var kept []int
	for i := range epochs {
		if len(epochs[i].parts) > 0 {
			kept = append(kept, i)
		}
	}
	for k, i := range kept {
		from, to := b[i], uint64(math.MaxUint64)
		if k == 0 {
			from = 0
		}
		if k+1 < len(kept) {
			to = b[kept[k+1]]
		}
		for _, pf := range epochs[i].parts {
			pf.man.EpochFrom, pf.man.EpochTo = from, to
			out = append(out, pf)
		}
	}
	if len(out) > 0 {
		asofBuilt.Add(1)
	}
	return out, nil
}

// defaultAsOfPartRows bounds an index part's rows when the engine's
// MergePartRows is the default: a quarter of a merge part's
// (merge.DefaultPartRows), because the B epochs fill at once and the build
// holds one part of each in memory.
const defaultAsOfPartRows = 64 << 10

// asofPaceRows is how many rows an index build reads between calls of
// its pace function (as merge.PaceRows).
const asofPaceRows = 4096

// newAsOfData returns an empty Data for index rows with the columns cols.
func newAsOfData(cols []part.ColumnMeta) *part.Data {
	d := &part.Data{Sort: types.NewVector(types.Of(types.Bytes), 0)}
	for _, c := range cols {
		d.IDs = append(d.IDs, c.ID)
		d.Cols = append(d.Cols, types.NewVector(c.Type, 0))
	}
	return d
}

// asOfPageRows is the page size of AS OF index parts: scans read them
// whole, epoch by epoch, and 1 024-row pages made the index 2.8× bigger
// (docs/storage-merges.md). History parts, which point lookups AS OF a
// commit read, have smaller pages (part.HistoryPageRows).
const asOfPageRows = 8192

// writeAsOfPart writes d as one index part of table t's shard, durable,
// opens it, and returns it with its manifest record (the epoch range is
// the caller's to set).
func (e *Engine) writeAsOfPart(t *catalog.Table, shard uint32, level uint8, cols []part.ColumnMeta, d *part.Data, lo, hi uint64) (*partFile, error) {
	pid, err := e.man.NextPartID()
	if err != nil {
		return nil, fmt.Errorf("storage: AS OF index: %w", err)
	}
	m := part.Meta{Table: t.ID, Shard: shard, Part: pid, Kind: part.KindAsOf, Level: level, Columns: cols}
	var info part.Info
	slot, err := e.writeSlot(t, shard, pid, func(path string) (err error) {
		info, err = part.Write(e.fs, path, d, m, part.WriteOptions{BlockRows: flushBlockRows, PageRows: asOfPageRows})
		return err
	})
	path := slot.path
	if err != nil {
		return nil, fmt.Errorf("storage: AS OF index: %w", err)
	}
	r, err := part.OpenCached(e.fs, path, e.pages)
	if err != nil {
		_ = e.fs.Remove(path)
		return nil, fmt.Errorf("storage: AS OF index: %w", err)
	}
	nm := r.Meta()
	mp := manifest.Part{Table: uint64(t.ID), Shard: shard, ID: pid, Level: level, Kind: manifest.KindAsOf,
		Rows: info.Rows, Bytes: uint64(info.Bytes), MinCommit: lo, MaxCommit: hi,
		MinKey: bytes.Clone(nm.MinSort), MaxKey: bytes.Clone(nm.MaxSort), File: slot.file,
		Location: slot.loc, CreatedAt: time.Now().UTC()}
	return newPartFile(e.fs, path, mp, r), nil
}

// checkAsOf verifies a shard's AS OF index against its run: the index is
// the run's (same commit range), its epochs tile every commit, and each
// epoch's rows are exactly the run's rows whose interval meets it, in
// order, with the same values. One pass over the run, one cursor per
// epoch.
func checkAsOf(sd *shardData) error {
	if len(sd.asof) == 0 {
		return nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: shard %d AS OF index: %s", ErrCheck, sd.num, fmt.Sprintf(format, args...))
	}
	var run []*partFile
	for _, pf := range sd.parts {
		if k := pf.man.Kind; k == manifest.KindCurrent || k == manifest.KindHistory {
			run = append(run, pf)
		}
	}
	cur, hist, ok := splitRun(run)
	if !ok {
		return fail("the shard has no run laid out as a merge writes one")
	}
	lo, hi := run[0].man.MinCommit, run[0].man.MaxCommit
	type epoch struct {
		from, to uint64
		parts    []*partFile
	}
	var eps []*epoch
	for _, pf := range slices.Concat(run, sd.asof) {
		if pf.man.MinCommit != lo || pf.man.MaxCommit != hi {
			return fail("part %d claims commits [%d, %d], the run [%d, %d]", pf.man.ID, pf.man.MinCommit, pf.man.MaxCommit, lo, hi)
		}
	}
	for _, pf := range sd.asof {
		i := slices.IndexFunc(eps, func(e *epoch) bool { return e.from == pf.man.EpochFrom && e.to == pf.man.EpochTo })
		if i < 0 {
			i = len(eps)
			eps = append(eps, &epoch{from: pf.man.EpochFrom, to: pf.man.EpochTo})
		}
		eps[i].parts = append(eps[i].parts, pf)
	}
	slices.SortFunc(eps, func(a, b *epoch) int { return cmp.Compare(a.from, b.from) })
	b := []uint64{0}
	for i, ep := range eps {
		if ep.from != b[i] {
			return fail("epoch [%d, %d) does not start where the one before ends (%d)", ep.from, ep.to, b[i])
		}
		if !disjoint(ep.parts) {
			return fail("epoch [%d, %d) has overlapping parts", ep.from, ep.to)
		}
		b = append(b, ep.to)
	}
	if b[len(b)-1] != math.MaxUint64 {
		return fail("the last epoch ends at %d, not after every commit", b[len(b)-1])
	}
	cols := run[0].r.Meta().Columns
	ids := make([]catalog.ColumnID, len(cols))
	for i, c := range cols {
		ids[i] = c.ID
	}
	s, err := newRunStream(cur, hist, asofFixed, ids)
	if err != nil {
		return err
	}
	ix := make([]runRows, len(eps))
	for i, ep := range eps {
		ix[i] = runRows{parts: ep.parts, fixed: asofFixed, ids: ids}
		if err := ix[i].start(); err != nil {
			return err
		}
	}
	for r := s.head(); r != nil; r = s.head() {
		d, i := &r.d, r.i
		first, last := epochSpan(b, d.WonAt[i], d.EndedAt[i])
		for e := first; e <= last; e++ {
			x := &ix[e]
			if !x.ok {
				return fail("epoch [%d, %d) lacks the version of key %x at commit %d", eps[e].from, eps[e].to, d.Sort.BytesAt(i), d.Commit[i])
			}
			if !sameAsOfRow(d, i, &x.d, x.i) {
				return fail("epoch [%d, %d) holds key %x at commit %d (%s) where the run has key %x at commit %d (%s)",
					eps[e].from, eps[e].to, x.d.Sort.BytesAt(x.i), x.d.Commit[x.i], asofRowString(&x.d, x.i), d.Sort.BytesAt(i), d.Commit[i], asofRowString(d, i))
			}
			if err := x.next(); err != nil {
				return err
			}
		}
		if err := r.next(); err != nil {
			return err
		}
	}
	for e := range ix {
		if x := &ix[e]; x.ok {
			return fail("epoch [%d, %d) holds key %x at commit %d, which the run has not live in it",
				eps[e].from, eps[e].to, x.d.Sort.BytesAt(x.i), x.d.Commit[x.i])
		}
	}
	return nil
}

// sameAsOfRow reports whether row i of a (the run) and row j of b (an
// index part) agree on every column an index part stores.
func sameAsOfRow(a *part.Data, i int, b *part.Data, j int) bool {
	if cmpRows(a, i, b, j) != 0 || a.WonAt[i] != b.WonAt[j] || a.EndedAt[i] != b.EndedAt[j] {
		return false
	}
	for c := range a.Cols {
		av, bv := a.Cols[c], b.Cols[c]
		switch {
		case av == nil && bv == nil:
		case av == nil:
			if !bv.IsNull(j) {
				return false
			}
		case bv == nil:
			if !av.IsNull(i) {
				return false
			}
		case av.IsNull(i) != bv.IsNull(j):
			return false
		case !av.IsNull(i) && !types.Equal(av.Get(i), bv.Get(j)):
			return false
		}
	}
	return true
}

// asofRowString prints what an index part stores of row i, for Check's
// findings.
func asofRowString(d *part.Data, i int) string {
	s := fmt.Sprintf("group %d seq %d won %d ended %d", d.Group[i], d.Seq[i], d.WonAt[i], d.EndedAt[i])
	for c, v := range d.Cols {
		if v == nil {
			s += fmt.Sprintf(" %d=<absent>", d.IDs[c])
			continue
		}
		s += fmt.Sprintf(" %d=%s", d.IDs[c], v.Get(i).String())
	}
	return s
}
