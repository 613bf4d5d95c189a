package part

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// Ordering values rebuilt from the table columns (format 2).
//
// A row's Order is the length-prefixed concatenation of the memcmp keys
// (types.AppendKeyAt) of its group's VALID BY and REVISION BY values,
// which the row also holds in its table columns. In history parts, which
// hold most rows of a settled versioned table, _order was 2.3 bytes of a
// row's ~19 (docs/benchmarks.md, "Bytes on disk, second pass"), and in
// delta parts, most rows right after an ingest, 3.4 of ~25. So when
// the caller of Write names each group's ordering columns
// (Meta.OrderFrom) and every row's Order is exactly their encoding, Write
// stores _order empty and lists the columns in the metadata; every read
// that asks for FixOrder then decodes those columns (if the read does not
// already) and encodes Order from them. Write compares every row before it
// drops a byte, so a part whose rows do not match (values written under a
// type since widened, R8.1, or ordering columns since changed) keeps its
// _order as before: the rebuilt Order is always the one written.

// GroupOrders returns, for Meta.OrderFrom, each ordered group of t with
// its VALID BY and REVISION BY columns, leaving out a group whose ordering
// columns are not all held (has reports whether the part holds a column;
// one dropped, say): Write then finds that group's rows unmatched and
// stores _order as it is.
func GroupOrders(t *catalog.Table, has func(catalog.ColumnID) bool) []GroupOrder {
	var out []GroupOrder
	for _, g := range t.Groups {
		cols := append(slices.Clone(g.ValidBy), g.RevisionBy...)
		if len(cols) == 0 || g.ID > 0xFFFF || slices.ContainsFunc(cols, func(id catalog.ColumnID) bool { return !has(id) }) {
			continue
		}
		out = append(out, GroupOrder{Group: uint16(g.ID), Cols: cols})
	}
	return out
}

// orderSource is a part's Meta.OrderFrom as the reader uses it.
type orderSource struct {
	// ids are the distinct ordering columns of all groups, the columns a
	// read decodes to rebuild Order.
	ids []catalog.ColumnID
	// byGroup[g] lists group g's ordering columns as indexes into ids;
	// empty for a group with none (its rows' Order is empty).
	byGroup [][]int
}

// newOrderSource indexes a validated OrderFrom (decodeMeta checked that
// each column is held by the part and each group listed once).
func newOrderSource(from []GroupOrder) *orderSource {
	if len(from) == 0 {
		return nil
	}
	o := &orderSource{}
	for _, g := range from {
		for int(g.Group) >= len(o.byGroup) {
			o.byGroup = append(o.byGroup, nil)
		}
		idx := make([]int, len(g.Cols))
		for i, id := range g.Cols {
			k := slices.Index(o.ids, id)
			if k < 0 {
				k = len(o.ids)
				o.ids = append(o.ids, id)
			}
			idx[i] = k
		}
		o.byGroup[g.Group] = idx
	}
	return o
}

// appendOrder appends the Order of row i: empty for a delete marker and a
// group without ordering columns, otherwise uvarint(len(key)) and key for
// each ordering column, as the memtable encodes it. vecs holds the
// columns of o.ids.
func (o *orderSource) appendOrder(dst []byte, vecs []*types.Vector, group uint16, tomb bool, i int) []byte {
	if tomb || int(group) >= len(o.byGroup) {
		return dst
	}
	for _, k := range o.byGroup[group] {
		// One byte of length prefix fits every key shorter than 128
		// bytes; a longer one moves its key up by the extra bytes.
		p := len(dst)
		dst = types.AppendKeyAt(append(dst, 0), vecs[k], i)
		var lb [binary.MaxVarintLen64]byte
		m := binary.PutUvarint(lb[:], uint64(len(dst)-p-1))
		if m > 1 {
			dst = slices.Insert(dst, p, lb[:m-1]...)
		}
		dst[p+m-1] = lb[m-1]
	}
	return dst
}

// orderFromRows returns meta.OrderFrom if Write may store d's _order
// empty: a history or delta part whose every row's Order is the encoding
// of the listed columns, all of which the part holds. Otherwise it
// returns nil and _order is stored as given. Delta parts hold most rows
// right after an ingest (_order was 3.4 of a delta row's 24.6 bytes at
// bench/ medium). Current parts keep theirs: a current read that
// resolves the run with newer deltas (the first one after an ingest)
// reads it, and would decode three ordering columns it does not ask for
// to rebuild it.
func orderFromRows(d *Data, meta *Meta) []GroupOrder {
	if meta.Kind != KindHistory && meta.Kind != KindDelta || len(meta.OrderFrom) == 0 || d.Order == nil || d.Order.Len() == 0 {
		return nil
	}
	seen := make(map[uint16]bool, len(meta.OrderFrom))
	for _, g := range meta.OrderFrom {
		if len(g.Cols) == 0 || seen[g.Group] {
			return nil
		}
		seen[g.Group] = true
		for _, id := range g.Cols {
			if meta.Column(id) < 0 {
				return nil
			}
		}
	}
	o := newOrderSource(meta.OrderFrom)
	vecs := make([]*types.Vector, len(o.ids))
	for k, id := range o.ids {
		vecs[k] = d.Cols[meta.Column(id)]
	}
	var buf []byte
	for i := range d.Rows {
		buf = o.appendOrder(buf[:0], vecs, at(d.Group, i), at(d.Tomb, i), i)
		if !bytes.Equal(buf, d.Order.BytesAt(i)) {
			return nil
		}
	}
	return meta.OrderFrom
}

// readOrder finishes a read of a part with OrderFrom that asked for
// FixOrder: read (the read's own method, for these rows) was called
// without FixOrder and filled dst; readOrder rebuilds dst.Order from the
// groups, delete markers and ordering columns, taken from dst where the
// read asked for them and read into dst.orderSrc where it did not.
func (r *Reader) readOrder(dst *Data, fixed Fixed, cols []catalog.ColumnID, read func(Fixed, []catalog.ColumnID, *Data) error) error {
	o := r.order
	vecs := dst.orderVecs[:0]
	missing := dst.orderMiss[:0]
	for _, id := range o.ids {
		var v *types.Vector
		if j := slices.Index(cols, id); j >= 0 {
			v = dst.Cols[j]
		} else {
			missing = append(missing, id)
		}
		vecs = append(vecs, v)
	}
	dst.orderVecs, dst.orderMiss = vecs, missing
	// Only what the read did not ask for is read on top: the groups and
	// delete markers the read took (a resolving scan takes both) are not
	// decoded twice.
	group, tomb := dst.Group, dst.Tomb
	if need := (FixGroup | FixTomb) &^ fixed; len(missing) > 0 || need != 0 {
		if dst.orderSrc == nil {
			dst.orderSrc = &Data{}
		}
		src := dst.orderSrc
		if err := read(need, missing, src); err != nil {
			return err
		}
		if src.Rows != dst.Rows {
			return r.corrupt("ordering columns hold %d rows, want %d", src.Rows, dst.Rows)
		}
		if need&FixGroup != 0 {
			group = src.Group
		}
		if need&FixTomb != 0 {
			tomb = src.Tomb
		}
		j := 0
		for k := range vecs {
			if vecs[k] == nil && j < len(src.Cols) {
				vecs[k] = src.Cols[j]
				j++
			}
		}
	}
	n := dst.Rows
	if len(group) != n || len(tomb) != n {
		return r.corrupt("ordering columns hold %d groups and %d delete markers, want %d", len(group), len(tomb), n)
	}
	for _, v := range vecs {
		if v == nil || v.Len() != n {
			return r.corrupt("an ordering column does not hold %d rows", n)
		}
	}
	buf := dst.orderBuf[:0]
	for i := range n {
		buf = o.appendOrder(buf[:0], vecs, group[i], tomb[i], i)
		dst.Order.AppendBytes(buf)
	}
	dst.orderBuf = buf
	return nil
}
