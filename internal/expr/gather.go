package expr

import (
	"github.com/strata-db/strata/internal/types"
)

// GatherVector appends the rows sel of src to dst (same type), with one type
// switch for the whole selection.
func GatherVector(dst, src *types.Vector, sel []int) {
	nulls := src.HasNulls()
	switch src.Type().Kind.Class() {
	case types.ClassInt64:
		s := src.Int64s()
		for _, i := range sel {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendInt64(s[i])
		}
	case types.ClassUint64:
		s := src.Uint64s()
		for _, i := range sel {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendUint64(s[i])
		}
	case types.ClassFloat64:
		s := src.Float64s()
		for _, i := range sel {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendFloat64(s[i])
		}
	case types.ClassBool:
		s := src.Bools()
		for _, i := range sel {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendBool(s[i])
		}
	case types.ClassWide:
		s := src.Wides()
		for _, i := range sel {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendWide(&s[i])
		}
	case types.ClassVarlen:
		for _, i := range sel {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendBytes(src.BytesAt(i))
		}
	case types.ClassUUID:
		s := src.UUIDs()
		for _, i := range sel {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendUUID(s[i])
		}
	default:
		for range sel {
			dst.AppendNull()
		}
	}
}

// AppendVector appends rows [from, to) of src to dst.
func AppendVector(dst, src *types.Vector, from, to int) {
	nulls := src.HasNulls()
	switch src.Type().Kind.Class() {
	case types.ClassInt64:
		s := src.Int64s()
		for i := from; i < to; i++ {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendInt64(s[i])
		}
	case types.ClassUint64:
		s := src.Uint64s()
		for i := from; i < to; i++ {
			if nulls && src.IsNull(i) {
				dst.AppendNull()
				continue
			}
			dst.AppendUint64(s[i])
		}
	default:
		for i := from; i < to; i++ {
			dst.AppendFrom(src, i)
		}
	}
}

// Gather returns a batch of the rows sel of b, reusing dst when it is not
// nil and has b's column types.
func Gather(dst, b *types.Batch, sel []int) *types.Batch {
	if dst == nil || len(dst.Cols) != len(b.Cols) {
		dst = &types.Batch{Cols: make([]*types.Vector, len(b.Cols))}
	}
	for j, v := range b.Cols {
		if dst.Cols[j] == nil || dst.Cols[j].Type() != v.Type() {
			dst.Cols[j] = types.NewVector(v.Type(), len(sel))
		} else {
			dst.Cols[j].Reset()
		}
		GatherVector(dst.Cols[j], v, sel)
	}
	dst.Rows = len(sel)
	return dst
}

// Selection appends to sel the rows where the BOOL vector v is TRUE (not
// FALSE, not NULL), the selection vector a filter keeps.
func Selection(sel []int, v *types.Vector, n int) []int {
	bs := v.Bools()[:n]
	if !v.HasNulls() {
		for i, b := range bs {
			if b {
				sel = append(sel, i)
			}
		}
		return sel
	}
	for i, b := range bs {
		if b && !v.IsNull(i) {
			sel = append(sel, i)
		}
	}
	return sel
}
