package types

import (
	"testing"

	"github.com/holiman/uint256"
)

func TestVectorRoundTrip(t *testing.T) {
	ts := Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}
	cases := []struct {
		t    Type
		vals []string // "" is NULL
	}{
		{Of(Int64), []string{"1", "", "-5", "9223372036854775807"}},
		{Of(Int8), []string{"-128", "127", ""}},
		{Of(Uint32), []string{"", "4294967295", "0"}},
		{Of(Uint256), []string{maxU256, "", "0", "12"}},
		{Of(Int128), []string{"-" + minI128, "", "1"}},
		{Type{Kind: Decimal, Precision: 10, Scale: 2}, []string{"1.50", "", "-3.25"}},
		{Of(Float64), []string{"1.5", "NaN", "", "-Infinity"}},
		{Of(Float32), []string{"0.1", ""}},
		{Of(Bool), []string{"true", "", "false"}},
		{Of(String), []string{"naïve ☃", "", "x"}},
		{Of(Bytes), []string{"\\x00ff", "", "\\x"}},
		{Of(Date), []string{"2026-10-01", ""}},
		{ts, []string{"2026-10-01 12:05:00.123", "", "1969-12-31 23:59:59.999"}},
		{Of(UUID), []string{"123e4567-e89b-12d3-a456-426614174000", ""}},
	}
	for _, c := range cases {
		v := NewVector(c.t, 2)
		for _, s := range c.vals {
			if s == "" {
				v.Append(Null(c.t))
				continue
			}
			v.Append(pt(t, c.t, s))
		}
		if v.Len() != len(c.vals) {
			t.Fatalf("%s: Len = %d, want %d", c.t, v.Len(), len(c.vals))
		}
		// Copy through AppendFrom into a second vector, then check both.
		w := NewVector(c.t, 0)
		for i := range v.Len() {
			w.AppendFrom(v, i)
		}
		for _, vec := range []*Vector{v, w} {
			for i, s := range c.vals {
				got := vec.Get(i)
				if vec.IsNull(i) != (s == "") || got.IsNull() != (s == "") {
					t.Errorf("%s row %d: IsNull = %v, want %v", c.t, i, vec.IsNull(i), s == "")
				}
				if s != "" && got.String() != s {
					t.Errorf("%s row %d = %q, want %q", c.t, i, got.String(), s)
				}
				if got.Type() != c.t {
					t.Errorf("%s row %d has type %s", c.t, i, got.Type())
				}
			}
		}
		v.Reset()
		if v.Len() != 0 || v.HasNulls() {
			t.Errorf("%s: Reset left %d rows, nulls %v", c.t, v.Len(), v.HasNulls())
		}
	}
}

func TestVectorValidity(t *testing.T) {
	v := NewVector(Of(Int64), 0)
	for i := range 200 {
		v.AppendInt64(int64(i))
	}
	if v.HasNulls() || v.Validity() != nil {
		t.Fatal("bitmap materialized without NULLs")
	}
	v.SetNull(130)
	v.AppendNull()
	v.AppendInt64(7)
	for i := range v.Len() {
		want := i == 130 || i == 200
		if v.IsNull(i) != want {
			t.Errorf("row %d: IsNull = %v, want %v", i, v.IsNull(i), want)
		}
	}
	if got := v.Int64s()[201]; got != 7 {
		t.Errorf("row 201 = %d", got)
	}
	v.Reset()
	v.AppendInt64(1)
	v.AppendNull()
	if v.IsNull(0) || !v.IsNull(1) {
		t.Errorf("after Reset: IsNull(0)=%v IsNull(1)=%v", v.IsNull(0), v.IsNull(1))
	}
}

func TestVectorGetters(t *testing.T) {
	v := NewVector(Of(Uint256), 4)
	x := uint256.Int{1, 2, 3, 4}
	v.AppendWide(&x)
	if v.Wides()[0] != x {
		t.Errorf("Wides()[0] = %v", v.Wides()[0])
	}
	s := NewVector(Of(String), 4)
	s.AppendString("ab")
	s.AppendBytes([]byte("cd"))
	if string(s.BytesAt(0)) != "ab" || s.StringAt(1) != "cd" {
		t.Errorf("BytesAt/StringAt = %q %q", s.BytesAt(0), s.StringAt(1))
	}
	// BytesAt is capped, so appending to it cannot overwrite the next row.
	_ = append(s.BytesAt(0), 'z')
	if s.StringAt(1) != "cd" {
		t.Errorf("append to BytesAt clobbered the next row")
	}
	f := NewVector(Of(Float32), 1)
	f.AppendFloat64(0.1)
	if f.Float64s()[0] != float64(float32(0.1)) {
		t.Errorf("FLOAT32 vector did not round to float32")
	}
}

func TestVectorAppendPanicsOnClassMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("no panic")
		}
	}()
	NewVector(Of(String), 1).Append(NewInt64(1))
}

// TestVectorAppendNoAlloc proves that typed appends, Append of a Value and
// the bitmap do not allocate once capacity is there (invariant 7).
func TestVectorAppendNoAlloc(t *testing.T) {
	const n = 1024
	wide := uint256.Int{1, 2, 3, 4}
	u := NewVector(Of(Uint256), n)
	i := NewVector(Of(Int64), n)
	s := NewVector(Of(String), n)
	d := NewVector(Of(Float64), n)
	val := NewInt64(3)
	i.AppendNull() // materialize the bitmap; Reset keeps it
	allocs := testing.AllocsPerRun(10, func() {
		u.Reset()
		i.Reset()
		s.Reset()
		d.Reset()
		i.AppendNull()
		for k := 1; k < n; k++ {
			u.AppendWide(&wide)
			i.Append(val)
			s.AppendString("abcdefg")
			d.AppendFloat64(1.5)
		}
	})
	if allocs != 0 {
		t.Errorf("appends allocate %v times per batch", allocs)
	}
}

func TestBatch(t *testing.T) {
	b := NewBatch([]Type{Of(Int64), Of(String)}, 4)
	b.AppendRow([]Value{NewInt64(1), NewString("a")})
	b.AppendRow([]Value{Null(Of(Int64)), NewString("b")})
	if b.Rows != 2 || b.Cols[0].Len() != 2 {
		t.Fatalf("Rows = %d", b.Rows)
	}
	row := b.Row(nil, 1)
	if !row[0].IsNull() || row[1].Str() != "b" {
		t.Errorf("row 1 = %v", row)
	}
	b.Reset()
	if b.Rows != 0 || b.Cols[1].Len() != 0 {
		t.Errorf("Reset left rows")
	}
}

func BenchmarkVectorAppend(b *testing.B) {
	wide := uint256.Int{1, 2, 3, 4}
	u := NewVector(Of(Uint256), 1024)
	i := NewVector(Of(Int64), 1024)
	b.Run("int64", func(b *testing.B) {
		for b.Loop() {
			i.Reset()
			for k := range 1024 {
				i.AppendInt64(int64(k))
			}
		}
	})
	b.Run("uint256", func(b *testing.B) {
		for b.Loop() {
			u.Reset()
			for range 1024 {
				u.AppendWide(&wide)
			}
		}
	})
}

func TestVectorReserve(t *testing.T) {
	v := NewVector(Of(String), 1)
	v.AppendString("ab")
	v.Reserve(100)
	c := cap(v.data)
	for range 10 {
		v.AppendString("0123456789")
	}
	if cap(v.data) != c || v.Len() != 11 || v.StringAt(0) != "ab" || v.StringAt(10) != "0123456789" {
		t.Fatalf("after Reserve: cap %d→%d, %d rows, %q … %q", c, cap(v.data), v.Len(), v.StringAt(0), v.StringAt(10))
	}
	n := NewVector(Of(Int64), 1)
	n.Reserve(100) // not varlen: nothing to do
	n.AppendInt64(1)
	if n.Len() != 1 {
		t.Fatal(n.Len())
	}
}

// TestVectorAppendVector: a bulk append equals appending row by row, for
// every class, with and without NULLs on either side.
func TestVectorAppendVector(t *testing.T) {
	vals := map[Kind][]Value{
		Int64:  {NewInt64(-3), NewInt64(7)},
		String: {NewString("ab"), NewString("")},
		Bool:   {NewBool(true), NewBool(false)},
	}
	var w uint256.Int
	w.SetUint64(1 << 62)
	w.Lsh(&w, 100)
	wide, err := NewWide(Of(Uint256), w)
	if err != nil {
		t.Fatal(err)
	}
	vals[Uint256] = []Value{wide, wide}
	vals[Uint64] = []Value{NewUint64(9), NewUint64(1 << 63)}
	for k, vs := range vals {
		typ := Of(k)
		for mask := range 16 {
			// Bits 0–1 make the destination's rows NULL, 2–3 the source's.
			dst, src := NewVector(typ, 0), NewVector(typ, 0)
			for i, x := range vs {
				if mask&(1<<i) != 0 {
					dst.AppendNull()
				} else {
					dst.Append(x)
				}
				if mask&(4<<i) != 0 {
					src.AppendNull()
				} else {
					src.Append(x)
				}
			}
			want := NewVector(typ, 0)
			for i := range dst.Len() {
				want.AppendFrom(dst, i)
			}
			for i := range src.Len() {
				want.AppendFrom(src, i)
			}
			dst.AppendVector(src)
			dst.Append(vs[0]) // appends after a bulk append still line up
			want.Append(vs[0])
			if dst.Len() != want.Len() {
				t.Fatalf("%s mask %d: %d rows, want %d", typ, mask, dst.Len(), want.Len())
			}
			for i := range want.Len() {
				if g, w := dst.Get(i), want.Get(i); g.IsNull() != w.IsNull() || !g.IsNull() && Compare(g, w) != 0 {
					t.Fatalf("%s mask %d row %d: %v, want %v", typ, mask, i, g, w)
				}
			}
		}
	}
}

// AppendNulls leaves a vector as that many AppendNull calls would, before
// and after a materialized bitmap and across word boundaries.
func TestVectorAppendNulls(t *testing.T) {
	for _, ty := range []Type{Of(Int64), Of(Uint64), Of(String), Of(Bool), Of(Float64)} {
		a, b := NewVector(ty, 0), NewVector(ty, 0)
		for i, run := range []int{0, 3, 70, 1, 64, 5} {
			a.AppendNulls(run)
			for range run {
				b.AppendNull()
			}
			if i%2 == 0 {
				v := Null(ty)
				switch ty.Kind.Class() {
				case ClassInt64:
					v = mkInt(ty, int64(i))
				case ClassUint64:
					v = mkUint(ty, uint64(i))
				case ClassVarlen:
					v = Value{t: ty, s: "x"}
				case ClassBool:
					v = Value{t: ty, n: 1}
				case ClassFloat64:
					v = mkFloat(ty, 1.5)
				}
				a.Append(v)
				b.Append(v)
			}
		}
		if a.Len() != b.Len() {
			t.Fatalf("%s: Len %d, want %d", ty, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if a.IsNull(i) != b.IsNull(i) || !same(a.Get(i), b.Get(i)) {
				t.Fatalf("%s row %d: %s, want %s", ty, i, a.Get(i), b.Get(i))
			}
		}
	}
}

// TestVectorValueBytes checks the size estimates caches bound themselves
// by: a string vector counts its bytes, fixed-width vectors their width
// per row.
func TestVectorValueBytes(t *testing.T) {
	s := NewVector(Of(String), 0)
	for _, x := range []string{"ab", "", "cde"} {
		s.AppendBytes([]byte(x))
	}
	if got := s.ValueBytes(); got != 5 {
		t.Fatalf("strings: %d bytes, want 5", got)
	}
	if got := s.MemBytes(); got != 5+0+64+8*4 {
		t.Fatalf("strings: %d memory bytes, want %d", got, 5+64+8*4)
	}
	w := NewVector(Of(Uint256), 0)
	w.AppendNull()
	w.AppendNull()
	if got := w.ValueBytes(); got != 64 {
		t.Fatalf("UINT256: %d bytes, want 64", got)
	}
	var nilVec *Vector
	if nilVec.MemBytes() != 0 {
		t.Fatal("a nil vector holds memory")
	}
	if got := NewVector(Of(Int64), 4).ValueBytes(); got != 0 {
		t.Fatalf("empty INT64: %d bytes, want 0", got)
	}
}

// TestVectorAppendPacked: packed values append as AppendBytes of each
// would, after valid rows and after a NULL (bitmap marked), from offsets
// that do not start at 0; bad offsets append nothing and say so.
func TestVectorAppendPacked(t *testing.T) {
	data := []byte("xxabcdefghij")
	offs := []uint32{2, 5, 5, 9, 12} // "abc", "", "defg", "hij"
	for _, prefix := range []string{"none", "valid", "null"} {
		got, want := NewVector(Of(String), 0), NewVector(Of(String), 0)
		for _, v := range []*Vector{got, want} {
			switch prefix {
			case "valid":
				v.AppendString("first")
			case "null":
				v.AppendNull()
			}
		}
		if !got.AppendPacked(data, offs) {
			t.Fatalf("%s: refused good offsets", prefix)
		}
		for i := range len(offs) - 1 {
			want.AppendBytes(data[offs[i]:offs[i+1]])
		}
		if got.Len() != want.Len() {
			t.Fatalf("%s: %d rows, want %d", prefix, got.Len(), want.Len())
		}
		for i := range want.Len() {
			if got.IsNull(i) != want.IsNull(i) || got.Get(i).String() != want.Get(i).String() {
				t.Fatalf("%s: row %d = %v, want %v", prefix, i, got.Get(i), want.Get(i))
			}
		}
		got.AppendString("after")
		if s := got.Get(got.Len() - 1).String(); s != "after" {
			t.Fatalf("%s: appended after the packed values: %q", prefix, s)
		}
	}
	for _, bad := range [][]uint32{{2, 5, 4}, {2, 13}} {
		v := NewVector(Of(String), 0)
		if v.AppendPacked(data, bad) || v.Len() != 0 {
			t.Fatalf("offsets %v: accepted, %d rows", bad, v.Len())
		}
	}
}

// TestAppendFrontCoded appends front-coded values after a value already
// in the vector and checks them, and refuses lengths that do not fit.
func TestAppendFrontCoded(t *testing.T) {
	v := NewVector(Of(Bytes), 0)
	v.AppendBytes([]byte("zz"))
	// apple, applesauce, apricot, "", banana
	if !v.AppendFrontCoded([]int32{0, 5, 2, 0, 0}, []int32{5, 5, 5, 0, 6}, []byte("applesaucericotbanana")) {
		t.Fatal("refused a valid page")
	}
	want := []string{"zz", "apple", "applesauce", "apricot", "", "banana"}
	if v.Len() != len(want) {
		t.Fatalf("%d values, want %d", v.Len(), len(want))
	}
	for i, w := range want {
		if got := v.StringAt(i); got != w {
			t.Fatalf("value %d = %q, want %q", i, got, w)
		}
	}
	if !v.AppendFrontCoded(nil, []int32{1, 2}, []byte("xyz")) || v.StringAt(6) != "x" || v.StringAt(7) != "yz" {
		t.Fatal("lengths without prefixes")
	}
	for _, c := range []struct {
		p, s []int32
		data string
	}{
		{[]int32{1}, []int32{1}, "a"},         // a prefix for the first value
		{[]int32{0, 3}, []int32{2, 1}, "abc"}, // a prefix longer than the value before
		{[]int32{0}, []int32{4}, "abc"},       // suffixes past the data
		{[]int32{0, 0}, []int32{1}, "a"},      // counts that differ
		{nil, []int32{-1}, "a"},               // a negative length
	} {
		n := v.Len()
		if v.AppendFrontCoded(c.p, c.s, []byte(c.data)) || v.Len() != n {
			t.Fatalf("accepted prefixes %v suffixes %v over %q", c.p, c.s, c.data)
		}
	}
}

// TestVectorView: View equals Get for every class and NULL, and a STRING
// or BYTES view aliases the vector's buffer (no copy) where Get copies.
func TestVectorView(t *testing.T) {
	wide, err := NewWide(Of(Uint256), *uint256.NewInt(9))
	if err != nil {
		t.Fatal(err)
	}
	b := NewBatch([]Type{Of(Int64), Of(String), Of(Bytes), Of(Uint256)}, 4)
	b.AppendRow([]Value{NewInt64(7), NewString("seven"), NewBytes([]byte{1, 2}), wide})
	b.AppendRow([]Value{Null(Of(Int64)), Null(Of(String)), Null(Of(Bytes)), Null(Of(Uint256))})
	for i := 0; i < b.Rows; i++ {
		got, want := b.RowView(nil, i), b.Row(nil, i)
		for j := range want {
			if got[j].IsNull() != want[j].IsNull() || !want[j].IsNull() && !Equal(got[j], want[j]) || got[j].Type() != want[j].Type() {
				t.Fatalf("row %d column %d: view %v, get %v", i, j, got[j], want[j])
			}
		}
	}
	view, get := b.Cols[2].View(0), b.Cols[2].Get(0)
	buf := b.Cols[2].BytesAt(0)
	if &view.Bytes()[0] != &buf[0] || &get.Bytes()[0] == &buf[0] {
		t.Fatal("BYTES view copied, or Get aliased")
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = b.Cols[1].View(0) }); allocs != 0 {
		t.Fatalf("STRING view allocated %.0f times", allocs)
	}
}

// TestBatchAppendRows: rows from an index on, each its own values with
// its capacity ending at its last cell (appending to one leaves the next
// alone), after what dst held.
func TestBatchAppendRows(t *testing.T) {
	b := NewBatch([]Type{Of(Int64), Of(String)}, 4)
	for i := 0; i < 4; i++ {
		b.AppendRow([]Value{NewInt64(int64(i)), NewString("s")})
	}
	dst := [][]Value{{NewInt64(-1)}}
	dst = b.AppendRows(dst, 1)
	if len(dst) != 4 || dst[1][0].Int64() != 1 || dst[3][0].Int64() != 3 || cap(dst[1]) != 2 {
		t.Fatalf("rows %v, capacity %d", dst, cap(dst[1]))
	}
	_ = append(dst[1], NewInt64(99))
	if dst[2][0].Int64() != 2 {
		t.Fatal("appending to a row overwrote the next")
	}
	if got := b.AppendRows(nil, 4); got != nil {
		t.Fatalf("rows past the end: %v", got)
	}
}
