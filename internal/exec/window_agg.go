package exec

import (
	"math"
	"math/bits"

	"github.com/holiman/uint256"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// frameAgg is one aggregate's state over the frame [s, e) of sorted
// positions it has folded.
type frameAgg struct {
	call plan.AggCall
	vs   []*types.Vector
	perm []int
	st   aggState
	s, e int
	// invertible: rows leaving the frame's start can be subtracted
	// exactly (count; sum and avg of integers and decimals; not floats,
	// whose sums would round differently from a fresh fold).
	invertible bool
	// ints: sum or avg of a signed integer up to 64 bits, kept as a
	// 128-bit two's complement (st.hi, st.lo) by typed loops that neither
	// allocate nor call through types.Value arithmetic.
	ints bool
	xs   []int64
}

func newFrameAgg(f *plan.WindowFunc, vs []*types.Vector, perm []int) *frameAgg {
	a := &frameAgg{call: plan.AggCall{Fn: f.Fn, Args: f.Args, Star: f.Star, T: f.T}, vs: vs, perm: perm}
	switch {
	case f.Star || f.Fn == "count":
		a.invertible = true
	case f.Fn == "sum" || f.Fn == "avg":
		k := vs[0].Type().Kind
		a.invertible = k.IsInteger() || k == types.Decimal
		if k.IsSigned() && k.Bits() <= 64 {
			a.ints, a.xs = true, vs[0].Int64s()
		}
	}
	return a
}

// addInts and removeInts are add and remove for a.ints.
func (a *frameAgg) addInts(from, to int) {
	v, st := a.vs[0], &a.st
	nulls := v.HasNulls()
	for p := from; p < to; p++ {
		i := a.perm[p]
		if nulls && v.IsNull(i) {
			continue
		}
		x := a.xs[i]
		var c uint64
		st.lo, c = bits.Add64(st.lo, uint64(x), 0)
		st.hi += x>>63 + int64(c)
		st.count++
	}
}

func (a *frameAgg) removeInts(from, to int) {
	v, st := a.vs[0], &a.st
	nulls := v.HasNulls()
	for p := from; p < to; p++ {
		i := a.perm[p]
		if nulls && v.IsNull(i) {
			continue
		}
		x := a.xs[i]
		var b uint64
		st.lo, b = bits.Sub64(st.lo, uint64(x), 0)
		st.hi -= x>>63 + int64(b)
		st.count--
	}
}

// value is the aggregate's value over the frame it holds.
func (a *frameAgg) value() (types.Value, error) {
	if !a.ints {
		return result(&a.st, a.call)
	}
	if a.st.count == 0 {
		return types.Null(a.call.T), nil
	}
	var w uint256.Int
	w[0], w[1] = a.st.lo, uint64(a.st.hi)
	if a.st.hi < 0 {
		w[2], w[3] = math.MaxUint64, math.MaxUint64
	}
	if a.call.Fn == "sum" {
		return types.NewWide(a.call.T, w)
	}
	sum, err := types.NewWide(types.Of(types.Int128), w)
	if err != nil {
		return sum, err
	}
	st := aggState{v: sum, set: true, count: a.st.count}
	return result(&st, a.call)
}

// reset empties the state, keeping the list aggregates' buffers.
func (a *frameAgg) reset(at int) {
	buf, tmp := a.st.buf[:0], a.st.tmp[:0]
	a.st = aggState{buf: buf, tmp: tmp}
	a.s, a.e = at, at
}

// add folds the positions [from, to) in.
func (a *frameAgg) add(from, to int) error {
	if a.ints {
		a.addInts(from, to)
		return nil
	}
	c := &a.call
	for p := from; p < to; p++ {
		i := a.perm[p]
		if c.Star {
			a.st.count++
			continue
		}
		if a.vs[0].IsNull(i) && c.Fn != "any_value" && c.Fn != "array_agg" {
			continue
		}
		if err := step(&a.st, *c, a.vs, i); err != nil {
			return err
		}
	}
	return nil
}

// remove takes the positions [from, to) out (invertible aggregates only).
func (a *frameAgg) remove(from, to int) error {
	if a.ints {
		a.removeInts(from, to)
		return nil
	}
	c := &a.call
	for p := from; p < to; p++ {
		i := a.perm[p]
		if c.Star {
			a.st.count--
			continue
		}
		if a.vs[0].IsNull(i) {
			continue
		}
		a.st.count--
		if c.Fn == "count" {
			continue
		}
		if a.st.count == 0 {
			a.st.set = false
			continue
		}
		v, err := types.Sub(a.st.v, a.vs[0].Get(i))
		if err != nil {
			return err
		}
		if v.Type() != a.st.v.Type() {
			if v, err = types.Cast(v, a.st.v.Type()); err != nil {
				return err
			}
		}
		a.st.v = v
	}
	return nil
}

// move makes the state hold the frame [fs, fe).
func (a *frameAgg) move(fs, fe int) error {
	if fe <= fs {
		a.reset(fs)
		return nil
	}
	switch {
	case fs == a.s && fe >= a.e:
	case a.invertible && fs >= a.s && fe >= a.e && fs <= a.e:
		if err := a.remove(a.s, fs); err != nil {
			return err
		}
		a.s = fs
	default:
		a.reset(fs)
	}
	if err := a.add(a.e, fe); err != nil {
		return err
	}
	a.e = fe
	return nil
}

// aggregate fills out with aggregate f over the frame of every sorted
// position of g.
func (s *windowSink) aggregate(g *winGroup, f *plan.WindowFunc, args []*types.Vector, out *types.Vector) error {
	fr, err := s.newFrames(g, f)
	if err != nil {
		return err
	}
	a := newFrameAgg(f, args, g.perm)
	if f.Frame.Exclude != plan.ExcludeNone {
		return s.aggregateExcluding(fr, a, out)
	}
	if (f.Fn == "min" || f.Fn == "max") && f.Frame.Start.Kind != plan.UnboundedPreceding {
		return s.slidingExtreme(fr, f, args[0], out)
	}
	for pi := 0; pi+1 < len(g.partStart); pi++ {
		ps, pe := g.partStart[pi], g.partStart[pi+1]
		a.reset(ps)
		prevS, prevE := -1, -1
		var last types.Value
		for p := ps; p < pe; p++ {
			fs, fe, err := fr.at(p, ps, pe)
			if err != nil {
				return err
			}
			if fe < fs {
				fe = fs
			}
			if fs == prevS && fe == prevE {
				out.Append(last)
				continue
			}
			if err := a.move(fs, fe); err != nil {
				return err
			}
			if last, err = a.value(); err != nil {
				return err
			}
			out.Append(last)
			prevS, prevE = fs, fe
		}
	}
	return nil
}

// aggregateExcluding is aggregate for a frame with EXCLUDE: an invertible
// aggregate keeps its frame incrementally and takes the excluded rows out
// for the value (then puts them back); any other folds the frame's
// segments afresh for each row.
func (s *windowSink) aggregateExcluding(fr *frames, a *frameAgg, out *types.Vector) error {
	g := fr.g
	for pi := 0; pi+1 < len(g.partStart); pi++ {
		ps, pe := g.partStart[pi], g.partStart[pi+1]
		a.reset(ps)
		for p := ps; p < pe; p++ {
			fs, fe, err := fr.at(p, ps, pe)
			if err != nil {
				return err
			}
			fe = max(fe, fs)
			sg := fr.segments(p, fs, fe)
			holes := fr.holes(p, fs, fe)
			var v types.Value
			if a.invertible {
				if err := a.move(fs, fe); err != nil {
					return err
				}
				for _, h := range holes {
					if h[1] > h[0] {
						if err := a.remove(h[0], h[1]); err != nil {
							return err
						}
					}
				}
				if v, err = a.value(); err != nil {
					return err
				}
				for _, h := range holes {
					if h[1] > h[0] {
						if err := a.add(h[0], h[1]); err != nil {
							return err
						}
					}
				}
			} else {
				a.reset(fs)
				for _, r := range sg {
					if r[1] > r[0] {
						if err := a.add(r[0], r[1]); err != nil {
							return err
						}
					}
				}
				if v, err = a.value(); err != nil {
					return err
				}
				a.reset(ps)
			}
			out.Append(v)
		}
	}
	return nil
}

// slidingExtreme is min or max over a frame whose start moves: the frame's
// bounds only move forward, so a deque of positions whose values are
// strictly better than every later one's holds the answer at its front,
// and each row enters and leaves it once (no refold of the frame).
func (s *windowSink) slidingExtreme(fr *frames, f *plan.WindowFunc, v *types.Vector, out *types.Vector) error {
	g := fr.g
	want := -1 // min: a later value that compares <= evicts
	if f.Fn == "max" {
		want = 1
	}
	nulls := v.HasNulls()
	dq := make([]int, 0, 64)
	for pi := 0; pi+1 < len(g.partStart); pi++ {
		ps, pe := g.partStart[pi], g.partStart[pi+1]
		dq = dq[:0]
		head, e := 0, ps // dq[head:] is live; e is the next position to enter
		lastFs := ps
		for p := ps; p < pe; p++ {
			fs, fe, err := fr.at(p, ps, pe)
			if err != nil {
				return err
			}
			if fs < lastFs || fe < e {
				// A frame that moved back (not one of ours, but cheap to
				// survive): start the deque again.
				dq, head, e = dq[:0], 0, fs
			}
			lastFs = fs
			for ; e < fe; e++ {
				row := g.perm[e]
				if nulls && v.IsNull(row) {
					continue
				}
				for len(dq) > head {
					c := compareRows(v, row, g.perm[dq[len(dq)-1]])
					if c != want && c != 0 {
						break
					}
					dq = dq[:len(dq)-1]
				}
				dq = append(dq, e)
			}
			for head < len(dq) && dq[head] < fs {
				head++
			}
			if head > 1024 && head*2 > len(dq) {
				dq = append(dq[:0], dq[head:]...)
				head = 0
			}
			if head == len(dq) || fs >= fe {
				out.AppendNull()
				continue
			}
			out.AppendFrom(v, g.perm[dq[head]])
		}
	}
	return nil
}
