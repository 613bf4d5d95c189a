package part

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// typeCase is one column of the round-trip table: a type and the texts its
// rows cycle through ("NULL" is NULL).
type typeCase struct {
	t     types.Type
	texts []string
}

func dt(p uint8, tz string) types.Type {
	return types.Type{Kind: types.DateTime64, Precision: p, TZ: tz}
}
func dec(p, s uint8) types.Type { return types.Type{Kind: types.Decimal, Precision: p, Scale: s} }

// allTypes covers every type of R2.1 with its extremes and NULLs.
var allTypes = []typeCase{
	{types.Of(types.Int8), []string{"-128", "127", "0", "NULL"}},
	{types.Of(types.Int16), []string{"-32768", "32767", "NULL", "-1"}},
	{types.Of(types.Int32), []string{"-2147483648", "2147483647", "NULL"}},
	{types.Of(types.Int64), []string{"-9223372036854775808", "9223372036854775807", "NULL", "42"}},
	{types.Of(types.Int128), []string{"-170141183460469231731687303715884105728", "170141183460469231731687303715884105727", "NULL", "-1", "5"}},
	{types.Of(types.Int256), []string{
		"-57896044618658097711785492504343953926634992332820282019728792003956564819968",
		"57896044618658097711785492504343953926634992332820282019728792003956564819967", "NULL", "-1"}},
	{types.Of(types.Uint8), []string{"0", "255", "NULL"}},
	{types.Of(types.Uint16), []string{"65535", "NULL", "1"}},
	{types.Of(types.Uint32), []string{"4294967295", "0", "NULL"}},
	{types.Of(types.Uint64), []string{"18446744073709551615", "NULL", "0"}},
	{types.Of(types.Uint128), []string{"340282366920938463463374607431768211455", "NULL", "1"}},
	{types.Of(types.Uint256), []string{
		"115792089237316195423570985008687907853269984665640564039457584007913129639935", "0", "NULL", "12345678901234567890123"}},
	{types.Of(types.Float32), []string{"-0", "3.4028235e+38", "NaN", "NULL", "-Infinity", "1.5"}},
	{types.Of(types.Float64), []string{"1.7976931348623157e+308", "-0", "NaN", "NULL", "5e-324", "Infinity"}},
	{dec(76, 10), []string{
		"999999999999999999999999999999999999999999999999999999999999999999.9999999999",
		"-999999999999999999999999999999999999999999999999999999999999999999.9999999999", "NULL", "0.0000000001"}},
	{dec(38, 2), []string{"-999999999999999999999999999999999999.99", "NULL", "12.34"}},
	{dec(9, 0), []string{"-999999999", "NULL", "7"}},
	{types.Of(types.Bool), []string{"true", "false", "NULL", "true", "true"}},
	{types.Of(types.String), []string{"", "héllo wörld ✓", "NULL", "a\x00b", strings.Repeat("x", 300)}},
	{types.Type{Kind: types.String, Len: 10}, []string{"short", "NULL", ""}},
	{types.Of(types.Bytes), []string{"\\x", "\\x00ff00", "NULL", "\\xdeadbeef"}},
	{types.Of(types.Date), []string{"0001-01-01", "9999-12-31", "NULL", "1970-01-01"}},
	{dt(0, ""), []string{"2026-10-01 12:05:00", "NULL"}},
	{dt(3, "Europe/Berlin"), []string{"2026-10-01 12:05:00.123", "0001-01-01 00:00:00.000", "NULL"}},
	{dt(9, ""), []string{"2262-04-11 23:47:16.854775807", "1677-09-22 00:00:00.000000001", "NULL", "2026-01-01 00:00:00.000000001"}},
	{types.Of(types.UUID), []string{"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "NULL", "123e4567-e89b-12d3-a456-426614174000"}},
}

// fixture is a generated part: its Data and Meta.
type fixture struct {
	d    *Data
	meta Meta
}

// sortKey returns a distinct, sorted sort key for row i of about 40 bytes
// (two keyed columns: a STRING account and a UINT64).
func sortKey(dst []byte, i int) []byte {
	dst = types.AppendKey(dst, types.NewString(fmt.Sprintf("account-%08d-0x5a6b7c8d9e", i/2)))
	return types.AppendKey(dst, types.NewUint64(uint64(i%2)))
}

// makeFixture builds rows rows with every column of cases, two groups and
// rising commits.
func makeFixture(t testing.TB, rows int, cases []typeCase, codec func(types.Type) catalog.Codec) fixture {
	t.Helper()
	d := &Data{Rows: rows, Sort: types.NewVector(types.Of(types.Bytes), rows), Order: types.NewVector(types.Of(types.Bytes), rows)}
	var key []byte
	for i := range rows {
		key = sortKey(key[:0], i)
		d.Sort.AppendBytes(key)
		d.Group = append(d.Group, uint16(i%2))
		d.Commit = append(d.Commit, uint64(1000+i/3))
		d.Seq = append(d.Seq, uint32(i))
		d.Tomb = append(d.Tomb, i%17 == 0)
		d.WonAt = append(d.WonAt, uint64(i))
		d.EndedAt = append(d.EndedAt, version.Forever)
		d.SupersededBy = append(d.SupersededBy, uint64(i*7))
		d.State = append(d.State, version.State(i%4))
		d.Order.AppendBytes(types.AppendKey(nil, types.NewInt64(int64(i))))
	}
	meta := Meta{Table: 7, Shard: 3, Part: 99, Kind: KindCurrent, Level: 2}
	for c, tc := range cases {
		id := catalog.ColumnID(10 + c)
		v := types.NewVector(tc.t, rows)
		for i := range rows {
			s := tc.texts[(i+c)%len(tc.texts)]
			if s == "NULL" {
				v.AppendNull()
				continue
			}
			x, err := types.ParseText(tc.t, s)
			if err != nil {
				t.Fatalf("parse %q as %s: %v", s, tc.t, err)
			}
			if x.Type().Kind.Class() == types.ClassInt64 || x.Type() != tc.t {
				x, err = types.Cast(x, tc.t)
				if err != nil {
					t.Fatalf("cast %q to %s: %v", s, tc.t, err)
				}
			}
			v.Append(x)
		}
		d.IDs = append(d.IDs, id)
		d.Cols = append(d.Cols, v)
		cd := catalog.DefaultCodec(tc.t)
		if codec != nil {
			cd = codec(tc.t)
		}
		meta.Columns = append(meta.Columns, ColumnMeta{ID: id, Type: tc.t, Codec: cd})
	}
	return fixture{d: d, meta: meta}
}

// readAll reads every block of the part with columns ids and concatenates
// the rows.
func readAll(t testing.TB, r *Reader, ids []catalog.ColumnID) *Data {
	t.Helper()
	var out *Data
	var blk Data
	for i := range r.Blocks() {
		if err := r.ReadBlock(i, ids, &blk); err != nil {
			t.Fatalf("ReadBlock(%d): %v", i, err)
		}
		out = appendData(out, &blk)
	}
	return out
}

// appendData appends src's rows to dst (allocating dst on first use).
func appendData(dst, src *Data) *Data {
	if dst == nil {
		dst = &Data{Sort: types.NewVector(types.Of(types.Bytes), 0), Order: types.NewVector(types.Of(types.Bytes), 0), IDs: src.IDs}
		for _, c := range src.Cols {
			if c == nil {
				dst.Cols = append(dst.Cols, nil)
			} else {
				dst.Cols = append(dst.Cols, types.NewVector(c.Type(), 0))
			}
		}
	}
	for i := range src.Rows {
		dst.Sort.AppendFrom(src.Sort, i)
		dst.Order.AppendFrom(src.Order, i)
		for j, c := range src.Cols {
			if c != nil {
				dst.Cols[j].AppendFrom(c, i)
			}
		}
	}
	dst.Group = append(dst.Group, src.Group...)
	dst.Commit = append(dst.Commit, src.Commit...)
	dst.Seq = append(dst.Seq, src.Seq...)
	dst.Tomb = append(dst.Tomb, src.Tomb...)
	dst.WonAt = append(dst.WonAt, src.WonAt...)
	dst.EndedAt = append(dst.EndedAt, src.EndedAt...)
	dst.SupersededBy = append(dst.SupersededBy, src.SupersededBy...)
	dst.State = append(dst.State, src.State...)
	dst.Rows += src.Rows
	return dst
}

// sameData reports the first difference between two Datas, "" if none.
// Floats compare by bits, so -0 and NaN payloads must survive.
func sameData(want, got *Data) string {
	if want.Rows != got.Rows {
		return fmt.Sprintf("rows: want %d, got %d", want.Rows, got.Rows)
	}
	for i := range want.Rows {
		if !bytes.Equal(want.Sort.BytesAt(i), got.Sort.BytesAt(i)) {
			return fmt.Sprintf("row %d: sort key differs", i)
		}
		wo := []byte(nil)
		if want.Order != nil && want.Order.Len() > 0 {
			wo = want.Order.BytesAt(i)
		}
		if !bytes.Equal(wo, got.Order.BytesAt(i)) {
			return fmt.Sprintf("row %d: order differs", i)
		}
		if at(want.Group, i) != got.Group[i] || want.Commit[i] != got.Commit[i] || want.Seq[i] != got.Seq[i] ||
			at(want.Tomb, i) != got.Tomb[i] || at(want.WonAt, i) != got.WonAt[i] || at(want.EndedAt, i) != got.EndedAt[i] ||
			at(want.SupersededBy, i) != got.SupersededBy[i] || at(want.State, i) != got.State[i] {
			return fmt.Sprintf("row %d: fixed columns differ", i)
		}
	}
	if len(want.Cols) != len(got.Cols) {
		return fmt.Sprintf("columns: want %d, got %d", len(want.Cols), len(got.Cols))
	}
	for j, wc := range want.Cols {
		gc := got.Cols[j]
		if wc == nil || gc == nil {
			if wc != gc {
				return fmt.Sprintf("column %d: nil mismatch", j)
			}
			continue
		}
		if wc.Type() != gc.Type() {
			return fmt.Sprintf("column %d: type %s, got %s", j, wc.Type(), gc.Type())
		}
		for i := range want.Rows {
			a, b := wc.Get(i), gc.Get(i)
			if types.Compare(a, b) != 0 || a.IsNull() != b.IsNull() {
				return fmt.Sprintf("column %d (%s) row %d: want %v, got %v", j, wc.Type(), i, a, b)
			}
			if wc.Type().Kind.IsFloat() && !a.IsNull() && math.Float64bits(a.Float64()) != math.Float64bits(b.Float64()) {
				return fmt.Sprintf("column %d row %d: float bits differ", j, i)
			}
		}
	}
	return ""
}

func ids(m Meta) []catalog.ColumnID {
	var out []catalog.ColumnID
	for _, c := range m.Columns {
		out = append(out, c.ID)
	}
	return out
}

func writeFixture(t testing.TB, fsys vfs.FS, path string, fx fixture, opts WriteOptions) Info {
	t.Helper()
	info, err := Write(fsys, path, fx.d, fx.meta, opts)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return info
}

func newFS(t testing.TB) *vfs.Mem {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("parts"); err != nil {
		t.Fatal(err)
	}
	return fsys
}

func TestRoundTripEveryType(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 1000, allTypes, nil)
	info := writeFixture(t, fsys, "parts/a.parquet", fx, WriteOptions{BlockRows: 300})
	if info.Rows != 1000 || info.Blocks != 4 || len(info.Columns) != len(allTypes) {
		t.Fatalf("info = %+v", info)
	}
	st, _ := fsys.Stat("parts/a.parquet")
	if info.Bytes != st.Size() {
		t.Fatalf("info.Bytes %d, file has %d", info.Bytes, st.Size())
	}
	r, err := Open(fsys, "parts/a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := r.Meta()
	if m.Table != 7 || m.Shard != 3 || m.Part != 99 || m.Kind != KindCurrent || m.Level != 2 || m.Rows != 1000 ||
		m.MinCommit != 1000 || m.MaxCommit != 1000+999/3 ||
		!bytes.Equal(m.MinSort, fx.d.Sort.BytesAt(0)) || !bytes.Equal(m.MaxSort, fx.d.Sort.BytesAt(999)) {
		t.Fatalf("meta = %+v", m)
	}
	for i, c := range m.Columns {
		if c != fx.meta.Columns[i] {
			t.Fatalf("column %d: %+v, want %+v", i, c, fx.meta.Columns[i])
		}
	}
	got := readAll(t, r, ids(fx.meta))
	if diff := sameData(fx.d, got); diff != "" {
		t.Fatal(diff)
	}
	if ri := r.Info(); ri.Bytes != info.Bytes || ri.Columns[5] != info.Columns[5] || ri.Fixed != info.Fixed {
		t.Fatalf("reader info %+v, writer info %+v", ri, info)
	}
	if err := Check(fsys, "parts/a.parquet"); err != nil {
		t.Fatal(err)
	}
}

func TestOptionalFixedColumnsDefault(t *testing.T) {
	fsys := newFS(t)
	d := &Data{Rows: 3, Sort: types.NewVector(types.Of(types.Bytes), 3), Commit: []uint64{5, 6, 7}, Seq: []uint32{0, 1, 2}}
	for i := range 3 {
		d.Sort.AppendBytes([]byte{1, byte(i)})
	}
	if _, err := Write(fsys, "parts/b.parquet", d, Meta{Kind: KindAppend}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(fsys, "parts/b.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r, nil)
	if diff := sameData(d, got); diff != "" {
		t.Fatal(diff)
	}
}

func TestWriteRejects(t *testing.T) {
	fsys := newFS(t)
	cases := map[string]func(f *fixture){
		"unsorted": func(f *fixture) {
			// One key and one group: only (commit, seq) order the rows, and
			// rows 3 and 4 are swapped.
			f.d.Sort, f.d.Group = sameKeys(f.d.Rows), nil
			f.d.Commit[3], f.d.Commit[4] = f.d.Commit[4]+1, f.d.Commit[3]
		},
		"no rows":      func(f *fixture) { f.d.Rows = 0 },
		"short commit": func(f *fixture) { f.d.Commit = f.d.Commit[:9] },
		"short group":  func(f *fixture) { f.d.Group = f.d.Group[:2] },
		"wrong type":   func(f *fixture) { f.meta.Columns[0].Type = types.Of(types.Int64) },
		"bad kind":     func(f *fixture) { f.meta.Kind = 0 },
		"id mismatch":  func(f *fixture) { f.d.IDs[1] = 77 },
		"dup id":       func(f *fixture) { f.meta.Columns[1].ID = f.meta.Columns[0].ID; f.d.IDs[1] = f.d.IDs[0] },
		"null sort":    func(f *fixture) { f.d.Sort.SetNull(2) },
		"date out of int32": func(f *fixture) {
			v := types.NewVector(types.Of(types.Date), 10)
			for i := range 10 {
				v.AppendInt64(int64(i) << 40)
			}
			f.d.Cols[0], f.meta.Columns[0].Type = v, types.Of(types.Date)
		},
		"unstorable type": func(f *fixture) {
			f.d.Cols[0], f.meta.Columns[0].Type = types.NewVector(types.Of(types.Unknown), 10), types.Of(types.Unknown)
			for range 10 {
				f.d.Cols[0].AppendNull()
			}
		},
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			f := makeFixture(t, 10, allTypes[:3], nil)
			mut(&f)
			if _, err := Write(fsys, "parts/x.parquet", f.d, f.meta, WriteOptions{}); err == nil {
				t.Fatal("Write accepted bad input")
			}
			if _, err := fsys.Stat("parts/x.parquet"); err == nil {
				t.Fatal("a failed Write left a file")
			}
		})
	}
}

// sameKeys returns rows copies of one sort key, so only (group, commit,
// seq) order the rows.
func sameKeys(rows int) *types.Vector {
	v := types.NewVector(types.Of(types.Bytes), rows)
	for range rows {
		v.AppendBytes([]byte("k"))
	}
	return v
}

func TestDurableOnReturn(t *testing.T) {
	fsys := newFS(t)
	if err := fsys.SyncDir("."); err != nil {
		t.Fatal(err)
	}
	fx := makeFixture(t, 50, allTypes[:4], nil)
	writeFixture(t, fsys, "parts/c.parquet", fx, WriteOptions{})
	crashed := fsys.CrashClone()
	if err := Check(crashed, "parts/c.parquet"); err != nil {
		t.Fatalf("after a crash right after Write: %v", err)
	}
}

func TestWriteFaults(t *testing.T) {
	fx := makeFixture(t, 200, allTypes[:4], nil)
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpSyncDir} {
		fsys := newFS(t)
		ff := vfs.NewFault(fsys)
		ff.Inject(vfs.Rule{Op: op, Nth: 1, Err: vfs.ErrNoSpace})
		if _, err := Write(ff, "parts/f.parquet", fx.d, fx.meta, WriteOptions{}); !errors.Is(err, vfs.ErrNoSpace) {
			t.Fatalf("%v fault: err = %v", op, err)
		}
	}
}

func TestMultiBlockAndSkipping(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 10000, allTypes[:2], nil)
	writeFixture(t, fsys, "parts/m.parquet", fx, WriteOptions{BlockRows: 1000})
	r, err := Open(fsys, "parts/m.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bs := r.Blocks()
	if len(bs) != 10 {
		t.Fatalf("%d blocks", len(bs))
	}
	for i, b := range bs {
		lo := i * 1000
		if b.Rows != 1000 || !bytes.Equal(b.MinSort, fx.d.Sort.BytesAt(lo)) || !bytes.Equal(b.MaxSort, fx.d.Sort.BytesAt(lo+999)) ||
			b.MinCommit != fx.d.Commit[lo] || b.MaxCommit != fx.d.Commit[lo+999] {
			t.Fatalf("block %d: %+v", i, b)
		}
	}
	// A key range inside block 4 overlaps only block 4; the prefix of an
	// account (the first key column only) selects both of its rows.
	prefix := types.AppendKey(nil, types.NewString(fmt.Sprintf("account-%08d-0x5a6b7c8d9e", 2250)))
	next := types.AppendKey(nil, types.NewString(fmt.Sprintf("account-%08d-0x5a6b7c8d9e", 2251)))
	var hit []int
	for i := range bs {
		if bs[i].Overlaps(prefix, next) {
			hit = append(hit, i)
		}
	}
	if fmt.Sprint(hit) != "[4]" {
		t.Fatalf("blocks overlapping the prefix range: %v", hit)
	}
	var blk Data
	if err := r.ReadBlock(4, nil, &blk); err != nil {
		t.Fatal(err)
	}
	found := 0
	for i := range blk.Rows {
		k := blk.Sort.BytesAt(i)
		if bytes.Compare(k, prefix) >= 0 && bytes.Compare(k, next) < 0 {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("%d rows of the account in block 4", found)
	}
	// Open bounds.
	if !bs[0].Overlaps(nil, nil) || bs[0].Overlaps(next, nil) || !bs[9].Overlaps(next, nil) || bs[9].Overlaps(nil, prefix) {
		t.Fatal("open-ended overlap wrong")
	}
	// AS OF: blocks whose MinCommit is above n are skipped.
	asOf := fx.d.Commit[2500]
	var visible []int
	for i := range bs {
		if bs[i].MinCommit <= asOf {
			visible = append(visible, i)
		}
	}
	if fmt.Sprint(visible) != "[0 1 2]" {
		t.Fatalf("blocks visible at %d: %v", asOf, visible)
	}
	if m := r.Meta(); !m.Overlaps(prefix, next) || m.Overlaps(append([]byte{0xff}, prefix...), nil) {
		t.Fatal("part overlap wrong")
	}
	if err := r.ReadBlock(10, nil, &blk); err == nil || errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadBlock past the end: %v", err)
	}
}

// TestWritePaces: WriteOptions.Pace is called before every column chunk
// (each leaf column of each block), and a part written so reads the same.
func TestWritePaces(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 1000, allTypes[:3], nil)
	calls := 0
	info := writeFixture(t, fsys, "parts/p.parquet", fx, WriteOptions{BlockRows: 300, Pace: func() { calls++ }})
	r, err := Open(fsys, "parts/p.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	leaves := len(r.Meta().Columns) + len(fixedNames)
	if info.Blocks != 4 || calls != info.Blocks*leaves {
		t.Fatalf("%d blocks of %d leaf columns, %d calls of Pace", info.Blocks, leaves, calls)
	}
	if diff := sameData(fx.d, readAll(t, r, ids(fx.meta))); diff != "" {
		t.Fatal(diff)
	}
}
