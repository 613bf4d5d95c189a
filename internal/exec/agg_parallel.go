package exec

import (
	"cmp"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// Parallel aggregation.
//
// A grouped aggregate straight over a scan folds about 10 ns a row on the
// goroutine that runs the scan, and a scan served from the resolved-scan
// cache costs next to nothing: the statement then runs on one core while
// the others idle. Once an aggregate has folded parallelRows rows into
// few groups, it starts helpers (one per other core), each folding the
// batches it is handed into partial states of its own; the scan's
// goroutine hands a batch on when a helper has room for it and folds it
// itself otherwise, so a cheap scan shares the folding and an expensive
// one overlaps it. At the end the partial states are merged into the
// aggregate's own.
//
// Only what merges exactly takes this road: count, sum of integers whose
// partial sums cannot overflow where the whole sum would not (signed up to
// 64 bits into an INT128, unsigned of any width), avg of integers up to 64
// bits, min and max of any type but the floats; group keys and arguments that are columns of the
// input (evaluating them reads the batch and nothing else, so helpers may
// share it); no DISTINCT, ORDER BY or GROUPING SETS. Groups are emitted in
// the order a serial run meets them (each group keeps the position of the
// first row that made it), so a statement's output does not depend on how
// the batches were shared out.

// parallelRows is the rows an aggregate folds alone before it considers
// helpers: below it the start and merge cost more than they save.
const parallelRows = 64 << 10

// parallelFanIn is the least rows per group at which helpers start: with
// more groups than rows/parallelFanIn, merging the partial states would
// cost about as much as the folding saved.
const parallelFanIn = 64

// parallelOff, set by tests, keeps every aggregate serial; parallelRuns
// counts the aggregates that started helpers.
var (
	parallelOff  bool
	parallelRuns atomic.Int64
)

// aggPar is the helpers of one parallel aggregate.
type aggPar struct {
	ch      chan parBatch
	wg      sync.WaitGroup
	parts   []*aggSink // one per helper, each its own partial states
	started bool
	stopped bool
	failed  atomic.Bool
	mu      sync.Mutex
	err     error // the first helper error
	panic   any   // a helper's panic, raised again on the statement's goroutine
}

// parBatch is a batch handed to a helper with its position in the input.
type parBatch struct {
	b   *types.Batch
	seq int64
}

// parallelAgg reports whether aggregate x over its input may fold on
// several goroutines (see above).
func parallelAgg(x *plan.Aggregate) bool {
	if parallelOff || x.Sets != nil || runtime.GOMAXPROCS(0) < 2 {
		return false
	}
	if sc, ok := x.In.(*plan.Scan); !ok || sc.Key != nil {
		return false
	}
	for _, g := range x.Groups {
		if _, ok := g.(*expr.Col); !ok {
			return false
		}
	}
	for _, a := range x.Aggs {
		if a.Distinct || len(a.Order) > 0 || !mergeable(a) {
			return false
		}
	}
	return true
}

// mergeable reports whether partial states of a merge into what one state
// over all the rows would be, errors included.
func mergeable(a plan.AggCall) bool {
	if a.Star {
		return a.Fn == "count"
	}
	if len(a.Args) != 1 {
		return false
	}
	if _, ok := a.Args[0].(*expr.Col); !ok {
		return false
	}
	k := a.Args[0].Type().Kind
	switch a.Fn {
	case "count":
		return true
	case "min", "max":
		// Not of floats: -0 and 0 compare equal, and which of two equal
		// values a serial run keeps is the one it met first, which
		// partial states do not know.
		return !k.IsFloat()
	case "sum":
		return k.IsSigned() && k.Bits() <= 64 || k.IsUnsigned() && k.Bits() <= 64 || k == types.Uint128 || k == types.Uint256
	case "avg":
		return (k.IsSigned() || k.IsUnsigned()) && k.Bits() <= 64
	}
	return false
}

// keepsInput reports whether sink s may still read a batch pushed to it
// after push returns (a parallel aggregate's helper may): whoever pushes
// must then not reuse the batch.
func keepsInput(s sink) bool {
	switch x := s.(type) {
	case *aggSink:
		return x.par != nil
	case *counted:
		return keepsInput(x.out)
	}
	return false
}

// parallelPush is push for a parallel aggregate: the batch goes to a
// helper with room for it, or is folded here.
func (s *aggSink) parallelPush(b *types.Batch) error {
	p := s.par
	s.seq++
	if !p.started && s.rows >= parallelRows && len(s.states) <= s.rows/parallelFanIn {
		s.startHelpers()
	}
	s.rows += b.Rows
	if p.started {
		if p.failed.Load() {
			return s.stopHelpers()
		}
		select {
		case p.ch <- parBatch{b: b, seq: s.seq}:
			return nil
		default:
		}
	}
	if err := s.eval(b); err != nil {
		return err
	}
	return s.accumulate(b.Rows)
}

// startHelpers starts one helper per other core.
func (s *aggSink) startHelpers() {
	p := s.par
	p.started = true
	parallelRuns.Add(1)
	n := runtime.GOMAXPROCS(0) - 1
	p.ch = make(chan parBatch, 2*n)
	for range n {
		// A helper counts its groups in a budget of its own with the
		// statement's limit, and the statement's budget counts them when
		// they are merged into s's, as a serial run counts them. So a
		// parallel run fails on the memory limit exactly when a serial
		// one does: a helper's groups are some of all of them, each
		// counted alike, and s ends with all of them. (Counting helpers
		// in the statement's budget too would fail a statement a serial
		// run passes, depending on how the batches were shared out.)
		r := &runner{ctx: s.r.ctx, env: s.r.env, outer: s.r.outer, mem: &memBudget{limit: s.r.mem.limit}}
		h := &aggSink{n: s.n, r: r, c: r.newCtx(), index: map[string]int{}, ord: make([]*ordBuf, len(s.n.Aggs)), track: true}
		p.parts = append(p.parts, h)
		p.wg.Add(1)
		go h.help(p)
	}
}

// help folds the batches of p.ch into h's states until the channel closes;
// after an error it only drains them.
func (h *aggSink) help(p *aggPar) {
	defer p.wg.Done()
	defer func() {
		if x := recover(); x != nil {
			p.mu.Lock()
			if p.panic == nil {
				p.panic = x
			}
			p.mu.Unlock()
			p.failed.Store(true)
			for range p.ch {
			}
		}
	}()
	for pb := range p.ch {
		if p.failed.Load() {
			continue
		}
		h.seq = pb.seq
		err := h.eval(pb.b)
		if err == nil {
			err = h.accumulate(pb.b.Rows)
		}
		if err != nil {
			p.mu.Lock()
			if p.err == nil {
				p.err = err
			}
			p.mu.Unlock()
			p.failed.Store(true)
		}
	}
}

// stopHelpers closes the helpers' channel, waits for them and returns
// their first error (a helper's panic is raised again here). It may be
// called more than once.
func (s *aggSink) stopHelpers() error {
	p := s.par
	if p == nil || !p.started {
		return nil
	}
	if !p.stopped {
		p.stopped = true
		close(p.ch)
		p.wg.Wait()
	}
	if p.panic != nil {
		panic(p.panic)
	}
	return p.err
}

// mergeHelpers stops the helpers and merges their states into s's, then
// puts s's groups back in the order of their first rows.
func (s *aggSink) mergeHelpers() error {
	if err := s.stopHelpers(); err != nil {
		return err
	}
	p := s.par
	if p == nil || !p.started {
		return nil
	}
	for _, h := range p.parts {
		if err := s.merge(h); err != nil {
			return err
		}
	}
	p.parts = nil
	ng := len(s.n.Groups)
	if ng == 0 {
		return nil
	}
	// Put the groups in first-row order.
	order := make([]int, len(s.states))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(s.first[a], s.first[b]) })
	groups := make([]types.Value, 0, len(s.groups))
	states := make([][]aggState, 0, len(s.states))
	for _, g := range order {
		groups = append(groups, s.groups[g*ng:(g+1)*ng]...)
		states = append(states, s.states[g])
	}
	s.groups, s.states = groups, states
	return nil
}

// merge folds helper h's groups and states into s's.
func (s *aggSink) merge(h *aggSink) error {
	if len(h.states) == 0 {
		return nil
	}
	ng := len(s.n.Groups)
	s.gv = s.gv[:0]
	for j, g := range s.n.Groups {
		v := types.NewVector(g.Type(), len(h.states))
		for i := range h.states {
			v.Append(h.groups[i*ng+j])
		}
		s.gv = append(s.gv, v)
	}
	// Groups new to s get a position after every row's; the helper's
	// first rows replace it below.
	s.seq = math.MaxInt32
	if err := s.groupIDs(len(h.states)); err != nil {
		return err
	}
	for i, g := range s.gids {
		if ng > 0 && h.first[i] < s.first[g] {
			s.first[g] = h.first[i]
		}
		for j, a := range s.n.Aggs {
			if err := mergeState(&s.states[g][j], &h.states[i][j], a); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeState folds partial state src of aggregate a into dst.
func mergeState(dst, src *aggState, a plan.AggCall) error {
	dst.count += src.count
	if a.Star || a.Fn == "count" || !src.set {
		return nil
	}
	if !dst.set {
		c := dst.count
		*dst = *src
		dst.count = c
		return nil
	}
	k := a.Args[0].Type().Kind
	switch {
	case src.fast && a.Fn == "sum" && k.IsSigned():
		var c uint64
		dst.lo, c = bits.Add64(dst.lo, src.lo, 0)
		dst.hi += src.hi + int64(c)
	case src.fast && a.Fn == "sum":
		if add256(&dst.w, &src.w) != 0 && a.T.Kind == types.Uint256 {
			return sqlerr.OutOfRange(a.Pos, "UINT256 overflow in sum()")
		}
	case src.fast: // min, max of INT64
		if a.Fn == "max" && src.i64 > dst.i64 || a.Fn == "min" && src.i64 < dst.i64 {
			dst.i64 = src.i64
		}
	case a.Fn == "min" || a.Fn == "max":
		want := 1
		if a.Fn == "min" {
			want = -1
		}
		if types.Compare(src.v, dst.v) == want {
			dst.v = src.v
		}
	case a.Fn == "avg":
		v, err := types.Add(dst.v, src.v)
		if err == nil && v.Type() != dst.v.Type() {
			v, err = types.Cast(v, dst.v.Type())
		}
		if err != nil {
			return sqlerr.OutOfRange(a.Pos, "%s overflow in avg()", dst.v.Type())
		}
		dst.v = v
	}
	return nil
}
