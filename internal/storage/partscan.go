package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

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
	// light: mv holds the version without its payload (mv.lay nil),
	// which row row of d (a part meta describes) rebuilds when needed
	// (lightinputs.go).
	d    *part.Data
	meta *part.Meta
	row  int32
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

// A read of a shard with parts walks its sources — each part, block by
// block, and the memtable, key by key — in key order at once, and gathers
// each key's inputs with commit ≤ n from all of them. Re-resolving them
// from scratch (rule 7 of package version: runs covering contiguous
// commits merge by resolving their retained versions with every delete)
// gives what the memtable alone would hold had it never been flushed.
// What a key's inputs keep is copied into the reader's arena, so a part
// cursor reuses one Data for all its blocks, and memory is bounded by one
// block per part plus one output batch.

// source is one sorted input of a merged read.
type source interface {
	// key returns the next key with an input the read wants, nil at the end.
	key() ([]byte, error)
	// take appends the inputs of key, if it is the next key, and moves on.
	take(key []byte, ins []keyInput) ([]keyInput, error)
}

// inputFixed are the fixed columns a key's inputs are rebuilt from (take,
// partVersion): not the stored resolution, which is resolved afresh, so
// its four columns are not decoded.
const inputFixed = part.FixSort | part.FixGroup | part.FixCommit | part.FixSeq | part.FixTomb | part.FixOrder

// partCursor walks the wanted rows of one part.
type partCursor struct {
	rd     *reader
	r      *part.Reader
	meta   *part.Meta
	ids    []catalog.ColumnID
	blocks []int
	d      *part.Data // the loaded block; set by key
	loaded bool
	row    int
	rs     []KeyRange
	n      uint64
	lays   map[string]*layout
	// view reads blocks as views of the part cache (ReadBlockView), for
	// the newer parts of a merged shard's fast read: a read repeated
	// while merges catch up then decodes them once, not every time.
	view bool
	// light: takeLight may hand out light inputs (the part's blocks end
	// at keys, so a key's rows stay loaded until it is resolved).
	light bool
	// pre, if not nil, decodes the cursor's blocks ahead (views, with
	// inputFixed and ids; scanCurrent starts it). A block is handed back
	// to it when the cursor moves past it, where it would otherwise be
	// read over: light inputs of a key never outlive its block's turn.
	pre *prefetcher
}

func (c *partCursor) key() ([]byte, error) {
	for {
		if !c.loaded || c.row >= c.d.Rows {
			if len(c.blocks) == 0 {
				return nil, nil
			}
			if c.pre != nil {
				d, err := c.pre.take(c.d)
				if err != nil {
					return nil, err
				}
				c.d = d
			} else {
				read := c.r.ReadBlockFixed
				if c.view {
					read = c.r.ReadBlockView
				}
				if c.d == nil {
					c.d = &part.Data{}
				}
				if err := read(c.blocks[0], inputFixed, c.ids, c.d); err != nil {
					return nil, err
				}
			}
			c.blocks, c.loaded, c.row = c.blocks[1:], true, 0
			c.rd.stats.Blocks++
			continue
		}
		if k := c.d.Sort.BytesAt(c.row); c.d.Commit[c.row] <= c.n && inRanges(k, c.rs) {
			return k, nil
		}
		c.row++
	}
}

func (c *partCursor) take(key []byte, ins []keyInput) ([]keyInput, error) {
	for {
		k, err := c.key()
		if err != nil || k == nil || !bytes.Equal(k, key) {
			return ins, err
		}
		i := c.row
		in := keyInput{pos: version.Pos{Commit: c.d.Commit[i], Seq: c.d.Seq[i]}, tomb: c.d.Tomb[i], group: catalog.GroupID(c.d.Group[i])}
		if !in.tomb {
			if in.mv, err = c.rd.partVersion(c.d, c.meta, i, key, c.lays); err != nil {
				return ins, err
			}
		}
		ins = append(ins, in)
		c.row++
	}
}

// memCursor walks the entries of a memtable in the read's ranges, taking
// the read lock per key.
type memCursor struct {
	m       *keyedMem
	rs      []KeyRange
	ri      int
	e       *keyEntry
	started bool
	n       uint64
}

func (c *memCursor) key() ([]byte, error) {
	if !c.started && c.ri == 0 {
		c.m.ordered()
	}
	c.m.mu.RLock()
	defer c.m.mu.RUnlock()
	for c.ri < len(c.rs) {
		r := c.rs[c.ri]
		if !c.started {
			c.e, c.started = c.m.list.first(), true
			if r.Lo != nil {
				c.e = c.m.list.seek(r.Lo, nil)
			}
		}
		if c.e != nil && (r.Hi == nil || bytes.Compare(c.e.key, r.Hi) < 0) {
			return c.e.key, nil
		}
		c.ri, c.started = c.ri+1, false
	}
	return nil, nil
}

func (c *memCursor) take(key []byte, ins []keyInput) ([]keyInput, error) {
	k, err := c.key()
	if err != nil || k == nil || !bytes.Equal(k, key) {
		return ins, err
	}
	c.m.mu.RLock()
	e := c.e
	for gi := range e.groups {
		g := &e.groups[gi]
		for i := range g.vers {
			if v := g.vers[i]; v.v.Commit <= c.n {
				ins = append(ins, keyInput{pos: v.v.Pos(), group: g.id, mv: v})
			}
		}
	}
	for _, p := range e.dels {
		if p.Commit <= c.n {
			ins = append(ins, keyInput{pos: p, tomb: true})
		}
	}
	c.e = e.next[0]
	c.m.mu.RUnlock()
	return ins, nil
}

// merged reports whether reads of sd must merge its sources: it has parts
// or a frozen memtable (flush.go), so the records its memtable made of its
// own versions, without sight of those, do not answer alone.
func (sd *shardData) merged() bool { return len(sd.parts) > 0 || sd.frozen != nil }

// memCursors appends to srcs a cursor over each keyed memtable of sd, in
// commit order: the frozen one, then the current one.
func (sd *shardData) memCursors(srcs []source, rs []KeyRange, n uint64) []source {
	if f := sd.frozen; f != nil {
		srcs = append(srcs, &memCursor{m: f.keyed, rs: rs, n: n})
	}
	return append(srcs, &memCursor{m: sd.keyed, rs: rs, n: n})
}

// memInputs appends the inputs of key with commit ≤ n from sd's keyed
// memtables, in commit order, and says how many it appended.
func (sd *shardData) memInputs(key []byte, n uint64, ins []keyInput) ([]keyInput, int) {
	before := len(ins)
	if f := sd.frozen; f != nil {
		ins = f.keyed.inputs(key, n, ins)
	}
	ins = sd.keyed.inputs(key, n, ins)
	return ins, len(ins) - before
}

// inputs appends the inputs of key with commit ≤ n in m.
func (m *keyedMem) inputs(key []byte, n uint64, ins []keyInput) []keyInput {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e := m.list.get(key); e != nil {
		ins = inputs(ins, e, n)
	}
	return ins
}

// appChunks returns the chunks of sd's append memtables, in commit order:
// the frozen one's, then the current one's.
func (sd *shardData) appChunks() []*appendChunk {
	if f := sd.frozen; f != nil {
		return append(slices.Clip(f.app.view()), sd.app.view()...)
	}
	return sd.app.view()
}

// mergeShard calls fn with every key of a merged shard that has an
// input at or before n in ranges, in key order, with its inputs in
// position order. key and inputs are valid during the call only.
func (rd *reader) mergeShard(ctx context.Context, sd *shardData, rs []KeyRange, n uint64, fn func(key []byte, ins []keyInput) error) error {
	var srcs []source
	lays := map[string]*layout{}
	for _, pf := range sd.parts {
		meta := pf.r.Meta()
		if !blockWanted(meta.MinCommit, n, meta.Overlaps, rs) {
			rd.stats.PartsSkipped++
			continue
		}
		rd.stats.Parts++
		c := &partCursor{rd: rd, r: pf.r, meta: meta, rs: rs, n: n, lays: lays}
		for _, col := range meta.Columns {
			c.ids = append(c.ids, col.ID)
		}
		for bi := range pf.r.Blocks() {
			b := &pf.r.Blocks()[bi]
			if blockWanted(b.MinCommit, n, b.Overlaps, rs) {
				c.blocks = append(c.blocks, bi)
			} else {
				rd.stats.BlocksSkipped++
			}
		}
		srcs = append(srcs, c)
	}
	// The memtables come last: their commits follow every part's.
	srcs = sd.memCursors(srcs, rs, n)
	var ins []keyInput
	var keyBuf []byte
	for count := 0; ; count++ {
		if count%defaultBatchRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var min []byte
		for _, src := range srcs {
			k, err := src.key()
			if err != nil {
				return err
			}
			if k != nil && (min == nil || bytes.Compare(k, min) < 0) {
				min = k
			}
		}
		if min == nil {
			return nil
		}
		keyBuf = append(keyBuf[:0], min...)
		key := keyBuf
		ins = ins[:0]
		for _, src := range srcs {
			var err error
			if ins, err = src.take(key, ins); err != nil {
				return err
			}
		}
		// Sources cover disjoint, increasing commit ranges, so the inputs
		// are in position order already unless a merge interleaved them.
		sortInputs(ins)
		if err := fn(key, ins); err != nil {
			return err
		}
	}
}

// partVersion rebuilds the memtable form of part row i: its ordering
// values, and its payload — the columns its group had at its commit, in
// id order, exactly as the memtable encodes them (so repeats are still
// recognised, R3.4).
func (rd *reader) partVersion(d *part.Data, meta *part.Meta, i int, key []byte, lays map[string]*layout) (memVersion, error) {
	g := catalog.GroupID(d.Group[i])
	commit := d.Commit[i]
	v := version.Version{Key: key, Group: version.GroupID(g), Commit: commit, Seq: d.Seq[i]}
	// The ordering values are sliced out of the block (orderOf), then
	// copied into the arena: a whole version outlives the loaded block.
	order, err := rd.orderOf(d, meta, i)
	if err != nil {
		return memVersion{}, err
	}
	for k, o := range order {
		order[k] = rd.arena.copy(o)
	}
	v.Order = order
	// The layout cache is shared by the shard's parts, and two parts may
	// hold one column at different widths (R8.1): the part is in the key.
	// The column catalog lookups are cached per Data (partCols).
	idbuf := binary.AppendUvarint(rd.idbuf[:0], meta.Part)
	cols := rd.colsBuf[:0]
	pc := rd.partCols(d)
	for j := range d.IDs {
		c := pc[j]
		if c == nil || d.Cols[j] == nil || c.Group != g || c.AddedCommit >= commit || c.DroppedCommit != 0 && c.DroppedCommit <= commit {
			continue
		}
		cols = append(cols, j)
		idbuf = binary.AppendUvarint(idbuf, uint64(d.IDs[j]))
	}
	rd.idbuf, rd.colsBuf = idbuf, cols
	lay := lays[string(idbuf)]
	if lay == nil {
		lay = &layout{t: rd.t}
		for _, j := range cols {
			lay.cols = append(lay.cols, d.IDs[j])
			lay.types = append(lay.types, meta.Columns[meta.Column(d.IDs[j])].Type)
		}
		lays[string(idbuf)] = lay
	}
	vals := rd.scratch[:0]
	for _, j := range cols {
		vals = types.AppendBinaryAt(vals, d.Cols[j], i)
	}
	rd.scratch = vals
	v.Values = rd.arena.copy(vals)
	return mv(v, lay), nil
}

// resolveKey runs a key's merged inputs through the rules into a fresh
// entry, which reads exactly like a memtable entry.
func (rd *reader) resolveKey(key []byte, ins []keyInput, versioned bool) (*keyEntry, error) {
	scratch := &rd.scratchMem
	scratch.versioned = versioned
	e := &rd.scratchEntry
	e.key, e.groups, e.dels = key, e.groups[:0], e.dels[:0]
	for _, in := range ins {
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
			ord.Horizon = rd.horizon
			rd.ords[in.group] = ord
		}
		if err := scratch.addVersion(e.group(in.group, ord), in.mv, ord); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// scanMerged reads a shard that has parts. The payload arena is emptied
// with each batch handed on: nothing of it outlives the key it was built
// for.
func (rd *reader) scanMerged(ctx context.Context, sd *shardData, rs []KeyRange, n uint64, fn func(*types.Batch) error, emit func(*keyEntry, uint64) error) error {
	versioned := rd.t.Mode == catalog.ModeVersioned
	return rd.mergeShard(ctx, sd, rs, n, func(key []byte, ins []keyInput) error {
		e, err := rd.resolveKey(key, ins, versioned)
		if err != nil {
			return err
		}
		if err := emit(e, n); err != nil {
			return err
		}
		if rd.full() {
			rd.arena.reset()
			return rd.flush(fn)
		}
		return nil
	})
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
		f, skip := rd.indexFilter(pf.r)
		if skip {
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
			spans := rd.granuleSpans(f, bi, b.Rows)
			if len(spans) == 0 {
				rd.stats.BlocksSkipped++
				continue
			}
			rd.stats.Blocks++
			for _, sp := range spans {
				if err := rd.appendPartRows(pf.r, bi, sp, b.Rows, ids, rs, after, n, fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// appendPartRows reads rows sp of block bi (of rows rows) of an append
// part and appends those committed in (after, n] within rs to the batch.
func (rd *reader) appendPartRows(r *part.Reader, bi int, sp [2]int, rows int, ids []catalog.ColumnID, rs []KeyRange, after, n uint64, fn func(*types.Batch) error) error {
	d := &part.Data{}
	var err error
	if sp[0] == 0 && sp[1] == rows {
		err = r.ReadBlock(bi, ids, d)
	} else {
		err = r.ReadRows(bi, sp[0], sp[1], part.FixSort|part.FixCommit, ids, d)
	}
	if err != nil {
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
	return nil
}

// partCols returns the catalog column of each of d's table columns (nil
// for an id the table does not know), cached per Data for as long as it
// holds the same ids: partVersion runs once per stored row, and a merged
// read alternates between the Data of each of its parts.
func (rd *reader) partCols(d *part.Data) []*catalog.Column {
	for i := range rd.pcCache {
		if e := &rd.pcCache[i]; e.d == d && slices.Equal(e.ids, d.IDs) {
			return e.cols
		}
	}
	e := partColsEntry{d: d, ids: slices.Clone(d.IDs)}
	for _, id := range d.IDs {
		c, _ := rd.t.AnyColumn(id)
		e.cols = append(e.cols, c)
	}
	if len(rd.pcCache) >= 16 {
		rd.pcCache = rd.pcCache[:0]
	}
	rd.pcCache = append(rd.pcCache, e)
	return e.cols
}

// partColsEntry is one entry of reader.partCols's cache.
type partColsEntry struct {
	d    *part.Data
	ids  []catalog.ColumnID
	cols []*catalog.Column
}

// sortInputs puts a key's inputs in position order, stably; they usually
// are already (sources cover increasing commits), which costs one pass
// and no allocation. When they are not (a run's rows are in group order,
// and a touched key's run and delta rows interleave), a few are sorted by
// index and then moved once each: keyInput is large, and sorting the
// inputs themselves copied each many times (11 % of a read resolving
// every key).
func sortInputs(ins []keyInput) {
	cmp := func(a, b keyInput) int { return a.pos.Compare(b.pos) }
	if slices.IsSortedFunc(ins, cmp) {
		return
	}
	var buf [64]uint8
	if len(ins) > len(buf) {
		slices.SortStableFunc(ins, cmp)
		return
	}
	idx := buf[:len(ins)]
	for i := range idx {
		idx[i] = uint8(i)
	}
	// Insertion sort: stable, and the inputs are few and nearly sorted.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && ins[idx[j]].pos.Compare(ins[idx[j-1]].pos) < 0; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	// ins[k] must become the old ins[idx[k]]: follow each cycle of the
	// permutation, marking placed slots with idx[k] = k.
	for s := range idx {
		if int(idx[s]) == s {
			continue
		}
		tmp := ins[s]
		k := s
		for {
			j := int(idx[k])
			idx[k] = uint8(k)
			if j == s {
				ins[k] = tmp
				break
			}
			ins[k] = ins[j]
			k = j
		}
	}
}
