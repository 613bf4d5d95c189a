package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

func init() {
	plan.RegisterExecutor(func(ctx context.Context, env *plan.Env) expr.Runner {
		return newRunner(ctx, env)
	})
}

// CodeOutOfMemory is the SQLSTATE of a query over its memory limit.
const CodeOutOfMemory = "53200"

// errStop ends a pipeline early once a limit is satisfied.
var errStop = errors.New("exec: stop")

type sink interface {
	push(b *types.Batch) error
	finish() error
}

// memBudget is the memory one statement's operators hold, which every
// runner of the statement (subqueries included) shares by pointer.
type memBudget struct {
	used, limit int64
	// ctes holds the rows of the materialized WITH queries run so far
	// (cte.go): kept here, shared like the budget they count against, so
	// the statement computes each once. Made on first use: most
	// statements have none, and a point SELECT should not pay for a map.
	ctes map[*plan.CTE]*types.Batch
	// work holds, per WITH RECURSIVE query being run, the rows its last
	// round added, which its WorkTable nodes read (recursive.go); shared
	// and made on first use like ctes.
	work map[*plan.Recursive]*types.Batch
}

func (m *memBudget) grow(n int64) error {
	m.used += n
	if m.used > m.limit {
		return sqlerr.New(CodeOutOfMemory, "out of memory: query needs more than %d bytes (memory limit)", m.limit)
	}
	return nil
}

// stats are EXPLAIN ANALYZE's counters of one node.
type stats struct {
	rows int64
	dur  time.Duration
	scan string
}

type runner struct {
	ctx     context.Context
	env     *plan.Env
	outer   []types.Value
	mem     *memBudget
	analyze map[plan.Node]*stats
}

// newRunner returns the runner of one statement, its budget allocated
// with it (a point SELECT runs in a handful of allocations).
func newRunner(ctx context.Context, env *plan.Env) *runner {
	rb := &struct {
		r   runner
		mem memBudget
	}{mem: memBudget{limit: env.Limit()}}
	rb.r = runner{ctx: ctx, env: env, mem: &rb.mem}
	return &rb.r
}

// Run executes p and calls fn with each batch of its output.
func Run(ctx context.Context, p *plan.Plan, env *plan.Env, fn func(*types.Batch) error) error {
	r := newRunner(ctx, env)
	if p.Explain {
		var lines []string
		if p.Analyze {
			r.analyze = map[plan.Node]*stats{}
			if err := r.run(p.Root, func(*types.Batch) error { return nil }); err != nil {
				return err
			}
			lines = plan.Explain(p.Root, env.Source, func(n plan.Node) string {
				s := r.analyze[n]
				if s == nil {
					return ""
				}
				t := fmt.Sprintf("rows=%d time=%s", s.rows, s.dur.Round(time.Microsecond))
				if s.scan != "" {
					t += " " + s.scan
				}
				return t
			})
		} else {
			lines = plan.Explain(p.Root, env.Source, nil)
		}
		b := types.NewBatch([]types.Type{types.Of(types.String)}, len(lines))
		for _, l := range lines {
			b.Cols[0].AppendString(l)
		}
		b.Rows = len(lines)
		return fn(b)
	}
	return r.run(p.Root, fn)
}

func (r *runner) run(n plan.Node, fn func(*types.Batch) error) error {
	start, err := r.build(n, &funcSink{fn: fn})
	if err != nil {
		return err
	}
	return start()
}

// Rows implements expr.Runner: a subquery plan run for one tuple of outer
// values, its rows collected.
func (r *runner) Rows(ctx context.Context, p any, outer []types.Value) (*types.Batch, error) {
	pl, ok := p.(*plan.Plan)
	if !ok {
		return nil, fmt.Errorf("exec: subquery plan of type %T", p)
	}
	sub := &runner{ctx: ctx, env: r.env, outer: outer, mem: r.mem, analyze: r.analyze}
	var out *types.Batch
	err := sub.run(pl.Root, func(b *types.Batch) error {
		if out == nil {
			ts := make([]types.Type, len(b.Cols))
			for i, c := range b.Cols {
				ts[i] = c.Type()
			}
			out = types.NewBatch(ts, b.Rows)
		}
		appendBatch(out, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		ts := make([]types.Type, len(pl.Root.Output()))
		for i, c := range pl.Root.Output() {
			ts[i] = c.T
		}
		out = types.NewBatch(ts, 0)
	}
	return out, nil
}

func (r *runner) newCtx() *expr.Ctx { return expr.NewCtx(r.ctx, r, r.outer) }

func appendBatch(dst, src *types.Batch) {
	for j, v := range src.Cols {
		expr.AppendVector(dst.Cols[j], v, 0, src.Rows)
	}
	dst.Rows += src.Rows
}

func batchBytes(b *types.Batch) int64 {
	return int64(b.Rows) * int64(len(b.Cols)) * 16
}

type funcSink struct{ fn func(*types.Batch) error }

func (s *funcSink) push(b *types.Batch) error { return s.fn(b) }
func (s *funcSink) finish() error             { return nil }

// counted wraps a node's output sink with EXPLAIN ANALYZE counters.
type counted struct {
	out sink
	st  *stats
}

func (c *counted) push(b *types.Batch) error {
	c.st.rows += int64(b.Rows)
	t := time.Now()
	err := c.out.push(b)
	c.st.dur -= time.Since(t)
	return err
}
func (c *counted) finish() error { return c.out.finish() }

func layoutOf(n plan.Node) func(int) (int, bool) {
	m := map[int]int{}
	for i, c := range n.Output() {
		m[c.ID] = i
	}
	return func(id int) (int, bool) {
		i, ok := m[id]
		return i, ok
	}
}

func resolve(n plan.Node, es ...expr.Expr) error {
	l := layoutOf(n)
	for _, e := range es {
		if e == nil {
			continue
		}
		if err := expr.Resolve(e, l); err != nil {
			return err
		}
	}
	return nil
}

// build returns the function that runs n's pipeline into out.
func (r *runner) build(n plan.Node, out sink) (func() error, error) {
	var st *stats
	if r.analyze != nil {
		// A node built more than once (a recursive term per round, a
		// subquery per outer tuple) adds up its runs.
		if st = r.analyze[n]; st == nil {
			st = &stats{}
			r.analyze[n] = st
		}
		out = &counted{out: out, st: st}
	}
	start, err := r.buildNode(n, out, st)
	if err != nil || st == nil {
		return start, err
	}
	return func() error {
		t := time.Now()
		err := start()
		st.dur += time.Since(t)
		return err
	}, nil
}

func drive(src func() error, out sink) error {
	err := src()
	if errors.Is(err, errStop) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := out.finish(); err != nil && !errors.Is(err, errStop) {
		return err
	}
	return nil
}
