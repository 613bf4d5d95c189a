package types

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/holiman/uint256"
)

// Vector is one column of a batch: a type, a length, a validity bitmap and
// the one backing slice of the type's physical class (invariant 7). The
// other slices stay nil. Nothing is boxed per value: typed appends write
// straight into the backing slice and allocate only when it grows.
//
// A row that is NULL still occupies a (zero) slot in the backing slice, so
// row i is always at index i.
type Vector struct {
	t Type
	n int
	// valid has bit i set when row i is not NULL; nil means every row is
	// valid, so columns without NULLs never pay for the bitmap.
	valid []uint64
	// spare keeps the bitmap's storage across Reset.
	spare []uint64

	i64   []int64
	u64   []uint64
	wide  []uint256.Int
	f64   []float64
	bools []bool
	// offs holds n+1 offsets into data for STRING and BYTES: row i is
	// data[offs[i]:offs[i+1]].
	offs  []int
	data  []byte
	uuids [][16]byte
}

// NewVector returns an empty vector of type t with room for capacity rows.
func NewVector(t Type, capacity int) *Vector {
	v := &Vector{t: t}
	switch t.Kind.Class() {
	case ClassInt64:
		v.i64 = make([]int64, 0, capacity)
	case ClassUint64:
		v.u64 = make([]uint64, 0, capacity)
	case ClassWide:
		v.wide = make([]uint256.Int, 0, capacity)
	case ClassFloat64:
		v.f64 = make([]float64, 0, capacity)
	case ClassBool:
		v.bools = make([]bool, 0, capacity)
	case ClassVarlen:
		v.offs = make([]int, 1, capacity+1)
		v.data = make([]byte, 0, capacity*8)
	case ClassUUID:
		v.uuids = make([][16]byte, 0, capacity)
	}
	return v
}

// Type returns the vector's type.
func (v *Vector) Type() Type { return v.t }

// Len returns the number of rows.
func (v *Vector) Len() int { return v.n }

// IsNull reports whether row i is NULL.
func (v *Vector) IsNull(i int) bool {
	return v.valid != nil && v.valid[i>>6]&(1<<(uint(i)&63)) == 0
}

// HasNulls reports whether any row may be NULL (false means none is).
func (v *Vector) HasNulls() bool { return v.valid != nil }

// Validity returns the bitmap (bit i set when row i is valid), nil when
// every row is valid. It is shared with the vector.
func (v *Vector) Validity() []uint64 { return v.valid }

// Reset empties the vector, keeping its capacity (the bitmap's too).
func (v *Vector) Reset() {
	v.n = 0
	if v.valid != nil {
		v.spare = v.valid[:0]
		v.valid = nil
	}
	v.i64, v.u64, v.wide, v.f64 = v.i64[:0], v.u64[:0], v.wide[:0], v.f64[:0]
	v.bools, v.data, v.uuids = v.bools[:0], v.data[:0], v.uuids[:0]
	if v.offs != nil {
		v.offs = v.offs[:1]
	}
}

// Reserve makes room for n more bytes of values in a STRING or BYTES vector
// (a no-op for other types), so that a writer that knows the total size up
// front appends without regrowing, and recopying, a large buffer.
func (v *Vector) Reserve(n int) {
	if v.t.Kind.Class() != ClassVarlen || cap(v.data)-len(v.data) >= n {
		return
	}
	data := make([]byte, len(v.data), len(v.data)+n)
	copy(data, v.data)
	v.data = data
}

// markValid records row n as valid in an existing bitmap.
func (v *Vector) markValid() {
	if v.valid == nil {
		return
	}
	w := v.n >> 6
	if w == len(v.valid) {
		v.valid = append(v.valid, 0)
	}
	v.valid[w] |= 1 << (uint(v.n) & 63)
}

// materialize creates the bitmap with the n existing rows valid.
func (v *Vector) materialize() {
	words := (v.n + 63) >> 6
	bm := v.spare[:0]
	v.spare = nil
	if cap(bm) < words {
		bm = make([]uint64, 0, max(words, v.capacity()>>6+1))
	}
	for range v.n >> 6 {
		bm = append(bm, ^uint64(0))
	}
	if r := v.n & 63; r != 0 {
		bm = append(bm, 1<<uint(r)-1)
	}
	v.valid = bm
}

// ValueBytes estimates the size of v's values uncompressed: the bytes of
// its strings, or its rows times the width of its type.
func (v *Vector) ValueBytes() int64 {
	n := int64(v.n)
	switch v.Type().Kind.Class() {
	case ClassVarlen:
		if len(v.offs) > v.n {
			return int64(v.offs[v.n] - v.offs[0])
		}
		return 0
	case ClassWide:
		return 32 * n
	case ClassUUID:
		return 16 * n
	case ClassBool:
		return n
	}
	return 8 * n
}

// MemBytes estimates the memory v holds: its values, its validity bitmap,
// a string vector's offsets and a fixed overhead, for caches that bound
// what they keep by bytes.
func (v *Vector) MemBytes() int64 {
	if v == nil {
		return 0
	}
	n := int64(v.n)
	b := v.ValueBytes() + n/8 + 64
	if v.Type().Kind.Class() == ClassVarlen {
		b += 8 * (n + 1)
	}
	return b
}

// capacity returns the capacity of the backing slice.
func (v *Vector) capacity() int {
	return cap(v.i64) + cap(v.u64) + cap(v.wide) + cap(v.f64) + cap(v.bools) + cap(v.uuids) + cap(v.offs)
}

// AppendNull appends a NULL row. The first NULL materializes the bitmap.
func (v *Vector) AppendNull() {
	if v.valid == nil {
		v.materialize()
	}
	if w := v.n >> 6; w == len(v.valid) {
		v.valid = append(v.valid, 0)
	}
	switch v.t.Kind.Class() {
	case ClassInt64:
		v.i64 = append(v.i64, 0)
	case ClassUint64:
		v.u64 = append(v.u64, 0)
	case ClassWide:
		v.wide = append(v.wide, uint256.Int{})
	case ClassFloat64:
		v.f64 = append(v.f64, 0)
	case ClassBool:
		v.bools = append(v.bools, false)
	case ClassVarlen:
		v.offs = append(v.offs, len(v.data))
	case ClassUUID:
		v.uuids = append(v.uuids, [16]byte{})
	}
	v.n++
}

// AppendNulls appends n NULL rows, as n AppendNull calls would, growing
// each slice once: a writer that pads a sparse column catches up on a run
// of NULLs at a time.
func (v *Vector) AppendNulls(n int) {
	if n <= 0 {
		return
	}
	if v.valid == nil {
		v.materialize()
	}
	// Bits past row n-1 are always clear, so the new rows are NULL once
	// the bitmap has words for them.
	for words := (v.n + n + 63) >> 6; len(v.valid) < words; {
		v.valid = append(v.valid, 0)
	}
	switch v.t.Kind.Class() {
	case ClassInt64:
		v.i64 = growZero(v.i64, n)
	case ClassUint64:
		v.u64 = growZero(v.u64, n)
	case ClassWide:
		v.wide = growZero(v.wide, n)
	case ClassFloat64:
		v.f64 = growZero(v.f64, n)
	case ClassBool:
		v.bools = growZero(v.bools, n)
	case ClassVarlen:
		end := len(v.data)
		for range n {
			v.offs = append(v.offs, end)
		}
	case ClassUUID:
		v.uuids = growZero(v.uuids, n)
	}
	v.n += n
}

// growZero extends s by n zero elements.
func growZero[T any](s []T, n int) []T {
	s = slices.Grow(s, n)
	s = s[:len(s)+n]
	clear(s[len(s)-n:])
	return s
}

// SetNull makes the existing row i NULL; its slot keeps its old contents.
func (v *Vector) SetNull(i int) {
	if v.valid == nil {
		v.materialize()
	}
	v.valid[i>>6] &^= 1 << (uint(i) & 63)
}

// AppendInt64 appends to a ClassInt64 vector (signed integers, DATE days,
// DATETIME64 ticks). The value is not range-checked.
func (v *Vector) AppendInt64(x int64) {
	v.markValid()
	v.i64 = append(v.i64, x)
	v.n++
}

// AppendUint64 appends to a ClassUint64 vector.
func (v *Vector) AppendUint64(x uint64) {
	v.markValid()
	v.u64 = append(v.u64, x)
	v.n++
}

// AppendWide appends to a ClassWide vector.
func (v *Vector) AppendWide(x *uint256.Int) {
	v.markValid()
	v.wide = append(v.wide, *x)
	v.n++
}

// AppendFloat64 appends to a ClassFloat64 vector (rounded to float32 for a
// FLOAT32 vector).
func (v *Vector) AppendFloat64(f float64) {
	if v.t.Kind == Float32 {
		f = float64(float32(f))
	}
	v.markValid()
	v.f64 = append(v.f64, f)
	v.n++
}

// AppendBool appends to a BOOL vector.
func (v *Vector) AppendBool(b bool) {
	v.markValid()
	v.bools = append(v.bools, b)
	v.n++
}

// AppendBytes appends a copy of b to a STRING or BYTES vector.
func (v *Vector) AppendBytes(b []byte) {
	v.markValid()
	v.data = append(v.data, b...)
	v.offs = append(v.offs, len(v.data))
	v.n++
}

// AppendPacked appends to a STRING or BYTES vector the len(offs)-1 values
// packed in data, value i being data[offs[i]:offs[i+1]] (a Parquet
// page's byte arrays): their bytes in one copy, where AppendBytes per
// value made a page's sort keys cost ~3× as much. It reports false, and
// appends nothing, when offs are not non-decreasing within data.
func (v *Vector) AppendPacked(data []byte, offs []uint32) bool {
	if len(offs) == 0 {
		return true
	}
	prev := offs[0]
	for _, o := range offs[1:] {
		if o < prev {
			return false
		}
		prev = o
	}
	if int(prev) > len(data) {
		return false
	}
	n := len(offs) - 1
	base := len(v.data) - int(offs[0])
	v.data = append(v.data, data[offs[0]:prev]...)
	v.offs = slices.Grow(v.offs, n)
	for _, o := range offs[1:] {
		v.offs = append(v.offs, base+int(o))
	}
	v.addValid(n)
	return true
}

// AppendFrontCoded appends to a STRING or BYTES vector len(suffixes)
// values front-coded as Parquet's DELTA_BYTE_ARRAY stores them: value i
// is the first prefixes[i] bytes of value i-1 (none for value 0) followed
// by the next suffixes[i] bytes of data. prefixes nil means no prefixes
// (DELTA_LENGTH_BYTE_ARRAY). Decoding straight into v copies each byte
// once, where decoding into a page buffer and then AppendPacked copied it
// twice. It reports false, and appends nothing, when a length is negative,
// a prefix is longer than the value before it or the suffixes run past
// data.
func (v *Vector) AppendFrontCoded(prefixes, suffixes []int32, data []byte) bool {
	if prefixes != nil && len(prefixes) != len(suffixes) {
		return false
	}
	total, used, last := 0, 0, 0
	for i, s := range suffixes {
		p := 0
		if prefixes != nil {
			p = int(prefixes[i])
		}
		if s < 0 || p < 0 || p > last {
			return false
		}
		used += int(s)
		last = p + int(s)
		total += last
	}
	if used > len(data) {
		return false
	}
	// Written by index into storage grown once: w is where the next
	// value starts, prev where the value before it starts (its prefix is
	// copied from v's own bytes).
	w := len(v.data)
	v.data = slices.Grow(v.data, total)[:w+total]
	o := len(v.offs)
	v.offs = slices.Grow(v.offs, len(suffixes))[:o+len(suffixes)]
	d, offs := v.data, v.offs[o:]
	prev, pos := w, 0
	for i, s := range suffixes {
		begin := w
		if prefixes != nil {
			if p := int(prefixes[i]); p > 0 {
				w += copy(d[w:], d[prev:prev+p])
			}
		}
		w += copy(d[w:], data[pos:pos+int(s)])
		pos += int(s)
		offs[i] = w
		prev = begin
	}
	v.addValid(len(suffixes))
	return true
}

// addValid counts n more rows, all valid, whose values are appended.
func (v *Vector) addValid(n int) {
	if v.valid == nil {
		v.n += n
		return
	}
	for range n {
		v.markValid()
		v.n++
	}
}

// AppendString appends s to a STRING or BYTES vector.
func (v *Vector) AppendString(s string) {
	v.markValid()
	v.data = append(v.data, s...)
	v.offs = append(v.offs, len(v.data))
	v.n++
}

// AppendUUID appends to a UUID vector.
func (v *Vector) AppendUUID(u [16]byte) {
	v.markValid()
	v.uuids = append(v.uuids, u)
	v.n++
}

// Append appends x, which must have the vector's type (Cast it first
// otherwise: a DATETIME64(3) value's ticks are not DATETIME64(6) ticks).
// A value of another physical class is a bug in the caller, not bad input,
// and panics.
func (v *Vector) Append(x Value) {
	if x.null {
		v.AppendNull()
		return
	}
	c := v.t.Kind.Class()
	if xc := x.t.Kind.Class(); xc != c {
		panic(fmt.Sprintf("types: append %s value to %s vector", x.t, v.t))
	}
	switch c {
	case ClassInt64:
		v.AppendInt64(int64(x.n))
	case ClassUint64:
		v.AppendUint64(x.n)
	case ClassWide:
		v.AppendWide(&x.w)
	case ClassFloat64:
		v.AppendFloat64(x.Float64())
	case ClassBool:
		v.AppendBool(x.n != 0)
	case ClassVarlen:
		if x.t.Kind == String {
			v.AppendString(x.s)
		} else {
			v.AppendBytes(x.b)
		}
	case ClassUUID:
		v.AppendUUID(x.u)
	}
}

// AppendFrom appends row i of src, which has the vector's type.
func (v *Vector) AppendFrom(src *Vector, i int) {
	if src.IsNull(i) {
		v.AppendNull()
		return
	}
	switch v.t.Kind.Class() {
	case ClassInt64:
		v.AppendInt64(src.i64[i])
	case ClassUint64:
		v.AppendUint64(src.u64[i])
	case ClassWide:
		v.AppendWide(&src.wide[i])
	case ClassFloat64:
		v.AppendFloat64(src.f64[i])
	case ClassBool:
		v.AppendBool(src.bools[i])
	case ClassVarlen:
		v.AppendBytes(src.BytesAt(i))
	case ClassUUID:
		v.AppendUUID(src.uuids[i])
	}
}

// AppendVector appends every row of src, which has the vector's physical
// class, in bulk: one copy per backing slice instead of a call per row
// (a cached decoded column is copied out this way).
func (v *Vector) AppendVector(src *Vector) {
	if src.n == 0 {
		return
	}
	if src.valid != nil || v.valid != nil {
		if v.valid == nil {
			v.materialize()
		}
		for i := range src.n {
			r := v.n + i
			if w := r >> 6; w == len(v.valid) {
				v.valid = append(v.valid, 0)
			}
			if !src.IsNull(i) {
				v.valid[r>>6] |= 1 << (uint(r) & 63)
			}
		}
	}
	switch v.t.Kind.Class() {
	case ClassInt64:
		v.i64 = append(v.i64, src.i64[:src.n]...)
	case ClassUint64:
		v.u64 = append(v.u64, src.u64[:src.n]...)
	case ClassWide:
		v.wide = append(v.wide, src.wide[:src.n]...)
	case ClassFloat64:
		v.f64 = append(v.f64, src.f64[:src.n]...)
	case ClassBool:
		v.bools = append(v.bools, src.bools[:src.n]...)
	case ClassVarlen:
		base := len(v.data) - src.offs[0]
		v.data = append(v.data, src.data[src.offs[0]:src.offs[src.n]]...)
		for _, o := range src.offs[1 : src.n+1] {
			v.offs = append(v.offs, base+o)
		}
	case ClassUUID:
		v.uuids = append(v.uuids, src.uuids[:src.n]...)
	}
	v.n += src.n
}

// Get returns row i as a Value. A STRING or BYTES row is copied out of the
// vector, so the Value outlives Reset; hot loops use the typed getters.
func (v *Vector) Get(i int) Value {
	if v.IsNull(i) {
		return Null(v.t)
	}
	x := Value{t: v.t}
	switch v.t.Kind.Class() {
	case ClassInt64:
		x.n = uint64(v.i64[i])
	case ClassUint64:
		x.n = v.u64[i]
	case ClassWide:
		x.w = v.wide[i]
	case ClassFloat64:
		x = mkFloat(v.t, v.f64[i])
	case ClassBool:
		if v.bools[i] {
			x.n = 1
		}
	case ClassVarlen:
		if v.t.Kind == String {
			x.s = string(v.BytesAt(i))
		} else {
			x.b = append([]byte(nil), v.BytesAt(i)...)
		}
	case ClassUUID:
		x.u = v.uuids[i]
	}
	return x
}

// View is Get without copying: a STRING or BYTES value aliases the
// vector's buffer, so it is valid only until the vector is next written
// or reset, and must not be modified. For values encoded and dropped at
// once (rows sent to a client), where Get's copy of every string would be
// an allocation per cell.
func (v *Vector) View(i int) Value {
	if v.t.Kind.Class() != ClassVarlen || v.IsNull(i) {
		return v.Get(i)
	}
	b := v.BytesAt(i)
	x := Value{t: v.t}
	if v.t.Kind == String {
		x.s = unsafe.String(unsafe.SliceData(b), len(b))
	} else {
		x.b = b
	}
	return x
}

// Int64s returns the backing slice of a ClassInt64 vector (NULL rows hold 0).
func (v *Vector) Int64s() []int64 { return v.i64 }

// Uint64s returns the backing slice of a ClassUint64 vector.
func (v *Vector) Uint64s() []uint64 { return v.u64 }

// Wides returns the backing slice of a ClassWide vector.
func (v *Vector) Wides() []uint256.Int { return v.wide }

// Float64s returns the backing slice of a ClassFloat64 vector.
func (v *Vector) Float64s() []float64 { return v.f64 }

// Bools returns the backing slice of a BOOL vector.
func (v *Vector) Bools() []bool { return v.bools }

// UUIDs returns the backing slice of a UUID vector.
func (v *Vector) UUIDs() [][16]byte { return v.uuids }

// BytesAt returns row i of a STRING or BYTES vector. The slice aliases the
// vector's buffer: valid until Reset, not to be modified.
func (v *Vector) BytesAt(i int) []byte { return v.data[v.offs[i]:v.offs[i+1]:v.offs[i+1]] }

// Packed returns the values of rows [lo, hi) of a STRING or BYTES vector
// as they lie in its buffer: data holds them back to back and row i
// (lo ≤ i < hi) is data[offs[i-lo]:offs[i-lo+1]]. A NULL row is empty.
// Both slices alias the vector: valid until Reset, not to be modified.
func (v *Vector) Packed(lo, hi int) (data []byte, offs []int) {
	return v.data, v.offs[lo : hi+1]
}

// StringAt returns row i of a STRING or BYTES vector as a new string.
func (v *Vector) StringAt(i int) string { return string(v.BytesAt(i)) }

// Batch is a set of equally long vectors, one per column, that operators
// pass along: the unit of vectorized execution.
type Batch struct {
	Cols []*Vector
	// Rows is the number of rows; every vector in Cols has this length.
	Rows int
}

// NewBatch returns an empty batch of the given column types with room for
// capacity rows.
func NewBatch(types []Type, capacity int) *Batch {
	b := &Batch{Cols: make([]*Vector, len(types))}
	for i, t := range types {
		b.Cols[i] = NewVector(t, capacity)
	}
	return b
}

// Reset empties every column, keeping capacity.
func (b *Batch) Reset() {
	for _, c := range b.Cols {
		c.Reset()
	}
	b.Rows = 0
}

// AppendRow appends one value per column and counts the row.
func (b *Batch) AppendRow(row []Value) {
	for i, x := range row {
		b.Cols[i].Append(x)
	}
	b.Rows++
}

// AppendFrom appends row i of src, whose columns have b's types, column by
// column: no Value per cell (Row then AppendRow would box each one).
func (b *Batch) AppendFrom(src *Batch, i int) {
	for j, c := range b.Cols {
		c.AppendFrom(src.Cols[j], i)
	}
	b.Rows++
}

// Row returns row i as values, appended to dst.
func (b *Batch) Row(dst []Value, i int) []Value {
	for _, c := range b.Cols {
		dst = append(dst, c.Get(i))
	}
	return dst
}

// AppendRows appends rows [from, b.Rows) of b to dst as rows of their
// own values: one backing array for them all, not one per row, each row's
// capacity ending at its last cell so that appending to a row copies it.
func (b *Batch) AppendRows(dst [][]Value, from int) [][]Value {
	if from >= b.Rows {
		return dst
	}
	w := len(b.Cols)
	cells := make([]Value, 0, (b.Rows-from)*w)
	for i := from; i < b.Rows; i++ {
		cells = b.Row(cells, i)
		n := len(cells)
		dst = append(dst, cells[n-w:n:n])
	}
	return dst
}

// RowView is Row with each value a View: valid only until the batch is
// next written or reset.
func (b *Batch) RowView(dst []Value, i int) []Value {
	for _, c := range b.Cols {
		dst = append(dst, c.View(i))
	}
	return dst
}
