package exec

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

func (r *runner) buildNode(n plan.Node, out sink, st *stats) (func() error, error) {
	switch x := n.(type) {
	case *plan.Scan:
		f, err := r.filterSink(n, x.Filter, out)
		if err != nil {
			return nil, err
		}
		spec := storage.ScanSpec{Table: x.Table.ID, AsOf: x.AsOf, After: x.After, Cols: x.ColIDs, Commit: x.Commit, Ranges: x.Ranges, ReadOnly: readsOnly(f)}
		if x.Key != nil {
			return r.lookup(x, spec, f, st), nil
		}
		spec.Index = indexProbe(x.Index)
		return func() error {
			ss, err := r.env.Source.Scan(r.ctx, spec, f.push)
			if st != nil {
				st.scan = scanStats(ss)
			}
			if err != nil {
				return stopOr(err)
			}
			return drive(func() error { return nil }, f)
		}, nil
	case *plan.Versions:
		f, err := r.filterSink(n, x.Filter, out)
		if err != nil {
			return nil, err
		}
		spec := storage.ScanSpec{Table: x.Table.ID, AsOf: x.AsOf, Cols: x.ColIDs, Ranges: x.Ranges, Index: indexProbe(x.Index)}
		return func() error {
			ss, err := r.env.Source.Versions(r.ctx, spec, f.push)
			if st != nil {
				st.scan = scanStats(ss)
			}
			if err != nil {
				return stopOr(err)
			}
			return drive(func() error { return nil }, f)
		}, nil
	case *plan.VirtualScan:
		f, err := r.filterSink(n, x.Filter, out)
		if err != nil {
			return nil, err
		}
		return func() error {
			b, err := x.V.Rows(r.ctx, r.env.Source)
			if err != nil {
				return err
			}
			return drive(func() error { return f.push(b) }, f)
		}, nil
	case *plan.TableFunction:
		return r.buildTableFunction(x, out), nil
	case *plan.Values:
		return func() error {
			c := r.newCtx()
			one := &types.Batch{Rows: 1}
			ts := make([]types.Type, len(x.Cols))
			for i, col := range x.Cols {
				ts[i] = col.T
			}
			b := types.NewBatch(ts, len(x.Rows))
			for _, row := range x.Rows {
				c.Reset()
				for j, e := range row {
					v, err := e.Eval(c, one)
					if err != nil {
						return err
					}
					val := v.Get(0)
					if !val.IsNull() && val.Type() != ts[j] {
						if val, err = types.Cast(val, ts[j]); err != nil {
							return expr.CastError(-1, val, ts[j], err)
						}
					}
					b.Cols[j].Append(val)
				}
			}
			b.Rows = len(x.Rows)
			return drive(func() error { return out.push(b) }, out)
		}, nil
	case *plan.Filter:
		f, err := r.filterSink(x.In, x.Cond, out)
		if err != nil {
			return nil, err
		}
		return r.build(x.In, f)
	case *plan.Project:
		if err := resolve(x.In, x.Exprs...); err != nil {
			return nil, err
		}
		return r.build(x.In, &projectSink{exprs: x.Exprs, out: out, c: r.newCtx()})
	case *plan.Limit:
		return r.build(x.In, &limitSink{count: x.Count, offset: x.Offset, out: out})
	case *plan.Sort:
		keys := make([]expr.Expr, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = k.E
		}
		if err := resolve(x.In, keys...); err != nil {
			return nil, err
		}
		return r.build(x.In, &sortSink{keys: x.Keys, out: out, r: r, c: r.newCtx()})
	case *plan.TopN:
		return r.buildTopN(x, out)
	case *plan.Distinct:
		d := &distinctSink{out: out, r: r, seen: map[string]struct{}{}}
		if len(x.On) > 0 {
			l := layoutOf(x.In)
			for _, c := range x.On {
				i, ok := l(c.ID)
				if !ok {
					return nil, fmt.Errorf("exec: DISTINCT ON column %s (#%d) is not in the input", c.Name, c.ID)
				}
				d.on = append(d.on, i)
			}
		}
		return r.build(x.In, d)
	case *plan.Aggregate:
		return r.buildAgg(x, out)
	case *plan.Window:
		return r.buildWindow(x, out)
	case *plan.Join:
		return r.buildJoin(x, out)
	case *plan.Lateral:
		return r.buildLateral(x, out)
	case *plan.SetOp:
		return r.buildSetOp(x, out)
	case *plan.Recursive:
		return r.buildRecursive(x, out)
	case *plan.WorkTable:
		return r.buildWorkTable(x, out), nil
	case *plan.CTEScan:
		return r.buildCTEScan(x, out), nil
	}
	return nil, fmt.Errorf("exec: no operator for %T", n)
}

// lookup reads the one row of a scan whose filter pins the full key
// through the source's point lookup: no range scan, no block decoding of
// other keys. The row goes through the scan's filter like any other.
func (r *runner) lookup(x *plan.Scan, spec storage.ScanSpec, f sink, st *stats) func() error {
	return func() error {
		spec := spec // a copy: the closure then holds spec by value, not on the heap
		if st != nil {
			// EXPLAIN ANALYZE shows what the lookup read (path, and pages
			// cached and decoded per part kind).
			spec.Trace = &storage.LookupTrace{}
		}
		b := lookupBatch(x)
		ok, err := r.env.Source.LookupInto(r.ctx, x.Table.ID, x.Key, spec, b)
		if st != nil {
			st.scan = "lookup " + spec.Trace.String()
		}
		if err != nil {
			return err
		}
		return drive(func() error {
			if !ok {
				return nil
			}
			return f.push(b)
		}, f)
	}
}

// lookupBatch is the empty one-row batch a lookup of x fills.
func lookupBatch(x *plan.Scan) *types.Batch {
	out := x.Output()
	ts := make([]types.Type, len(out))
	for i, c := range out {
		ts[i] = c.T
	}
	return types.NewBatch(ts, 1)
}

// indexProbe is the storage probe of an index use, nil without one.
func indexProbe(u *plan.IndexUse) *storage.IndexProbe {
	if u == nil {
		return nil
	}
	return &storage.IndexProbe{Col: u.Col, Values: u.Values}
}

// stopOr is the error of a scan whose callback may have stopped it: the
// errStop of a satisfied LIMIT is success, not an error for the caller.
func stopOr(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

func scanStats(s storage.ScanStats) string {
	out := fmt.Sprintf("shards=%d parts=%d parts_skipped=%d blocks=%d blocks_skipped=%d rows_read=%d", s.Shards, s.Parts, s.PartsSkipped, s.Blocks, s.BlocksSkipped, s.RowsRead)
	if s.CachedShards > 0 {
		out += fmt.Sprintf(" shards_cached=%d", s.CachedShards)
	}
	if ix := s.Index; ix != nil {
		// What the index read touched before the scan (R10.2): its
		// parts, granules (pages) and rows, the candidate keys it found,
		// or why it fell back to scanning everything.
		out += fmt.Sprintf(" index_parts=%d index_parts_skipped=%d index_blocks=%d index_granules=%d index_granules_skipped=%d index_rows_read=%d index_mem_rows=%d",
			ix.Parts, ix.PartsSkipped, ix.Blocks, ix.Granules, ix.GranulesSkipped, ix.RowsRead, ix.MemRows)
		if ix.FullScan {
			out += " index_fallback=" + strconv.Quote(ix.Why)
		} else if !ix.Append {
			out += fmt.Sprintf(" candidates=%d", ix.Candidates)
		}
	}
	return out
}

// readsOnly reports whether sink s never modifies the batches pushed to
// it (storage.ScanSpec.ReadOnly): a grouped aggregate folds its input
// into its own states, and a filter hands on the batch or its own copy.
// Other sinks may keep input vectors in their output and are not asked.
func readsOnly(s sink) bool {
	switch x := s.(type) {
	case *aggSink:
		return true
	case *filterSink:
		return readsOnly(x.out)
	}
	return false
}

// filterSink keeps the rows where cond is TRUE, through a selection vector.
type filterSink struct {
	cond expr.Expr
	out  sink
	c    *expr.Ctx
	sel  []int
	buf  *types.Batch
	// fresh makes every selection a new batch: out may still read the
	// last one after push returns (keepsInput).
	fresh bool
}

func (r *runner) filterSink(in plan.Node, cond expr.Expr, out sink) (sink, error) {
	if cond == nil {
		return out, nil
	}
	if err := resolve(in, cond); err != nil {
		return nil, err
	}
	return &filterSink{cond: cond, out: out, c: r.newCtx(), fresh: keepsInput(out)}, nil
}

func (f *filterSink) push(b *types.Batch) error {
	f.c.Reset()
	v, err := f.cond.Eval(f.c, b)
	if err != nil {
		return err
	}
	f.sel = expr.Selection(f.sel[:0], v, b.Rows)
	switch len(f.sel) {
	case 0:
		return nil
	case b.Rows:
		return f.out.push(b)
	}
	if f.fresh {
		f.buf = nil
	}
	f.buf = expr.Gather(f.buf, b, f.sel)
	return f.out.push(f.buf)
}
func (f *filterSink) finish() error { return f.out.finish() }

type projectSink struct {
	exprs []expr.Expr
	out   sink
	c     *expr.Ctx
	b     types.Batch
}

func (p *projectSink) push(b *types.Batch) error {
	p.c.Reset()
	if cap(p.b.Cols) < len(p.exprs) {
		p.b.Cols = make([]*types.Vector, len(p.exprs))
	}
	p.b.Cols = p.b.Cols[:len(p.exprs)]
	for i, e := range p.exprs {
		v, err := e.Eval(p.c, b)
		if err != nil {
			return err
		}
		p.b.Cols[i] = v
	}
	p.b.Rows = b.Rows
	return p.out.push(&p.b)
}
func (p *projectSink) finish() error { return p.out.finish() }

type limitSink struct {
	count, offset int64
	seen, sent    int64
	out           sink
	sel           []int
	buf           *types.Batch
	done          bool
}

func (l *limitSink) push(b *types.Batch) error {
	if l.done {
		return errStop
	}
	from := int64(0)
	if l.seen < l.offset {
		from = min(l.offset-l.seen, int64(b.Rows))
	}
	l.seen += int64(b.Rows)
	to := int64(b.Rows)
	if l.count >= 0 {
		to = min(to, from+l.count-l.sent)
	}
	if to > from {
		l.sel = l.sel[:0]
		for i := from; i < to; i++ {
			l.sel = append(l.sel, int(i))
		}
		l.buf = expr.Gather(l.buf, b, l.sel)
		l.sent += to - from
		if err := l.out.push(l.buf); err != nil {
			return err
		}
	}
	if l.count >= 0 && l.sent >= l.count {
		l.done = true
		if err := l.out.finish(); err != nil {
			return err
		}
		return errStop
	}
	return nil
}
func (l *limitSink) finish() error {
	if l.done {
		return nil
	}
	l.done = true
	return l.out.finish()
}
