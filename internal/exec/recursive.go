package exec

import (
	"errors"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// buildRecursive runs WITH RECURSIVE to its fixpoint: the non-recursive
// term once, then the recursive term again and again over the rows the
// round before added (its WorkTable nodes read them from r.mem.work), until a
// round adds none. Each round's rows are pushed as soon as the round ends,
// so a LIMIT above stops the loop. Without ALL a row already produced is
// dropped, which also ends cycles. Every kept row counts against the
// memory limit: a recursion that never ends fails with 53200 instead of
// exhausting memory (PostgreSQL would run until stopped).
func (r *runner) buildRecursive(x *plan.Recursive, out sink) (func() error, error) {
	return func() error {
		var seen map[string]struct{}
		if !x.All {
			seen = map[string]struct{}{}
		}
		var keys [][]byte
		var sel []int
		round := func(n plan.Node) (*types.Batch, error) {
			ts := make([]types.Type, len(x.Cols))
			for i, c := range x.Cols {
				ts[i] = c.T
			}
			acc := types.NewBatch(ts, 0)
			err := r.run(n, func(b *types.Batch) error {
				if b.Rows == 0 {
					return nil
				}
				if seen != nil {
					keys = rowKeys(keys, b.Cols, b.Rows)
					sel = sel[:0]
					for i, k := range keys {
						if _, dup := seen[string(k)]; dup {
							continue
						}
						seen[string(k)] = struct{}{}
						sel = append(sel, i)
					}
					if len(sel) == 0 {
						return nil
					}
					if len(sel) < b.Rows {
						b = expr.Gather(nil, b, sel)
					}
				}
				if err := r.mem.grow(batchBytes(b)); err != nil {
					return err
				}
				appendBatch(acc, b)
				return nil
			})
			return acc, err
		}
		work, err := round(x.Init)
		for err == nil && work.Rows > 0 {
			if err = out.push(work); err != nil {
				break
			}
			if err = r.ctx.Err(); err != nil {
				break
			}
			if r.mem.work == nil {
				r.mem.work = map[*plan.Recursive]*types.Batch{}
			}
			saved := r.mem.work[x]
			r.mem.work[x] = work
			work, err = round(x.Step)
			r.mem.work[x] = saved
		}
		if errors.Is(err, errStop) {
			return nil
		}
		if err != nil {
			return err
		}
		return out.finish()
	}, nil
}

// buildWorkTable pushes the rows the current round of its recursive query
// reads.
func (r *runner) buildWorkTable(x *plan.WorkTable, out sink) func() error {
	return func() error {
		return drive(func() error {
			if b := r.mem.work[x.Rec]; b != nil && b.Rows > 0 {
				return out.push(b)
			}
			return nil
		}, out)
	}
}
