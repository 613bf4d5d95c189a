package part

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// orderFixture is a history part of two ordered groups and one without
// ordering: group 0 orders by (c10 UINT128, c11 UINT64), group 1 by c12, a
// STRING whose values reach 300 bytes (a length prefix of two bytes),
// group 2 by nothing; NULL ordering values and delete markers included.
// Its Order holds what the memtable writes, built here independently of
// order.go.
func orderFixture(t testing.TB, rows int) fixture {
	t.Helper()
	fx := makeFixture(t, rows, nil, nil)
	d := fx.d
	fx.meta.Kind = KindHistory
	c10 := types.NewVector(types.Of(types.Uint128), rows)
	c11 := types.NewVector(types.Of(types.Uint64), rows)
	c12 := types.NewVector(types.Of(types.String), rows)
	d.Order = types.NewVector(types.Of(types.Bytes), rows)
	big, err := types.ParseText(types.Of(types.Uint128), "340282366920938463463374607431768211455")
	if err != nil {
		t.Fatal(err)
	}
	small, _ := types.ParseText(types.Of(types.Uint128), "1000")
	for i := range rows {
		d.Group[i] = uint16(i % 3)
		x10, x11, x12 := types.Null(types.Of(types.Uint128)), types.Null(types.Of(types.Uint64)), types.Null(types.Of(types.String))
		var ord []*types.Vector
		switch {
		case d.Tomb[i]:
		case i%3 == 0:
			switch {
			case i%5 == 0:
			case i%2 == 0:
				x10 = small
			default:
				x10 = big
			}
			x11 = types.NewUint64(uint64(i))
			ord = []*types.Vector{c10, c11}
		case i%3 == 1:
			x12 = types.NewString(strings.Repeat("v", i%300))
			ord = []*types.Vector{c12}
		}
		c10.Append(x10)
		c11.Append(x11)
		c12.Append(x12)
		var order []byte
		for _, v := range ord {
			k := types.AppendKeyAt(nil, v, i)
			order = binary.AppendUvarint(order, uint64(len(k)))
			order = append(order, k...)
		}
		d.Order.AppendBytes(order)
	}
	d.IDs = []catalog.ColumnID{10, 11, 12}
	d.Cols = []*types.Vector{c10, c11, c12}
	for j, id := range d.IDs {
		ty := d.Cols[j].Type()
		fx.meta.Columns = append(fx.meta.Columns, ColumnMeta{ID: id, Type: ty, Codec: catalog.DefaultCodec(ty)})
	}
	fx.meta.OrderFrom = []GroupOrder{{Group: 0, Cols: []catalog.ColumnID{10, 11}}, {Group: 1, Cols: []catalog.ColumnID{12}}}
	return fx
}

// TestOrderRebuilt writes a history part and a delta part whose ordering
// values match their columns: _order is stored empty, the part says
// format 2 or later, and every read path gives back the Order written,
// whether or not it reads the ordering columns itself.
func TestOrderRebuilt(t *testing.T) {
	for _, kind := range []Kind{KindHistory, KindDelta} {
		t.Run(kind.String(), func(t *testing.T) { testOrderRebuilt(t, kind) })
	}
}

func testOrderRebuilt(t *testing.T, kind Kind) {
	fsys := newFS(t)
	fx := orderFixture(t, 5000)
	fx.meta.Kind = kind
	info := writeFixture(t, fsys, "parts/h.part", fx, WriteOptions{BlockRows: 1200, PageRows: 256})
	plain := fx
	plain.meta.OrderFrom = nil
	pinfo := writeFixture(t, fsys, "parts/plain.part", plain, WriteOptions{BlockRows: 1200, PageRows: 256})
	if info.Fixed.Compressed >= pinfo.Fixed.Compressed {
		t.Errorf("fixed columns take %d bytes with rebuilt ordering values, %d without", info.Fixed.Compressed, pinfo.Fixed.Compressed)
	}
	if err := Check(fsys, "parts/h.part"); err != nil {
		t.Fatal(err)
	}
	r, err := OpenCached(fsys, "parts/h.part", NewCache(DefaultCacheBytes))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.fm.Format < 2 || kind == KindHistory && r.fm.Format != 3 || len(r.Meta().OrderFrom) != 2 {
		t.Fatalf("format %d, OrderFrom %v", r.fm.Format, r.Meta().OrderFrom)
	}
	if diff := sameData(fx.d, readAll(t, r, ids(fx.meta))); diff != "" {
		t.Fatal(diff)
	}
	want := func(row int) []byte { return fx.d.Order.BytesAt(row) }
	base := 0
	var d Data
	for bi, b := range r.Blocks() {
		for _, read := range []struct {
			name  string
			fixed Fixed
			cols  []catalog.ColumnID
			view  bool
		}{
			{"order alone", FixOrder, nil, false},
			{"with one ordering column", FixOrder | FixGroup, []catalog.ColumnID{11}, false},
			{"with all", FixOrder | FixGroup | FixTomb, []catalog.ColumnID{12, 10, 11}, false},
			{"with groups and delete markers, no ordering column", FixOrder | FixGroup | FixTomb, nil, false},
			{"with delete markers and one ordering column", FixOrder | FixTomb, []catalog.ColumnID{12}, false},
			{"view, first", FixOrder | FixSort, nil, true},
			{"view, kept", FixOrder | FixSort, nil, true},
		} {
			f := r.ReadBlockFixed
			if read.view {
				f = r.ReadBlockView
			}
			if err := f(bi, read.fixed, read.cols, &d); err != nil {
				t.Fatal(err)
			}
			if d.Order.Len() != b.Rows {
				t.Fatalf("block %d, %s: %d ordering values for %d rows", bi, read.name, d.Order.Len(), b.Rows)
			}
			for i := range b.Rows {
				if !bytes.Equal(d.Order.BytesAt(i), want(base+i)) {
					t.Fatalf("block %d, %s: row %d's ordering values differ", bi, read.name, i)
				}
			}
			if read.fixed&FixGroup == 0 && len(d.Group) != 0 || read.fixed&FixTomb == 0 && len(d.Tomb) != 0 {
				t.Fatalf("block %d, %s: columns not asked for were filled", bi, read.name)
			}
		}
		for _, rg := range [][2]int{{0, 1}, {150, 170}, {250, 270}, {b.Rows - 3, b.Rows}, {0, b.Rows}} {
			if rg[1] > b.Rows {
				continue // the last, short block
			}
			if err := r.ReadRows(bi, rg[0], rg[1], FixOrder, []catalog.ColumnID{10}, &d); err != nil {
				t.Fatal(err)
			}
			for i := range rg[1] - rg[0] {
				if !bytes.Equal(d.Order.BytesAt(i), want(base+rg[0]+i)) {
					t.Fatalf("block %d rows %v: row %d's ordering values differ", bi, rg, rg[0]+i)
				}
			}
		}
		base += b.Rows
	}
}

// TestOrderKeptUnlessAllMatch: one row whose ordering values are not its
// columns' encoding keeps the whole part's _order as written (format 1);
// so do parts of other kinds and a group list naming a column the part
// does not hold.
func TestOrderKeptUnlessAllMatch(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*fixture)
	}{
		{"one row differs", func(fx *fixture) {
			o := fx.d.Order
			fx.d.Order = types.NewVector(types.Of(types.Bytes), fx.d.Rows)
			for i := range fx.d.Rows {
				b := o.BytesAt(i)
				if i == 777 {
					b = append(bytes.Clone(b), 0)
				}
				fx.d.Order.AppendBytes(b)
			}
		}},
		{"current part", func(fx *fixture) { fx.meta.Kind = KindCurrent }},
		{"missing column", func(fx *fixture) { fx.meta.OrderFrom[1].Cols = []catalog.ColumnID{13} }},
		{"group listed twice", func(fx *fixture) { fx.meta.OrderFrom[1].Group = 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := newFS(t)
			fx := orderFixture(t, 2000)
			c.change(&fx)
			writeFixture(t, fsys, "parts/h.part", fx, WriteOptions{})
			r, err := Open(fsys, "parts/h.part")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// History parts are format 3 for their residuals
			// (resid.go), whether or not _order is rebuilt.
			want := 1
			if fx.meta.Kind == KindHistory {
				want = 3
			}
			if r.fm.Format != want || r.Meta().OrderFrom != nil {
				t.Fatalf("format %d, OrderFrom %v", r.fm.Format, r.Meta().OrderFrom)
			}
			if diff := sameData(fx.d, readAll(t, r, ids(fx.meta))); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}

// TestOrderFromRefused: metadata whose order_from a reader cannot use is
// corrupt, not silently ignored.
func TestOrderFromRefused(t *testing.T) {
	const cols = `"columns":[{"id":10,"type":"UINT64","kind":"UINT64","codec":"DELTA, ZSTD(1)"}]`
	for _, js := range []string{
		`{"format":1,"kind":"history","stripe":32768,` + cols + `,"order_from":[{"group":0,"cols":[10]}]}`,
		`{"format":2,"kind":"history","stripe":32768,` + cols + `,"order_from":[{"group":0,"cols":[11]}]}`,
		`{"format":2,"kind":"history","stripe":32768,` + cols + `,"order_from":[{"group":0,"cols":[]}]}`,
		`{"format":2,"kind":"history","stripe":32768,` + cols + `,"order_from":[{"group":0,"cols":[10]},{"group":0,"cols":[10]}]}`,
	} {
		_, _, _, err := decodeMeta(js)
		if err == nil || errors.Is(err, ErrVersion) {
			t.Errorf("%s: %v", js, err)
		}
	}
	m, _, _, err := decodeMeta(`{"format":2,"kind":"history","stripe":32768,` + cols + `,"order_from":[{"group":3,"cols":[10]}]}`)
	if err != nil || len(m.OrderFrom) != 1 || m.OrderFrom[0].Group != 3 {
		t.Fatalf("valid order_from: %v %v", m, err)
	}
}
