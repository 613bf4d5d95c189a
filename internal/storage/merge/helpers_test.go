package merge

import (
	"encoding/binary"
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// testTable is a keyed table (or, for append, a plain one) with one key
// column k, a default group holding a (ordered by commit alone) and a group
// g1 holding o and b, VALID BY (o).
func testTable(mode catalog.Mode) *catalog.Table {
	t := &catalog.Table{ID: 7, Name: "t", Mode: mode, Generation: 1}
	i64, u64 := types.Of(types.Int64), types.Of(types.Uint64)
	if mode == catalog.ModeAppend {
		t.Columns = []*catalog.Column{
			{ID: 1, Name: "k", Type: i64, Group: catalog.NoGroup, Codec: "DELTA, ZSTD(1)", Position: 1},
			{ID: 2, Name: "a", Type: i64, Nullable: true, Group: catalog.NoGroup, Codec: "DELTA, ZSTD(1)", Position: 2},
		}
		return t
	}
	t.Columns = []*catalog.Column{
		{ID: 1, Name: "k", Type: i64, Group: catalog.NoGroup, Codec: "DELTA, ZSTD(1)", Position: 1},
		{ID: 2, Name: "a", Type: i64, Nullable: true, Group: 0, Codec: "DELTA, ZSTD(1)", Position: 2},
		{ID: 3, Name: "o", Type: u64, Nullable: true, Group: 1, Codec: "DELTA, ZSTD(1)", Position: 3},
		{ID: 4, Name: "b", Type: i64, Nullable: true, Group: 1, Codec: "DELTA, ZSTD(1)", Position: 4},
	}
	t.Key = []catalog.ColumnID{1}
	t.OrderBy = []catalog.ColumnID{1}
	t.Groups = []*catalog.Group{
		{ID: 0, Name: "default", Columns: []catalog.ColumnID{2}},
		{ID: 1, Name: "g1", Columns: []catalog.ColumnID{3, 4}, ValidBy: []catalog.ColumnID{3}},
	}
	return t
}

// trow is one stored row of the test table, with its resolution.
type trow struct {
	key     int64
	group   uint16
	commit  uint64
	seq     uint32
	tomb    bool
	a, o, b int64 // a for group 0; o, b for group 1
	state   version.State
	wonAt   uint64
	endedAt uint64
	superBy uint64
}

func (r *trow) pos() version.Pos { return version.Pos{Commit: r.commit, Seq: r.seq} }

// sortRows orders rows as parts store them.
func less(a, b *trow) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	if a.group != b.group {
		return a.group < b.group
	}
	if a.commit != b.commit {
		return a.commit < b.commit
	}
	return a.seq < b.seq
}

// tb is what the helpers need of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// fixture holds a filesystem and the part ids handed out.
type fixture struct {
	t      tb
	fs     vfs.FS
	nextID uint64
	table  *catalog.Table
}

func newFixture(t tb, table *catalog.Table) *fixture {
	return &fixture{t: t, fs: vfs.NewMem(), table: table}
}

func (f *fixture) create(part.Kind) (string, uint64, error) {
	f.nextID++
	return fmt.Sprintf("p%06d.parquet", f.nextID), f.nextID, nil
}

// write stores rows (sorted) as a part of kind k at level 0 and returns its
// manifest entry.
func (f *fixture) write(rows []trow, k part.Kind, opts part.WriteOptions) manifest.Part {
	f.t.Helper()
	i64, u64 := types.Of(types.Int64), types.Of(types.Uint64)
	d := &part.Data{Sort: types.NewVector(types.Of(types.Bytes), len(rows)), Order: types.NewVector(types.Of(types.Bytes), len(rows))}
	cols := []part.ColumnMeta{{ID: 1, Type: i64}, {ID: 2, Type: i64}}
	if f.table.Keyed() {
		cols = append(cols, part.ColumnMeta{ID: 3, Type: u64}, part.ColumnMeta{ID: 4, Type: i64})
	}
	for i := range cols {
		cols[i].Codec = catalog.DefaultCodec(cols[i].Type)
		d.IDs = append(d.IDs, cols[i].ID)
		d.Cols = append(d.Cols, types.NewVector(cols[i].Type, len(rows)))
	}
	var key, ord []byte
	for i := range rows {
		r := &rows[i]
		key = types.AppendKey(key[:0], types.NewInt64(r.key))
		d.Sort.AppendBytes(key)
		ord = ord[:0]
		if r.group == 1 && !r.tomb {
			ord = AppendOrder(ord, [][]byte{types.AppendKey(nil, types.NewUint64(uint64(r.o)))})
		}
		d.Order.AppendBytes(ord)
		d.Group = append(d.Group, r.group)
		d.Commit = append(d.Commit, r.commit)
		d.Seq = append(d.Seq, r.seq)
		d.Tomb = append(d.Tomb, r.tomb)
		d.WonAt = append(d.WonAt, r.wonAt)
		d.EndedAt = append(d.EndedAt, r.endedAt)
		d.SupersededBy = append(d.SupersededBy, r.superBy)
		d.State = append(d.State, r.state)
		d.Cols[0].AppendInt64(r.key)
		switch {
		case r.tomb:
			d.Cols[1].AppendNull()
		case !f.table.Keyed() || r.group == 0:
			d.Cols[1].AppendInt64(r.a)
		default:
			d.Cols[1].AppendNull()
		}
		if f.table.Keyed() {
			if r.group == 1 && !r.tomb {
				d.Cols[2].AppendUint64(uint64(r.o))
				d.Cols[3].AppendInt64(r.b)
			} else {
				d.Cols[2].AppendNull()
				d.Cols[3].AppendNull()
			}
		}
		d.Rows++
	}
	path, id, _ := f.create(k)
	info, err := part.Write(f.fs, path, d, part.Meta{Table: f.table.ID, Kind: k, Columns: cols}, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	mp := manifest.Part{Table: uint64(f.table.ID), ID: id, Kind: manifest.Kind(k), Rows: uint64(len(rows)),
		Bytes: uint64(info.Bytes), MinCommit: rows[0].commit, MaxCommit: rows[0].commit, File: path}
	for _, r := range rows {
		mp.MinCommit, mp.MaxCommit = min(mp.MinCommit, r.commit), max(mp.MaxCommit, r.commit)
	}
	return mp
}

// open opens the parts.
func (f *fixture) open(ps []manifest.Part) []*part.Reader {
	f.t.Helper()
	rs := make([]*part.Reader, len(ps))
	for i, p := range ps {
		r, err := part.Open(f.fs, p.File)
		if err != nil {
			f.t.Fatal(err)
		}
		rs[i] = r
	}
	return rs
}

// merge merges ps and returns the outputs' manifest entries.
func (f *fixture) merge(ps []manifest.Part, oldest bool, partRows int) ([]manifest.Part, Stats) {
	f.t.Helper()
	rs := f.open(ps)
	defer func() {
		for _, r := range rs {
			r.Close()
		}
	}()
	outs, st, err := Merge(rs, Options{Table: f.table, FS: f.fs, Create: f.create, Oldest: oldest, Level: 1, PartRows: partRows})
	if err != nil {
		f.t.Fatal(err)
	}
	mps := make([]manifest.Part, len(outs))
	for i, o := range outs {
		mps[i] = o.Part
	}
	return mps, st
}

// read returns every row of the part, checking that it is sorted.
func (f *fixture) read(p manifest.Part) []trow {
	f.t.Helper()
	r, err := part.Open(f.fs, p.File)
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Close()
	if err := part.Check(f.fs, p.File); err != nil {
		f.t.Fatal(err)
	}
	var out []trow
	var d part.Data
	ids := []catalog.ColumnID{1, 2, 3, 4}
	for b := range r.Blocks() {
		if err := r.ReadBlock(b, ids, &d); err != nil {
			f.t.Fatal(err)
		}
		for i := range d.Rows {
			k, _, err := types.DecodeKey(types.Of(types.Int64), d.Sort.BytesAt(i))
			if err != nil {
				f.t.Fatal(err)
			}
			tr := trow{key: k.Int64(), group: d.Group[i], commit: d.Commit[i], seq: d.Seq[i], tomb: d.Tomb[i],
				state: d.State[i], wonAt: d.WonAt[i], endedAt: d.EndedAt[i], superBy: d.SupersededBy[i]}
			if v := d.Cols[1]; v != nil && !v.IsNull(i) {
				tr.a = v.Int64s()[i]
			}
			if v := d.Cols[2]; v != nil && !v.IsNull(i) {
				tr.o = int64(v.Uint64s()[i])
			}
			if v := d.Cols[3]; v != nil && !v.IsNull(i) {
				tr.b = v.Int64s()[i]
			}
			if tr.group == 1 && !tr.tomb {
				ov, err := SplitOrder(nil, d.Order.BytesAt(i), 1)
				if err != nil {
					f.t.Fatal(err)
				}
				o, _, _ := types.DecodeKey(types.Of(types.Uint64), ov[0])
				if uint64(tr.o) != o.Uint64() {
					f.t.Fatalf("row %+v: Order says %d", tr, o.Uint64())
				}
			}
			if n := len(out); n > 0 && less(&tr, &out[n-1]) {
				f.t.Fatalf("part %d out of order at %+v", p.ID, tr)
			}
			out = append(out, tr)
		}
	}
	return out
}

// ords are the orderings of testTable's groups.
var ords = []version.Ordering{{}, {Valid: []string{"o"}}}

// toVersions turns rows into the input of version.Resolve.
func toVersions(rows []trow) ([]version.Version, []version.Delete) {
	var vs []version.Version
	var ds []version.Delete
	for _, r := range rows {
		key := types.AppendKey(nil, types.NewInt64(r.key))
		if r.tomb {
			ds = append(ds, version.Delete{Key: key, Commit: r.commit, Seq: r.seq})
			continue
		}
		v := version.Version{Key: key, Group: version.GroupID(r.group), Commit: r.commit, Seq: r.seq}
		if r.group == 1 {
			v.Order = [][]byte{types.AppendKey(nil, types.NewUint64(uint64(r.o)))}
			v.Values = binary.AppendVarint(binary.AppendVarint(nil, r.o), r.b)
		} else {
			v.Values = binary.AppendVarint(nil, r.a)
		}
		vs = append(vs, v)
	}
	return vs, ds
}
