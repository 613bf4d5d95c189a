package exec

import (
	"math"
	"slices"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// An aggregate with an ORDER BY (string_agg(s, ',' ORDER BY s), array_agg,
// and the ordered-set aggregates percentile_cont, percentile_disc and
// mode) cannot fold rows as they arrive: its rows are kept, with their
// group, until the input ends, then sorted once by (group, keys) and fed
// to the aggregate in that order. One sort per aggregate over all groups,
// not one per group.

// ordBuf holds the rows of one ordered aggregate: each row's group and
// its argument values followed by its sort key values.
type ordBuf struct {
	gids []int32
	cols []*types.Vector
}

// add appends row i of the argument and key vectors vs for group g.
func (o *ordBuf) add(vs []*types.Vector, i, g int) {
	if o.cols == nil {
		o.cols = make([]*types.Vector, len(vs))
		for k, v := range vs {
			o.cols[k] = types.NewVector(v.Type(), 64)
		}
	}
	o.gids = append(o.gids, int32(g))
	for k, v := range vs {
		o.cols[k].AppendFrom(v, i)
	}
}

// sorted returns the buffered rows' indexes ordered by group, then by
// the keys of a (NULLs placed as ORDER BY places them); ties keep their
// input order, as PostgreSQL's sort of the input does for equal keys.
func (o *ordBuf) sorted(a plan.AggCall) []int {
	idx := make([]int, len(o.gids))
	for i := range idx {
		idx[i] = i
	}
	keys := o.cols[len(a.Args):]
	slices.SortStableFunc(idx, func(x, y int) int {
		if gx, gy := o.gids[x], o.gids[y]; gx != gy {
			return cmp3(gx < gy, gx > gy)
		}
		for k, sk := range a.Order {
			v := keys[k]
			xn, yn := v.IsNull(x), v.IsNull(y)
			switch {
			case xn && yn:
				continue
			case xn || yn:
				if xn == sk.NullsFirst {
					return -1
				}
				return 1
			}
			c := compareRows(v, x, y)
			if sk.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return idx
}

// finishOrdered feeds every ordered aggregate its buffered rows in order,
// leaving each group's state as the unordered aggregates leave theirs.
func (s *aggSink) finishOrdered() error {
	var dk []byte
	for j, o := range s.ord {
		if o == nil || len(o.gids) == 0 {
			continue
		}
		a := s.n.Aggs[j]
		idx := o.sorted(a)
		args := o.cols[:len(a.Args)]
		if orderedSet(a.Fn) {
			for from := 0; from < len(idx); {
				g := o.gids[idx[from]]
				to := from + 1
				for to < len(idx) && o.gids[idx[to]] == g {
					to++
				}
				if err := orderedSetResult(&s.states[g][j], a, args, idx[from:to]); err != nil {
					return err
				}
				from = to
			}
			continue
		}
		for _, i := range idx {
			if err := fold(&s.states[o.gids[i]][j], a, args, i, &dk); err != nil {
				return err
			}
		}
	}
	return nil
}

func orderedSet(fn string) bool {
	return fn == "percentile_cont" || fn == "percentile_disc" || fn == "mode"
}

// orderedSetResult computes percentile_cont, percentile_disc or mode of
// one group from its rows in order (args: the fraction, if any, then x)
// into st. NULL values of x are skipped, as PostgreSQL does; a NULL
// fraction or no value leaves the result NULL.
func orderedSetResult(st *aggState, a plan.AggCall, args []*types.Vector, rows []int) error {
	x := args[len(args)-1]
	vals := rows[:0:0]
	for _, i := range rows {
		if !x.IsNull(i) {
			vals = append(vals, i)
		}
	}
	n := len(vals)
	if n == 0 {
		return nil
	}
	if a.Fn == "mode" {
		best, bestN := vals[0], 0
		for from := 0; from < n; {
			to := from + 1
			for to < n && compareRows(x, vals[from], vals[to]) == 0 {
				to++
			}
			// The first of equally frequent values wins.
			if to-from > bestN {
				best, bestN = vals[from], to-from
			}
			from = to
		}
		st.v, st.set = x.Get(best), true
		return nil
	}
	fv := args[0]
	if fv.IsNull(rows[0]) {
		return nil
	}
	f := fv.Float64s()[rows[0]]
	if f < 0 || f > 1 || math.IsNaN(f) {
		return sqlerr.OutOfRange(-1, "percentile value %s is not between 0 and 1", types.NewFloat64(f))
	}
	if a.Fn == "percentile_disc" {
		k := int(math.Ceil(f * float64(n)))
		if k < 1 {
			k = 1
		}
		st.v, st.set = x.Get(vals[k-1]), true
		return nil
	}
	pos := f * float64(n-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	xs := x.Float64s()
	v := xs[vals[lo]]
	if hi != lo {
		v += (pos - float64(lo)) * (xs[vals[hi]] - v)
	}
	st.v, st.set = types.NewFloat64(v), true
	return nil
}

// fold applies row i of the argument vectors vs to st: the NULL rule and
// DISTINCT of the aggregate, then its step. dk is a reused key buffer.
func fold(st *aggState, a plan.AggCall, vs []*types.Vector, i int, dk *[]byte) error {
	if a.Star {
		st.count++
		return nil
	}
	if vs[0].IsNull(i) && a.Fn != "any_value" && a.Fn != "array_agg" {
		return nil
	}
	if a.Distinct {
		*dk = expr.AppendValueKey((*dk)[:0], vs[0].Get(i))
		if st.seen == nil {
			st.seen = map[string]struct{}{}
		}
		if _, dup := st.seen[string(*dk)]; dup {
			return nil
		}
		st.seen[string(*dk)] = struct{}{}
	}
	return step(st, a, vs, i)
}
