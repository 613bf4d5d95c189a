package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

func TestVarlenBinaryAgreesWithDecodeBinary(t *testing.T) {
	for _, ty := range []types.Type{types.Of(types.String), types.Of(types.Bytes)} {
		for _, v := range []types.Value{types.Null(ty), types.NewString(""), types.NewString("héllo"), types.NewBytes([]byte{0, 1, 2})} {
			if v.Kind() != ty.Kind && !v.IsNull() {
				continue
			}
			enc := types.AppendBinary(nil, v)
			enc = append(enc, 0xAB) // what follows must be left alone
			want, wrest, err := types.DecodeBinary(ty, enc)
			if err != nil {
				t.Fatal(err)
			}
			body, rest, ok := varlenBinary(enc)
			if !ok || !bytes.Equal(rest, wrest) {
				t.Fatalf("%v: rest %x, want %x", v, rest, wrest)
			}
			vec := types.NewVector(ty, 1)
			if _, err := appendBinaryTo(vec, ty, ty, enc); err != nil {
				t.Fatal(err)
			}
			if got := vec.Get(0); !types.Equal(got, want) || got.IsNull() != want.IsNull() {
				t.Fatalf("%v: decoded %v (body %q), want %v", v, got, body, want)
			}
		}
	}
	if _, _, ok := varlenBinary([]byte{1, 5, 'a'}); ok {
		t.Fatal("short value accepted")
	}
}

func scanCount(t *testing.T, h *harness, spec ScanSpec) []string {
	t.Helper()
	snap := h.e.Snapshot()
	defer snap.Release()
	tbl, _ := snap.Catalog().TableByID(spec.Table)
	var bs []*types.Batch
	if _, err := snap.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
		t.Fatal(err)
	}
	names := tbl.Names(spec.Cols)
	if spec.Commit {
		names = append(names, "_commit")
	}
	return render(names, bs)
}

func TestRanges(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	var rows []string
	for k := 1; k <= 20; k++ {
		rows = append(rows, fmt.Sprintf("k=%d v=x idx=1", k))
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, rows...)}})
	key := func(k int64) []byte { return types.AppendKey(nil, types.NewInt64(k)) }
	got := scanCount(t, h, ScanSpec{Table: tbl.ID, Cols: tbl.Key, Ranges: []KeyRange{
		{Lo: key(15), Hi: key(17)}, {Lo: key(3), Hi: key(5)}, {Lo: key(4), Hi: key(6)}, {Lo: key(19)},
	}})
	want := []string{"k=3", "k=4", "k=5", "k=15", "k=16", "k=19", "k=20"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ranges read %v, want %v", got, want)
	}
}

// TestWidenedAndAddedColumns: a value stored under the older, narrower
// type reads cast to the current one (R8.1); a column added later reads
// its introduced default in older rows (R6.5); a dropped column's id is
// still readable by id.
func TestWidenedAndAddedColumns(t *testing.T) {
	h := newHarness(t)
	h.create(catalog.TableSpec{Name: "a", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{
		{Name: "x", Type: types.Of(types.Int32)}, {Name: "y", Type: types.Of(types.String)},
	}})
	tbl := h.table("a")
	w, err := appendWrite(tbl, []string{"x=7 y=old"})
	if err != nil {
		t.Fatal(err)
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
	h.ddl(func(c *catalog.Catalog, n uint64) error {
		_, err := c.AlterColumnType(catalog.AlterColumnTypeSpec{Table: "a", Column: "x", Type: types.Of(types.Int64)}, n)
		return err
	})
	h.ddl(func(c *catalog.Catalog, n uint64) error {
		_, err := c.AddColumn(catalog.AddColumnSpec{Table: "a", Column: catalog.ColumnSpec{Name: "z", Type: types.Of(types.Int64),
			Default: &catalog.Default{SQL: "42", Value: "42"}}}, n)
		return err
	})
	tbl = h.table("a")
	w, err = appendWrite(tbl, []string{"x=8 y=new z=1"})
	if err != nil {
		t.Fatal(err)
	}
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
	y, _ := tbl.Column("y")
	h.ddl(func(c *catalog.Catalog, n uint64) error {
		_, err := c.DropColumn(catalog.DropColumnSpec{Table: "a", Column: "y"}, n)
		return err
	})
	tbl = h.table("a")
	for round := 0; round < 2; round++ {
		got := scanCount(t, h, ScanSpec{Table: tbl.ID, Cols: append(allCols(tbl), y.ID), Commit: true})
		want := []string{"x=7 z=42 y=old _commit=2", "x=8 z=1 y=new _commit=5"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d read %v, want %v", round, got, want)
		}
		x, _ := tbl.Column("x")
		snap := h.e.Snapshot()
		var bs []*types.Batch
		if _, err := snap.Scan(context.Background(), ScanSpec{Table: tbl.ID, Cols: []catalog.ColumnID{x.ID}, After: 2}, func(b *types.Batch) error {
			bs = append(bs, b)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		snap.Release()
		if got := render([]string{"x"}, bs); fmt.Sprint(got) != "[x=8]" {
			t.Fatalf("After 2 read %v", got)
		}
		h.crash()
	}
}

func TestDropTable(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=1")}})
	h.ddl(func(c *catalog.Catalog, n uint64) error {
		_, err := c.DropTable("t", false, n)
		return err
	})
	h.create(kvSpec("t", catalog.ModeVersioned))
	for i := 0; i < 2; i++ {
		nt := h.table("t")
		if nt.ID == tbl.ID {
			t.Fatal("table id reused")
		}
		if rows := scanCount(t, h, ScanSpec{Table: nt.ID, Cols: allCols(nt)}); len(rows) != 0 {
			t.Fatalf("new table reads old rows: %v", rows)
		}
		snap := h.e.Snapshot()
		if _, err := snap.Scan(context.Background(), ScanSpec{Table: tbl.ID}, func(*types.Batch) error { return nil }); err == nil {
			t.Fatal("scan of a dropped table succeeded")
		}
		snap.Release()
		if got := len(h.e.man.Snapshot().Shards(uint64(tbl.ID))); got != 0 {
			t.Fatalf("dropped table keeps %d shards in the manifest", got)
		}
		h.reopen()
	}
}

func TestScanStopsOnCallbackErrorAndContext(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=1", "k=2 v=a idx=1", "k=3 v=a idx=1")}})
	snap := h.e.Snapshot()
	defer snap.Release()
	stop := errors.New("stop")
	calls := 0
	_, err := snap.Scan(context.Background(), ScanSpec{Table: tbl.ID, Cols: tbl.Key, BatchRows: 1}, func(*types.Batch) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("callback error: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := snap.Scan(ctx, ScanSpec{Table: tbl.ID, Cols: tbl.Key}, func(*types.Batch) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled scan: %v", err)
	}
	if _, err := snap.Scan(context.Background(), ScanSpec{Table: tbl.ID, AsOf: 99}, func(*types.Batch) error { return nil }); err == nil {
		t.Fatal("AS OF past the snapshot accepted")
	}
}

// TestKeyAndOrderingTypesStay: widening a key or ordering column would
// leave stored encodings of the old width, so storage refuses the DDL and
// takes no commit number.
func TestKeyAndOrderingTypesWiden(t *testing.T) {
	// Key and ordering encodings do not depend on the integer width
	// (types.AppendKey), so a key and a VALID BY column widen (R8.1); the
	// end-to-end test of reads across the widening is in the root package.
	h := newHarness(t)
	spec := kvSpec("t", catalog.ModeVersioned)
	spec.Columns = append(spec.Columns, catalog.ColumnSpec{Name: "k2", Type: types.Of(types.Int32), NotNull: true})
	spec.PrimaryKey = []string{"k", "k2"}
	spec.ShardBy = []string{"k"}
	spec.Shards = 2
	h.create(spec)
	for _, col := range []string{"k2", "idx"} {
		_, err := h.commit(&Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
			ty := types.Of(types.Int128)
			if col == "k2" {
				ty = types.Of(types.Int64)
			}
			_, err := c.AlterColumnType(catalog.AlterColumnTypeSpec{Table: "t", Column: col, Type: ty}, n)
			return err
		}})
		if err != nil {
			t.Fatalf("widening %s: %v", col, err)
		}
	}
	if n := h.e.LastCommit(); n != 3 {
		t.Fatalf("last commit %d, want 3", n)
	}
}

// types.AppendBinaryAt, which partVersion uses for every stored column,
// agrees with AppendBinary over a Value.
func TestAppendBinaryAtAgreesWithAppendBinary(t *testing.T) {
	vals := map[types.Kind][]string{
		types.Int64:  {"0", "-1", "9223372036854775807", "-9223372036854775808"},
		types.Uint16: {"0", "65535"}, types.Uint64: {"0", "18446744073709551615"},
		types.Uint128: {"0", "1", "340282366920938463463374607431768211455"},
		types.Uint256: {"0", "255", "256", "115792089237316195423570985008687907853269984665640564039457584007913129639935"},
		types.Int128:  {"0", "-1", "170141183460469231731687303715884105727"},
		types.String:  {"", "héllo"}, types.Float64: {"1.5", "-0"}, types.Bool: {"true", "false"},
	}
	for k, texts := range vals {
		ty := types.Of(k)
		vec := types.NewVector(ty, len(texts)+1)
		for _, s := range texts {
			v, err := types.ParseText(ty, s)
			if err != nil {
				t.Fatalf("%s %q: %v", ty, s, err)
			}
			vec.Append(v)
		}
		vec.AppendNull()
		for i := 0; i < vec.Len(); i++ {
			if got, want := types.AppendBinaryAt([]byte{7}, vec, i), types.AppendBinary([]byte{7}, vec.Get(i)); !bytes.Equal(got, want) {
				t.Fatalf("%s row %d: %x, AppendBinary says %x", ty, i, got, want)
			}
		}
	}
}
