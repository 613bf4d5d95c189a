package exec

import (
	"slices"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// sortSink buffers its input, orders it by the keys (NULLS LAST ascending
// and FIRST descending unless told otherwise) and emits it.
type sortSink struct {
	keys []plan.SortKey
	out  sink
	r    *runner
	c    *expr.Ctx
	rows *types.Batch
	kv   *types.Batch
}

func (s *sortSink) push(b *types.Batch) error {
	if err := s.r.mem.grow(batchBytes(b) * 2); err != nil {
		return err
	}
	s.c.Reset()
	if s.rows == nil {
		s.rows = emptyLike(b)
		s.kv = &types.Batch{}
	}
	appendBatch(s.rows, b)
	for i, k := range s.keys {
		v, err := k.E.Eval(s.c, b)
		if err != nil {
			return err
		}
		if len(s.kv.Cols) <= i {
			s.kv.Cols = append(s.kv.Cols, types.NewVector(v.Type(), b.Rows))
		}
		expr.AppendVector(s.kv.Cols[i], v, 0, b.Rows)
	}
	s.kv.Rows += b.Rows
	return nil
}

func emptyLike(b *types.Batch) *types.Batch {
	ts := make([]types.Type, len(b.Cols))
	for i, c := range b.Cols {
		ts[i] = c.Type()
	}
	return types.NewBatch(ts, b.Rows)
}

func (s *sortSink) finish() error {
	if s.rows == nil {
		return s.out.finish()
	}
	n := s.rows.Rows
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		for i, k := range s.keys {
			v := s.kv.Cols[i]
			an, bn := v.IsNull(a), v.IsNull(b)
			var c int
			switch {
			case an && bn:
				continue
			case an || bn:
				c = 1
				if an == k.NullsFirst {
					c = -1
				}
				return c
			}
			c = compareRows(v, a, b)
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	const chunk = 1024
	for from := 0; from < n; from += chunk {
		to := min(from+chunk, n)
		if err := s.out.push(expr.Gather(nil, s.rows, idx[from:to])); err != nil {
			return err
		}
	}
	return s.out.finish()
}

// compareRows compares two non-NULL rows of one vector.
func compareRows(v *types.Vector, a, b int) int {
	switch v.Type().Kind.Class() {
	case types.ClassInt64:
		x, y := v.Int64s()[a], v.Int64s()[b]
		return cmp3(x < y, x > y)
	case types.ClassUint64:
		x, y := v.Uint64s()[a], v.Uint64s()[b]
		return cmp3(x < y, x > y)
	case types.ClassFloat64:
		return expr.CompareFloat(v.Float64s()[a], v.Float64s()[b])
	case types.ClassVarlen:
		return compareBytes(v.BytesAt(a), v.BytesAt(b))
	}
	return types.Compare(v.Get(a), v.Get(b))
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

func compareBytes(a, b []byte) int { return slices.Compare(a, b) }

// distinctSink passes each distinct row once (NULLs equal).
type distinctSink struct {
	out  sink
	r    *runner
	seen map[string]struct{}
	keys [][]byte
	sel  []int
	// on are the positions of the DISTINCT ON columns; nil keys on every
	// column. The first row of each key wins: under DISTINCT ON the input
	// arrives in the ORDER BY's order.
	on   []int
	cols []*types.Vector
}

func (d *distinctSink) push(b *types.Batch) error {
	cols := b.Cols
	if d.on != nil {
		d.cols = d.cols[:0]
		for _, i := range d.on {
			d.cols = append(d.cols, b.Cols[i])
		}
		cols = d.cols
	}
	d.keys = rowKeys(d.keys, cols, b.Rows)
	d.sel = d.sel[:0]
	for i, k := range d.keys {
		if _, ok := d.seen[string(k)]; ok {
			continue
		}
		d.seen[string(k)] = struct{}{}
		if err := d.r.mem.grow(int64(len(k)) + 32); err != nil {
			return err
		}
		d.sel = append(d.sel, i)
	}
	if len(d.sel) == 0 {
		return nil
	}
	return d.out.push(expr.Gather(nil, b, d.sel))
}
func (d *distinctSink) finish() error { return d.out.finish() }

// rowKeys encodes each row of cols into keys (reused).
func rowKeys(keys [][]byte, cols []*types.Vector, n int) [][]byte {
	if cap(keys) < n {
		keys = make([][]byte, n)
	}
	keys = keys[:n]
	for i := range keys {
		keys[i] = keys[i][:0]
	}
	for _, c := range cols {
		keys = expr.EncodeKeys(keys, c, n)
	}
	return keys
}
