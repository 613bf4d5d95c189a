package merge

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
)

// writeCols writes rows of (key, group, commit, values by column) with the
// given column types; a nil value is NULL.
func writeCols(t *testing.T, f *fixture, cols []part.ColumnMeta, rows [][]any) manifest.Part {
	t.Helper()
	d := &part.Data{Sort: types.NewVector(types.Of(types.Bytes), 0), Order: types.NewVector(types.Of(types.Bytes), 0)}
	for _, c := range cols {
		d.IDs = append(d.IDs, c.ID)
		d.Cols = append(d.Cols, types.NewVector(c.Type, 0))
	}
	for _, r := range rows {
		key, group, commit := r[0].(int64), r[1].(uint16), r[2].(uint64)
		d.Sort.AppendBytes(types.AppendKey(nil, types.NewInt64(key)))
		var ord []byte
		if group == 1 {
			ord = AppendOrder(nil, [][]byte{types.AppendKey(nil, types.NewUint64(1))})
		}
		d.Order.AppendBytes(ord)
		d.Group = append(d.Group, group)
		d.Commit = append(d.Commit, commit)
		d.Seq = append(d.Seq, 0)
		for j, v := range r[3:] {
			switch x := v.(type) {
			case nil:
				d.Cols[j].AppendNull()
			case int64:
				d.Cols[j].AppendInt64(x)
			case uint64:
				d.Cols[j].AppendUint64(x)
			case string:
				d.Cols[j].AppendString(x)
			}
		}
		d.Rows++
	}
	path, id, _ := f.create(part.KindDelta)
	info, err := part.Write(f.fs, path, d, part.Meta{Table: f.table.ID, Kind: part.KindDelta, Columns: cols}, part.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return manifest.Part{ID: id, File: path, Bytes: uint64(info.Bytes), MinCommit: rows[0][2].(uint64), MaxCommit: rows[len(rows)-1][2].(uint64)}
}

// TestSchemaGenerations merges a part written before column c was added
// and before b was widened from INT32 with one written after: b is cast,
// and the old part's rows of c's group get c's introduced default (R6.5),
// rows of other groups NULL.
func TestSchemaGenerations(t *testing.T) {
	tab := testTable(catalog.ModeVersioned)
	tab.Columns = append(tab.Columns, &catalog.Column{ID: 5, Name: "c", Type: types.Of(types.Int64), Nullable: true,
		Group: 1, Introduced: &catalog.Default{Value: "9"}, Codec: "ZSTD(1)", Position: 5})
	tab.Groups[1].Columns = append(tab.Groups[1].Columns, 5)
	f := newFixture(t, tab)
	i32, i64, u64 := types.Of(types.Int32), types.Of(types.Int64), types.Of(types.Uint64)
	old := writeCols(t, f, []part.ColumnMeta{{ID: 1, Type: i64}, {ID: 2, Type: i64}, {ID: 3, Type: u64}, {ID: 4, Type: i32}},
		[][]any{{int64(1), uint16(0), uint64(1), int64(1), int64(4), nil, nil}, {int64(1), uint16(1), uint64(1), int64(1), nil, uint64(1), int64(2)}})
	cur := writeCols(t, f, []part.ColumnMeta{{ID: 1, Type: i64}, {ID: 2, Type: i64}, {ID: 3, Type: u64}, {ID: 4, Type: i64}, {ID: 5, Type: i64}},
		[][]any{{int64(2), uint16(0), uint64(2), int64(2), int64(5), nil, nil, nil}, {int64(2), uint16(1), uint64(2), int64(2), nil, uint64(1), int64(3), int64(7)}})
	out, _ := f.merge([]manifest.Part{old, cur}, true, 0)
	r, err := part.Open(f.fs, out[0].File)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if c := r.Meta().Columns; len(c) != 5 || c[3].Type != i64 || c[4].Type != i64 {
		t.Fatalf("output columns %+v", c)
	}
	var d part.Data
	if err := r.ReadBlock(0, []catalog.ColumnID{1, 4, 5}, &d); err != nil {
		t.Fatal(err)
	}
	text := func(v *types.Vector, i int) string { return string(types.AppendText(nil, v.Get(i))) }
	var got []string
	for i := range d.Rows {
		got = append(got, fmt.Sprintf("%d/%d b=%s c=%s", d.Cols[0].Int64s()[i], d.Group[i], text(d.Cols[1], i), text(d.Cols[2], i)))
	}
	want := []string{"1/0 b=NULL c=NULL", "1/1 b=2 c=9", "2/0 b=NULL c=NULL", "2/1 b=3 c=7"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// TestOutputSizedFromInputs checks an output's first Data has room for
// its rows' bytes as the inputs' first blocks measure them: filled with
// every input row, none of its byte columns (sort key, ordering values,
// a string column) is reallocated, which copied each about four times
// over in merges of long strings.
func TestOutputSizedFromInputs(t *testing.T) {
	tab := testTable(catalog.ModeVersioned)
	tab.Columns = append(tab.Columns, &catalog.Column{ID: 5, Name: "s", Type: types.Of(types.String), Nullable: true,
		Group: 1, Codec: "ZSTD(1)", Position: 5})
	tab.Groups[1].Columns = append(tab.Groups[1].Columns, 5)
	f := newFixture(t, tab)
	i64, u64, str := types.Of(types.Int64), types.Of(types.Uint64), types.Of(types.String)
	cols := []part.ColumnMeta{{ID: 1, Type: i64}, {ID: 2, Type: i64}, {ID: 3, Type: u64}, {ID: 4, Type: i64}, {ID: 5, Type: str}}
	var parts []manifest.Part
	for c := range uint64(2) {
		var rows [][]any
		for k := range int64(3000) {
			addr := fmt.Sprintf("0x%040x", k*7+int64(c))
			rows = append(rows, []any{k, uint16(1), c + 1, k, nil, c + 1, k, addr})
		}
		parts = append(parts, writeCols(t, f, cols, rows))
	}
	rs := f.open(parts)
	lay, err := newLayout(tab, rs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := newHeap(rs, lay.ids)
	if err != nil {
		t.Fatal(err)
	}
	lay.measure(h.c)
	d := lay.newData(6000, nil)
	first := func() [3]*byte {
		return [3]*byte{&d.Sort.BytesAt(0)[0], &d.Order.BytesAt(0)[0], &d.Cols[4].BytesAt(0)[0]}
	}
	var at [3]*byte
	for h.len() > 0 {
		c := h.c[0]
		d.Sort.AppendBytes(c.d.Sort.BytesAt(c.row))
		d.Order.AppendBytes(c.d.Order.BytesAt(c.row))
		for j, v := range d.Cols {
			v.AppendFrom(c.d.Cols[j], c.row)
		}
		d.Rows++
		if d.Rows == 1 {
			at = first()
		}
		if err := h.advance(); err != nil {
			t.Fatal(err)
		}
	}
	if d.Rows != 6000 {
		t.Fatalf("%d rows", d.Rows)
	}
	if got := first(); got != at {
		t.Fatalf("byte columns reallocated while filling (sort, order, s): %v", [3]bool{got[0] != at[0], got[1] != at[1], got[2] != at[2]})
	}
}
