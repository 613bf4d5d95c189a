package exec

import (
	"math"
	"slices"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// The Window operator buffers its input (memory counted like a sort's),
// then, per group of functions sharing PARTITION BY and ORDER BY, sorts
// row positions by partition keys and order keys, finds the partitions
// and the peer groups (rows equal on every order key), and computes each
// function over the sorted positions into a result vector. Rows leave in
// the last group's order, each result gathered to it.
//
// Aggregates over frames are incremental: a frame whose start stays put
// (UNBOUNDED PRECEDING, the default) only adds the rows its end passes,
// and a sliding frame of count, or of sum and avg over exact types,
// subtracts the rows its start leaves; other aggregates over a sliding
// frame fold the frame again. A frame equal to the previous row's (every
// peer of the default frame) reuses its value.

// windowSink is the Window operator's input side.
type windowSink struct {
	n      *plan.Window
	out    sink
	r      *runner
	c      *expr.Ctx
	rows   *types.Batch
	chunks []*types.Batch // the input, copied, until finish
	total  int            // rows in chunks
	groups []*winGroup
	// args[j] are function j's argument vectors over all rows.
	args [][]*types.Vector
}

// winGroup is the functions that share one window (partition and order).
type winGroup struct {
	funcs []int
	part  []expr.Expr
	order []plan.SortKey
	pv    []*types.Vector // partition key values over all rows
	ov    []*types.Vector // order key values over all rows
	perm  []int           // row of each sorted position
	// partStart and peerStart hold the start positions of partitions and
	// peer groups, each with the row count appended; peer[p] is the peer
	// group of position p.
	partStart []int
	peerStart []int
	peer      []int
}

func (r *runner) buildWindow(x *plan.Window, out sink) (func() error, error) {
	s := &windowSink{n: x, out: out, r: r, c: r.newCtx(), args: make([][]*types.Vector, len(x.Funcs))}
	var es []expr.Expr
	for i := range x.Funcs {
		f := &x.Funcs[i]
		es = append(es, f.Args...)
		es = append(es, f.Partition...)
		for _, k := range f.Order {
			es = append(es, k.E)
		}
		es = append(es, f.Frame.Start.Offset, f.Frame.End.Offset)
		var g *winGroup
		for _, h := range s.groups {
			if plan.SameWindow(&x.Funcs[h.funcs[0]], f) {
				g = h
				break
			}
		}
		if g == nil {
			g = &winGroup{part: f.Partition, order: f.Order}
			s.groups = append(s.groups, g)
		}
		g.funcs = append(g.funcs, i)
	}
	if err := resolve(x.In, es...); err != nil {
		return nil, err
	}
	return r.build(x.In, s)
}

// appendEval evaluates e over b and appends its values to *dst, made
// with room for every buffered row.
func (s *windowSink) appendEval(dst **types.Vector, e expr.Expr, b *types.Batch) error {
	v, err := e.Eval(s.c, b)
	if err != nil {
		return err
	}
	if *dst == nil {
		*dst = types.NewVector(v.Type(), s.total)
	}
	expr.AppendVector(*dst, v, 0, b.Rows)
	return nil
}

// push keeps a copy of b: the input is concatenated only at finish, once
// its size is known, so that no vector grows (and is copied again) row
// batch by row batch.
func (s *windowSink) push(b *types.Batch) error {
	if b.Rows == 0 {
		return nil
	}
	if err := s.r.mem.grow(batchBytes(b)*2 + int64(b.Rows)*int64(16*len(s.groups)+8*len(s.n.Funcs))); err != nil {
		return err
	}
	c := emptyLike(b)
	appendBatch(c, b)
	s.chunks = append(s.chunks, c)
	s.total += b.Rows
	return nil
}

// load concatenates the buffered batches into s.rows and evaluates every
// function's keys and arguments over them.
func (s *windowSink) load() error {
	first := s.chunks[0]
	ts := make([]types.Type, len(first.Cols))
	for i, c := range first.Cols {
		ts[i] = c.Type()
	}
	s.rows = types.NewBatch(ts, s.total)
	for _, g := range s.groups {
		g.pv = make([]*types.Vector, len(g.part))
		g.ov = make([]*types.Vector, len(g.order))
	}
	for j := range s.n.Funcs {
		s.args[j] = make([]*types.Vector, len(s.n.Funcs[j].Args))
	}
	for ci, b := range s.chunks {
		s.chunks[ci] = nil // each chunk is garbage once copied
		s.c.Reset()
		appendBatch(s.rows, b)
		for _, g := range s.groups {
			for i, e := range g.part {
				if err := s.appendEval(&g.pv[i], e, b); err != nil {
					return err
				}
			}
			for i, k := range g.order {
				if err := s.appendEval(&g.ov[i], k.E, b); err != nil {
					return err
				}
			}
		}
		for j := range s.n.Funcs {
			for i, e := range s.n.Funcs[j].Args {
				if err := s.appendEval(&s.args[j][i], e, b); err != nil {
					return err
				}
			}
		}
	}
	s.chunks = nil
	return nil
}

// sameKey reports whether rows a and b of v are equal, NULLs equal.
func sameKey(v *types.Vector, a, b int) bool {
	an, bn := v.IsNull(a), v.IsNull(b)
	if an || bn {
		return an == bn
	}
	return compareRows(v, a, b) == 0
}

// sortCol is one sort key of a window with its typed values at hand, so
// that the comparisons of the sort read slices instead of going through
// Vector.Get.
type sortCol struct {
	v                *types.Vector
	nulls            bool
	class            types.Class
	i64              []int64
	u64              []uint64
	desc, nullsFirst bool
}

func newSortCol(v *types.Vector, desc, nullsFirst bool) sortCol {
	c := sortCol{v: v, nulls: v.HasNulls(), class: v.Type().Kind.Class(), desc: desc, nullsFirst: nullsFirst}
	switch c.class {
	case types.ClassInt64:
		c.i64 = v.Int64s()
	case types.ClassUint64:
		c.u64 = v.Uint64s()
	}
	return c
}

// cmp compares rows a and b by this key.
func (c *sortCol) cmp(a, b int) int {
	if c.nulls {
		an, bn := c.v.IsNull(a), c.v.IsNull(b)
		switch {
		case an && bn:
			return 0
		case an || bn:
			if an == c.nullsFirst {
				return -1
			}
			return 1
		}
	}
	var r int
	switch c.class {
	case types.ClassInt64:
		r = cmp3(c.i64[a] < c.i64[b], c.i64[a] > c.i64[b])
	case types.ClassUint64:
		r = cmp3(c.u64[a] < c.u64[b], c.u64[a] > c.u64[b])
	default:
		r = compareRows(c.v, a, b)
	}
	if c.desc {
		return -r
	}
	return r
}

// intKey is a row's sort key when the window sorts by at most two
// integer keys without NULLs: the values (bitwise negated for DESC, which
// reverses their order without overflow) next to the row, so the sort
// compares adjacent memory instead of reaching into the vectors.
type intKey struct {
	a, b int64
	row  int
}

// sortInt64Keys sorts perm by keys when they are one or two NULL-free
// INT64-class columns, and reports whether it did.
func sortInt64Keys(perm []int, keys []sortCol) bool {
	if len(keys) > 2 {
		return false
	}
	for i := range keys {
		if keys[i].class != types.ClassInt64 || keys[i].nulls {
			return false
		}
	}
	ks := make([]intKey, len(perm))
	for i := range ks {
		ks[i].row = i
	}
	for j := range keys {
		xs := keys[j].i64
		for i := range ks {
			x := xs[i]
			if keys[j].desc {
				x = ^x
			}
			if j == 0 {
				ks[i].a = x
			} else {
				ks[i].b = x
			}
		}
	}
	slices.SortFunc(ks, func(x, y intKey) int {
		switch {
		case x.a != y.a:
			return cmp3(x.a < y.a, x.a > y.a)
		case x.b != y.b:
			return cmp3(x.b < y.b, x.b > y.b)
		}
		return cmp3(x.row < y.row, x.row > y.row)
	})
	for i := range ks {
		perm[i] = ks[i].row
	}
	return true
}

// sort orders the group's positions and finds its partitions and peer
// groups. Ties keep their input order (the row number breaks them), so a
// window's result does not depend on the sort algorithm.
func (g *winGroup) sort(n int) {
	g.perm = make([]int, n)
	for i := range g.perm {
		g.perm[i] = i
	}
	var keys []sortCol
	for _, v := range g.pv {
		keys = append(keys, newSortCol(v, false, false))
	}
	for i, k := range g.order {
		keys = append(keys, newSortCol(g.ov[i], k.Desc, k.NullsFirst))
	}
	if len(keys) > 0 && !sortInt64Keys(g.perm, keys) {
		slices.SortFunc(g.perm, func(a, b int) int {
			for i := range keys {
				if c := keys[i].cmp(a, b); c != 0 {
					return c
				}
			}
			return cmp3(a < b, a > b)
		})
	}
	g.partStart = g.partStart[:0]
	g.peerStart = g.peerStart[:0]
	g.peer = make([]int, n)
	for p := range n {
		newPart := p == 0
		if !newPart {
			a, b := g.perm[p-1], g.perm[p]
			for _, v := range g.pv {
				if !sameKey(v, a, b) {
					newPart = true
					break
				}
			}
		}
		newPeer := newPart
		if !newPeer {
			a, b := g.perm[p-1], g.perm[p]
			for _, v := range g.ov {
				if !sameKey(v, a, b) {
					newPeer = true
					break
				}
			}
		}
		if newPart {
			g.partStart = append(g.partStart, p)
		}
		if newPeer {
			g.peerStart = append(g.peerStart, p)
		}
		g.peer[p] = len(g.peerStart) - 1
	}
	g.partStart = append(g.partStart, n)
	g.peerStart = append(g.peerStart, n)
}

func (s *windowSink) finish() error {
	if len(s.chunks) == 0 {
		return s.out.finish()
	}
	if err := s.load(); err != nil {
		return err
	}
	n := s.rows.Rows
	// res[j] is function j's result at each sorted position of its group.
	res := make([]*types.Vector, len(s.n.Funcs))
	for _, g := range s.groups {
		g.sort(n)
		for _, j := range g.funcs {
			f := &s.n.Funcs[j]
			v := types.NewVector(f.T, n)
			var err error
			if f.Agg {
				err = s.aggregate(g, f, s.args[j], v)
			} else {
				err = s.compute(g, f, s.args[j], v)
			}
			if err != nil {
				return err
			}
			res[j] = v
		}
	}
	last := s.groups[len(s.groups)-1]
	// at[j][k] is the position in function j's group of the row at
	// position k of the last group.
	inv := make(map[*winGroup][]int, len(s.groups))
	for _, g := range s.groups {
		if g == last {
			continue
		}
		pos := make([]int, n)
		for p, row := range g.perm {
			pos[row] = p
		}
		at := make([]int, n)
		for k, row := range last.perm {
			at[k] = pos[row]
		}
		inv[g] = at
	}
	groupOf := make([]*winGroup, len(s.n.Funcs))
	for _, g := range s.groups {
		for _, j := range g.funcs {
			groupOf[j] = g
		}
	}
	const chunk = 1024
	seq := make([]int, 0, chunk)
	var sel []int
	for from := 0; from < n; from += chunk {
		to := min(from+chunk, n)
		b := expr.Gather(nil, s.rows, last.perm[from:to])
		seq = seq[:0]
		for k := from; k < to; k++ {
			seq = append(seq, k)
		}
		for j, v := range res {
			dst := types.NewVector(v.Type(), to-from)
			sel = seq
			if at, ok := inv[groupOf[j]]; ok {
				sel = at[from:to]
			}
			expr.GatherVector(dst, v, sel)
			b.Cols = append(b.Cols, dst)
		}
		if err := s.out.push(b); err != nil {
			return err
		}
	}
	return s.out.finish()
}

// errNtile and errNthValue are PostgreSQL's errors for a bucket count or
// row number that is not positive (invalid_argument_for_ntile_function,
// invalid_argument_for_nth_value_function).
func errNtile() error {
	return sqlerr.New("2201W", "argument of ntile must be greater than zero")
}

func errNthValue() error {
	return sqlerr.New("2201W", "argument of nth_value must be greater than zero")
}

// compute fills out with a ranking or value function at every sorted
// position of g.
func (s *windowSink) compute(g *winGroup, f *plan.WindowFunc, args []*types.Vector, out *types.Vector) error {
	var fr *frames
	switch f.Fn {
	case "first_value", "last_value", "nth_value":
		var err error
		if fr, err = s.newFrames(g, f); err != nil {
			return err
		}
	}
	for pi := 0; pi+1 < len(g.partStart); pi++ {
		ps, pe := g.partStart[pi], g.partStart[pi+1]
		rows := pe - ps
		switch f.Fn {
		case "row_number":
			for p := ps; p < pe; p++ {
				out.AppendInt64(int64(p - ps + 1))
			}
		case "rank":
			for p := ps; p < pe; p++ {
				out.AppendInt64(int64(g.peerStart[g.peer[p]] - ps + 1))
			}
		case "dense_rank":
			first := g.peer[ps]
			for p := ps; p < pe; p++ {
				out.AppendInt64(int64(g.peer[p] - first + 1))
			}
		case "percent_rank":
			for p := ps; p < pe; p++ {
				if rows == 1 {
					out.AppendFloat64(0)
					continue
				}
				out.AppendFloat64(float64(g.peerStart[g.peer[p]]-ps) / float64(rows-1))
			}
		case "cume_dist":
			for p := ps; p < pe; p++ {
				out.AppendFloat64(float64(g.peerStart[g.peer[p]+1]-ps) / float64(rows))
			}
		case "ntile":
			// The bucket count is read on the partition's first row, as
			// PostgreSQL does.
			nv := args[0]
			if nv.IsNull(g.perm[ps]) {
				out.AppendNulls(rows)
				continue
			}
			buckets := nv.Int64s()[g.perm[ps]]
			if buckets <= 0 {
				return errNtile()
			}
			size, extra := int64(rows)/buckets, int64(rows)%buckets
			if size == 0 {
				// Fewer rows than buckets: one row in each of the first.
				size, extra = 1, 0
			}
			bucket, left := int64(1), size
			if extra > 0 {
				left++
			}
			for p := ps; p < pe; p++ {
				if left == 0 {
					bucket++
					left = size
					if bucket <= extra {
						left++
					}
				}
				out.AppendInt64(bucket) // INT32 lives in the INT64 class
				left--
			}
		case "lag", "lead":
			v := args[0]
			for p := ps; p < pe; p++ {
				row := g.perm[p]
				off := int64(1)
				if len(args) > 1 {
					if args[1].IsNull(row) {
						out.AppendNull()
						continue
					}
					off = args[1].Int64s()[row]
				}
				if f.Fn == "lead" {
					off = -max(off, -math.MaxInt64)
				}
				t := addSat(int64(p), -max(off, -math.MaxInt64))
				switch {
				case t >= int64(ps) && t < int64(pe):
					out.AppendFrom(v, g.perm[t])
				case len(args) > 2:
					out.AppendFrom(args[2], row)
				default:
					out.AppendNull()
				}
			}
		case "first_value", "last_value", "nth_value":
			v := args[0]
			for p := ps; p < pe; p++ {
				fs, fe, err := fr.at(p, ps, pe)
				if err != nil {
					return err
				}
				sg := segs{{fs, fe}}
				if f.Frame.Exclude != plan.ExcludeNone {
					sg = fr.segments(p, fs, fe)
				}
				t := sg.nth(0)
				switch f.Fn {
				case "last_value":
					t = sg.last()
				case "nth_value":
					row := g.perm[p]
					if args[1].IsNull(row) {
						out.AppendNull()
						continue
					}
					k := args[1].Int64s()[row]
					if k <= 0 {
						return errNthValue()
					}
					t = -1
					if k <= int64(fe-fs) {
						t = sg.nth(int(k) - 1)
					}
				}
				if t < 0 {
					out.AppendNull()
					continue
				}
				out.AppendFrom(v, g.perm[t])
			}
		}
	}
	return nil
}
