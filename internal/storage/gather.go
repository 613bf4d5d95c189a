package storage

import (
	"fmt"

	"github.com/strata-db/strata/internal/types"
)

// Column-at-a-time copying for the fast read paths (runscan.go). A fast
// read decides, per output row and attribute group, which stored row
// supplies the group's columns; these loops then copy one column for a
// whole run of output rows with the type switch outside the loop, so no
// per-row interface call or allocation is made.

// Row references in a gather index. A non-negative entry is a row of the
// first source, or of the second when srcB is set; the negative ones say
// what to fill instead.
const (
	// absentRow: the row has no version of the column's group: the
	// column reads NULL, or its introduced default when it was added after
	// CREATE TABLE (what reader.emitCurrent does).
	absentRow int32 = -1
	// introRow: the group has a version, written before the column
	// existed (or after it was dropped): the introduced default (R6.5).
	introRow int32 = -2
	// srcB marks a row of the second source.
	srcB int32 = 1 << 30
)

// gather appends one value per entry of idx to dst: the row of srcs[0] or
// srcs[1] (srcB), or the fill the negative entries name. A nil source
// holds no such column: its rows read as introRow. A source stored under
// an older, narrower type is cast (R8.1), value by value.
func gather(dst *types.Vector, srcs *[2]*types.Vector, idx []int32, absent, intro types.Value) error {
	t := dst.Type()
	for s := range srcs {
		if srcs[s] != nil && srcs[s].Type() != t {
			return gatherCast(dst, srcs, idx, absent, intro)
		}
	}
	a, b := srcs[0], srcs[1]
	// src returns the vector and row of a non-negative entry, nil when the
	// source lacks the column.
	src := func(j int32) (*types.Vector, int) {
		if j&srcB != 0 {
			return b, int(j &^ srcB)
		}
		return a, int(j)
	}
	fill := func(j int32) {
		if j == absentRow {
			dst.Append(absent)
		} else {
			dst.Append(intro)
		}
	}
	switch t.Kind.Class() {
	case types.ClassInt64:
		for _, j := range idx {
			if j < 0 {
				fill(j)
				continue
			}
			v, r := src(j)
			switch {
			case v == nil:
				dst.Append(intro)
			case v.IsNull(r):
				dst.AppendNull()
			default:
				dst.AppendInt64(v.Int64s()[r])
			}
		}
	case types.ClassUint64:
		for _, j := range idx {
			if j < 0 {
				fill(j)
				continue
			}
			v, r := src(j)
			switch {
			case v == nil:
				dst.Append(intro)
			case v.IsNull(r):
				dst.AppendNull()
			default:
				dst.AppendUint64(v.Uint64s()[r])
			}
		}
	case types.ClassWide:
		for _, j := range idx {
			if j < 0 {
				fill(j)
				continue
			}
			v, r := src(j)
			switch {
			case v == nil:
				dst.Append(intro)
			case v.IsNull(r):
				dst.AppendNull()
			default:
				dst.AppendWide(&v.Wides()[r])
			}
		}
	case types.ClassVarlen:
		for _, j := range idx {
			if j < 0 {
				fill(j)
				continue
			}
			v, r := src(j)
			switch {
			case v == nil:
				dst.Append(intro)
			case v.IsNull(r):
				dst.AppendNull()
			default:
				dst.AppendBytes(v.BytesAt(r))
			}
		}
	default:
		for _, j := range idx {
			if j < 0 {
				fill(j)
				continue
			}
			v, r := src(j)
			if v == nil {
				dst.Append(intro)
			} else {
				dst.AppendFrom(v, r)
			}
		}
	}
	return nil
}

// gatherCast is gather for a source of another type than dst.
func gatherCast(dst *types.Vector, srcs *[2]*types.Vector, idx []int32, absent, intro types.Value) error {
	for _, j := range idx {
		switch {
		case j == absentRow:
			dst.Append(absent)
			continue
		case j < 0:
			dst.Append(intro)
			continue
		}
		v, r := srcs[0], int(j)
		if j&srcB != 0 {
			v, r = srcs[1], int(j&^srcB)
		}
		if v == nil {
			dst.Append(intro)
			continue
		}
		x := v.Get(r)
		if x.Type() != dst.Type() {
			var err error
			if x, err = types.Cast(x, dst.Type()); err != nil {
				return err
			}
		}
		dst.Append(x)
	}
	return nil
}

// keyDecoder appends the ORDER BY columns a read wants straight from sort
// keys into output vectors. STRING and BYTES are unescaped into a reused
// buffer (types.DecodeKey allocates a copy per value); other kinds decode
// to a Value on the stack.
type keyDecoder struct {
	types []types.Type
	// out[k] is the output column of ORDER BY column k, nil when not read.
	out []*types.Vector
	buf []byte
}

// decode appends the wanted key columns of one sort key.
func (kd *keyDecoder) decode(key []byte) error {
	for k, kt := range kd.types {
		if len(key) == 0 {
			return fmt.Errorf("%w: short sort key", types.ErrCorrupt)
		}
		dst := kd.out[k]
		if kt.Kind.Class() == types.ClassVarlen && key[0] == 0x01 {
			body, rest, ok := unescapeKey(kd.buf[:0], key[1:])
			if !ok {
				return fmt.Errorf("%w: unterminated %s key", types.ErrCorrupt, kt)
			}
			kd.buf = body
			if dst != nil {
				dst.AppendBytes(body)
			}
			key = rest
			continue
		}
		v, rest, err := types.DecodeKey(kt, key)
		if err != nil {
			return err
		}
		key = rest
		if dst == nil {
			continue
		}
		if v.Type() != dst.Type() {
			if v, err = types.Cast(v, dst.Type()); err != nil {
				return err
			}
		}
		dst.Append(v)
	}
	return nil
}

// unescapeKey appends the body of an escaped key string (0x00 written as
// 0x00 0xff, ended by 0x00 0x01: types.AppendKey) to out.
func unescapeKey(out, b []byte) (body, rest []byte, ok bool) {
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		if i+1 >= len(b) {
			return nil, nil, false
		}
		switch b[i+1] {
		case 0x01:
			return append(out, b[:i]...), b[i+2:], true
		case 0xff:
			out = append(out, b[:i+1]...)
			b = b[i+2:]
			i = -1
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}
