package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sort"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

const defaultBatchRows = 1024

// colPlan says where one output column comes from.
type colPlan struct {
	id     catalog.ColumnID
	typ    types.Type
	keyIdx int             // index among the ORDER BY columns, -1 for non-key
	group  catalog.GroupID // NoGroup for key and append columns
	intro  types.Value     // Introduced default (R6.5), NULL when none
	late   bool            // added after CREATE TABLE
}

// reader turns stored rows into output batches for one read.
type reader struct {
	t        *catalog.Table
	plans    []colPlan
	keyTypes []types.Type
	needKey  bool
	commit   bool // add _commit
	versions bool // add the VersionsCols
	// retain, in a versions read, leaves out the versions it expires.
	retain Retention
	// horizon is the Ordering.Horizon of the table's groups (horizonFn)
	// for the keys resolveKey resolves.
	horizon  func(uint64) uint64
	outTypes []types.Type
	batchCap int
	batch    *types.Batch
	layMap   map[*layout][]int
	filled   []bool
	keyVals  []types.Value
	winners  []winRef
	ords     map[catalog.GroupID]version.Ordering
	stats    ScanStats
	// probe, on an append scan asked to use an index, lets it skip the
	// granules of parts whose index filter refuses every value, and the
	// memtable rows that hold none (index.go); istats counts that.
	probe  *probeSet
	istats *IndexStats
	// For reads of shards with parts: an arena for rebuilt payloads, and
	// a scratch entry each key is resolved into (reader.resolveKey).
	arena        arena
	scratch      []byte
	scratchMem   keyedMem
	scratchEntry keyEntry
	// fast is the column plan of the fast paths (runscan.go), built on
	// first use; slow turns them off, for tests that compare the two.
	fast *fastPlan
	slow bool
	// runLookup is lookupRun's runScan, reset for each lookup of a pooled
	// reader (lookupRunScan).
	runLookup *runScan
	// seek holds the buffers of seekKey, from seekPool.
	seek *seekBufs
	// trace is the lookup's ScanSpec.Trace, nil when not traced.
	trace *LookupTrace
	// lookupLays is lookupParts' layout cache, emptied per lookup.
	lookupLays map[string]*layout
	// lookupWant and lookupAll are what lookupGroups decided: the groups
	// whose payloads a lookup reads from parts, or all of them.
	lookupWant []catalog.GroupID
	lookupAll  bool
	// Scratch of partVersion: the layout key, the columns kept, and the
	// catalog columns of the Data last seen (partCols).
	idbuf   []byte
	colsBuf []int
	pcCache []partColsEntry
	kd      *keyDecoder
	// keyDup: Cols names a key column twice, so emitCurrent decodes keys
	// to Values (the decoder fills one vector per key column).
	keyDup bool
	// sig is the read's key in the resolved-scan cache, built on first
	// use; readOnly is ScanSpec.ReadOnly.
	sig      string
	readOnly bool
	// Of a pooled lookup reader (lookuppool.go): the sort key buffer, and
	// the last shard classified (runOf, its parts) and how (run, runOK),
	// which holds while the snapshot's shard has the same parts.
	lookupKey []byte
	runOf     []*partFile
	run       runShard
	runOK     bool
	// reason is emitVersions' buffer for a version's _reason.
	reason []byte
	// newerAt is where newerHolds found the lookup's key in a delta, for
	// lookupParts' seek of that part (seekLight) to take instead of
	// searching the part again; its pf is nil when there is none.
	newerAt keySeek
}

// keySeek is where a part holds a key: rows [lo, hi) of block bi of pf.
type keySeek struct {
	pf         *partFile
	bi, lo, hi int
}

// slowReads, set by tests, makes every read take the general path of
// partscan.go, the reference the fast paths are compared with.
var slowReads bool

type winRef struct {
	g *groupHist
	i int
}

func newReader(t *catalog.Table, spec *ScanSpec, versions bool) (*reader, error) {
	rd := &reader{t: t, commit: spec.Commit && !versions, versions: versions, batchCap: spec.BatchRows, slow: slowReads, readOnly: spec.ReadOnly,
		layMap: map[*layout][]int{}, ords: map[catalog.GroupID]version.Ordering{}}
	if rd.batchCap <= 0 {
		rd.batchCap = defaultBatchRows
	}
	for _, id := range t.OrderBy {
		c, ok := t.AnyColumn(id)
		if !ok {
			return nil, fmt.Errorf("storage: table %s: no ORDER BY column %d", t.Name, id)
		}
		rd.keyTypes = append(rd.keyTypes, c.Type)
	}
	for _, id := range spec.Cols {
		c, ok := t.AnyColumn(id)
		if !ok {
			return nil, fmt.Errorf("storage: table %s has no column %d", t.Name, id)
		}
		p := colPlan{id: id, typ: c.Type, keyIdx: -1, group: c.Group, intro: types.Null(c.Type), late: c.AddedCommit > t.CreatedCommit}
		if t.Keyed() && t.IsKey(id) {
			for k, kid := range t.OrderBy {
				if kid == id {
					p.keyIdx = k
				}
			}
			rd.needKey = true
		}
		var err error
		if p.intro, err = introduced(c, c.Type); err != nil {
			return nil, fmt.Errorf("storage: column %s: introduced default %q: %w", c.Name, c.Introduced.Value, err)
		}
		rd.plans = append(rd.plans, p)
		rd.outTypes = append(rd.outTypes, c.Type)
	}
	if rd.commit {
		rd.outTypes = append(rd.outTypes, types.Of(types.Uint64))
	}
	if versions {
		rd.outTypes = append(rd.outTypes, types.Of(types.String), types.Of(types.Uint64), types.Of(types.String),
			types.Of(types.Uint64), types.Of(types.String))
	}
	rd.filled = make([]bool, len(rd.plans))
	seen := map[int]bool{}
	for _, p := range rd.plans {
		if p.keyIdx >= 0 {
			rd.keyDup = rd.keyDup || seen[p.keyIdx]
			seen[p.keyIdx] = true
		}
	}
	rd.batch = types.NewBatch(rd.outTypes, rd.batchCap)
	return rd, nil
}

// flush hands a non-empty batch to fn and starts a new one: fn may keep
// the batch it gets.
func (rd *reader) flush(fn func(*types.Batch) error) error {
	if rd.batch.Rows == 0 {
		return nil
	}
	b := rd.batch
	rd.stats.RowsReturned += uint64(b.Rows)
	rd.batch = types.NewBatch(rd.outTypes, rd.batchCap)
	return fn(b)
}

// flushLast is flush for a read's last batch: it hands the batch on
// without building the next one, which nothing would fill (a whole batch
// of every column: most of the allocations of a read of one key's
// versions). The reader must not be appended to afterwards.
func (rd *reader) flushLast(fn func(*types.Batch) error) error {
	if rd.batch.Rows == 0 {
		return nil
	}
	b := rd.batch
	rd.batch = nil
	rd.stats.RowsReturned += uint64(b.Rows)
	return fn(b)
}

func (rd *reader) full() bool { return rd.batch.Rows >= rd.batchCap }

// layoutMap maps each payload column of lay to its output column, -1 when
// not read.
func (rd *reader) layoutMap(lay *layout) []int {
	if m, ok := rd.layMap[lay]; ok {
		return m
	}
	m := make([]int, len(lay.cols))
	for j, id := range lay.cols {
		m[j] = -1
		for oi := range rd.plans {
			if rd.plans[oi].id == id {
				m[j] = oi
			}
		}
	}
	rd.layMap[lay] = m
	return m
}

// decodeKey fills rd.keyVals from a sort key.
func (rd *reader) decodeKey(key []byte) error {
	rd.keyVals = rd.keyVals[:0]
	for _, kt := range rd.keyTypes {
		v, rest, err := types.DecodeKey(kt, key)
		if err != nil {
			return fmt.Errorf("storage: table %s: key: %w", rd.t.Name, err)
		}
		rd.keyVals = append(rd.keyVals, v)
		key = rest
	}
	return nil
}

// decodePayload appends the read columns of one version's payload to the
// batch and marks them filled.
func (rd *reader) decodePayload(v *memVersion) error {
	lay := v.lay()
	m := rd.layoutMap(lay)
	b := v.v.Values
	for j, st := range lay.types {
		oi := m[j]
		var err error
		if oi < 0 {
			b, err = skipBinary(st, b)
		} else {
			b, err = appendBinaryTo(rd.batch.Cols[oi], rd.plans[oi].typ, st, b)
			rd.filled[oi] = true
		}
		if err != nil {
			return fmt.Errorf("storage: table %s: %w", rd.t.Name, err)
		}
	}
	return nil
}

// skipBinary skips one AppendBinary encoding of type t.
func skipBinary(t types.Type, b []byte) ([]byte, error) {
	if t.Kind.Class() == types.ClassVarlen {
		_, rest, ok := varlenBinary(b)
		if !ok {
			return nil, fmt.Errorf("%w: short %s value", types.ErrCorrupt, t)
		}
		return rest, nil
	}
	_, rest, err := types.DecodeBinary(t, b)
	return rest, err
}

// varlenBinary reads a STRING or BYTES AppendBinary encoding in place:
// 0 for NULL, else 1, a uvarint length and the bytes. body is nil for NULL.
// It saves DecodeBinary's copy per value; a test checks it agrees.
func varlenBinary(b []byte) (body, rest []byte, ok bool) {
	if len(b) == 0 {
		return nil, nil, false
	}
	if b[0] == 0 {
		return nil, b[1:], true
	}
	l, n := binary.Uvarint(b[1:])
	if n <= 0 || l > uint64(len(b)-1-n) {
		return nil, nil, false
	}
	s := 1 + n
	return b[s : s+int(l)], b[s+int(l):], true
}

// appendBinaryTo decodes one value stored under type st and appends it to
// vec of type to, casting when the column was widened since (R8.1).
func appendBinaryTo(vec *types.Vector, to, st types.Type, b []byte) ([]byte, error) {
	if st == to && st.Kind.Class() == types.ClassVarlen {
		body, rest, ok := varlenBinary(b)
		if !ok {
			return nil, fmt.Errorf("%w: short %s value", types.ErrCorrupt, st)
		}
		if body == nil && b[0] == 0 {
			vec.AppendNull()
		} else {
			vec.AppendBytes(body)
		}
		return rest, nil
	}
	v, rest, err := types.DecodeBinary(st, b)
	if err != nil {
		return nil, err
	}
	if st != to {
		if v, err = types.Cast(v, to); err != nil {
			return nil, err
		}
	}
	vec.Append(v)
	return rest, nil
}

// appendKeyCol appends key value k to output column oi.
func (rd *reader) appendKeyCol(oi int) error {
	p := &rd.plans[oi]
	v := rd.keyVals[p.keyIdx]
	if v.Type() != p.typ {
		var err error
		if v, err = types.Cast(v, p.typ); err != nil {
			return err
		}
	}
	rd.batch.Cols[oi].Append(v)
	return nil
}

// emitCurrent appends the row of entry e at commit n, if the key exists
// there (rule 2): each group's winner, the key, defaults for the rest.
func (rd *reader) emitCurrent(e *keyEntry, n uint64) (bool, error) {
	rd.winners = rd.winners[:0]
	var maxCommit uint64
	for gi := range e.groups {
		g := &e.groups[gi]
		if w := g.winnerAt(n); w >= 0 {
			rd.winners = append(rd.winners, winRef{g, w})
			maxCommit = max(maxCommit, g.vers[w].v.Commit)
		}
	}
	rd.stats.RowsRead++
	if len(rd.winners) == 0 {
		return false, nil
	}
	clear(rd.filled)
	if rd.needKey && rd.keyDup {
		if err := rd.decodeKey(e.key); err != nil {
			return false, err
		}
	} else if rd.needKey {
		// Key columns straight from the sort key into the batch (no
		// Value, no copy of a STRING per row); payloads never hold them.
		kd := rd.keyDec()
		for oi := range rd.plans {
			if k := rd.plans[oi].keyIdx; k >= 0 {
				kd.out[k] = rd.batch.Cols[oi]
				rd.filled[oi] = true
			}
		}
		if err := kd.decode(e.key); err != nil {
			return false, fmt.Errorf("storage: table %s: key: %w", rd.t.Name, err)
		}
	}
	for _, w := range rd.winners {
		if err := rd.decodePayload(&w.g.vers[w.i]); err != nil {
			return false, err
		}
	}
	for oi := range rd.plans {
		if rd.filled[oi] {
			continue
		}
		p := &rd.plans[oi]
		switch {
		case p.keyIdx >= 0:
			if err := rd.appendKeyCol(oi); err != nil {
				return false, err
			}
		case p.late || rd.hasWinner(p.group):
			// Written before the column existed (R6.5).
			rd.batch.Cols[oi].Append(p.intro)
		default:
			rd.batch.Cols[oi].AppendNull()
		}
	}
	if rd.commit {
		rd.batch.Cols[len(rd.plans)].AppendUint64(maxCommit)
	}
	rd.batch.Rows++
	return true, nil
}

// keyDec returns the reader's key decoder (its outputs are set per row).
func (rd *reader) keyDec() *keyDecoder {
	if rd.kd == nil {
		rd.kd = &keyDecoder{types: rd.keyTypes, out: make([]*types.Vector, len(rd.keyTypes))}
	}
	return rd.kd
}

func (rd *reader) hasWinner(g catalog.GroupID) bool {
	for _, w := range rd.winners {
		if w.g.id == g {
			return true
		}
	}
	return false
}

// emitVersions appends one row per version of e visible at n (R7.1).
func (rd *reader) emitVersions(e *keyEntry, n uint64) error {
	idx := make([]int, len(e.groups))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return e.groups[idx[a]].id < e.groups[idx[b]].id })
	decoded := false
	for _, gi := range idx {
		g := &e.groups[gi]
		grp, ok := rd.t.GroupByID(g.id)
		if !ok {
			continue
		}
		ord, ok := rd.ords[g.id]
		if !ok {
			ord = ordering(rd.t, grp)
			ord.Horizon = rd.horizon // resolveKey shares rd.ords
			rd.ords[g.id] = ord
		}
		for i := range g.vers {
			r := g.res[i]
			s := version.StateAt(r, n)
			if s == version.Invisible || s == version.Dropped || rd.retain.expired(r) {
				continue
			}
			rd.stats.RowsRead++
			if rd.needKey && !decoded {
				if err := rd.decodeKey(e.key); err != nil {
					return err
				}
				decoded = true
			}
			clear(rd.filled)
			if err := rd.decodePayload(&g.vers[i]); err != nil {
				return err
			}
			for oi := range rd.plans {
				if rd.filled[oi] {
					continue
				}
				p := &rd.plans[oi]
				switch {
				case p.keyIdx >= 0:
					if err := rd.appendKeyCol(oi); err != nil {
						return err
					}
				case p.group == g.id:
					rd.batch.Cols[oi].Append(p.intro)
				default:
					rd.batch.Cols[oi].AppendNull()
				}
			}
			base := len(rd.plans)
			cols := rd.batch.Cols
			cols[base].AppendString(grp.Name)
			cols[base+1].AppendUint64(r.Commit)
			cols[base+2].AppendString(s.String())
			if s == version.Current {
				cols[base+3].AppendNull()
				cols[base+4].AppendString("")
			} else {
				cols[base+3].AppendUint64(r.SupersededBy)
				var by *version.Version
				if (s == version.Superseded || s == version.Late) && r.By >= 0 && r.By < len(g.vers) {
					by = &g.vers[r.By].v
				}
				rd.reason = version.AppendReason(rd.reason[:0], &ord, s, &g.vers[i].v, by, r.SupersededBy)
				cols[base+4].AppendBytes(rd.reason)
			}
			rd.batch.Rows++
		}
	}
	return nil
}

// normRanges sorts ranges by Lo and merges overlapping ones, so that a scan
// seeks once per range and returns no row twice. Empty means everything.
func normRanges(rs []KeyRange) []KeyRange {
	if len(rs) == 0 {
		return []KeyRange{{}}
	}
	out := append([]KeyRange(nil), rs...)
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Lo, out[j].Lo) < 0 })
	merged := out[:1]
	for _, r := range out[1:] {
		last := &merged[len(merged)-1]
		if last.Hi == nil || bytes.Compare(r.Lo, last.Hi) <= 0 {
			if last.Hi != nil && (r.Hi == nil || bytes.Compare(r.Hi, last.Hi) > 0) {
				last.Hi = r.Hi
			}
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// inRanges reports whether key falls in one of rs, which normRanges has
// sorted and made disjoint: a binary search for the last range starting at
// or before key, so a read of many keys (an IN list's ranges) tests each
// row in log(ranges) comparisons.
func inRanges(key []byte, rs []KeyRange) bool {
	i := sort.Search(len(rs), func(i int) bool { return bytes.Compare(rs[i].Lo, key) > 0 }) - 1
	if i < 0 {
		return false
	}
	r := rs[i]
	return r.Hi == nil || bytes.Compare(key, r.Hi) < 0
}

// readAt resolves the commit a read asks for.
func (s *Snapshot) readAt(asOf uint64) (uint64, error) {
	if asOf == 0 {
		return s.st.commit, nil
	}
	if asOf > s.st.commit {
		return 0, fmt.Errorf("storage: commit %d is after the snapshot's commit %d", asOf, s.st.commit)
	}
	return asOf, nil
}

// Scan reads a table at spec.AsOf (R6.1): for a keyed table, one row per
// key that exists at that commit, each group's winner together (R4.2),
// shard after shard and in sort order within each; for an append table,
// every row committed in (After, AsOf]. Batches hold at most BatchRows rows
// and fn may keep them. An error from fn stops the scan and is returned.
func (s *Snapshot) Scan(ctx context.Context, spec ScanSpec, fn func(*types.Batch) error) (ScanStats, error) {
	s.e.reads.Add(1) // background merges give way (paceMerge)
	defer s.e.reads.Add(-1)
	// The snapshot holds the parts read; it must stay reachable until the
	// read ends (lifetime.go).
	defer runtime.KeepAlive(s)
	// Retention is judged on the statement's snapshot, even for a read
	// AS OF that goes to the one a pending snapshot was built on: one
	// instant for every read of the statement.
	outer := s
	s = s.readsAt(spec.AsOf)
	t, td, err := s.table(spec.Table)
	if err != nil {
		return ScanStats{}, err
	}
	n, err := s.readAt(spec.AsOf)
	if err != nil {
		return ScanStats{}, err
	}
	rd, err := newReader(t, &spec, false)
	if err != nil {
		return ScanStats{}, err
	}
	rd.horizon = s.e.horizonFn(t)
	var ist *IndexStats
	if !td.keyed {
		// Rows a retention policy expired by commit time are left out
		// whether or not a merge has dropped them yet (R9.3).
		if r := outer.Retention(spec.Table); r.Horizon > spec.After {
			spec.After = r.Horizon
		}
		if spec.Index != nil {
			ist = &IndexStats{Append: true}
			var why string
			if rd.probe, why = newProbeSet(t, spec.Index); rd.probe == nil {
				ist.FullScan, ist.Why = true, why
			}
			rd.istats = ist
		}
		err = s.scanAppend(ctx, rd, td, &spec, n, fn)
	} else {
		if spec.Index != nil && len(spec.Ranges) == 0 {
			st, handled, err := s.scanIndexed(ctx, outer, t, td, &spec, n, false, fn)
			if handled || err != nil {
				return st, err
			}
			ist = st.Index
		}
		err = s.scanKeyed(ctx, rd, td, spec.Ranges, spec.AsOf, n, fn, rd.emitCurrentFn)
	}
	if err == nil {
		err = rd.flushLast(fn)
	}
	rd.stats.Index = ist
	return rd.stats, err
}

func (rd *reader) emitCurrentFn(e *keyEntry, n uint64) error {
	_, err := rd.emitCurrent(e, n)
	return err
}

func (rd *reader) emitVersionsFn(e *keyEntry, n uint64) error { return rd.emitVersions(e, n) }

// scanKeyed walks the keyed memtables of every shard in key order, one
// batch per read lock, so that a long scan never holds writers up for more
// than one batch. Entries are never removed and keys are immutable, so the
// walk resumes from the entry where the last batch stopped; keys inserted
// meanwhile belong to later commits and are invisible at n.
func (s *Snapshot) scanKeyed(ctx context.Context, rd *reader, td *tableData, ranges []KeyRange, asOf, n uint64,
	fn func(*types.Batch) error, emit func(*keyEntry, uint64) error) error {
	rs := normRanges(ranges)
	for _, sd := range td.shards {
		rd.stats.Shards++
		if sd.merged() {
			if err := ctx.Err(); err != nil {
				return err
			}
			read := func(fn func(*types.Batch) error) error {
				if ok, err := rd.scanRun(ctx, sd, rs, n, fn); ok {
					return err
				}
				return rd.scanMerged(ctx, sd, rs, n, fn, emit)
			}
			if ok, err := s.cachedScan(rd, sd, asOf, rs, n, fn, read); ok {
				if err != nil {
					return err
				}
				continue
			}
			if err := read(fn); err != nil {
				return err
			}
			continue
		}
		m := sd.keyed
		m.ordered()
		for _, r := range rs {
			var e *keyEntry
			started := false
			for {
				if err := ctx.Err(); err != nil {
					return err
				}
				m.mu.RLock()
				if !started {
					e = m.list.first()
					if r.Lo != nil {
						e = m.list.seek(r.Lo, nil)
					}
					started = true
				}
				var err error
				for e != nil && !rd.full() {
					if r.Hi != nil && bytes.Compare(e.key, r.Hi) >= 0 {
						e = nil
						break
					}
					if err = emit(e, n); err != nil {
						break
					}
					e = e.next[0]
				}
				m.mu.RUnlock()
				if err != nil {
					return err
				}
				if rd.full() {
					if err := rd.flush(fn); err != nil {
						return err
					}
				}
				if e == nil {
					break
				}
			}
		}
	}
	return nil
}

// scanAppend reads the append chunks committed in (After, n].
func (s *Snapshot) scanAppend(ctx context.Context, rd *reader, td *tableData, spec *ScanSpec, n uint64, fn func(*types.Batch) error) error {
	var ranges []KeyRange
	if len(spec.Ranges) > 0 && len(rd.t.OrderBy) > 0 {
		ranges = normRanges(spec.Ranges) // sorted and disjoint, for inRanges
	}
	var key []byte
	for _, sd := range td.shards {
		rd.stats.Shards++
		if len(sd.parts) > 0 {
			if err := rd.scanAppendParts(sd, normRanges(ranges), spec.After, n, fn); err != nil {
				return err
			}
		}
		for _, c := range sd.appChunks() {
			if c.commit <= spec.After || c.commit > n {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			// With an index probe, rows whose column holds no probe
			// value are left out (the caller's filter would drop them),
			// and a chunk without the column has none.
			pi := -1
			if rd.probe != nil {
				if pi = c.lay.index(rd.probe.col); pi < 0 {
					continue
				}
			}
			src := make([]int, len(rd.plans))
			for oi := range rd.plans {
				src[oi] = c.lay.index(rd.plans[oi].id)
			}
			var keyCols []int
			if ranges != nil {
				for _, id := range rd.t.OrderBy {
					keyCols = append(keyCols, c.lay.index(id))
				}
			}
			for r := 0; r < c.rows; r++ {
				rd.stats.RowsRead++
				if pi >= 0 {
					rd.istats.MemRows++
					ok, err := rd.probe.matchAt(c.cols[pi], c.lay.types[pi], r)
					if err != nil {
						return fmt.Errorf("storage: table %s: %w", rd.t.Name, err)
					}
					if !ok {
						continue
					}
				}
				if ranges != nil {
					key = key[:0]
					for _, kc := range keyCols {
						if kc < 0 {
							key = append(key, 0xff) // a column missing from old rows: NULL sorts last
							continue
						}
						key = types.AppendKey(key, peek(c.cols[kc], r))
					}
					if !inRanges(key, ranges) {
						continue
					}
				}
				for oi := range rd.plans {
					p := &rd.plans[oi]
					vec := rd.batch.Cols[oi]
					switch si := src[oi]; {
					case si < 0:
						vec.Append(p.intro)
					case c.lay.types[si] == p.typ:
						vec.AppendFrom(c.cols[si], r)
					default:
						v, err := types.Cast(c.cols[si].Get(r), p.typ)
						if err != nil {
							return fmt.Errorf("storage: table %s: %w", rd.t.Name, err)
						}
						vec.Append(v)
					}
				}
				if rd.commit {
					rd.batch.Cols[len(rd.plans)].AppendUint64(c.commit)
				}
				rd.batch.Rows++
				if rd.full() {
					if err := rd.flush(fn); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// Versions reads the retained versions of a versioned table as they stood
// at spec.AsOf (R7.1): one row per version visible there, with spec.Cols
// (other groups' columns NULL) then the VersionsCols. Repeats are never
// retained (R3.4).
func (s *Snapshot) Versions(ctx context.Context, spec ScanSpec, fn func(*types.Batch) error) (ScanStats, error) {
	s.e.reads.Add(1) // background merges give way (paceMerge)
	defer s.e.reads.Add(-1)
	// The snapshot holds the parts read; it must stay reachable until the
	// read ends (lifetime.go).
	defer runtime.KeepAlive(s)
	// Versions past the retention horizon are left out whether or not a
	// merge has dropped them yet (R9.3), judged on the statement's
	// snapshot as in Scan.
	ret := s.Retention(spec.Table)
	outer := s
	s = s.readsAt(spec.AsOf)
	t, td, err := s.table(spec.Table)
	if err != nil {
		return ScanStats{}, err
	}
	if t.Mode != catalog.ModeVersioned {
		return ScanStats{}, fmt.Errorf("storage: table %s has mode %s and keeps no versions", t.Name, t.Mode)
	}
	n, err := s.readAt(spec.AsOf)
	if err != nil {
		return ScanStats{}, err
	}
	// The versions of one key seek it in each part (keyversions.go).
	key := oneKeyOf(t, spec.Ranges)
	if key != nil && spec.BatchRows <= 0 {
		spec.BatchRows = keyVersionsBatch
	}
	if key != nil {
		rd, rk, pooled, err := pooledReader(t, &spec, true)
		if err != nil {
			return ScanStats{}, err
		}
		rd.retain, rd.horizon = ret, s.e.horizonFn(t)
		done, err := rd.versionsOfKey(ctx, td, key, n)
		if done {
			if err == nil {
				err = rd.flushLast(fn)
			}
			stats := rd.stats
			if err == nil && pooled {
				putLookupReader(rk, rd)
			}
			return stats, err
		}
		// Not laid out for seeking: the general read, with a reader of
		// its own. versionsOfKey declined before touching this one.
		if pooled {
			putLookupReader(rk, rd)
		}
	}
	var ist *IndexStats
	if spec.Index != nil && len(spec.Ranges) == 0 {
		st, handled, err := s.scanIndexed(ctx, outer, t, td, &spec, n, true, fn)
		if handled || err != nil {
			return st, err
		}
		ist = st.Index
	}
	rd, err := newReader(t, &spec, true)
	if err != nil {
		return ScanStats{}, err
	}
	rd.retain, rd.horizon = ret, s.e.horizonFn(t)
	err = s.scanKeyed(ctx, rd, td, spec.Ranges, spec.AsOf, n, fn, rd.emitVersionsFn)
	if err == nil {
		err = rd.flushLast(fn)
	}
	rd.stats.Index = ist
	return rd.stats, err
}

// Lookup reads the row of one key, given as the key columns' values in
// primary key order, at spec.AsOf; spec.Cols (and _commit) as in Scan.
// It reports false when the key does not exist at that commit.
func (s *Snapshot) Lookup(ctx context.Context, table catalog.TableID, key []types.Value, spec ScanSpec) (row []types.Value, found bool, err error) {
	return s.lookup(ctx, table, key, spec, nil)
}

// LookupInto is Lookup appending the row, when found, to dst: a batch with
// one vector per column spec asks for (_commit last), of their types. The
// row's cells are copied vector to vector, never boxed as Values, which
// is what a query's point lookup wants.
func (s *Snapshot) LookupInto(ctx context.Context, table catalog.TableID, key []types.Value, spec ScanSpec, dst *types.Batch) (found bool, err error) {
	_, found, err = s.lookup(ctx, table, key, spec, dst)
	return found, err
}

// lookup is Lookup, or LookupInto when dst is not nil (row is then nil).
func (s *Snapshot) lookup(ctx context.Context, table catalog.TableID, key []types.Value, spec ScanSpec, dst *types.Batch) (row []types.Value, found bool, err error) {
	s.e.reads.Add(1) // background merges give way (paceMerge)
	defer s.e.reads.Add(-1)
	// The snapshot holds the parts read; it must stay reachable until the
	// read ends (lifetime.go).
	defer runtime.KeepAlive(s)
	s = s.readsAt(spec.AsOf)
	t, td, err := s.table(table)
	if err != nil {
		return nil, false, err
	}
	if !td.keyed {
		return nil, false, fmt.Errorf("storage: table %s is an append table and has no key", t.Name)
	}
	if len(key) != len(t.Key) {
		return nil, false, fmt.Errorf("storage: table %s: lookup with %d key values, the key has %d", t.Name, len(key), len(t.Key))
	}
	n, err := s.readAt(spec.AsOf)
	if err != nil {
		return nil, false, err
	}
	val := func(id catalog.ColumnID) (types.Value, error) {
		for i, k := range t.Key {
			if k == id {
				c, _ := t.AnyColumn(id)
				if key[i].Type() != c.Type {
					return types.Cast(key[i], c.Type)
				}
				return key[i], nil
			}
		}
		return types.Value{}, fmt.Errorf("storage: table %s: column %d is not in the key", t.Name, id)
	}
	spec.BatchRows = 1
	if spec.Trace == nil {
		if h := lookupTraceHook.Load(); h != nil {
			tr := &LookupTrace{}
			spec.Trace = tr
			defer (*h)(tr)
		}
	}
	rd, rk, pooled, err := lookupReader(t, &spec)
	if err != nil {
		return nil, false, err
	}
	rd.trace = spec.Trace
	rd.horizon = s.e.horizonFn(t)
	if pooled {
		defer func() {
			if err == nil {
				putLookupReader(rk, rd)
			}
		}()
	}
	// The sort key is built in the reader's buffer: nothing keeps it past
	// the lookup (the scratch entry naming it is reset by the next one).
	sk := rd.lookupKey[:0]
	var hk []byte
	for _, id := range t.OrderBy {
		v, err := val(id)
		if err != nil {
			return nil, false, err
		}
		sk = types.AppendKey(sk, v)
	}
	rd.lookupKey = sk
	sd := td.shards[0]
	if len(td.shards) > 1 {
		for _, id := range t.ShardColumns() {
			v, err := val(id)
			if err != nil {
				return nil, false, err
			}
			hk = types.AppendKey(hk, v)
		}
		sd = td.shards[td.shardOf(shardHash(hk))]
	}
	return s.lookupIn(ctx, rd, t, sd, sk, n, dst)
}

// lookupIn is the read of lookup once the sort key sk and its shard sd
// are known: the row of sk at n, appended to dst when it is not nil.
func (s *Snapshot) lookupIn(ctx context.Context, rd *reader, t *catalog.Table, sd *shardData, sk []byte, n uint64, dst *types.Batch) (row []types.Value, found bool, err error) {
	rd.seek = seekPool.Get().(*seekBufs)
	rd.seek.takeArena(rd)
	defer func() {
		rd.seek.keepArena(rd)
		seekPool.Put(rd.seek)
	}()
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	versioned := t.Mode == catalog.ModeVersioned
	rd.newerAt = keySeek{}
	defer func() { rd.newerAt = keySeek{} }() // a pooled reader keeps no part
	if len(sd.parts) > 0 {
		// A merged run answers from its stored winners (lookuprun.go).
		handled, ok, err := rd.lookupRun(sd, sk, n)
		if err != nil {
			return nil, false, err
		}
		if handled {
			if !ok {
				return nil, false, nil
			}
			return rd.row(dst), true, nil
		}
	}
	seeked := false
	merged := sd.merged()
	if merged {
		if seeked, found, err = rd.lookupParts(sd, sk, n); err != nil {
			return nil, false, err
		}
	}
	switch {
	case merged && seeked:
		rd.tracePath(PathParts)
	case merged:
		rd.tracePath(PathMerge)
		err := rd.mergeShard(ctx, sd, []KeyRange{{Lo: sk, Hi: append(sk[:len(sk):len(sk)], 0)}}, n, func(key []byte, ins []keyInput) error {
			e, err := rd.resolveKey(key, ins, versioned)
			if err == nil {
				found, err = rd.emitCurrent(e, n)
			}
			return err
		})
		if err != nil {
			return nil, false, err
		}
	default:
		rd.tracePath(PathMemtable)
		m := sd.keyed
		m.mu.RLock()
		if e := m.list.get(sk); e != nil {
			found, err = rd.emitCurrent(e, n)
		}
		m.mu.RUnlock()
	}
	if err != nil || !found {
		return nil, false, err
	}
	return rd.row(dst), true, nil
}

// row hands on the one row a lookup found in rd.batch, which goes back to
// the pool: appended to dst when there is one, as values otherwise.
func (rd *reader) row(dst *types.Batch) []types.Value {
	if dst != nil {
		dst.AppendFrom(rd.batch, 0)
		return nil
	}
	return rd.batch.Row(nil, 0)
}
