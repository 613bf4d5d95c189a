package merge

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// layout is the set of table columns a merge writes, and how each input's
// columns map onto it. It is built once per merge, so the row loop only
// indexes slices.
type layout struct {
	ids   []catalog.ColumnID
	metas []part.ColumnMeta
	// group is each column's attribute group (catalog.NoGroup for key
	// columns and append tables).
	group []catalog.GroupID
	// intro is the column's introduced default (R6.5), written into rows of
	// its group made before the column existed: from a part written before
	// it, or committed at or before added (a flush after the ADD COLUMN
	// wrote NULL for them, which reads never looked at).
	intro []types.Value
	added []uint64
	// byGroup lists, per group id, the indexes of the group's columns: the
	// values a repeat is compared on (version rule 3).
	byGroup [][]int
	// cast[in][j] is set when input in stores column j under another type
	// (a widened column, R8.1), which takes the slow path through
	// types.Cast.
	cast [][]bool
	// orderFrom names each ordered group's VALID BY and REVISION BY
	// columns the output holds, for part.Meta.OrderFrom: history and
	// delta parts whose ordering values all match them store none
	// (part/order.go).
	orderFrom []part.GroupOrder
	// avg sizes the byte columns of an output's first Data (newData).
	avg rowBytes
}

// newLayout chooses the output columns: every current column of t that at
// least one input holds. A dropped column is not carried forward (R8.2:
// dropped columns are gone), and a column no input holds stays absent so
// that reads keep filling its introduced default. A column every input
// stores under one type keeps that type; inputs that disagree (a widening
// happened between them) are cast to the table's current type.
func newLayout(t *catalog.Table, inputs []*part.Reader) (*layout, error) {
	l := &layout{cast: make([][]bool, len(inputs))}
	for _, c := range t.Columns {
		var typ types.Type
		found, mixed := false, false
		for _, r := range inputs {
			m := r.Meta()
			if k := m.Column(c.ID); k >= 0 {
				if found && m.Columns[k].Type != typ {
					mixed = true
				}
				typ, found = m.Columns[k].Type, true
			}
		}
		if !found {
			continue
		}
		if mixed {
			typ = c.Type
		}
		codec, err := catalog.ParseCodec(c.Codec, typ)
		if err != nil {
			codec = catalog.DefaultCodec(typ)
		}
		intro := types.Null(typ)
		if c.Introduced != nil && !c.Introduced.Null {
			v, err := types.ParseText(typ, c.Introduced.Value)
			if err != nil {
				return nil, fmt.Errorf("merge: introduced default of column %d: %w", c.ID, err)
			}
			intro = v
		}
		j := len(l.ids)
		l.ids = append(l.ids, c.ID)
		l.metas = append(l.metas, part.ColumnMeta{ID: c.ID, Type: typ, Codec: codec})
		l.group = append(l.group, c.Group)
		l.intro = append(l.intro, intro)
		l.added = append(l.added, c.AddedCommit)
		if c.Group != catalog.NoGroup {
			for int(c.Group) >= len(l.byGroup) {
				l.byGroup = append(l.byGroup, nil)
			}
			l.byGroup[c.Group] = append(l.byGroup[c.Group], j)
		}
	}
	l.orderFrom = part.GroupOrders(t, func(id catalog.ColumnID) bool { return slices.Contains(l.ids, id) })
	for in, r := range inputs {
		m := r.Meta()
		l.cast[in] = make([]bool, len(l.ids))
		for j, id := range l.ids {
			if k := m.Column(id); k >= 0 && m.Columns[k].Type != l.metas[j].Type {
				if !types.CanCast(m.Columns[k].Type, l.metas[j].Type) {
					return nil, fmt.Errorf("merge: column %d is %s in part %d, cannot become %s",
						id, m.Columns[k].Type, m.Part, l.metas[j].Type)
				}
				l.cast[in][j] = true
			}
		}
	}
	return l, nil
}

// newData returns an empty Data shaped for the layout, with room for n
// rows: every fixed slice and column vector is allocated for n rows, and
// the byte columns (sort key, ordering values, strings) for as many bytes
// as like's hold, when like is not nil (the previous part of the same
// run), or else for n rows of the inputs' average (measure). Merges fill
// a Data to PartRows before writing it; grown by appends instead (Go
// grows a large slice by a quarter at a time), the byte columns were
// copied about four times over and each copy faulted in fresh pages.
func (l *layout) newData(n int, like *part.Data) *part.Data {
	d := &part.Data{
		Sort:         types.NewVector(types.Of(types.Bytes), n),
		Order:        types.NewVector(types.Of(types.Bytes), n),
		IDs:          l.ids,
		Cols:         make([]*types.Vector, len(l.ids)),
		Group:        make([]uint16, 0, n),
		Commit:       make([]uint64, 0, n),
		Seq:          make([]uint32, 0, n),
		Tomb:         make([]bool, 0, n),
		WonAt:        make([]uint64, 0, n),
		EndedAt:      make([]uint64, 0, n),
		SupersededBy: make([]uint64, 0, n),
		State:        make([]version.State, 0, n),
	}
	for j, m := range l.metas {
		d.Cols[j] = types.NewVector(m.Type, n)
	}
	if like != nil {
		d.Sort.Reserve(int(like.Sort.ValueBytes()))
		d.Order.Reserve(int(like.Order.ValueBytes()))
		for j, c := range like.Cols {
			if c.Type().Kind.Class() == types.ClassVarlen {
				d.Cols[j].Reserve(int(c.ValueBytes()))
			}
		}
		return d
	}
	if n == 0 || l.avg.cols == nil {
		return d
	}
	// An eighth more than the average, for outputs whose rows run longer
	// than the inputs' first blocks did.
	bytesFor := func(avg float64) int { return int(avg * float64(n) * 9 / 8) }
	d.Sort.Reserve(bytesFor(l.avg.sort))
	d.Order.Reserve(bytesFor(l.avg.order))
	for j, avg := range l.avg.cols {
		if avg > 0 {
			d.Cols[j].Reserve(bytesFor(avg))
		}
	}
	return d
}

// rowBytes is the average number of bytes per row of the byte columns in
// the inputs' first blocks: what newData reserves an output's columns by.
type rowBytes struct {
	sort, order float64
	cols        []float64 // by output column; 0 for fixed-width ones
}

// measure sets l.avg from the first block of each input, already read
// into the cursors (newHeap).
func (l *layout) measure(cs []*cursor) {
	var rows int
	var sort, order int64
	cols := make([]int64, len(l.ids))
	for _, c := range cs {
		d := &c.d
		if d.Rows == 0 {
			continue
		}
		rows += d.Rows
		if d.Sort != nil {
			sort += d.Sort.ValueBytes()
		}
		if d.Order != nil {
			order += d.Order.ValueBytes()
		}
		for j := range min(len(d.Cols), len(cols)) {
			if v := d.Cols[j]; v != nil && v.Type().Kind.Class() == types.ClassVarlen &&
				l.metas[j].Type.Kind.Class() == types.ClassVarlen {
				cols[j] += v.ValueBytes()
			}
		}
	}
	if rows == 0 {
		return
	}
	per := func(b int64) float64 { return float64(b) / float64(rows) }
	l.avg = rowBytes{sort: per(sort), order: per(order), cols: make([]float64, len(cols))}
	for j, b := range cols {
		l.avg.cols[j] = per(b)
	}
}

// groupCols returns the columns of group g.
func (l *layout) groupCols(g uint16) []int {
	if int(g) < len(l.byGroup) {
		return l.byGroup[g]
	}
	return nil
}

// copyCols appends row i of src (a block of input in, read with l.ids) to
// dst's table columns. Absent columns read as their introduced default in
// rows of their own group (or of every row when the column has no group)
// and as NULL elsewhere, exactly what a read of the input would return.
func (l *layout) copyCols(dst, src *part.Data, in, i int, group uint16, tomb bool) error {
	for j, dv := range dst.Cols {
		sv := src.Cols[j]
		if sv == nil || src.Commit[i] <= l.added[j] {
			if !tomb && (l.group[j] == catalog.NoGroup || l.group[j] == catalog.GroupID(group)) {
				dv.Append(l.intro[j])
			} else {
				dv.AppendNull()
			}
			continue
		}
		if l.cast[in][j] && !sv.IsNull(i) {
			x, err := types.Cast(sv.Get(i), dv.Type())
			if err != nil {
				return fmt.Errorf("merge: column %d: %w", l.ids[j], err)
			}
			dv.Append(x)
			continue
		}
		dv.AppendFrom(sv, i)
	}
	return nil
}

// appendValues appends an injective encoding of row i's values in columns
// cols of d: a presence byte per column, then the value's bits. Two rows
// encode equally exactly when their values are equal, which is all repeat
// detection (version rule 3) asks; it reads typed slices so that nothing is
// allocated per row.
func appendValues(dst []byte, d *part.Data, i int, cols []int) []byte {
	for _, j := range cols {
		v := d.Cols[j]
		if v.IsNull(i) {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		switch v.Type().Kind.Class() {
		case types.ClassInt64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v.Int64s()[i]))
		case types.ClassUint64:
			dst = binary.LittleEndian.AppendUint64(dst, v.Uint64s()[i])
		case types.ClassWide:
			w := &v.Wides()[i]
			for _, x := range w {
				dst = binary.LittleEndian.AppendUint64(dst, x)
			}
		case types.ClassFloat64:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float64s()[i]))
		case types.ClassBool:
			if v.Bools()[i] {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		case types.ClassVarlen:
			b := v.BytesAt(i)
			dst = binary.AppendUvarint(dst, uint64(len(b)))
			dst = append(dst, b...)
		case types.ClassUUID:
			u := &v.UUIDs()[i]
			dst = append(dst, u[:]...)
		}
	}
	return dst
}
