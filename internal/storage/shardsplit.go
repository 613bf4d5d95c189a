package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
)

// DefaultShardSplitBytes is the size at which a SHARDS AUTO shard is split
// when Options.ShardSplitBytes is zero: four target-sized parts, so a split
// shard still merges into a few large runs.
const DefaultShardSplitBytes = 1 << 30

// SHARDS AUTO (docs/storage-merges.md, "SHARDS AUTO").
//
// A table declared SHARDS AUTO starts with one shard owning the whole hash
// space. When a shard's stored bytes (parts and memtable) pass
// ShardSplitBytes, it is split into two shards owning the halves of its
// range. A row's shard is decided by the hash of its shard columns, which
// the parts do not store, and parts are sorted by key, not by hash, so a
// split rewrites every part of the shard into one part per half. It runs
// like a merge:
//
//  1. Without any lock (under mergeMu, so no merge retires the parts):
//     each part of the shard is read block by block and its rows routed to
//     the lower or upper half's output, which keeps the input's kind, level
//     and commit range, so runs and AS OF skipping stay as they were.
//  2. Under the apply lock, the way a flush runs: parts flushed to the
//     shard since step 1 are split the same way; the memtable is written as
//     one part per half; then ONE manifest edit creates the two shards
//     (flushed through the published commit), moves the outputs into them,
//     removes the old shard's parts and the old shard; then the state is
//     published with the two shards and fresh memtables.
//  3. The old parts go with the generation that held them (lifetime.go).
//
// Reads never wait; commits are published after step 2, as they are after
// a flush. A crash before the edit leaves output files no manifest names
// (removed at Open) and the old shard whole; after it, the new shards.

// splitDue returns the shards of SHARDS AUTO tables over the split size
// whose range can still be halved and that hold at least two rows.
func (e *Engine) splitDue() []shardKey {
	limit := e.opts.ShardSplitBytes
	if limit <= 0 {
		limit = DefaultShardSplitBytes
	}
	st := e.cur.Load()
	ids := make([]catalog.TableID, 0, len(st.tables))
	for id := range st.tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var due []shardKey
	for _, id := range ids {
		t, ok := st.cat.TableByID(id)
		td := st.tables[id]
		if !ok || !t.ShardsAuto {
			continue
		}
		n := len(td.shards)
		for _, sd := range td.shards {
			if _, _, ok := sd.rng.Split(); !ok || n >= catalog.MaxShards {
				continue
			}
			size := int64(sd.memBytes())
			var rows uint64
			for _, pf := range sd.parts {
				size += int64(pf.man.Bytes)
				rows += pf.man.Rows
			}
			if size >= limit && (rows >= 2 || size > 0 && len(sd.parts) == 0) {
				due = append(due, shardKey{id, sd.num})
				n++
			}
		}
	}
	return due
}

// splitLoop splits the shards due when it starts, each once: halves that
// are still over the size wait for the next pass (the next flush's), so
// one pass at most doubles a table's shards even when parts are small
// against the size target. Under mergeMu.
func (e *Engine) splitLoop() error {
	for _, k := range e.splitDue() {
		if err := e.failed(); err != nil {
			return err
		}
		if err := e.splitShard(k.table, k.shard); err != nil {
			return err
		}
	}
	return nil
}

// splitShard splits one shard in two (see above). Under mergeMu.
func (e *Engine) splitShard(tid catalog.TableID, num uint32) error {
	st := e.cur.Load()
	t, ok := st.cat.TableByID(tid)
	td := st.tables[tid]
	if !ok || td == nil {
		return nil
	}
	si := slices.IndexFunc(td.shards, func(sd *shardData) bool { return sd.num == num })
	if si < 0 {
		return nil
	}
	sd := td.shards[si]
	lower, upper, ok := sd.rng.Split()
	if !ok {
		return nil
	}
	var top uint32
	for _, s := range e.man.Snapshot().Shards(uint64(tid)) {
		top = max(top, s.Shard)
	}
	sp := &splitter{e: e, t: t, nums: [2]uint32{top + 1, top + 2}, rngs: [2]manifest.KeyRange{lower, upper}}
	defer sp.drop() // outputs not handed to the state on any error
	done := map[*partFile]bool{}
	for _, pf := range sd.parts {
		// Held while read (a DROP and a flush may retire it meanwhile).
		if !pf.refs.acquire() {
			return nil
		}
		err := sp.split(pf)
		pf.refs.release()
		if err != nil {
			return err
		}
		done[pf] = true
	}

	e.ap.Lock()
	defer e.ap.Unlock()
	st = e.cur.Load()
	td = st.tables[tid]
	if td == nil {
		return nil
	}
	if si = slices.IndexFunc(td.shards, func(x *shardData) bool { return x.num == num }); si < 0 {
		return nil
	}
	sd = td.shards[si]
	t, _ = st.cat.TableByID(tid)
	sp.t = t
	for _, pf := range sd.parts {
		if !done[pf] {
			// Flushed since step 1: at most a few flushes' worth.
			if err := sp.split(pf); err != nil {
				return err
			}
		}
	}
	// The memtables — the one a flush in progress is writing, if any, and
	// the current one — go through parts of the old shard, never named by
	// the manifest, so the same routing serves them. That flush then finds
	// the shard gone and drops its part (installLocked).
	mems := []memtable{{keyed: sd.keyed, app: sd.app}}
	if sd.frozen != nil {
		mems = []memtable{*sd.frozen, mems[0]}
	}
	for _, m := range mems {
		if m.empty() {
			continue
		}
		pf, err := e.writePart(t, sd.num, m)
		if err != nil {
			return err
		}
		err = sp.split(pf)
		_ = pf.r.Close()
		_ = e.fs.Remove(pf.refs.path)
		if err != nil {
			return err
		}
	}
	if err := e.syncManifest(st); err != nil {
		e.fail(err)
		return err
	}
	var ed manifest.Edit
	for i := range 2 {
		ed.SetShards = append(ed.SetShards, manifest.Shard{Table: uint64(tid), Shard: sp.nums[i], Range: sp.rngs[i], State: manifest.StateActive})
		ed.SetFlushed = append(ed.SetFlushed, manifest.Flushed{Table: uint64(tid), Shard: sp.nums[i], Commit: st.commit})
	}
	// The run's AS OF index goes with it: the halves' runs have none
	// until the merge loop's index pass, right after the splits, writes
	// them one (asofindex.go); reads AS OF go through the runs meanwhile.
	for _, pf := range slices.Concat(sd.parts, sd.asof) {
		ed.RemoveParts = append(ed.RemoveParts, pf.man.Ref())
	}
	for _, side := range sp.outs {
		for _, pf := range side {
			ed.AddParts = append(ed.AddParts, pf.man)
		}
	}
	ed.RemoveShards = []manifest.ShardRef{{Table: uint64(tid), Shard: num}}
	if err := e.man.Apply(ed); err != nil {
		err = fmt.Errorf("storage: split table %s shard %d: manifest: %w", t.Name, num, err)
		if errors.Is(err, manifest.ErrFailed) {
			e.fail(err)
		}
		return err
	}
	ntd := &tableData{id: td.id, keyed: td.keyed}
	ntd.rr.Store(td.rr.Load())
	for i, x := range td.shards {
		if i != si {
			ntd.shards = append(ntd.shards, x)
			continue
		}
		for h := range 2 {
			nsd := &shardData{num: sp.nums[h], rng: sp.rngs[h], parts: sp.outs[h]}
			sortParts(nsd.parts)
			if td.keyed {
				nsd.keyed = newKeyedMem(t.Mode == catalog.ModeVersioned)
			} else {
				nsd.app = newAppendMem()
			}
			ntd.shards = append(ntd.shards, nsd)
		}
	}
	sort.Slice(ntd.shards, func(i, j int) bool { return ntd.shards[i].rng.Lo < ntd.shards[j].rng.Lo })
	tables := make(map[catalog.TableID]*tableData, len(st.tables))
	for id, x := range st.tables {
		tables[id] = x
	}
	tables[tid] = ntd
	e.publishParts(&state{commit: st.commit, cat: st.cat, tables: tables, commits: st.commits})
	sp.outs = [2][]*partFile{} // the state owns them now
	e.splits.Add(1)
	e.log.Info("storage: split shard", "table", t.Name, "shard", num, "into", sp.nums, "ranges", sp.rngs)
	return nil
}

// splitter routes the rows of a shard's parts to the two halves.
type splitter struct {
	e    *Engine
	t    *catalog.Table
	nums [2]uint32
	rngs [2]manifest.KeyRange
	outs [2][]*partFile
	// scratch buffers reused across rows and parts.
	in  part.Data
	out [2]*part.Data
	key []byte
}

// drop closes and removes every output not yet owned by the state.
func (sp *splitter) drop() {
	for _, side := range sp.outs {
		for _, pf := range side {
			_ = pf.r.Close()
			_ = sp.e.fs.Remove(pf.refs.path)
		}
	}
}

// shardKey returns the bytes whose hash placed the row (commit.go's
// applyWrite): the key encodings of the shard columns. A keyed table's
// shard columns are key columns, whose encodings are segments of the
// sort key; an append table's are read from its columns. An append table
// without shard columns places rows anywhere, so its rows alternate.
func (sp *splitter) shardKey(d *part.Data, i int, cols []int, keyed bool) ([]byte, error) {
	buf := sp.key[:0]
	if keyed {
		sortKey := d.Sort.BytesAt(i)
		for _, c := range cols {
			seg, err := keySegment(sp.t, sortKey, c)
			if err != nil {
				return nil, err
			}
			buf = append(buf, seg...)
		}
	} else {
		for _, c := range cols {
			if c < 0 || d.Cols[c] == nil {
				return nil, fmt.Errorf("storage: split table %s: a part lacks a SHARD BY column", sp.t.Name)
			}
			buf = types.AppendKey(buf, peek(d.Cols[c], i))
		}
	}
	sp.key = buf
	return buf, nil
}

// keySegment returns the encoding of the ORDER BY column at index c within
// a sort key.
func keySegment(t *catalog.Table, key []byte, c int) ([]byte, error) {
	rest := key
	for j := 0; j <= c; j++ {
		col, ok := t.AnyColumn(t.OrderBy[j])
		if !ok {
			return nil, fmt.Errorf("storage: split table %s: no ORDER BY column %d", t.Name, t.OrderBy[j])
		}
		_, r, err := types.DecodeKey(col.Type, rest)
		if err != nil {
			return nil, fmt.Errorf("storage: split table %s: %w", t.Name, err)
		}
		if j == c {
			return rest[:len(rest)-len(r)], nil
		}
		rest = r
	}
	return nil, nil
}

// split rewrites one part as up to two, one per half.
func (sp *splitter) split(pf *partFile) error {
	r := pf.r
	meta := r.Meta()
	keyed := sp.t.Keyed()
	ids := make([]catalog.ColumnID, len(meta.Columns))
	for i, c := range meta.Columns {
		ids[i] = c.ID
	}
	shardCols := sp.t.ShardColumns()
	cols := make([]int, len(shardCols))
	for i, id := range shardCols {
		if keyed {
			cols[i] = slices.Index(sp.t.OrderBy, id)
			if cols[i] < 0 {
				return fmt.Errorf("storage: split table %s: SHARD BY column %d is not in ORDER BY", sp.t.Name, id)
			}
		} else {
			cols[i] = slices.Index(ids, id)
		}
	}
	fixed := part.FixAll &^ part.FixOrder
	for h := range 2 {
		sp.out[h] = &part.Data{Sort: types.NewVector(types.Of(types.Bytes), 0), IDs: ids}
		if meta.Kind != part.KindAppend {
			sp.out[h].Order = types.NewVector(types.Of(types.Bytes), 0)
			fixed |= part.FixOrder
		}
		for _, c := range meta.Columns {
			sp.out[h].Cols = append(sp.out[h].Cols, types.NewVector(c.Type, 0))
		}
	}
	row := 0
	for b := range r.Blocks() {
		d := &sp.in
		if err := r.ReadBlock(b, ids, d); err != nil {
			return fmt.Errorf("storage: split: %w", err)
		}
		for i := 0; i < d.Rows; i++ {
			h := row & 1
			row++
			if len(cols) > 0 {
				k, err := sp.shardKey(d, i, cols, keyed)
				if err != nil {
					return err
				}
				h = 0
				if sp.rngs[1].Contains(shardHash(k)) {
					h = 1
				}
			}
			copyRow(sp.out[h], d, i, fixed)
		}
	}
	for h := range 2 {
		d := sp.out[h]
		if d.Rows == 0 {
			continue
		}
		pid, err := sp.e.man.NextPartID()
		if err != nil {
			return fmt.Errorf("storage: split: %w", err)
		}
		m := part.Meta{Table: sp.t.ID, Shard: sp.nums[h], Part: pid, Kind: meta.Kind, Level: meta.Level, Columns: meta.Columns, OrderFrom: meta.OrderFrom}
		var info part.Info
		slot, err := sp.e.writeSlot(sp.t, sp.nums[h], pid, func(path string) (err error) {
			info, err = part.Write(sp.e.fs, path, d, m, part.WriteOptions{BlockRows: flushBlockRows, IndexCols: sp.e.indexCols(sp.t.ID)})
			return err
		})
		path := slot.path
		if err != nil {
			return fmt.Errorf("storage: split: %w", err)
		}
		nr, err := part.OpenCached(sp.e.fs, path, sp.e.pages)
		if err != nil {
			_ = sp.e.fs.Remove(path)
			return fmt.Errorf("storage: split: %w", err)
		}
		nm := nr.Meta()
		mp := manifest.Part{Table: uint64(sp.t.ID), Shard: sp.nums[h], ID: pid, Level: meta.Level, Kind: pf.man.Kind,
			Rows: info.Rows, Bytes: uint64(info.Bytes),
			// The input's commit range, which may be wider than the rows'
			// (a merge output's is the merge's): runs stay runs.
			MinCommit: pf.man.MinCommit, MaxCommit: pf.man.MaxCommit,
			// Half of the input's versions expire no sooner than all of them.
			ExpiresFrom: pf.man.ExpiresFrom,
			MinKey:      bytes.Clone(nm.MinSort), MaxKey: bytes.Clone(nm.MaxSort), File: slot.file,
			Location: slot.loc, CreatedAt: time.Now().UTC()}
		sp.outs[h] = append(sp.outs[h], newPartFile(sp.e.fs, path, mp, nr))
	}
	return nil
}

// appendIf appends src[i] to dst when on (a fixed column
// copyRow copies).
func appendIf[T any](on bool, dst, src []T, i int) []T {
	if on {
		return append(dst, src[i])
	}
	return dst
}

// copyRow appends row i of src to dst: the sort key, the other fixed
// columns fixed names, and every table column (NULL where src lacks it).
// A split copies every fixed column (but an append part's ordering
// values, which it has none of), an AS OF index build those asofFixed
// names. An ordering value src lacks is appended empty.
func copyRow(dst, src *part.Data, i int, fixed part.Fixed) {
	dst.Sort.AppendBytes(src.Sort.BytesAt(i))
	if fixed&part.FixOrder != 0 {
		var o []byte
		if src.Order != nil && src.Order.Len() > i {
			o = src.Order.BytesAt(i)
		}
		dst.Order.AppendBytes(o)
	}
	dst.Group = appendIf(fixed&part.FixGroup != 0, dst.Group, src.Group, i)
	dst.Commit = appendIf(fixed&part.FixCommit != 0, dst.Commit, src.Commit, i)
	dst.Seq = appendIf(fixed&part.FixSeq != 0, dst.Seq, src.Seq, i)
	dst.Tomb = appendIf(fixed&part.FixTomb != 0, dst.Tomb, src.Tomb, i)
	dst.WonAt = appendIf(fixed&part.FixWonAt != 0, dst.WonAt, src.WonAt, i)
	dst.EndedAt = appendIf(fixed&part.FixEndedAt != 0, dst.EndedAt, src.EndedAt, i)
	dst.SupersededBy = appendIf(fixed&part.FixSupersededBy != 0, dst.SupersededBy, src.SupersededBy, i)
	dst.State = appendIf(fixed&part.FixState != 0, dst.State, src.State, i)
	for c, v := range dst.Cols {
		if s := src.Cols[c]; s != nil {
			v.AppendFrom(s, i)
		} else {
			v.AppendNull()
		}
	}
	dst.Rows++
}
