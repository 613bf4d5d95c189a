package exec

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// lateralSink runs a LATERAL item for the rows of its left input: the
// item's plan once per distinct tuple of correlated values (the rows kept
// for the statement, as expr.Subquery keeps its results), each left row
// joined with those rows, the ON condition applied; a LEFT lateral join
// keeps a left row no right row matched once, with NULLs.
type lateralSink struct {
	x     *plan.Lateral
	out   sink
	r     *runner
	c     *expr.Ctx
	cache map[string]*types.Batch
	keys  [][]byte
	outer []types.Value
	corr  []*types.Vector
	// The candidate rows being built: left row indexes (lsel) and the
	// right columns, appended per left row.
	ts      []types.Type
	lsel    []int
	right   []*types.Vector
	matched []bool
}

func (r *runner) buildLateral(x *plan.Lateral, out sink) (func() error, error) {
	if err := resolve(x.L, x.Corr...); err != nil {
		return nil, err
	}
	if err := resolve(x, x.Cond); err != nil {
		return nil, err
	}
	s := &lateralSink{x: x, out: out, r: r, c: r.newCtx(), cache: map[string]*types.Batch{}, outer: make([]types.Value, len(x.Corr))}
	for _, c := range x.Output() {
		s.ts = append(s.ts, c.T)
	}
	return r.build(x.L, s)
}

// rowsFor returns the right rows for left row i (s.corr evaluated). A
// volatile item runs for every row and keeps nothing.
func (s *lateralSink) rowsFor(i int) (*types.Batch, error) {
	k := s.keys[i]
	if rows, ok := s.cache[string(k)]; ok && !s.x.Volatile {
		return rows, nil
	}
	for j, v := range s.corr {
		s.outer[j] = v.Get(i)
	}
	rows, err := s.r.Rows(s.r.ctx, s.x.Sub, s.outer)
	if err != nil {
		return nil, err
	}
	if s.x.Volatile {
		return rows, nil
	}
	if err := s.r.mem.grow(batchBytes(rows) + int64(len(k)) + 64); err != nil {
		return nil, err
	}
	s.cache[string(k)] = rows
	return rows, nil
}

func (s *lateralSink) push(b *types.Batch) error {
	s.c.Reset()
	s.corr = s.corr[:0]
	for _, e := range s.x.Corr {
		v, err := e.Eval(s.c, b)
		if err != nil {
			return err
		}
		s.corr = append(s.corr, v)
	}
	s.keys = rowKeys(s.keys, s.corr, b.Rows)
	left := s.x.Kind == plan.JoinLeft
	if left {
		s.matched = append(s.matched[:0], make([]bool, b.Rows)...)
	}
	s.startChunk()
	for i := range b.Rows {
		rows, err := s.rowsFor(i)
		if err != nil {
			return err
		}
		for j, v := range rows.Cols {
			expr.AppendVector(s.right[j], v, 0, rows.Rows)
		}
		for range rows.Rows {
			s.lsel = append(s.lsel, i)
		}
		if len(s.lsel) >= 1024 {
			if err := s.flush(b); err != nil {
				return err
			}
			s.startChunk()
		}
	}
	if err := s.flush(b); err != nil {
		return err
	}
	if !left {
		return nil
	}
	// The left rows nothing matched, with NULL right columns.
	s.startChunk()
	for i, m := range s.matched {
		if !m {
			s.lsel = append(s.lsel, i)
		}
	}
	if len(s.lsel) == 0 {
		return nil
	}
	for _, v := range s.right {
		v.AppendNulls(len(s.lsel))
	}
	return s.out.push(s.candidates(b))
}

// startChunk begins a new set of candidate rows.
func (s *lateralSink) startChunk() {
	s.lsel = s.lsel[:0]
	nl := len(s.ts) - len(s.x.Cols)
	s.right = s.right[:0]
	for _, t := range s.ts[nl:] {
		s.right = append(s.right, types.NewVector(t, 64))
	}
}

// flush checks the candidate rows against the ON condition and emits the
// ones it passes, noting their left rows as matched.
func (s *lateralSink) flush(b *types.Batch) error {
	if len(s.lsel) == 0 {
		return nil
	}
	cand := s.candidates(b)
	if s.x.Cond == nil {
		if s.x.Kind == plan.JoinLeft {
			for _, i := range s.lsel {
				s.matched[i] = true
			}
		}
		return s.out.push(cand)
	}
	v, err := s.x.Cond.Eval(s.c, cand)
	if err != nil {
		return err
	}
	var sel []int
	bs := v.Bools()
	for k := range cand.Rows {
		if !v.IsNull(k) && bs[k] {
			sel = append(sel, k)
			if s.x.Kind == plan.JoinLeft {
				s.matched[s.lsel[k]] = true
			}
		}
	}
	if len(sel) == 0 {
		return nil
	}
	return s.out.push(expr.Gather(nil, cand, sel))
}

// candidates is the batch of the left rows lsel of b beside the right
// columns gathered for them.
func (s *lateralSink) candidates(b *types.Batch) *types.Batch {
	cand := &types.Batch{Rows: len(s.lsel)}
	for _, v := range b.Cols {
		d := types.NewVector(v.Type(), len(s.lsel))
		expr.GatherVector(d, v, s.lsel)
		cand.Cols = append(cand.Cols, d)
	}
	cand.Cols = append(cand.Cols, s.right...)
	return cand
}

func (s *lateralSink) finish() error { return s.out.finish() }
