package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// keyInput is one version or delete of a key, from a part or a memtable.
type keyInput struct {
	pos   version.Pos
	tomb  bool
	group catalog.GroupID
	mv    memVersion
}

type mergedKey struct {
	key []byte
	in  []keyInput
}

// blockWanted reports whether a block (or part) bounded by minCommit and
// sort keys [lo, hi] can hold a row a read at n over ranges needs.
func blockWanted(minCommit, n uint64, overlaps func(lo, hi []byte) bool, rs []KeyRange) bool {
	if minCommit > n {
		return false
	}
	for _, r := range rs {
		if overlaps(r.Lo, r.Hi) {
			return true
		}
	}
	return false
}

// mergedKeys gathers, for a shard with parts, every input of every key in
// ranges with commit ≤ n from its parts and its memtable, sorted by key
// and each key's inputs by position. Re-resolving them from scratch (rule
// 7 of package version: runs covering contiguous commits merge by
// resolving their retained versions with every delete) gives what the
// memtable alone would hold had it never been flushed.
func (rd *reader) mergedKeys(sd *shardData, rs []KeyRange, n uint64) ([]mergedKey, error) {
	// Each source (a part, the memtable) yields its keys in order; the
	// runs are merged at the end.
	var runs [][]mergedKey
	addTo := func(run []mergedKey, key []byte, in keyInput) []mergedKey {
		if k := len(run); k > 0 && bytes.Equal(run[k-1].key, key) {
			run[k-1].in = append(run[k-1].in, in)
			return run
		}
		return append(run, mergedKey{key: key, in: []keyInput{in}})
	}
	lays := map[string]*layout{}
	for _, pf := range sd.parts {
		meta := pf.r.Meta()
		if !blockWanted(meta.MinCommit, n, meta.Overlaps, rs) {
			rd.stats.PartsSkipped++
			continue
		}
		rd.stats.Parts++
		ids := make([]catalog.ColumnID, len(meta.Columns))
		for i, c := range meta.Columns {
			ids[i] = c.ID
		}
		var run []mergedKey
		for bi := range pf.r.Blocks() {
			b := &pf.r.Blocks()[bi]
			if !blockWanted(b.MinCommit, n, b.Overlaps, rs) {
				rd.stats.BlocksSkipped++
				continue
			}
			rd.stats.Blocks++
			d := &part.Data{}
			if err := pf.r.ReadBlock(bi, ids, d); err != nil {
				return nil, err
			}
			for i := 0; i < d.Rows; i++ {
				if d.Commit[i] > n {
					continue
				}
				key := d.Sort.BytesAt(i)
				if !inRanges(key, rs) {
					continue
				}
				in := keyInput{pos: version.Pos{Commit: d.Commit[i], Seq: d.Seq[i]}, tomb: d.Tomb[i], group: catalog.GroupID(d.Group[i])}
				if !in.tomb {
					mv, err := rd.partVersion(d, meta, i, key, lays)
					if err != nil {
						return nil, err
					}
					in.mv = mv
				}
				run = addTo(run, key, in)
			}
		}
		runs = append(runs, run)
	}
	var run []mergedKey
	m := sd.keyed
	m.mu.RLock()
	for _, r := range rs {
		e := m.list.first()
		if r.Lo != nil {
			e = m.list.seek(r.Lo, nil)
		}
		for ; e != nil && (r.Hi == nil || bytes.Compare(e.key, r.Hi) < 0); e = e.next[0] {
			for gi := range e.groups {
				g := &e.groups[gi]
				for i := range g.vers {
					if v := g.vers[i]; v.v.Commit <= n {
						run = addTo(run, e.key, keyInput{pos: v.v.Pos(), group: g.id, mv: v})
					}
				}
			}
			for _, p := range e.dels {
				if p.Commit <= n {
					run = addTo(run, e.key, keyInput{pos: p, tomb: true})
				}
			}
		}
	}
	m.mu.RUnlock()
	runs = append(runs, run)
	return mergeRuns(runs), nil
}

// mergeRuns merges key-sorted runs into one, joining the inputs of equal
// keys and sorting each key's inputs by position. Sources cover disjoint
// commit ranges (parts oldest first, then the memtable), so joining in
// run order already sorts them; the sort is a safety net for merges.
func mergeRuns(runs [][]mergedKey) []mergedKey {
	var total int
	for _, r := range runs {
		total += len(r)
	}
	out := make([]mergedKey, 0, total)
	idx := make([]int, len(runs))
	for {
		best := -1
		for i, r := range runs {
			if idx[i] < len(r) && (best < 0 || bytes.Compare(r[idx[i]].key, runs[best][idx[best]].key) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		mk := runs[best][idx[best]]
		idx[best]++
		for i, r := range runs {
			if i != best && idx[i] < len(r) && bytes.Equal(r[idx[i]].key, mk.key) {
				mk.in = append(mk.in, r[idx[i]].in...)
				idx[i]++
			}
		}
		if !sort.SliceIsSorted(mk.in, func(i, j int) bool { return mk.in[i].pos.Compare(mk.in[j].pos) < 0 }) {
			sort.Slice(mk.in, func(i, j int) bool { return mk.in[i].pos.Compare(mk.in[j].pos) < 0 })
		}
		out = append(out, mk)
	}
	return out
}

// partVersion rebuilds the memtable form of part row i: its ordering
// values, and its payload — the columns its group had at its commit, in
// id order, exactly as the memtable encodes them (so repeats are still
// recognised, R3.4).
func (rd *reader) partVersion(d *part.Data, meta *part.Meta, i int, key []byte, lays map[string]*layout) (memVersion, error) {
	g := catalog.GroupID(d.Group[i])
	commit := d.Commit[i]
	v := version.Version{Key: key, Group: version.GroupID(g), Commit: commit, Seq: d.Seq[i]}
	ob := d.Order.BytesAt(i)
	for len(ob) > 0 {
		l, n := binary.Uvarint(ob)
		if n <= 0 || l > uint64(len(ob)-n) {
			return memVersion{}, fmt.Errorf("storage: table %s: %w: ordering values of part %d", rd.t.Name, types.ErrCorrupt, meta.Part)
		}
		v.Order = append(v.Order, ob[n:n+int(l):n+int(l)])
		ob = ob[n+int(l):]
	}
	var idbuf []byte
	var cols []int
	for j, id := range d.IDs {
		c, ok := rd.t.AnyColumn(id)
		if !ok || d.Cols[j] == nil || c.Group != g || c.AddedCommit >= commit || c.DroppedCommit != 0 && c.DroppedCommit <= commit {
			continue
		}
		cols = append(cols, j)
		idbuf = binary.AppendUvarint(idbuf, uint64(id))
	}
	lay := lays[string(idbuf)]
	if lay == nil {
		lay = &layout{}
		for _, j := range cols {
			lay.cols = append(lay.cols, d.IDs[j])
			lay.types = append(lay.types, meta.Columns[meta.Column(d.IDs[j])].Type)
		}
		lays[string(idbuf)] = lay
	}
	vals := rd.scratch[:0]
	for _, j := range cols {
		vals = types.AppendBinary(vals, peek(d.Cols[j], i))
	}
	rd.scratch = vals
	v.Values = rd.arena.copy(vals)
	return memVersion{v: v, lay: lay}, nil
}

// resolveKey runs a key's merged inputs through the rules into a fresh
// entry, which reads exactly like a memtable entry.
func (rd *reader) resolveKey(mk *mergedKey, versioned bool) (*keyEntry, error) {
	scratch := &rd.scratchMem
	scratch.versioned = versioned
	e := &rd.scratchEntry
	e.key, e.groups, e.dels = mk.key, e.groups[:0], e.dels[:0]
	for _, in := range mk.in {
		if in.tomb {
			if err := scratch.deleteKey(e, version.Delete{Key: e.key, Commit: in.pos.Commit, Seq: in.pos.Seq}); err != nil {
				return nil, err
			}
			continue
		}
		ord, ok := rd.ords[in.group]
		if !ok {
			g, found := rd.t.GroupByID(in.group)
			if !found {
				return nil, fmt.Errorf("storage: table %s: unknown group %d", rd.t.Name, in.group)
			}
			ord = ordering(rd.t, g)
			rd.ords[in.group] = ord
		}
		if err := scratch.addVersion(e.group(in.group, ord), in.mv, ord); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// scanMerged reads a shard that has parts.
func (rd *reader) scanMerged(sd *shardData, rs []KeyRange, n uint64, fn func(*types.Batch) error, emit func(*keyEntry, uint64) error) error {
	keys, err := rd.mergedKeys(sd, rs, n)
	if err != nil {
		return err
	}
	versioned := rd.t.Mode == catalog.ModeVersioned
	for i := range keys {
		e, err := rd.resolveKey(&keys[i], versioned)
		if err != nil {
			return err
		}
		if err := emit(e, n); err != nil {
			return err
		}
		if rd.full() {
			if err := rd.flush(fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanAppendParts reads the rows of an append shard's parts committed in
// (after, n].
func (rd *reader) scanAppendParts(sd *shardData, rs []KeyRange, after, n uint64, fn func(*types.Batch) error) error {
	ids := make([]catalog.ColumnID, len(rd.plans))
	for i := range rd.plans {
		ids[i] = rd.plans[i].id
	}
	for _, pf := range sd.parts {
		meta := pf.r.Meta()
		if meta.MaxCommit <= after || !blockWanted(meta.MinCommit, n, meta.Overlaps, rs) {
			rd.stats.PartsSkipped++
			continue
		}
		rd.stats.Parts++
		for bi := range pf.r.Blocks() {
			b := &pf.r.Blocks()[bi]
			if b.MaxCommit <= after || !blockWanted(b.MinCommit, n, b.Overlaps, rs) {
				rd.stats.BlocksSkipped++
				continue
			}
			rd.stats.Blocks++
			d := &part.Data{}
			if err := pf.r.ReadBlock(bi, ids, d); err != nil {
				return err
			}
			for i := 0; i < d.Rows; i++ {
				rd.stats.RowsRead++
				if c := d.Commit[i]; c <= after || c > n || !inRanges(d.Sort.BytesAt(i), rs) {
					continue
				}
				for oi := range rd.plans {
					p := &rd.plans[oi]
					src, vec := d.Cols[oi], rd.batch.Cols[oi]
					switch {
					case src == nil:
						vec.Append(p.intro)
					case src.Type() == p.typ:
						vec.AppendFrom(src, i)
					default:
						v, err := types.Cast(src.Get(i), p.typ)
						if err != nil {
							return fmt.Errorf("storage: table %s: %w", rd.t.Name, err)
						}
						vec.Append(v)
					}
				}
				if rd.commit {
					rd.batch.Cols[len(rd.plans)].AppendUint64(d.Commit[i])
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
