package exec

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

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
	// w is the unsigned fast path's sum (UINT128 from narrower unsigned
	// values, UINT256 from UINT128/UINT256).
	w uint256.Int
	// sx and sxx are the sum and the sum of squared deviations of the
	// variance and standard deviation aggregates, updated as PostgreSQL's
	// float8_accum does (Youngs and Cramer), count being the rows folded:
	// over FLOAT64 input the results are PostgreSQL's to the last bit.
	sx, sxx float64
	// buf is string_agg's and array_agg's text so far, tmp a value's text
	// (agg_string.go).
	buf, tmp []byte
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
	// strIndex and intIndex replace index for one group column of a varlen
	// or 64-bit class; nullG is 1 + the NULL group's id (0: none yet).
	strIndex map[string]int
	// small is strIndex's stand-in while the group column has at most
	// maxSmallGroups values (agg_strindex.go); nil after.
	small    *smallStrs
	intIndex map[uint64]int
	nullG    int
	err      error
	// ord buffers the rows of each aggregate with an ORDER BY (nil for
	// the others) until finish (agg_ordered.go); dk is DISTINCT's key.
	ord []*ordBuf
	dk  []byte
	// cnt and wide are fastStep's per-batch accumulators of count(*) and
	// of a wide sum, one per group, while there are few groups
	// (denseGroups).
	cnt  []int64
	wide []uint256.Int
	// sets are the sinks of GROUPING SETS, one per set (nil for a plain
	// GROUP BY); set is such a sink's set (positions in n.Groups) and
	// inSet marks it.
	sets  []*aggSink
	set   []int
	inSet bool
	// par is the helpers of a parallel aggregate (agg_parallel.go), nil
	// for a serial one. With track set, first holds each group's first
	// row as seq<<32 | row, seq counting the batches pushed; rows counts
	// the rows pushed.
	par   *aggPar
	track bool
	seq   int64
	rows  int
	first []int64
}

// fastStep folds aggregate j over the batch with a typed loop when it is
// count(*), count of any column, or a non-DISTINCT sum of an integer
// column, min/max of INT64; false sends it to the per-value path. No loop
// here calls through an interface or allocates per row.
func (s *aggSink) fastStep(j int, a plan.AggCall) bool {
	if a.Fn == "grouping" {
		// Constant per grouping set: emit computes it.
		return true
	}
	if a.Star {
		if s.dense() {
			// Counted per batch in a dense array, then added to the
			// states: no state is loaded per row.
			cnt := s.denseCounts()
			for _, g := range s.gids {
				cnt[g]++
			}
			for g, c := range cnt {
				s.states[g][j].count += c
			}
			return true
		}
		for _, g := range s.gids {
			s.states[g][j].count++
		}
		return true
	}
	if a.Distinct || len(s.av[j]) != 1 || len(a.Order) > 0 {
		return false
	}
	v := s.av[j][0]
	nulls := v.HasNulls()
	k := v.Type().Kind
	switch {
	case a.Fn == "count":
		for i, g := range s.gids {
			if !nulls || !v.IsNull(i) {
				s.states[g][j].count++
			}
		}
		return true
	case a.Fn == "sum" && k.IsSigned() && k.Bits() <= 64:
		// Every signed integer up to 64 bits lives in the INT64 class; the
		// sum is INT128, kept as (hi, lo) two's complement: 2^63 rows
		// cannot overflow it.
		xs := v.Int64s()
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
		return true
	case a.Fn == "sum" && k.IsUnsigned() && k.Bits() <= 64:
		// UINT128 sum of unsigned values up to 64 bits: no overflow.
		xs := v.Uint64s()
		for i, g := range s.gids {
			if nulls && v.IsNull(i) {
				continue
			}
			st := &s.states[g][j]
			var c uint64
			st.w[0], c = bits.Add64(st.w[0], xs[i], 0)
			st.w[1] += c
			st.fast, st.set = true, true
			st.count++
		}
		return true
	case a.Fn == "sum" && (k == types.Uint128 || k == types.Uint256):
		// A 256-bit unsigned accumulator; a carry out of the top word is the
		// overflow sum(UINT256) must report. A UINT128 sum is UINT256 and
		// cannot overflow in 2^128 rows.
		xs := v.Wides()
		var carry uint64
		if s.dense() && !nulls {
			// Summed per batch into dense 256-bit accumulators (a
			// batch's sum cannot carry out of 256 bits unless the
			// whole sum does), then added to the states.
			cnt, acc := s.denseCounts(), s.denseWides()
			gids := s.gids
			xs = xs[:len(gids)]
			for i, g := range gids {
				carry |= add256(&acc[g], &xs[i])
				cnt[g]++
			}
			for g := range acc {
				if cnt[g] == 0 {
					continue
				}
				st := &s.states[g][j]
				carry |= add256(&st.w, &acc[g])
				st.fast, st.set = true, true
				st.count += cnt[g]
			}
			if carry != 0 && a.T.Kind == types.Uint256 {
				return s.fail(sqlerr.OutOfRange(a.Pos, "UINT256 overflow in sum()"))
			}
			return true
		}
		for i, g := range s.gids {
			if nulls && v.IsNull(i) {
				continue
			}
			st := &s.states[g][j]
			carry |= add256(&st.w, &xs[i])
			st.fast, st.set = true, true
			st.count++
		}
		if carry != 0 && a.T.Kind == types.Uint256 {
			return s.fail(sqlerr.OutOfRange(a.Pos, "UINT256 overflow in sum()"))
		}
		return true
	case (a.Fn == "min" || a.Fn == "max") && k == types.Int64:
		xs := v.Int64s()
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
		return true
	}
	return false
}

// add256 adds x to w and returns the carry out of the top word.
func add256(w, x *uint256.Int) uint64 {
	var c uint64
	w[0], c = bits.Add64(w[0], x[0], 0)
	w[1], c = bits.Add64(w[1], x[1], c)
	w[2], c = bits.Add64(w[2], x[2], c)
	w[3], c = bits.Add64(w[3], x[3], c)
	return c
}

// denseGroups is the most groups for which fastStep accumulates a batch
// in dense per-group arrays.
const denseGroups = 256

// dense reports whether fastStep accumulates this batch in dense arrays:
// few groups, and no more than the batch has rows, so that clearing and
// folding the arrays costs no more than the rows (a filter may hand on
// batches of a few rows).
func (s *aggSink) dense() bool {
	return len(s.states) <= min(denseGroups, len(s.gids))
}

// denseCounts returns s.cnt zeroed, one per group.
func (s *aggSink) denseCounts() []int64 {
	s.cnt = slices.Grow(s.cnt[:0], len(s.states))[:len(s.states)]
	clear(s.cnt)
	return s.cnt
}

// denseWides returns s.wide zeroed, one per group.
func (s *aggSink) denseWides() []uint256.Int {
	s.wide = slices.Grow(s.wide[:0], len(s.states))[:len(s.states)]
	clear(s.wide)
	return s.wide
}

// fail records the first error of a fast step (which reports only
// whether it handled the aggregate) for push to return.
func (s *aggSink) fail(err error) bool {
	if s.err == nil {
		s.err = err
	}
	return true
}

// groupIDs sets s.gids to the group of every row, adding new groups. One
// group column of a varlen or 64-bit class is looked up by its value
// directly (a string key converted in the map index does not allocate);
// other group lists by their encoded row keys.
func (s *aggSink) groupIDs(rows int) error {
	s.gids = s.gids[:0]
	if len(s.gv) == 0 {
		// No group column (the empty grouping set): one group, no hashing.
		if len(s.states) == 0 {
			s.states = append(s.states, make([]aggState, len(s.n.Aggs)))
		}
		for range rows {
			s.gids = append(s.gids, 0)
		}
		return nil
	}
	if len(s.gv) == 1 {
		v := s.gv[0]
		nulls := v.HasNulls()
		switch v.Type().Kind.Class() {
		case types.ClassVarlen:
			if s.strIndex == nil {
				s.strIndex = map[string]int{}
				s.small = newSmallStrs()
			}
			data, offs := v.Packed(0, rows)
			for i := range rows {
				if nulls && v.IsNull(i) {
					g, err := s.nullGroup(v, i)
					if err != nil {
						return err
					}
					s.gids = append(s.gids, g)
					continue
				}
				b := data[offs[i]:offs[i+1]:offs[i+1]]
				if x := s.small; x != nil {
					var g, slot int
					var h uint64
					var ok bool
					if t, short := shortWord(data, offs[i], offs[i+1]); short {
						g, slot, h, ok = x.findWord(t, len(b))
					} else {
						g, slot, h, ok = x.find(b)
					}
					if !ok {
						g = len(s.states)
						if !x.add(b, h, g, slot) {
							// Too many values for the small index: the
							// map takes them all, this one below.
							x.each(func(k []byte, g int) { s.strIndex[string(k)] = g })
							s.small = nil
							goto big
						}
						if err := s.newGroup(v, i, len(b)); err != nil {
							return err
						}
					}
					s.gids = append(s.gids, g)
					continue
				}
			big:
				g, ok := s.strIndex[string(b)]
				if !ok {
					g = len(s.states)
					s.strIndex[string(b)] = g
					if err := s.newGroup(v, i, len(b)); err != nil {
						return err
					}
				}
				s.gids = append(s.gids, g)
			}
			return nil
		case types.ClassInt64, types.ClassUint64:
			if s.intIndex == nil {
				s.intIndex = map[uint64]int{}
			}
			var xs []uint64
			if v.Type().Kind.Class() == types.ClassInt64 {
				is := v.Int64s()
				xs = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(is))), len(is))
			} else {
				xs = v.Uint64s()
			}
			for i := range rows {
				if nulls && v.IsNull(i) {
					g, err := s.nullGroup(v, i)
					if err != nil {
						return err
					}
					s.gids = append(s.gids, g)
					continue
				}
				g, ok := s.intIndex[xs[i]]
				if !ok {
					g = len(s.states)
					s.intIndex[xs[i]] = g
					if err := s.newGroup(v, i, 8); err != nil {
						return err
					}
				}
				s.gids = append(s.gids, g)
			}
			return nil
		}
	}
	s.keys = rowKeys(s.keys, s.gv, rows)
	for i, k := range s.keys {
		g, ok := s.index[string(k)]
		if !ok {
			g = len(s.states)
			s.index[string(k)] = g
			for _, v := range s.gv {
				s.groups = append(s.groups, v.Get(i))
			}
			s.states = append(s.states, make([]aggState, len(s.n.Aggs)))
			if s.track {
				s.first = append(s.first, s.seq<<32|int64(i))
			}
			if err := s.r.mem.grow(int64(len(k)) + 64*int64(len(s.n.Aggs)+len(s.gv)) + 64); err != nil {
				return err
			}
		}
		s.gids = append(s.gids, g)
	}
	return nil
}

// nullGroup is the one group of a NULL in a single group column.
func (s *aggSink) nullGroup(v *types.Vector, i int) (int, error) {
	if s.nullG == 0 {
		s.nullG = len(s.states) + 1
		if err := s.newGroup(v, i, 1); err != nil {
			return 0, err
		}
	}
	return s.nullG - 1, nil
}

// newGroup adds the group of row i of the single group column v.
func (s *aggSink) newGroup(v *types.Vector, i, keyBytes int) error {
	s.groups = append(s.groups, v.Get(i))
	s.states = append(s.states, make([]aggState, len(s.n.Aggs)))
	if s.track {
		s.first = append(s.first, s.seq<<32|int64(i))
	}
	return s.r.mem.grow(int64(keyBytes) + 64*int64(len(s.n.Aggs)+1) + 64)
}

func (r *runner) buildAgg(x *plan.Aggregate, out sink) (func() error, error) {
	es := append([]expr.Expr(nil), x.Groups...)
	ord := make([]*ordBuf, len(x.Aggs))
	for j, a := range x.Aggs {
		es = append(es, a.Args...)
		for _, k := range a.Order {
			es = append(es, k.E)
		}
		if len(a.Order) > 0 {
			ord[j] = &ordBuf{}
		}
	}
	if err := resolve(x.In, es...); err != nil {
		return nil, err
	}
	s := &aggSink{n: x, out: out, r: r, c: r.newCtx(), index: map[string]int{}, ord: ord}
	for _, set := range x.Sets {
		// One sink per grouping set, each with its own groups and
		// states, fed the vectors s evaluates once per batch.
		sub := &aggSink{n: x, r: r, index: map[string]int{}, set: set, inSet: true, ord: make([]*ordBuf, len(x.Aggs))}
		for j := range ord {
			if ord[j] != nil {
				sub.ord[j] = &ordBuf{}
			}
		}
		s.sets = append(s.sets, sub)
	}
	if !parallelAgg(x) {
		return r.build(x.In, s)
	}
	s.par, s.track = &aggPar{}, true
	start, err := r.build(x.In, s)
	if err != nil {
		return nil, err
	}
	return func() error {
		err := start()
		// After an error, or a consumer that stopped early, the helpers
		// must still end; after finish this only returns what it did.
		if herr := s.stopHelpers(); err == nil {
			err = herr
		}
		return err
	}, nil
}

func (s *aggSink) push(b *types.Batch) error {
	if s.par != nil {
		return s.parallelPush(b)
	}
	if err := s.eval(b); err != nil {
		return err
	}
	if s.sets == nil {
		return s.accumulate(b.Rows)
	}
	for _, sub := range s.sets {
		sub.gv = sub.gv[:0]
		for _, g := range sub.set {
			sub.gv = append(sub.gv, s.gv[g])
		}
		sub.av = s.av
		if err := sub.accumulate(b.Rows); err != nil {
			return err
		}
	}
	return nil
}

// eval computes the batch's group vectors (every one of Groups) and the
// aggregates' argument and ORDER BY key vectors.
func (s *aggSink) eval(b *types.Batch) error {
	s.c.Reset()
	s.gv = s.gv[:0]
	for _, g := range s.n.Groups {
		v, err := g.Eval(s.c, b)
		if err != nil {
			return err
		}
		s.gv = append(s.gv, v)
	}
	if len(s.av) != len(s.n.Aggs) {
		s.av = make([][]*types.Vector, len(s.n.Aggs))
	}
	for j, a := range s.n.Aggs {
		vs := s.av[j][:0]
		for _, e := range a.Args {
			v, err := e.Eval(s.c, b)
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		for _, k := range a.Order {
			v, err := k.E.Eval(s.c, b)
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		s.av[j] = vs
	}
	return nil
}

// accumulate folds the evaluated vectors of a batch of rows into the
// states of s's groups (s.gv are the vectors s groups by).
func (s *aggSink) accumulate(rows int) error {
	if err := s.groupIDs(rows); err != nil {
		return err
	}
	slow := s.slow[:0]
	for j, a := range s.n.Aggs {
		if !s.fastStep(j, a) {
			slow = append(slow, j)
		}
	}
	s.slow = slow
	if s.err != nil {
		return s.err
	}
	if len(slow) == 0 {
		return nil
	}
	for _, j := range slow {
		if o := s.ord[j]; o != nil {
			vs := s.av[j]
			for i, g := range s.gids {
				o.add(vs, i, g)
			}
			if err := s.r.mem.grow(int64(rows) * int64(8+16*len(vs))); err != nil {
				return err
			}
		}
	}
	for i, g := range s.gids {
		st := s.states[g]
		for _, j := range slow {
			if s.ord[j] != nil {
				continue
			}
			if err := fold(&st[j], s.n.Aggs[j], s.av[j], i, &s.dk); err != nil {
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
				return sqlerr.OutOfRange(a.Pos, "%s overflow in %s", a.T, a.Fn)
			}
			st.v, st.set = v, true
			return nil
		}
		v, err := types.Add(st.v, x)
		if err != nil {
			if x.Kind() == types.Interval {
				// PostgreSQL's interval_pl error, which its sum and avg
				// of intervals raise.
				return sqlerr.New("22008", "interval out of range").WithPos(a.Pos)
			}
			return sqlerr.OutOfRange(a.Pos, "%s overflow in %s(): %s + %s", st.v.Type(), a.Fn, st.v, x)
		}
		if v.Type() != st.v.Type() {
			if v, err = types.Cast(v, st.v.Type()); err != nil {
				return sqlerr.OutOfRange(a.Pos, "%s overflow in %s()", st.v.Type(), a.Fn)
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
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		var x float64
		if v := vs[0]; v.Type().Kind.Class() == types.ClassFloat64 {
			x = v.Float64s()[i]
		} else {
			f, err := types.Cast(v.Get(i), types.Of(types.Float64))
			if err != nil {
				return err
			}
			x = f.Float64()
		}
		old := float64(st.count)
		st.count++
		n := float64(st.count)
		prev := st.sx
		st.sx += x
		switch {
		case old > 0:
			t := x*n - st.sx
			st.sxx += t * t / (n * old)
			if math.IsInf(st.sx, 0) || math.IsInf(st.sxx, 0) {
				if !math.IsInf(prev, 0) && !math.IsInf(x, 0) {
					return sqlerr.OutOfRange(a.Pos, "value out of range: overflow in %s()", a.Fn)
				}
				st.sxx = math.NaN()
			}
		case math.IsNaN(x) || math.IsInf(x, 0):
			st.sxx = math.NaN()
		}
	case "string_agg", "array_agg":
		stepList(st, a, vs, i)
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

// variance is the result of the variance and standard deviation
// aggregates: NULL over no rows, and the sample forms (stddev, variance,
// stddev_samp, var_samp) NULL over one row too, as in PostgreSQL. Over
// one row the population forms are 0; a NaN or infinite input makes the
// result NaN, as PostgreSQL's float8 accumulator does.
func variance(st *aggState, fn string) types.Value {
	n := float64(st.count)
	pop := fn == "stddev_pop" || fn == "var_pop"
	if st.count == 0 || !pop && st.count == 1 {
		return types.Null(types.Of(types.Float64))
	}
	v := st.sxx / n
	if !pop {
		v = st.sxx / (n - 1)
	}
	if strings.HasPrefix(fn, "stddev") {
		v = math.Sqrt(v)
	}
	return types.NewFloat64(v)
}

// sumTypeOf is the accumulator of avg: the sum type of its argument.
func sumTypeOf(avg, arg types.Type) types.Type {
	k := arg.Kind
	switch {
	case k == types.Interval:
		return arg
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
	if err := s.mergeHelpers(); err != nil {
		return err
	}
	w := newBatchWriter(s.n.Output(), s.out)
	if s.sets == nil {
		if err := s.emit(w); err != nil {
			return err
		}
	}
	for _, sub := range s.sets {
		if err := sub.emit(w); err != nil {
			return err
		}
	}
	if err := w.flush(); err != nil {
		return err
	}
	return s.out.finish()
}

// emit writes a row per group of s. A sink of one grouping set writes
// NULL into the group columns its set leaves out; over no input rows, a
// sink without group columns (no GROUP BY, or the empty set ()) still
// writes its one row.
func (s *aggSink) emit(w *batchWriter) error {
	ng := len(s.n.Groups)
	own := ng
	if s.inSet {
		own = len(s.set)
	}
	if len(s.states) == 0 && own == 0 {
		s.states = append(s.states, make([]aggState, len(s.n.Aggs)))
	}
	if err := s.finishOrdered(); err != nil {
		return err
	}
	for g, st := range s.states {
		b := w.b
		if s.inSet {
			k := 0
			for j := range ng {
				if k < len(s.set) && s.set[k] == j {
					b.Cols[j].Append(s.groups[g*own+k])
					k++
				} else {
					b.Cols[j].AppendNull()
				}
			}
		} else {
			for j := range ng {
				b.Cols[j].Append(s.groups[g*ng+j])
			}
		}
		for j, a := range s.n.Aggs {
			if a.Fn == "grouping" {
				v, _ := types.NewInt(a.T, plan.GroupingValue(a, s.set, !s.inSet))
				b.Cols[ng+j].Append(v)
				continue
			}
			v, err := result(&st[j], a)
			if err != nil {
				return err
			}
			b.Cols[ng+j].Append(v)
		}
		if err := w.rowDone(); err != nil {
			return err
		}
	}
	return nil
}

// batchWriter fills batches of an operator's output columns and pushes
// each full one.
type batchWriter struct {
	ts  []types.Type
	b   *types.Batch
	out sink
}

func newBatchWriter(cols []plan.ColRef, out sink) *batchWriter {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.T
	}
	return &batchWriter{ts: ts, b: types.NewBatch(ts, 64), out: out}
}

// rowDone counts the row just appended and pushes a full batch.
func (w *batchWriter) rowDone() error {
	w.b.Rows++
	if w.b.Rows == 1024 {
		return w.flush()
	}
	return nil
}

func (w *batchWriter) flush() error {
	if w.b.Rows == 0 {
		return nil
	}
	err := w.out.push(w.b)
	w.b = types.NewBatch(w.ts, 1024)
	return err
}

func result(st *aggState, a plan.AggCall) (types.Value, error) {
	if st.fast {
		switch a.Fn {
		case "sum":
			if k := a.T.Kind; k == types.Uint128 || k == types.Uint256 {
				return types.NewWide(a.T, st.w)
			}
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
	case "string_agg", "array_agg":
		return listResult(st, a), nil
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		return variance(st, a.Fn), nil
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
		if a.T.Kind == types.Interval {
			v, err := types.ScaleInterval(st.v, float64(st.count), true)
			if err != nil {
				return v, sqlerr.New("22008", "interval out of range").WithPos(a.Pos)
			}
			return v, nil
		}
		sum, err := types.Cast(st.v, a.T)
		if err != nil {
			return sum, sqlerr.OutOfRange(a.Pos, "%s overflow in avg()", a.T)
		}
		v, err := types.Div(sum, types.NewInt64(st.count))
		if err != nil {
			return v, sqlerr.OutOfRange(a.Pos, "%s overflow in avg()", a.T)
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
