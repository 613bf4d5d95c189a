package exec

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// unionSink forwards both inputs and finishes once, after the second.
type unionSink struct {
	out      sink
	finished int
}

func (u *unionSink) push(b *types.Batch) error { return u.out.push(b) }
func (u *unionSink) finish() error {
	u.finished++
	if u.finished == 2 {
		return u.out.finish()
	}
	return nil
}

// countSink counts the right input's rows per distinct row.
type countSink struct {
	r      *runner
	counts map[string]int
	keys   [][]byte
}

func (c *countSink) push(b *types.Batch) error {
	c.keys = rowKeys(c.keys, b.Cols, b.Rows)
	for _, k := range c.keys {
		if _, ok := c.counts[string(k)]; !ok {
			if err := c.r.mem.grow(int64(len(k)) + 32); err != nil {
				return err
			}
		}
		c.counts[string(k)]++
	}
	return nil
}
func (c *countSink) finish() error { return nil }

// probeSetSink runs INTERSECT / EXCEPT [ALL] against the right side's
// counts.
type probeSetSink struct {
	kind    plan.SetOpKind
	all     bool
	counts  map[string]int
	emitted map[string]bool
	out     sink
	keys    [][]byte
	sel     []int
}

func (p *probeSetSink) push(b *types.Batch) error {
	p.keys = rowKeys(p.keys, b.Cols, b.Rows)
	p.sel = p.sel[:0]
	for i, k := range p.keys {
		ks := string(k)
		n := p.counts[ks]
		keep := false
		switch {
		case p.kind == plan.Intersect && p.all:
			if n > 0 {
				p.counts[ks] = n - 1
				keep = true
			}
		case p.kind == plan.Intersect:
			keep = n > 0 && !p.emitted[ks]
		case p.all: // EXCEPT ALL
			if n > 0 {
				p.counts[ks] = n - 1
			} else {
				keep = true
			}
		default:
			keep = n == 0 && !p.emitted[ks]
		}
		if keep {
			if !p.all {
				p.emitted[ks] = true
			}
			p.sel = append(p.sel, i)
		}
	}
	if len(p.sel) == 0 {
		return nil
	}
	return p.out.push(expr.Gather(nil, b, p.sel))
}
func (p *probeSetSink) finish() error { return p.out.finish() }

func (r *runner) buildSetOp(x *plan.SetOp, out sink) (func() error, error) {
	if x.Kind == plan.Union {
		if !x.All {
			out = &distinctSink{out: out, r: r, seen: map[string]struct{}{}}
		}
		u := &unionSink{out: out}
		l, err := r.build(x.L, u)
		if err != nil {
			return nil, err
		}
		rr, err := r.build(x.R, u)
		if err != nil {
			return nil, err
		}
		return func() error {
			if err := l(); err != nil {
				return err
			}
			return rr()
		}, nil
	}
	cs := &countSink{r: r, counts: map[string]int{}}
	rr, err := r.build(x.R, cs)
	if err != nil {
		return nil, err
	}
	l, err := r.build(x.L, &probeSetSink{kind: x.Kind, all: x.All, counts: cs.counts, emitted: map[string]bool{}, out: out})
	if err != nil {
		return nil, err
	}
	return func() error {
		if err := rr(); err != nil {
			return err
		}
		return l()
	}, nil
}
