package plan

import (
	"bytes"
	"slices"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// keyRanges derives a storage.KeyRange from a scan's filter: equalities on
// a prefix of the table's ORDER BY columns, then at most one range on the
// next column. The filter stays on the scan and is re-checked (R10.2); the
// range only lets storage skip parts and blocks that cannot match (R11.2).
func keyRanges(n Node, env *Env) Node {
	for _, in := range n.Inputs() {
		keyRanges(in, env)
	}
	switch s := n.(type) {
	case *Scan:
		key, rs, text := rangesOf(s.Table, s.Cols, s.ColIDs, s.Filter)
		s.Key, s.Ranges, s.RangeText = key, rs, text
	case *Versions:
		// versions(t) reads every version of the keys in range; a full
		// key is the one-key range (there is no Lookup of history).
		key, rs, _ := rangesOf(s.Table, s.Cols, s.ColIDs, s.Filter)
		if key != nil {
			rs = []storage.KeyRange{oneKeyRange(s.Table, key)}
		}
		s.Ranges = rs
	}
	return n
}

// oneKeyRange is the range of the one key key, given in the order of
// t.Key (versions(t) of a full key; Template builds it again for new
// values). Storage sorts by t.OrderBy, which a keyed table may order
// differently from its key, so the values are encoded in that order.
func oneKeyRange(t *catalog.Table, key []types.Value) storage.KeyRange {
	var enc []byte
	for _, id := range t.OrderBy {
		enc = types.AppendKey(enc, key[slices.Index(t.Key, id)])
	}
	return storage.KeyRange{Lo: enc, Hi: prefixEnd(enc)}
}

// rangesOf derives from filter the full key it fixes (key), or else the
// key-prefix range it bounds, with its text for EXPLAIN.
func rangesOf(t *catalog.Table, cols []ColRef, ids []catalog.ColumnID, filter expr.Expr) (key []types.Value, rs []storage.KeyRange, text []string) {
	if filter == nil || len(t.OrderBy) == 0 {
		return nil, nil, nil
	}
	colOf := map[int]catalog.ColumnID{}
	for i, c := range cols {
		colOf[c.ID] = ids[i]
	}
	type bound struct {
		op expr.CmpOp
		v  types.Value
	}
	bounds := map[catalog.ColumnID][]bound{}
	// ins holds, per column, the values of a `col IN (constants)`
	// conjunct, each exactly a value of the column's type.
	ins := map[catalog.ColumnID][]types.Value{}
	for _, c := range conjuncts(filter) {
		if in, ok := c.(*expr.InList); ok && !in.Not {
			if col, ok := keyCol(in.X); ok {
				if id, ok := colOf[col.ID]; ok {
					if vals, ok := exactValues(in.Vals, col.T); ok && len(vals) <= maxInRanges {
						ins[id] = vals
					}
				}
			}
			continue
		}
		cmp, ok := c.(*expr.Cmp)
		if !ok || cmp.Op == expr.NE {
			continue
		}
		col, lok := keyCol(cmp.L)
		k, rok := cmp.R.(*expr.Const)
		op := cmp.Op
		if !lok || !rok {
			col, lok = keyCol(cmp.R)
			k, rok = cmp.L.(*expr.Const)
			op = op.Flip()
		}
		if !lok || !rok || k.V.IsNull() {
			continue
		}
		v := k.V
		if col.T != v.Type() {
			// col was widened to compare with a wider constant (a Go int
			// parameter against a UINT16 key column): the comparison is
			// the same on col's own type when the constant is exactly a
			// value of it; otherwise leave it to the filter.
			nv, err := types.Cast(v, col.T)
			if err != nil {
				continue
			}
			if back, err := types.Cast(nv, v.Type()); err != nil || types.Compare(back, v) != 0 {
				continue
			}
			v = nv
		}
		id, ok := colOf[col.ID]
		if !ok {
			continue
		}
		bounds[id] = append(bounds[id], bound{op, v})
	}
	if key := fullKey(t, func(id catalog.ColumnID) (types.Value, bool) {
		for _, b := range bounds[id] {
			if b.op == expr.EQ {
				return b.v, true
			}
		}
		return types.Value{}, false
	}); key != nil {
		return key, nil, nil
	}
	var prefix []byte
	names := map[catalog.ColumnID]string{}
	for _, c := range t.Columns {
		names[c.ID] = c.Name
	}
	var r storage.KeyRange
	for _, id := range t.OrderBy {
		bs := bounds[id]
		eq := -1
		for i, b := range bs {
			if b.op == expr.EQ {
				eq = i
			}
		}
		if eq >= 0 {
			prefix = types.AppendKey(prefix, bs[eq].v)
			text = append(text, names[id]+" = "+(&expr.Const{V: bs[eq].v}).String())
			continue
		}
		if vals := ins[id]; len(vals) > 0 {
			// col IN (a, b, …): one range per value, in key order, so a
			// read of a few keys (WHERE id IN (…), ON CONFLICT's check)
			// skips what cannot hold them instead of scanning it all.
			encs := make([][]byte, len(vals))
			vt := make([]string, len(vals))
			for i, v := range vals {
				encs[i] = types.AppendKey(append([]byte(nil), prefix...), v)
				vt[i] = (&expr.Const{V: v}).String()
			}
			slices.SortFunc(encs, bytes.Compare)
			encs = slices.CompactFunc(encs, bytes.Equal)
			rs := make([]storage.KeyRange, len(encs))
			for i, e := range encs {
				rs[i] = storage.KeyRange{Lo: e, Hi: prefixEnd(e)}
			}
			text = append(text, names[id]+" IN ("+strings.Join(vt, ", ")+")")
			return nil, rs, text
		}
		for _, b := range bs {
			enc := types.AppendKey(append([]byte(nil), prefix...), b.v)
			switch b.op {
			case expr.GT:
				r.Lo = prefixEnd(enc)
				text = append(text, names[id]+" > "+(&expr.Const{V: b.v}).String())
			case expr.GE:
				r.Lo = enc
				text = append(text, names[id]+" >= "+(&expr.Const{V: b.v}).String())
			case expr.LT:
				r.Hi = enc
				text = append(text, names[id]+" < "+(&expr.Const{V: b.v}).String())
			case expr.LE:
				r.Hi = prefixEnd(enc)
				text = append(text, names[id]+" <= "+(&expr.Const{V: b.v}).String())
			}
		}
		break
	}
	if len(text) == 0 {
		return nil, nil, nil
	}
	if len(prefix) > 0 {
		if r.Lo == nil {
			r.Lo = prefix
		}
		if r.Hi == nil {
			r.Hi = prefixEnd(prefix)
		}
	}
	return nil, []storage.KeyRange{r}, text
}

// maxInRanges is the most values of an IN list that become key ranges:
// a scan tests each row against its ranges one by one, so a longer list
// is left to the filter.
const maxInRanges = 256

// keyCol reads e as a column, looking through a widening integer cast
// that the binder put on the column to compare it with a wider operand.
func keyCol(e expr.Expr) (*expr.Col, bool) {
	if c, ok := e.(*expr.Cast); ok {
		col, ok := c.X.(*expr.Col)
		if ok && col.T.Kind.IsInteger() && c.T.Kind.IsInteger() && types.CanWiden(col.T, c.T) {
			return col, true
		}
		return nil, false
	}
	col, ok := e.(*expr.Col)
	return col, ok
}

// fullKey returns the values of every primary key column of a keyed table,
// in key order, when eq gives each one; nil otherwise. Such a scan reads
// one row through storage's point lookup instead of a range scan.
func fullKey(t *catalog.Table, eq func(catalog.ColumnID) (types.Value, bool)) []types.Value {
	if !t.Mode.Keyed() || len(t.Key) == 0 {
		return nil
	}
	key := make([]types.Value, len(t.Key))
	for i, id := range t.Key {
		v, ok := eq(id)
		if !ok {
			return nil
		}
		key[i] = v
	}
	return key
}

// prefixEnd is the smallest key greater than every key starting with p, or
// nil when there is none.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
