package exec

import (
	"math"
	"sort"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// frames finds the frame [fs, fe) of sorted positions of each row of one
// window function.
type frames struct {
	g          *winGroup
	fr         plan.Frame
	soff, eoff int64       // ROWS and GROUPS offsets
	sval, eval types.Value // RANGE offsets
	// RANGE with an offset: the one order key, its direction and the
	// non-NULL positions [ns, ne) of the partition starting at nps.
	ov               *types.Vector
	desc, nullsFirst bool
	nps, ns, ne      int
}

// newFrames evaluates f's frame offsets (constants or parameters) and
// checks them as PostgreSQL does: not NULL, not negative.
func (s *windowSink) newFrames(g *winGroup, f *plan.WindowFunc) (*frames, error) {
	fr := &frames{g: g, fr: f.Frame, nps: -1}
	eval := func(b plan.FrameBound, what string) (types.Value, error) {
		if b.Offset == nil {
			return types.Value{}, nil
		}
		s.c.Reset()
		v, err := b.Offset.Eval(s.c, &types.Batch{Rows: 1})
		if err != nil {
			return types.Value{}, err
		}
		x := v.Get(0)
		if x.IsNull() {
			return x, sqlerr.New("22004", "frame %s offset must not be null", what)
		}
		if f.Frame.Mode == plan.FrameRange {
			// PostgreSQL's in_range refuses these, for every type.
			neg := false
			switch {
			case x.Kind() == types.Interval:
				zero, _ := types.NewInterval(0, 0, 0)
				neg = types.Compare(x, zero) < 0
			case x.Kind().IsFloat():
				neg = math.IsNaN(x.Float64()) || x.Float64() < 0
			default:
				neg = types.Compare(x, types.NewInt64(0)) < 0
			}
			if neg {
				return x, sqlerr.New("22013", "invalid preceding or following size in window function")
			}
			return x, nil
		}
		if types.Compare(x, types.NewInt64(0)) < 0 {
			return x, sqlerr.New("22013", "frame %s offset must not be negative", what)
		}
		return x, nil
	}
	var err error
	if fr.sval, err = eval(f.Frame.Start, "starting"); err != nil {
		return nil, err
	}
	if fr.eval, err = eval(f.Frame.End, "ending"); err != nil {
		return nil, err
	}
	if f.Frame.Mode != plan.FrameRange {
		if f.Frame.Start.Offset != nil {
			fr.soff = fr.sval.Int64()
		}
		if f.Frame.End.Offset != nil {
			fr.eoff = fr.eval.Int64()
		}
	} else if len(g.ov) == 1 {
		fr.ov = g.ov[0]
		fr.desc, fr.nullsFirst = g.order[0].Desc, g.order[0].NullsFirst
	}
	return fr, nil
}

// clamp limits x to [lo, hi].
func clamp(x, lo, hi int64) int {
	return int(max(lo, min(hi, x)))
}

// addSat is x + d saturating at the int64 range: an offset may be as
// large as the type allows.
func addSat(x, d int64) int64 {
	s := x + d
	switch {
	case d > 0 && s < x:
		return math.MaxInt64
	case d < 0 && s > x:
		return math.MinInt64
	}
	return s
}

// at returns the frame of sorted position p in the partition [ps, pe).
// An empty frame has fs >= fe.
func (fr *frames) at(p, ps, pe int) (fs, fe int, err error) {
	return fr.bound(fr.fr.Start, fr.soff, fr.sval, p, ps, pe, true), fr.bound(fr.fr.End, fr.eoff, fr.eval, p, ps, pe, false), nil
}

// bound is one end of p's frame: the first position of the frame for the
// start, one past the last for the end.
func (fr *frames) bound(b plan.FrameBound, off int64, val types.Value, p, ps, pe int, start bool) int {
	g := fr.g
	switch b.Kind {
	case plan.UnboundedPreceding:
		return ps
	case plan.UnboundedFollowing:
		return pe
	}
	mode := fr.fr.Mode
	if b.Kind == plan.CurrentRow {
		if mode == plan.FrameRows {
			if start {
				return p
			}
			return p + 1
		}
		if start {
			return g.peerStart[g.peer[p]]
		}
		return g.peerStart[g.peer[p]+1]
	}
	if b.Kind == plan.OffsetPreceding {
		off = -off
	}
	switch mode {
	case plan.FrameRows:
		if start {
			return clamp(addSat(int64(p), off), int64(ps), int64(pe))
		}
		return clamp(addSat(addSat(int64(p), off), 1), int64(ps), int64(pe))
	case plan.FrameGroups:
		first, last := int64(g.peer[ps]), int64(g.peer[pe-1])
		t := addSat(int64(g.peer[p]), off)
		if start {
			if t > last {
				return pe
			}
			return g.peerStart[max(t, first)]
		}
		if t < first {
			return ps
		}
		return g.peerStart[min(t, last)+1]
	}
	return fr.rangeBound(b, val, p, ps, pe, start)
}

// rangeBound is a RANGE frame's offset bound: the rows whose order value
// lies within the offset of p's, NULLs only of each other (a NULL row's
// bound is its peer group's, as in PostgreSQL).
func (fr *frames) rangeBound(b plan.FrameBound, val types.Value, p, ps, pe int, start bool) int {
	g := fr.g
	v := fr.ov
	row := g.perm[p]
	if v.IsNull(row) {
		if start {
			return g.peerStart[g.peer[p]]
		}
		return g.peerStart[g.peer[p]+1]
	}
	if fr.nps != ps {
		fr.nps, fr.ns, fr.ne = ps, ps, pe
		if fr.nullsFirst {
			for fr.ns < pe && v.IsNull(g.perm[fr.ns]) {
				fr.ns++
			}
		} else {
			for fr.ne > ps && v.IsNull(g.perm[fr.ne-1]) {
				fr.ne--
			}
		}
	}
	// PostgreSQL's in_range(val, base, offset, sub, less): the start is
	// the first row with val >= base -/+ offset (<= when descending), the
	// end the first row past val <= base +/- offset; in sort order each
	// test is false then true (or true then false), so a binary search
	// finds it.
	sub := b.Kind == plan.OffsetPreceding
	less := !start
	if fr.desc {
		sub, less = !sub, !less
	}
	in := inRange(v.Get(row), val, sub, less)
	n := fr.ne - fr.ns
	i := sort.Search(n, func(i int) bool {
		return in(v.Get(g.perm[fr.ns+i])) == start
	})
	return fr.ns + i
}

// tsUTC is the type a DATE is compared as against a DATE ± INTERVAL.
var tsUTC = types.Type{Kind: types.DateTime64, Precision: 6}

// inRange returns PostgreSQL's in_range(val, base, off, sub, less) as a
// test of val: whether val <= base ± off (less) or val >= it, computing
// the sum once. Floats follow in_range_float8_float8: NaN sorts after
// every number and is a peer only of NaN, and an infinite offset from an
// infinite base in its own direction includes everything rather than
// computing inf - inf. A sum past the type's range is before or after
// every value, as for integers; a DATE plus an INTERVAL is a timestamp,
// and DATE values are compared as their midnights.
func inRange(base, off types.Value, sub, less bool) func(types.Value) bool {
	if base.Kind().IsFloat() {
		b, o := base.Float64(), off.Float64()
		switch {
		case math.IsNaN(b):
			return func(val types.Value) bool {
				if math.IsNaN(val.Float64()) {
					return true
				}
				return less
			}
		case math.IsInf(o, 0) && math.IsInf(b, 0) && (sub == (b > 0)):
			return func(val types.Value) bool { return !math.IsNaN(val.Float64()) || !less }
		}
		sum := b + o
		if sub {
			sum = b - o
		}
		return func(val types.Value) bool {
			x := val.Float64()
			switch {
			case math.IsNaN(x):
				return !less
			case less:
				return x <= sum
			}
			return x >= sum
		}
	}
	var sum types.Value
	var err error
	date := false
	switch {
	case off.Kind() == types.Interval && base.Kind() == types.Date:
		date = true
		sum, err = types.AddTimeInterval(base, off, sub, tsUTC)
	case off.Kind() == types.Interval && base.Kind() == types.DateTime64:
		sum, err = types.AddTimeInterval(base, off, sub, base.Type())
	case sub:
		sum, err = types.Sub(base, off)
	default:
		sum, err = types.Add(base, off)
	}
	if err != nil {
		// Past the type's range: below every value when subtracting,
		// above every value when adding.
		all := sub != less
		return func(types.Value) bool { return all }
	}
	return func(val types.Value) bool {
		if date {
			val, _ = types.Cast(val, tsUTC)
		}
		c := types.Compare(val, sum)
		if less {
			return c <= 0
		}
		return c >= 0
	}
}

// segs are a frame's rows after EXCLUDE: up to three ranges of sorted
// positions, in order; empty ones have from >= to.
type segs [3][2]int

// segments cuts the EXCLUDE option's rows out of p's frame [fs, fe).
func (fr *frames) segments(p, fs, fe int) segs {
	g := fr.g
	xs, xe := p, p+1
	if fr.fr.Exclude != plan.ExcludeCurrentRow {
		xs, xe = g.peerStart[g.peer[p]], g.peerStart[g.peer[p]+1]
	}
	var s segs
	s[0] = [2]int{fs, min(fe, xs)}
	if fr.fr.Exclude == plan.ExcludeTies && p >= fs && p < fe {
		s[1] = [2]int{p, p + 1}
	}
	s[2] = [2]int{max(fs, xe), fe}
	return s
}

// nth returns the position of the k-th row (0-based) of s, or -1.
func (s *segs) nth(k int) int {
	for _, r := range s {
		if n := r[1] - r[0]; n > 0 {
			if k < n {
				return r[0] + k
			}
			k -= n
		}
	}
	return -1
}

// last returns the position of the last row of s, or -1.
func (s *segs) last() int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i][1] > s[i][0] {
			return s[i][1] - 1
		}
	}
	return -1
}

// holes are the rows of p's frame [fs, fe) that EXCLUDE takes out: the
// frame's part of the excluded range, split around p for EXCLUDE TIES.
func (fr *frames) holes(p, fs, fe int) [2][2]int {
	g := fr.g
	xs, xe := p, p+1
	if fr.fr.Exclude != plan.ExcludeCurrentRow {
		xs, xe = g.peerStart[g.peer[p]], g.peerStart[g.peer[p]+1]
	}
	lo, hi := max(fs, xs), min(fe, xe)
	if fr.fr.Exclude == plan.ExcludeTies && p >= lo && p < hi {
		return [2][2]int{{lo, p}, {p + 1, hi}}
	}
	return [2][2]int{{lo, hi}, {hi, hi}}
}
