package exec

import (
	"math"
	"math/bits"

	"github.com/holiman/uint256"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// aggState is the running state of one aggregate in one group.
type aggState struct {
	count int64
	v     types.Value // sum, min, max, any_value, bool_and/or, max_by/min_by's value
	by    types.Value // max_by/min_by's ordering value
	set   bool
	seen  map[string]struct{} // DISTINCT
	// The typed fast path of sum/min/max over INT64: a 128-bit sum as
	// (hi, lo) two's complement, or the running min/max.
	fast bool
	lo   uint64
	hi   int64
	i64  int64
}

// aggSink groups rows by the group keys (encoded bytes) and folds each
// aggregate's argument vectors into per-group states.
type aggSink struct {
	n      *plan.Aggregate
	out    sink
	r      *runner
	c      *expr.Ctx
	index  map[string]int
	groups []types.Value // group key values, len(Groups) per group
	states [][]aggState
	keys   [][]byte
	gv     []*types.Vector
	av     [][]*types.Vector
	gids   []int
	slow   []int
}

// fastStep folds aggregate j over the batch with a typed loop when it is
// count(*), or count/sum/min/max of a non-DISTINCT INT64; false sends it
// to the per-value path.
func (s *aggSink) fastStep(j int, a plan.AggCall) bool {
	if a.Star {
		for _, g := range s.gids {
			s.states[g][j].count++
		}
		return true
	}
	if a.Distinct || len(s.av[j]) != 1 {
		return false
	}
	v := s.av[j][0]
	if v.Type().Kind != types.Int64 {
		return false
	}
	xs := v.Int64s()
	nulls := v.HasNulls()
	switch a.Fn {
	case "count":
		for i, g := range s.gids {
			if !nulls || !v.IsNull(i) {
				s.states[g][j].count++
			}
		}
	case "sum":
		for i, g := range s.gids {
			if nulls && v.IsNull(i) {
				continue
			}
			st := &s.states[g][j]
			x := xs[i]
			var c uint64
			st.lo, c = bits.Add64(st.lo, uint64(x), 0)
			st.hi += x>>63 + int64(c)
			st.fast, st.set = true, true
			st.count++
		}
	case "min", "max":
		isMax := a.Fn == "max"
		for i, g := range s.gids {
			if nulls && v.IsNull(i) {
				continue
			}
			st := &s.states[g][j]
			x := xs[i]
			if !st.set || (isMax && x > st.i64) || (!isMax && x < st.i64) {
				st.i64 = x
			}
			st.fast, st.set = true, true
		}
	default:
		return false
	}
	return true
}

func (r *runner) buildAgg(x *plan.Aggregate, out sink) (func() error, error) {
	es := append([]expr.Expr(nil), x.Groups...)
	for _, a := range x.Aggs {
		es = append(es, a.Args...)
	}
	if err := resolve(x.In, es...); err != nil {
		return nil, err
	}
	s := &aggSink{n: x, out: out, r: r, c: r.newCtx(), index: map[string]int{}}
	return r.build(x.In, s)
}

func (s *aggSink) push(b *types.Batch) error {
	s.c.Reset()
	s.gv = s.gv[:0]
	for _, g := range s.n.Groups {
		v, err := g.Eval(s.c, b)
		if err != nil {
			return err
		}
		s.gv = append(s.gv, v)
	}
	s.av = s.av[:0]
	for _, a := range s.n.Aggs {
		var vs []*types.Vector
		for _, e := range a.Args {
			v, err := e.Eval(s.c, b)
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		s.av = append(s.av, vs)
	}
	s.keys = rowKeys(s.keys, s.gv, b.Rows)
	s.gids = s.gids[:0]
	for i, k := range s.keys {
		g, ok := s.index[string(k)]
		if !ok {
			g = len(s.states)
			s.index[string(k)] = g
			for _, v := range s.gv {
				s.groups = append(s.groups, v.Get(i))
			}
			s.states = append(s.states, make([]aggState, len(s.n.Aggs)))
			if err := s.r.mem.grow(int64(len(k)) + 64*int64(len(s.n.Aggs)+len(s.gv)) + 64); err != nil {
				return err
			}
		}
		s.gids = append(s.gids, g)
	}
	slow := s.slow[:0]
	for j, a := range s.n.Aggs {
		if !s.fastStep(j, a) {
			slow = append(slow, j)
		}
	}
	s.slow = slow
	if len(slow) == 0 {
		return nil
	}
	var dk []byte
	for i, k := range s.keys {
		g, ok := s.index[string(k)]
		if !ok {
			g = len(s.states)
			s.index[string(k)] = g
			for _, v := range s.gv {
				s.groups = append(s.groups, v.Get(i))
			}
			s.states = append(s.states, make([]aggState, len(s.n.Aggs)))
			if err := s.r.mem.grow(int64(len(k)) + 64*int64(len(s.n.Aggs)+len(s.gv)) + 64); err != nil {
				return err
			}
		}
		st := s.states[g]
		for _, j := range slow {
			a := s.n.Aggs[j]
			vs := s.av[j]
			if a.Star {
				st[j].count++
				continue
			}
			if vs[0].IsNull(i) && a.Fn != "any_value" {
				continue
			}
			if a.Distinct {
				dk = expr.AppendValueKey(dk[:0], vs[0].Get(i))
				if st[j].seen == nil {
					st[j].seen = map[string]struct{}{}
				}
				if _, dup := st[j].seen[string(dk)]; dup {
					continue
				}
				st[j].seen[string(dk)] = struct{}{}
			}
			if err := step(&st[j], a, vs, i); err != nil {
				return err
			}
		}
	}
	return nil
}

func step(st *aggState, a plan.AggCall, vs []*types.Vector, i int) error {
	switch a.Fn {
	case "count":
		st.count++
		return nil
	case "sum", "avg":
		st.count++
		x := vs[0].Get(i)
		if !st.set {
			v, err := types.Cast(x, a.T)
			if a.Fn == "avg" {
				v, err = types.Cast(x, sumTypeOf(a.T, x.Type()))
			}
			if err != nil {
				return sqlerr.OutOfRange(-1, "%s overflow in %s", a.T, a.Fn)
			}
			st.v, st.set = v, true
			return nil
		}
		v, err := types.Add(st.v, x)
		if err != nil {
			return sqlerr.OutOfRange(-1, "%s overflow in %s(): %s + %s", st.v.Type(), a.Fn, st.v, x)
		}
		if v.Type() != st.v.Type() {
			if v, err = types.Cast(v, st.v.Type()); err != nil {
				return sqlerr.OutOfRange(-1, "%s overflow in %s()", st.v.Type(), a.Fn)
			}
		}
		st.v = v
	case "min", "max":
		x := vs[0].Get(i)
		want := 1
		if a.Fn == "min" {
			want = -1
		}
		if !st.set || types.Compare(x, st.v) == want {
			st.v, st.set = x, true
		}
	case "any_value":
		if !st.set && !vs[0].IsNull(i) {
			st.v, st.set = vs[0].Get(i), true
		}
	case "max_by", "min_by":
		if vs[1].IsNull(i) {
			return nil
		}
		y := vs[1].Get(i)
		want := 1
		if a.Fn == "min_by" {
			want = -1
		}
		if !st.set || types.Compare(y, st.by) == want {
			st.v, st.by, st.set = vs[0].Get(i), y, true
		}
	case "bool_and", "bool_or":
		x := vs[0].Bools()[i]
		if !st.set {
			st.v, st.set = types.NewBool(x), true
		} else if a.Fn == "bool_and" {
			st.v = types.NewBool(st.v.Bool() && x)
		} else {
			st.v = types.NewBool(st.v.Bool() || x)
		}
	}
	return nil
}

// sumTypeOf is the accumulator of avg: the sum type of its argument.
func sumTypeOf(avg, arg types.Type) types.Type {
	k := arg.Kind
	switch {
	case k.IsFloat():
		return types.Of(types.Float64)
	case k == types.Decimal:
		return types.Type{Kind: types.Decimal, Precision: 76, Scale: arg.Scale}
	case k.IsSigned() && k.Bits() <= 64:
		return types.Of(types.Int128)
	case k.IsUnsigned() && k.Bits() <= 64:
		return types.Of(types.Uint128)
	}
	return types.Of(types.Int256)
}

func (s *aggSink) finish() error {
	if len(s.states) == 0 && len(s.n.Groups) == 0 {
		s.states = append(s.states, make([]aggState, len(s.n.Aggs)))
	}
	out := s.n.Output()
	ts := make([]types.Type, len(out))
	for i, c := range out {
		ts[i] = c.T
	}
	b := types.NewBatch(ts, min(len(s.states), 1024))
	ng := len(s.n.Groups)
	flush := func() error {
		if b.Rows == 0 {
			return nil
		}
		err := s.out.push(b)
		b = types.NewBatch(ts, 1024)
		return err
	}
	for g, st := range s.states {
		for j := range ng {
			b.Cols[j].Append(s.groups[g*ng+j])
		}
		for j, a := range s.n.Aggs {
			v, err := result(&st[j], a)
			if err != nil {
				return err
			}
			b.Cols[ng+j].Append(v)
		}
		b.Rows++
		if b.Rows == 1024 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return s.out.finish()
}

func result(st *aggState, a plan.AggCall) (types.Value, error) {
	if st.fast {
		switch a.Fn {
		case "sum":
			var w uint256.Int
			w[0], w[1] = st.lo, uint64(st.hi)
			if st.hi < 0 {
				w[2], w[3] = math.MaxUint64, math.MaxUint64
			}
			return types.NewWide(a.T, w)
		case "min", "max":
			return types.NewInt64(st.i64), nil
		}
	}
	switch a.Fn {
	case "count":
		return types.NewInt64(st.count), nil
	case "avg":
		if !st.set {
			return types.Null(a.T), nil
		}
		if a.T.Kind == types.Float64 {
			f, _ := types.Cast(st.v, types.Of(types.Float64))
			return types.NewFloat64(f.Float64() / float64(st.count)), nil
		}
		sum, err := types.Cast(st.v, a.T)
		if err != nil {
			return sum, sqlerr.OutOfRange(-1, "%s overflow in avg()", a.T)
		}
		v, err := types.Div(sum, types.NewInt64(st.count))
		if err != nil {
			return v, sqlerr.OutOfRange(-1, "%s overflow in avg()", a.T)
		}
		return types.Cast(v, a.T)
	}
	if !st.set {
		return types.Null(a.T), nil
	}
	if st.v.Type() != a.T {
		return types.Cast(st.v, a.T)
	}
	return st.v, nil
}
