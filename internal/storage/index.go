package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
)

// indexCols returns, for the parts of table id a flush, merge or split
// writes, the columns each kind of part carries index filters for
// (part/index.go): the first column of every index of the table whose
// scope covers the kind. Delta and current parts hold current rows (a
// delta part holds the newest versions, current or not yet settled),
// history parts the versions no longer current; append parts hold rows
// that are all current and all history, so any index covers them
// (docs/indexes.md). Only the first column is filtered: a read uses an
// index through an equality on its first column (plan's index rule), and
// never one whose first column is a key column of a keyed table.
//
// The newest catalog is asked, not the one the job started with: an
// index created meanwhile gets its filters one part earlier, and a
// filter for an index dropped meanwhile is a few unused bytes.
func (e *Engine) indexCols(id catalog.TableID) func(part.Kind) []catalog.ColumnID {
	cat := e.cur.Load().cat
	t, ok := cat.TableByID(id)
	if !ok {
		return nil
	}
	var cur, hist []catalog.ColumnID
	for _, ix := range cat.AllIndexes() {
		// An index led by a key column is never read through (key
		// ranges and lookups serve it): no filter for it.
		if ix.Table != id || len(ix.Columns) == 0 || t.Keyed() && t.IsKey(ix.Columns[0]) {
			continue
		}
		c := ix.Columns[0]
		if ix.Scope != catalog.ScopeHistory && !slices.Contains(cur, c) {
			cur = append(cur, c)
		}
		if ix.Scope != catalog.ScopeCurrent && !slices.Contains(hist, c) {
			hist = append(hist, c)
		}
	}
	if cur == nil && hist == nil {
		return nil
	}
	all := slices.Clone(cur)
	for _, c := range hist {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	return func(k part.Kind) []catalog.ColumnID {
		switch k {
		case part.KindDelta, part.KindCurrent:
			return cur
		case part.KindHistory:
			return hist
		case part.KindAppend:
			return all
		}
		return nil
	}
}

// IndexProbe asks a read to use an index (R10.2): only rows whose column
// Col may equal one of Values need be read. Values are the planner's
// constants: a NULL matches no row, and a value not of the column's
// current type is cast to it (one that cannot be makes the read scan;
// the planner passes values of the type, exactly). The read still
// returns every row the caller's predicate could accept — a superset of
// those whose column equals a value — and the caller still applies its
// whole predicate.
type IndexProbe struct {
	Col    catalog.ColumnID
	Values []types.Value
}

// IndexStats counts what an index read touched, for EXPLAIN ANALYZE
// (R10.2): the parts it consulted (PartsSkipped: those it did not need,
// by commit or kind, or that lack the column), the granules its filters
// let through (GranulesSkipped: refused), the blocks and part rows it
// decoded, the memtable versions it compared, and the candidate keys it
// found. FullScan says it gave up and the read scanned the table
// (Why: the reason).
type IndexStats struct {
	Parts, PartsSkipped       int
	Granules, GranulesSkipped int
	Blocks                    int
	RowsRead, MemRows         uint64
	Candidates                int
	// Append says the read was of an append table: it skips granules
	// and rows instead of finding candidate keys.
	Append   bool
	FullScan bool
	Why      string
}

// indexCandidateMin and indexCandidateShare bound the candidate keys a
// keyed read takes through the index: at most max(min, rows/share) of a
// table of rows stored rows. Each candidate is a point lookup (tens of
// µs with its pages cold), where a full scan reads tens of millions of
// rows a second, so past about 1/256 of the rows the scan is cheaper.
// Tests set them.
var (
	indexCandidateMin   = 256
	indexCandidateShare = 256
)

// probeSet is an IndexProbe ready to compare: the key encodings of its
// values and their hashes.
type probeSet struct {
	col    catalog.ColumnID
	typ    types.Type
	group  catalog.GroupID
	keys   map[string]struct{}
	hashes []uint64
	buf    []byte
}

// newProbeSet prepares p for table t, or says why the index cannot serve
// it: a key column (its values are the sort key, which the key-prefix
// ranges serve), or a value equal to the column's introduced default,
// which rows written before the column was added read as without storing
// it (R6.5).
func newProbeSet(t *catalog.Table, p *IndexProbe) (*probeSet, string) {
	c, ok := t.AnyColumn(p.Col)
	if !ok {
		return nil, "the column is gone"
	}
	if t.Keyed() && t.IsKey(p.Col) {
		return nil, "a key column"
	}
	ps := &probeSet{col: p.Col, typ: c.Type, group: c.Group, keys: map[string]struct{}{}}
	var intro []byte
	if c.Introduced != nil && !c.Introduced.Null {
		v, err := types.ParseText(c.Type, c.Introduced.Value)
		if err != nil {
			return nil, "its introduced default does not parse"
		}
		intro = types.AppendKey(nil, v)
	}
	for _, v := range p.Values {
		if v.IsNull() {
			continue // col = NULL is never TRUE
		}
		if v.Type() != c.Type {
			cv, err := types.Cast(v, c.Type)
			if err != nil {
				return nil, "a value does not fit the column"
			}
			v = cv
		}
		k := types.AppendKey(nil, v)
		if intro != nil && bytes.Equal(k, intro) {
			return nil, "a value equals the column's introduced default"
		}
		if _, dup := ps.keys[string(k)]; !dup {
			ps.keys[string(k)] = struct{}{}
			ps.hashes = append(ps.hashes, part.IndexHash(k))
		}
	}
	return ps, ""
}

// matchAt reports whether row i of vec, of type st, equals a probe value.
func (ps *probeSet) matchAt(vec *types.Vector, st types.Type, i int) (bool, error) {
	if vec.IsNull(i) {
		return false, nil
	}
	if part.SameKeys(st, ps.typ) {
		ps.buf = types.AppendKeyAt(ps.buf[:0], vec, i)
	} else {
		v, err := types.Cast(vec.Get(i), ps.typ)
		if err != nil {
			return false, err
		}
		ps.buf = types.AppendKey(ps.buf[:0], v)
	}
	_, ok := ps.keys[string(ps.buf)]
	return ok, nil
}

// matchPayload reports whether memtable version v holds a probe value.
func (ps *probeSet) matchPayload(v *memVersion) (bool, error) {
	lay := v.lay()
	if lay == nil {
		return true, nil // no payload to judge: a candidate, to be safe
	}
	b := v.v.Values
	for j, st := range lay.types {
		if lay.cols[j] != ps.col {
			var err error
			if b, err = skipBinary(st, b); err != nil {
				return false, err
			}
			continue
		}
		x, _, err := types.DecodeBinary(st, b)
		if err != nil || x.IsNull() {
			return false, err
		}
		if x.Type() != ps.typ {
			if x, err = types.Cast(x, ps.typ); err != nil {
				return false, err
			}
		}
		ps.buf = types.AppendKey(ps.buf[:0], x)
		_, ok := ps.keys[string(ps.buf)]
		return ok, nil
	}
	return false, nil
}

// errTooMany stops a candidate search that passed its cap.
var errTooMany = errors.New("storage: too many index candidates")

// indexCandidates returns, per shard of td, the sorted, distinct sort
// keys of every key with a stored version row or memtable version
// committed at or before n whose column ps.col equals a probe value: a
// superset of the keys a read at n (current when current, else AS OF n
// or versions()) can return whose resolved row has such a value. It
// reports false when there are more than cap.
//
// Why a superset: the row a read returns for a key takes each column
// from one stored version of the column's group (or reads NULL, or the
// introduced default, which newProbeSet refuses), so a key whose row
// holds v has a version holding v, found here. A current read skips
// history parts: they hold only versions that stopped being current
// before the merge that wrote them, and a version never becomes current
// again (a greater version or a delete ended it, R3.1, R5.4).
func (s *Snapshot) indexCandidates(ctx context.Context, td *tableData, ps *probeSet, n uint64, current bool, cap int, st *IndexStats) ([][][]byte, bool, error) {
	out := make([][][]byte, len(td.shards))
	total := 0
	var d part.Data
	ids := []catalog.ColumnID{ps.col}
	for si, sd := range td.shards {
		var keys [][]byte
		add := func(k []byte) error {
			if len(keys) > 0 && bytes.Equal(keys[len(keys)-1], k) {
				return nil // a key's rows are adjacent in a part
			}
			keys = append(keys, bytes.Clone(k))
			if total+len(keys) > 2*cap {
				return errTooMany
			}
			return nil
		}
		for _, pf := range sd.parts {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
			meta := pf.r.Meta()
			ci := meta.Column(ps.col)
			if meta.MinCommit > n || ci < 0 || current && meta.Kind == part.KindHistory {
				st.PartsSkipped++
				continue
			}
			st.Parts++
			ctype := meta.Columns[ci].Type
			f := pf.r.IndexFilter(ps.col)
			if f != nil && !part.SameKeys(f.Type, ps.typ) {
				f = nil // written under a type whose keys differ (R8.1)
			}
			pr := meta.PageRows
			for bi, b := range pf.r.Blocks() {
				if b.MinCommit > n {
					continue
				}
				gr := b.Rows
				if pr > 0 {
					gr = pr
				}
				touched := false
				for lo := 0; lo < b.Rows; lo += gr {
					if f != nil && !f.MayHold(bi, lo/gr, ps.hashes) {
						st.GranulesSkipped++
						continue
					}
					st.Granules++
					touched = true
					hi := min(lo+gr, b.Rows)
					if err := pf.r.ReadRows(bi, lo, hi, part.FixSort|part.FixCommit, ids, &d); err != nil {
						return nil, false, err
					}
					st.RowsRead += uint64(d.Rows)
					vec := d.Cols[0]
					if vec == nil {
						continue
					}
					for i := range d.Rows {
						if d.Commit[i] > n {
							continue
						}
						ok, err := ps.matchAt(vec, ctype, i)
						if err != nil {
							return nil, false, err
						}
						if ok {
							if err := add(d.Sort.BytesAt(i)); err != nil {
								return nil, false, nil
							}
						}
					}
				}
				if touched {
					st.Blocks++
				}
			}
		}
		for _, m := range sd.memtables() {
			if m.keyed == nil {
				continue
			}
			if err := s.memCandidates(m.keyed, ps, n, st, add); err != nil {
				if errors.Is(err, errTooMany) {
					return nil, false, nil
				}
				return nil, false, err
			}
		}
		slices.SortFunc(keys, bytes.Compare)
		keys = slices.CompactFunc(keys, bytes.Equal)
		total += len(keys)
		if total > cap {
			return nil, false, nil
		}
		out[si] = keys
	}
	st.Candidates = total
	return out, true, nil
}

// memCandidates calls add with the key of every entry of m with a
// version of the probe's group committed at or before n that holds a
// probe value. It takes the read lock per stretch of entries, as
// scanKeyed does, so writers wait for no more than one stretch.
func (s *Snapshot) memCandidates(m *keyedMem, ps *probeSet, n uint64, st *IndexStats, add func([]byte) error) error {
	m.ordered()
	var e *keyEntry
	started := false
	for {
		m.mu.RLock()
		if !started {
			e, started = m.list.first(), true
		}
		var err error
		for i := 0; e != nil && i < 4096 && err == nil; i, e = i+1, e.next[0] {
			for gi := range e.groups {
				g := &e.groups[gi]
				if g.id != ps.group {
					continue
				}
				for vi := range g.vers {
					v := &g.vers[vi]
					if v.v.Commit > n {
						continue
					}
					st.MemRows++
					var ok bool
					if ok, err = ps.matchPayload(v); err != nil {
						break
					}
					if ok {
						err = add(e.key)
						break
					}
				}
			}
		}
		m.mu.RUnlock()
		if err != nil || e == nil {
			return err
		}
	}
}

// scanIndexed is a keyed Scan (or, with versions, Versions) through
// spec.Index: it finds the candidate keys and reads each by a point
// lookup (or one key's versions), in shard and key order, as the scan
// would return them. It reports false, having returned nothing, when the
// index cannot serve the read (the stats say why): the caller scans.
// outer is the snapshot the read was asked of, s the one it reads at n.
func (s *Snapshot) scanIndexed(ctx context.Context, outer *Snapshot, t *catalog.Table, td *tableData, spec *ScanSpec, n uint64, versions bool, fn func(*types.Batch) error) (ScanStats, bool, error) {
	ist := &IndexStats{}
	stats := ScanStats{Index: ist}
	ps, why := newProbeSet(t, spec.Index)
	if ps == nil {
		ist.FullScan, ist.Why = true, why
		return stats, false, nil
	}
	// The rows the read would scan: a current read reads no history
	// part, and no read one committed wholly after its commit.
	current := spec.AsOf == 0 && !versions
	var rows uint64
	for _, sd := range td.shards {
		for _, pf := range sd.parts {
			if m := pf.r.Meta(); m.MinCommit <= n && !(current && m.Kind == part.KindHistory) {
				rows += m.Rows
			}
		}
		for _, m := range sd.memtables() {
			if m.keyed != nil {
				rows += uint64(m.keyed.keys())
			}
		}
	}
	cap := max(indexCandidateMin, int(rows/uint64(indexCandidateShare)))
	// The filters are in memory: when they let through more than a
	// quarter of the part rows, reading those pages costs most of a scan
	// before a single candidate is looked up, so scan at once.
	if pass := s.indexPass(td, ps, n, current); pass > rows/4 && pass > uint64(4*cap) {
		ist.FullScan, ist.Why = true, fmt.Sprintf("the index filters let %d of %d rows through", pass, rows)
		return stats, false, nil
	}
	cands, ok, err := s.indexCandidates(ctx, td, ps, n, current, cap, ist)
	if err != nil {
		return stats, false, err
	}
	if !ok {
		ist.FullScan, ist.Why = true, fmt.Sprintf("more than %d candidate keys", cap)
		return stats, false, nil
	}
	stats.Shards = len(td.shards)
	if versions {
		for _, keys := range cands {
			for _, k := range keys {
				vs := *spec
				vs.Index = nil
				vs.Ranges = []KeyRange{{Lo: k, Hi: append(k[:len(k):len(k)], 0)}}
				st, err := outer.Versions(ctx, vs, fn)
				stats.addCounts(&st)
				if err != nil {
					return stats, true, err
				}
			}
		}
		return stats, true, nil
	}
	rd, err := newReader(t, spec, false)
	if err != nil {
		return stats, true, err
	}
	tr := &LookupTrace{}
	ls := *spec
	ls.Index, ls.Trace, ls.BatchRows = nil, tr, 1
	for si, keys := range cands {
		sd := td.shards[si]
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return stats, true, err
			}
			if _, err := s.lookupSorted(ctx, t, sd, k, n, ls, rd.batch); err != nil {
				return stats, true, err
			}
			if rd.full() {
				if err := rd.flush(fn); err != nil {
					return stats, true, err
				}
			}
		}
	}
	if err := rd.flushLast(fn); err != nil {
		return stats, true, err
	}
	// What the lookups read: the parts whose sort keys they sought, the
	// blocks searched and the rows of the pages decoded.
	stats.RowsReturned = rd.stats.RowsReturned
	stats.Parts, stats.PartsSkipped = tr.KeyProbes, tr.FilterSkips
	for _, pt := range []*part.PageTrace{&tr.Delta, &tr.Current, &tr.History, &tr.Other} {
		stats.Blocks += pt.Seeks
		stats.RowsRead += uint64(pt.Rows)
	}
	return stats, true, nil
}

// lookupSorted reads the row of sort key sk, which shard sd holds, at n
// into dst, as Lookup does for key values.
func (s *Snapshot) lookupSorted(ctx context.Context, t *catalog.Table, sd *shardData, sk []byte, n uint64, spec ScanSpec, dst *types.Batch) (found bool, err error) {
	rd, rk, pooled, err := lookupReader(t, &spec)
	if err != nil {
		return false, err
	}
	rd.trace = spec.Trace
	rd.horizon = s.e.horizonFn(t)
	rd.lookupKey = append(rd.lookupKey[:0], sk...)
	_, found, err = s.lookupIn(ctx, rd, t, sd, rd.lookupKey, n, dst)
	if pooled && err == nil {
		putLookupReader(rk, rd)
	}
	return found, err
}

// indexFilter returns, for an append read with an index probe, the index
// filter of part r to skip granules by (nil: read every granule), and
// reports whether the whole part can be skipped: it does not hold the
// column, so its rows read as NULL or the introduced default, which no
// probe value equals (newProbeSet).
func (rd *reader) indexFilter(r *part.Reader) (*part.IndexFilter, bool) {
	ps := rd.probe
	if ps == nil {
		return nil, false
	}
	meta := r.Meta()
	if meta.Column(ps.col) < 0 {
		rd.istats.PartsSkipped++
		return nil, true
	}
	rd.istats.Parts++
	f := r.IndexFilter(ps.col)
	if f != nil && !part.SameKeys(f.Type, ps.typ) {
		f = nil
	}
	return f, false
}

// granuleSpans returns the row spans of block bi (of rows rows) an
// append read must decode: the whole block without a filter, else the
// granules f lets through, adjacent ones joined.
func (rd *reader) granuleSpans(f *part.IndexFilter, bi, rows int) [][2]int {
	if f == nil {
		if rd.probe != nil {
			rd.istats.Granules++
			rd.istats.RowsRead += uint64(rows)
		}
		return [][2]int{{0, rows}}
	}
	var out [][2]int
	gr := f.GranuleRows
	for g := range f.Granules(bi) {
		if !f.MayHold(bi, g, rd.probe.hashes) {
			rd.istats.GranulesSkipped++
			continue
		}
		rd.istats.Granules++
		lo, hi := g*gr, min((g+1)*gr, rows)
		rd.istats.RowsRead += uint64(hi - lo)
		if k := len(out); k > 0 && out[k-1][1] == lo {
			out[k-1][1] = hi
			continue
		}
		out = append(out, [2]int{lo, hi})
	}
	if len(out) > 0 {
		rd.istats.Blocks++
	}
	return out
}

// indexPass returns the part rows an index probe would read: the rows of
// the granules the parts' filters let through (all rows of parts without
// one), from the filters alone.
func (s *Snapshot) indexPass(td *tableData, ps *probeSet, n uint64, current bool) uint64 {
	var pass uint64
	for _, sd := range td.shards {
		for _, pf := range sd.parts {
			meta := pf.r.Meta()
			if meta.MinCommit > n || meta.Column(ps.col) < 0 || current && meta.Kind == part.KindHistory {
				continue
			}
			f := pf.r.IndexFilter(ps.col)
			if f == nil || !part.SameKeys(f.Type, ps.typ) {
				pass += meta.Rows
				continue
			}
			for bi, b := range pf.r.Blocks() {
				for g := range f.Granules(bi) {
					if f.MayHold(bi, g, ps.hashes) {
						pass += uint64(min(f.GranuleRows, b.Rows-g*f.GranuleRows))
					}
				}
			}
		}
	}
	return pass
}
