package storage

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// sameValues is the version.Ordering.Same of every group: whether two
// payloads written under different layouts hold the same values, so that
// a write repeating a version made before an ALTER TABLE is still a
// repeat (R3.4 with R8.1). Payloads of one shape compare byte for byte, as
// they always did; across shapes:
//
//   - a column both hold is compared at the wider of its two types (a
//     widening between them: UINT64 → UINT128, FLOAT32 → FLOAT64, a
//     DECIMAL's scale), since the encodings of equal values differ;
//   - a column only one holds that was dropped by the later version's
//     commit at is no value that version has (R8.2), and is not compared;
//     judged at at, not now, so that a DROP COLUMN after both never turns
//     a version kept on arrival into a repeat;
//   - any other column only one holds was added to the group after the
//     other was written (or the other's write left it out), which reads
//     its introduced default (R6.5): the value must be that default.
//
// It decodes both payloads, so it costs allocations, but it runs only
// when two versions tie on every ordering value and their layouts differ.
func sameValues(la any, a []byte, lb any, b []byte, at uint64) bool {
	x, _ := la.(*layout)
	y, _ := lb.(*layout)
	if x == nil || y == nil || x.sameShape(y) {
		return bytes.Equal(a, b)
	}
	t := x.t
	if y.t != nil && (t == nil || y.t.Generation > t.Generation) {
		t = y.t
	}
	xv, errX := x.decode(a)
	yv, errY := y.decode(b)
	if t == nil || errX != nil || errY != nil {
		return bytes.Equal(a, b)
	}
	for i, id := range x.cols {
		if j := y.index(id); j >= 0 {
			if !equalWidened(xv[i], yv[j]) {
				return false
			}
		} else if !introducedIs(t, id, xv[i], at) {
			return false
		}
	}
	for j, id := range y.cols {
		if x.index(id) < 0 && !introducedIs(t, id, yv[j], at) {
			return false
		}
	}
	return true
}

// internLayout returns the layout of l's shape made under l's table that
// an earlier write already uses, or l. Writes of one shape then share one
// *layout, so that a memtable's versions compare their Layouts (==) as
// equal until an ALTER changes the shape: version.Resolve (strata check)
// takes its quadratic path only for a key whose versions span an ALTER,
// and Register and Decide compare bytes without calling sameValues.
// Bounded as the orderings cache is: emptied at maxOrderings entries.
func internLayout(l *layout) *layout {
	var b []byte
	for j, id := range l.cols {
		ty := l.types[j]
		b = binary.AppendUvarint(b, uint64(id))
		b = append(b, byte(ty.Kind), ty.Precision, ty.Scale)
		b = binary.AppendUvarint(b, uint64(ty.Len))
		b = binary.AppendUvarint(b, uint64(len(ty.TZ)))
		b = append(b, ty.TZ...)
	}
	layouts.mu.RLock()
	got := layouts.m[layoutKey{l.t, string(b)}]
	layouts.mu.RUnlock()
	if got != nil {
		return got
	}
	layouts.mu.Lock()
	defer layouts.mu.Unlock()
	if got := layouts.m[layoutKey{l.t, string(b)}]; got != nil {
		return got
	}
	if layouts.m == nil || len(layouts.m) >= maxOrderings {
		layouts.m = map[layoutKey]*layout{}
	}
	layouts.m[layoutKey{l.t, string(b)}] = l
	return l
}

// layouts is internLayout's cache.
var layouts struct {
	mu sync.RWMutex
	m  map[layoutKey]*layout
}

type layoutKey struct {
	t   *catalog.Table
	sig string
}

// sameShape reports whether l and o encode payloads alike: the same
// columns under the same types.
func (l *layout) sameShape(o *layout) bool {
	return slices.Equal(l.cols, o.cols) && slices.Equal(l.types, o.types)
}

// decode returns the values of payload b, one per column of l.
func (l *layout) decode(b []byte) ([]types.Value, error) {
	vs := make([]types.Value, len(l.types))
	for j, st := range l.types {
		var err error
		if vs[j], b, err = types.DecodeBinary(st, b); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// equalWidened reports whether x and y, one column's values under two of
// its types, are the same value: the narrower is cast to the wider and the
// encodings compared, which is what a repeat under one type compares.
func equalWidened(x, y types.Value) bool {
	xt, yt := x.Type(), y.Type()
	var err error
	switch {
	case xt == yt:
	case types.CanWiden(xt, yt):
		x, err = types.Cast(x, yt)
	case types.CanWiden(yt, xt):
		y, err = types.Cast(y, xt)
	default:
		return false
	}
	return err == nil && bytes.Equal(types.AppendBinary(nil, x), types.AppendBinary(nil, y))
}

// introducedIs reports whether v is what a version without column id
// reads for it (its introduced default, NULL when none), or whether the
// column was dropped by commit at (not compared).
func introducedIs(t *catalog.Table, id catalog.ColumnID, v types.Value, at uint64) bool {
	c, ok := t.AnyColumn(id)
	if !ok || c.DroppedCommit != 0 && c.DroppedCommit <= at {
		return true
	}
	d, err := introduced(c, v.Type())
	return err == nil && bytes.Equal(types.AppendBinary(nil, d), types.AppendBinary(nil, v))
}

// introduced returns what a row made before column c existed reads for
// it, as a value of type typ (the column's type, or the one a part stores
// it under): its introduced default (R6.5), NULL when it has none.
func introduced(c *catalog.Column, typ types.Type) (types.Value, error) {
	if c.Introduced == nil || c.Introduced.Null {
		return types.Null(typ), nil
	}
	return types.ParseText(typ, c.Introduced.Value)
}
