package storage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/strata-db/strata/internal/catalog"
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
}

// newPartFile wraps an open part the published state is about to name;
// path is the file on fs, deleted when the part is retired and released.
func newPartFile(fs vfs.FS, path string, man manifest.Part, r *part.Reader) *partFile {
	pf := &partFile{man: man, r: r}
	pf.refs = newPartRefs(fs, path, pf)
	return pf
}

// Flush writes every non-empty memtable to a part (doc.go, "Flush") and
// truncates the WAL behind the flushed commit. Results never change: a read
// at any commit returns the same rows before and after.
func (e *Engine) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.ap.Lock()
	defer e.ap.Unlock()
	return e.flushLocked()
}

// maybeFlush flushes when a memtable has passed MemtableBytes. It runs
// under e.ap after a commit is published.
func (e *Engine) maybeFlush(st *state) error {
	for _, td := range st.tables {
		for _, sd := range td.shards {
			if int64(sd.memBytes()) >= e.opts.MemtableBytes {
				return e.flushLocked()
			}
		}
	}
	return nil
}

func (sd *shardData) empty() bool {
	if sd.keyed != nil {
		sd.keyed.mu.RLock()
		defer sd.keyed.mu.RUnlock()
		return sd.keyed.list.n == 0
	}
	sd.app.mu.RLock()
	defer sd.app.mu.RUnlock()
	return len(sd.app.chunks) == 0
}

// flushLocked flushes every shard. Under e.ap no commit is applied, so the
// memtables hold still; readers go on. Parts are written and fsynced
// first, then ONE manifest edit adds them, advances every shard's flushed
// commit and the WAL checkpoint (manifest invariant 1), then the new state
// is published with fresh memtables, then the WAL is truncated.
func (e *Engine) flushLocked() error {
	st := e.cur.Load()
	if err := e.syncManifest(st); err != nil {
		e.fail(err)
		return err
	}
	ms := e.man.Snapshot()
	ids := make([]catalog.TableID, 0, len(st.tables))
	for id := range st.tables {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var ed manifest.Edit
	var written []*partFile
	tables := make(map[catalog.TableID]*tableData, len(st.tables))
	cleanup := func() {
		for _, pf := range written {
			_ = pf.r.Close()
			_ = e.fs.Remove(filepath.Join(e.dir, filepath.FromSlash(pf.man.File)))
		}
	}
	for _, id := range ids {
		td := st.tables[id]
		t, _ := st.cat.TableByID(id)
		ntd := &tableData{id: td.id, keyed: td.keyed}
		for _, sd := range td.shards {
			nsd := &shardData{num: sd.num, rng: sd.rng, keyed: sd.keyed, app: sd.app, parts: sd.parts}
			if st.commit > ms.FlushedThrough(uint64(id), sd.num) {
				ed.SetFlushed = append(ed.SetFlushed, manifest.Flushed{Table: uint64(id), Shard: sd.num, Commit: st.commit})
			}
			if !sd.empty() {
				pf, err := e.writePart(t, sd)
				if err != nil {
					cleanup()
					return err
				}
				written = append(written, pf)
				ed.AddParts = append(ed.AddParts, pf.man)
				nsd.parts = append(append([]*partFile(nil), sd.parts...), pf)
				if td.keyed {
					nsd.keyed = newKeyedMem(t.Mode == catalog.ModeVersioned)
				} else {
					nsd.app = newAppendMem()
				}
			}
			ntd.shards = append(ntd.shards, nsd)
		}
		tables[id] = ntd
	}
	if st.commit > ms.WALCheckpoint() {
		ed.WALCheckpoint = st.commit
	}
	if len(ed.AddParts) == 0 && len(ed.SetFlushed) == 0 && ed.WALCheckpoint == 0 {
		return nil
	}
	if err := e.man.Apply(ed); err != nil {
		cleanup()
		err = fmt.Errorf("storage: flush: manifest: %w", err)
		if errors.Is(err, manifest.ErrFailed) {
			e.fail(err)
		}
		return err
	}
	e.publishParts(&state{commit: st.commit, cat: st.cat, tables: tables, commits: st.commits})
	if len(ed.AddParts) > 0 {
		e.kickMerges()
	}
	if _, err := e.wal.RemoveBefore(st.commit); err != nil {
		e.log.Warn("storage: flush: wal truncation failed; it is retried at the next flush", "err", err)
	}
	return nil
}

// writePart writes the memtable of sd as a part and opens it.
func (e *Engine) writePart(t *catalog.Table, sd *shardData) (*partFile, error) {
	pid, err := e.man.NextPartID()
	if err != nil {
		return nil, fmt.Errorf("storage: flush: %w", err)
	}
	meta := part.Meta{Table: t.ID, Shard: sd.num, Part: pid, Kind: part.KindDelta}
	var d *part.Data
	if sd.keyed != nil {
		d, err = keyedPartData(t, sd.keyed, &meta)
	} else {
		meta.Kind = part.KindAppend
		d, err = appendPartData(t, sd.app, &meta)
	}
	if err != nil {
		return nil, err
	}
	file := filepath.ToSlash(filepath.Join("parts", fmt.Sprintf("%d-%d-%d.part", t.ID, sd.num, pid)))
	path := filepath.Join(e.dir, filepath.FromSlash(file))
	// Blocks of 8192 rows: a point lookup decodes one block per part, and
	// at 64 Ki rows (part.DefaultBlockRows) that is most of its cost.
	info, err := part.Write(e.fs, path, d, meta, part.WriteOptions{BlockRows: flushBlockRows})
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
	return newPartFile(e.fs, path, manifest.Part{Table: uint64(t.ID), Shard: sd.num, ID: pid, Kind: kind, Rows: info.Rows, Bytes: uint64(info.Bytes),
		MinCommit: m.MinCommit, MaxCommit: m.MaxCommit, MinKey: m.MinSort, MaxKey: m.MaxSort, File: file,
		Location: manifest.LocationLocal, CreatedAt: time.Now().UTC()}, r), nil
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
func keyedPartData(t *catalog.Table, m *keyedMem, meta *part.Meta) (*part.Data, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := map[catalog.ColumnID]bool{}
	var last *layout // versions of one write share their layout
	for e := m.list.first(); e != nil; e = e.next[0] {
		for _, g := range e.groups {
			for i := range g.vers {
				if lay := g.vers[i].lay; lay != last {
					for _, id := range lay.cols {
						ids[id] = true
					}
					last = lay
				}
			}
		}
	}
	cols, err := partColumns(t, ids)
	if err != nil {
		return nil, err
	}
	meta.Columns = cols
	d := newPartData(cols, int(m.rows+m.deletes))
	// The byte columns are allocated once: grown by appends they would be
	// copied over and over.
	d.Sort.Reserve(int(m.sortBytes))
	d.Order.Reserve(int(m.orderBytes))
	for i, c := range cols {
		// Payload bytes are the binary encoding, a close upper bound of the
		// values' own bytes.
		d.Cols[i].Reserve(int(m.colBytes[c.ID]))
	}
	type row struct {
		group catalog.GroupID
		pos   version.Pos
		v     *memVersion
	}
	var rows []row
	var buf []byte
	for e := m.list.first(); e != nil; e = e.next[0] {
		rows = rows[:0]
		for gi := range e.groups {
			g := &e.groups[gi]
			for i := range g.vers {
				rows = append(rows, row{group: g.id, pos: g.vers[i].v.Pos(), v: &g.vers[i]})
			}
		}
		for _, p := range e.dels {
			rows = append(rows, row{group: catalog.DefaultGroup, pos: p})
		}
		slices.SortFunc(rows, func(a, b row) int {
			if a.group != b.group {
				return cmp.Compare(a.group, b.group)
			}
			return a.pos.Compare(b.pos)
		})
		for _, r := range rows {
			d.Sort.AppendBytes(e.key)
			d.Group = append(d.Group, uint16(r.group))
			d.Commit = append(d.Commit, r.pos.Commit)
			d.Seq = append(d.Seq, r.pos.Seq)
			d.Tomb = append(d.Tomb, r.v == nil)
			buf = buf[:0]
			if r.v != nil {
				for _, o := range r.v.v.Order {
					buf = binary.AppendUvarint(buf, uint64(len(o)))
					buf = append(buf, o...)
				}
			}
			d.Order.AppendBytes(buf)
			if err := appendPayloadColumns(d, cols, r.v); err != nil {
				return nil, fmt.Errorf("storage: flush table %s: %w", t.Name, err)
			}
			d.Rows++
		}
	}
	return d, nil
}

// uvarintLen is the length of x's binary.AppendUvarint encoding.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// appendPayloadColumns appends one row of table columns from a version's
// payload (all NULL for a delete marker), cast to the part's types.
func appendPayloadColumns(d *part.Data, cols []part.ColumnMeta, v *memVersion) error {
	if v != nil {
		b := v.v.Values
		for j, st := range v.lay.types {
			ci := sort.Search(len(cols), func(i int) bool { return cols[i].ID >= v.lay.cols[j] })
			for d.Cols[ci].Len() < d.Rows {
				d.Cols[ci].AppendNull()
			}
			if st == cols[ci].Type {
				rest, err := types.DecodeBinaryTo(d.Cols[ci], b)
				if err != nil {
					return err
				}
				b = rest
				continue
			}
			val, rest, err := types.DecodeBinary(st, b)
			if err != nil {
				return err
			}
			b = rest
			if val, err = types.Cast(val, cols[ci].Type); err != nil {
				return err
			}
			d.Cols[ci].Append(val)
		}
	}
	for _, c := range d.Cols {
		for c.Len() < d.Rows+1 {
			c.AppendNull()
		}
	}
	return nil
}

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
				key = types.AppendKey(key, peek(c.cols[kc], r))
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
	d := newPartData(cols, len(rows))
	for _, r := range rows {
		d.Sort.AppendBytes(r.key)
		d.Commit = append(d.Commit, r.commit)
		d.Seq = append(d.Seq, r.seq)
		for ci, cm := range cols {
			si := r.c.lay.index(cm.ID)
			switch {
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
