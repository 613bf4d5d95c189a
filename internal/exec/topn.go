package exec

import (
	"slices"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// topNSink keeps the best n = Count+Offset rows of its input in a max-heap
// (the worst kept row on top): a row not better than the top is dropped
// without being copied, a better one replaces it. Kept rows live in a
// buffer compacted when dead rows pile up, so memory is O(n), not O(input).
// Buffer indices grow in input order, so (keys, index) orders ties as the
// stable sort would.
type topNSink struct {
	x    *plan.TopN
	n    int
	out  sink
	r    *runner
	c    *expr.Ctx
	rows *types.Batch // kept (and dead) rows
	kv   *types.Batch // their sort keys
	heap []int        // indices into rows
	bk   []*types.Vector
	// compact's reused state: the sorted live indices and the buffers the
	// live rows are gathered into.
	live               []int
	spareRows, spareKV *types.Batch
}

func (r *runner) buildTopN(x *plan.TopN, out sink) (func() error, error) {
	keys := make([]expr.Expr, len(x.Keys))
	for i, k := range x.Keys {
		keys[i] = k.E
	}
	if err := resolve(x.In, keys...); err != nil {
		return nil, err
	}
	return r.build(x.In, &topNSink{x: x, n: int(x.Count + x.Offset), out: out, r: r, c: r.newCtx()})
}

// cmpKeys orders row a of the key vectors va against row b of vb.
func (s *topNSink) cmpKeys(va []*types.Vector, a int, vb []*types.Vector, b int) int {
	for i, k := range s.x.Keys {
		x, y := va[i], vb[i]
		an, bn := x.IsNull(a), y.IsNull(b)
		switch {
		case an && bn:
			continue
		case an || bn:
			if an == k.NullsFirst {
				return -1
			}
			return 1
		}
		c := compareAcross(x, a, y, b)
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// compareAcross compares non-NULL row a of x with row b of y (one type).
func compareAcross(x *types.Vector, a int, y *types.Vector, b int) int {
	switch x.Type().Kind.Class() {
	case types.ClassInt64:
		p, q := x.Int64s()[a], y.Int64s()[b]
		return cmp3(p < q, p > q)
	case types.ClassUint64:
		p, q := x.Uint64s()[a], y.Uint64s()[b]
		return cmp3(p < q, p > q)
	case types.ClassFloat64:
		return expr.CompareFloat(x.Float64s()[a], y.Float64s()[b])
	case types.ClassVarlen:
		return compareBytes(x.BytesAt(a), y.BytesAt(b))
	}
	return types.Compare(x.Get(a), y.Get(b))
}

// worse reports whether kept row i sorts after kept row j.
func (s *topNSink) worse(i, j int) bool {
	c := s.cmpKeys(s.kv.Cols, i, s.kv.Cols, j)
	return c > 0 || (c == 0 && i > j)
}

func (s *topNSink) up(i int) {
	h := s.heap
	for i > 0 {
		p := (i - 1) / 2
		if !s.worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (s *topNSink) down(i int) {
	h := s.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && s.worse(h[r], h[l]) {
			m = r
		}
		if !s.worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (s *topNSink) push(b *types.Batch) error {
	s.c.Reset()
	s.bk = s.bk[:0]
	for _, k := range s.x.Keys {
		v, err := k.E.Eval(s.c, b)
		if err != nil {
			return err
		}
		s.bk = append(s.bk, v)
	}
	if s.rows == nil {
		s.rows = emptyLike(b)
		s.kv = &types.Batch{}
		for _, v := range s.bk {
			s.kv.Cols = append(s.kv.Cols, types.NewVector(v.Type(), s.n))
		}
	}
	for i := 0; i < b.Rows; i++ {
		full := len(s.heap) == s.n
		// A row equal to the top comes later in the input, so it is worse.
		if full && s.cmpKeys(s.bk, i, s.kv.Cols, s.heap[0]) >= 0 {
			continue
		}
		for j, c := range b.Cols {
			s.rows.Cols[j].AppendFrom(c, i)
		}
		for j, v := range s.bk {
			s.kv.Cols[j].AppendFrom(v, i)
		}
		idx := s.rows.Rows
		s.rows.Rows++
		s.kv.Rows++
		if full {
			s.heap[0] = idx
			s.down(0)
		} else {
			s.heap = append(s.heap, idx)
			s.up(len(s.heap) - 1)
			if err := s.r.mem.grow(int64(len(b.Cols)+len(s.bk)) * 16); err != nil {
				return err
			}
		}
	}
	if s.rows.Rows > 2*s.n+1024 {
		s.compact()
	}
	return nil
}

// compact drops the dead rows of the buffer, keeping the live ones in
// input order (so ties still resolve by index) and the heap valid. It
// gathers into the spare buffers and swaps, so compactions reuse memory.
func (s *topNSink) compact() {
	s.live = append(s.live[:0], s.heap...)
	slices.Sort(s.live)
	s.spareRows = expr.Gather(s.spareRows, s.rows, s.live)
	s.spareKV = expr.Gather(s.spareKV, s.kv, s.live)
	s.rows, s.spareRows = s.spareRows, s.rows
	s.kv, s.spareKV = s.spareKV, s.kv
	for i, v := range s.heap {
		s.heap[i], _ = slices.BinarySearch(s.live, v)
	}
}

func (s *topNSink) finish() error {
	if s.rows == nil || len(s.heap) == 0 {
		return s.out.finish()
	}
	idx := slices.Clone(s.heap)
	slices.SortFunc(idx, func(a, b int) int {
		if c := s.cmpKeys(s.kv.Cols, a, s.kv.Cols, b); c != 0 {
			return c
		}
		return a - b
	})
	idx = idx[min(int(s.x.Offset), len(idx)):]
	const chunk = 1024
	for from := 0; from < len(idx); from += chunk {
		to := min(from+chunk, len(idx))
		if err := s.out.push(expr.Gather(nil, s.rows, idx[from:to])); err != nil {
			return err
		}
	}
	return s.out.finish()
}
