package exec

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// buildSink collects the right (build) side of a join.
type buildSink struct {
	r    *runner
	rows *types.Batch
	ts   []types.Type
}

func (s *buildSink) push(b *types.Batch) error {
	if err := s.r.mem.grow(batchBytes(b)); err != nil {
		return err
	}
	appendBatch(s.rows, b)
	return nil
}
func (s *buildSink) finish() error { return nil }

// joinSink probes each left batch against the collected right side: by
// hash on the equality keys, or every pair when there are none (nested
// loop); Cond filters candidate pairs.
type joinSink struct {
	n       *plan.Join
	out     sink
	r       *runner
	build   *buildSink
	c       *expr.Ctx
	table   map[string][]int
	matched []bool
	lw      int
	// pushSemi's reused buffers.
	kv   []*types.Vector
	keys [][]byte
	sel  []int
	buf  *types.Batch
}

func (r *runner) buildJoin(x *plan.Join, out sink) (func() error, error) {
	if err := resolve(x.L, x.LeftKeys...); err != nil {
		return nil, err
	}
	if err := resolve(x.R, x.RightKeys...); err != nil {
		return nil, err
	}
	both := &plan.Join{Kind: plan.JoinInner, L: x.L, R: x.R}
	if err := resolve(both, x.Cond); err != nil {
		return nil, err
	}
	ro := x.R.Output()
	ts := make([]types.Type, len(ro))
	for i, c := range ro {
		ts[i] = c.T
	}
	bs := &buildSink{r: r, rows: types.NewBatch(ts, 1024), ts: ts}
	rb, err := r.build(x.R, bs)
	if err != nil {
		return nil, err
	}
	js := &joinSink{n: x, out: out, r: r, build: bs, c: r.newCtx(), lw: len(x.L.Output())}
	lb, err := r.build(x.L, js)
	if err != nil {
		return nil, err
	}
	return func() error {
		if err := rb(); err != nil {
			return err
		}
		if err := js.prepare(); err != nil {
			return err
		}
		return lb()
	}, nil
}

func (j *joinSink) prepare() error {
	rows := j.build.rows
	j.matched = make([]bool, rows.Rows)
	if len(j.n.RightKeys) == 0 {
		return nil
	}
	j.c.Reset()
	var vs []*types.Vector
	for _, k := range j.n.RightKeys {
		v, err := k.Eval(j.c, rows)
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	keys := rowKeys(nil, vs, rows.Rows)
	j.table = make(map[string][]int, rows.Rows)
	for i, k := range keys {
		null := false
		for _, v := range vs {
			if v.IsNull(i) {
				null = true
			}
		}
		if !null {
			j.table[string(k)] = append(j.table[string(k)], i)
		}
	}
	return nil
}

// pairChunk bounds the candidate pairs one step of a join builds: a left
// batch against a large right side (a nested loop, a key with many
// matches) would otherwise become one batch of rows×matches pairs, held
// at once and uncancellable while it is built and filtered.
const pairChunk = 4096

func (j *joinSink) push(b *types.Batch) error {
	j.c.Reset()
	rows := j.build.rows
	if (j.n.Kind == plan.JoinSemi || j.n.Kind == plan.JoinAnti) && j.n.Cond == nil && len(j.n.LeftKeys) > 0 {
		return j.pushSemi(b)
	}
	leftHit := make([]bool, b.Rows)
	lsel := make([]int, 0, pairChunk)
	rsel := make([]int, 0, pairChunk)
	flush := func() error {
		err := j.pairs(b, lsel, rsel, leftHit)
		lsel, rsel = lsel[:0], rsel[:0]
		return err
	}
	if len(j.n.LeftKeys) > 0 {
		var vs []*types.Vector
		for _, k := range j.n.LeftKeys {
			v, err := k.Eval(j.c, b)
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		// The key buffers are reused from batch to batch, as pushSemi
		// does: a fresh set was an allocation per left row.
		j.keys = rowKeys(j.keys, vs, b.Rows)
		for i, k := range j.keys {
			for _, r := range j.table[string(k)] {
				lsel, rsel = append(lsel, i), append(rsel, r)
				if len(lsel) == pairChunk {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
	} else {
		for i := range b.Rows {
			for r := range rows.Rows {
				lsel, rsel = append(lsel, i), append(rsel, r)
				if len(lsel) == pairChunk {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
	}
	if len(lsel) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	switch j.n.Kind {
	case plan.JoinSemi, plan.JoinAnti:
		var ls []int
		for i, hit := range leftHit {
			if hit == (j.n.Kind == plan.JoinSemi) {
				ls = append(ls, i)
			}
		}
		if len(ls) == 0 {
			return nil
		}
		return j.out.push(expr.Gather(nil, b, ls))
	case plan.JoinLeft, plan.JoinFull:
		var ls []int
		for i, hit := range leftHit {
			if !hit {
				ls = append(ls, i)
			}
		}
		if len(ls) == 0 {
			return nil
		}
		out := combine(b, nil, rows, nil)
		for _, i := range ls {
			for c := range j.lw {
				out.Cols[c].AppendFrom(b.Cols[c], i)
			}
			for c := j.lw; c < len(out.Cols); c++ {
				out.Cols[c].AppendNull()
			}
			out.Rows++
		}
		return j.out.push(out)
	}
	return nil
}

// pairs filters one chunk of candidate pairs (left row lsel[p], right row
// rsel[p]) by the join condition, marks the rows that matched, and pushes
// the matching pairs unless the join emits left rows only (semi, anti).
// It is the join's cancellation point: a statement cancelled by its client
// or by shutdown stops here within one chunk.
func (j *joinSink) pairs(b *types.Batch, lsel, rsel []int, leftHit []bool) error {
	if err := j.r.ctx.Err(); err != nil {
		return err
	}
	pairs := combine(b, lsel, j.build.rows, rsel)
	var sel []int
	if j.n.Cond != nil {
		j.c.Reset()
		v, err := j.n.Cond.Eval(j.c, pairs)
		if err != nil {
			return err
		}
		sel = expr.Selection(nil, v, pairs.Rows)
	} else {
		sel = make([]int, len(lsel))
		for i := range sel {
			sel[i] = i
		}
	}
	for _, p := range sel {
		leftHit[lsel[p]] = true
		j.matched[rsel[p]] = true
	}
	if len(sel) == 0 || j.n.Kind == plan.JoinSemi || j.n.Kind == plan.JoinAnti {
		return nil
	}
	return j.out.push(expr.Gather(nil, pairs, sel))
}

// pushSemi probes a semi or anti join without a residual condition: a
// left row is kept when its key is (semi) or is not (anti) in the table,
// with no pair batch built and the key and selection buffers reused
// across batches.
func (j *joinSink) pushSemi(b *types.Batch) error {
	j.kv = j.kv[:0]
	for _, k := range j.n.LeftKeys {
		v, err := k.Eval(j.c, b)
		if err != nil {
			return err
		}
		j.kv = append(j.kv, v)
	}
	j.keys = rowKeys(j.keys, j.kv, b.Rows)
	semi := j.n.Kind == plan.JoinSemi
	j.sel = j.sel[:0]
	for i, k := range j.keys {
		null := false
		for _, v := range j.kv {
			null = null || v.IsNull(i)
		}
		hit := false
		if !null {
			_, hit = j.table[string(k)]
		}
		if hit == semi {
			j.sel = append(j.sel, i)
		}
	}
	switch len(j.sel) {
	case 0:
		return nil
	case b.Rows:
		return j.out.push(b)
	}
	j.buf = expr.Gather(j.buf, b, j.sel)
	return j.out.push(j.buf)
}

// combine builds the batch of pairs (left row lsel[p], right row rsel[p]).
func combine(l *types.Batch, lsel []int, r *types.Batch, rsel []int) *types.Batch {
	out := &types.Batch{Rows: len(lsel)}
	for _, v := range l.Cols {
		nv := types.NewVector(v.Type(), len(lsel))
		expr.GatherVector(nv, v, lsel)
		out.Cols = append(out.Cols, nv)
	}
	for _, v := range r.Cols {
		nv := types.NewVector(v.Type(), len(rsel))
		expr.GatherVector(nv, v, rsel)
		out.Cols = append(out.Cols, nv)
	}
	return out
}

func (j *joinSink) finish() error {
	if j.n.Kind == plan.JoinRight || j.n.Kind == plan.JoinFull {
		rows := j.build.rows
		var rs []int
		for i, m := range j.matched {
			if !m {
				rs = append(rs, i)
			}
		}
		if len(rs) > 0 {
			out := &types.Batch{Rows: len(rs)}
			for _, c := range j.n.L.Output() {
				v := types.NewVector(c.T, len(rs))
				for range rs {
					v.AppendNull()
				}
				out.Cols = append(out.Cols, v)
			}
			for _, v := range rows.Cols {
				nv := types.NewVector(v.Type(), len(rs))
				expr.GatherVector(nv, v, rs)
				out.Cols = append(out.Cols, nv)
			}
			if err := j.out.push(out); err != nil {
				return err
			}
		}
	}
	return j.out.finish()
}
