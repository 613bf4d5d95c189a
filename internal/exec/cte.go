package exec

import (
	"errors"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// cteBatchRows is the size of the batches a CTE scan hands on.
const cteBatchRows = 1024

// buildCTEScan reads a materialized WITH query: the first scan of the
// statement to start runs the definition and keeps its rows in r.mem.ctes
// (shared with subquery runners, so the statement computes it once and
// every reference, volatile functions included, sees the same rows); each
// scan then hands on copies of them, since the operators above may modify
// their input.
func (r *runner) buildCTEScan(x *plan.CTEScan, out sink) func() error {
	return func() error {
		rows, err := r.materialize(x.CTE)
		if err != nil {
			return err
		}
		return drive(func() error {
			ts := make([]types.Type, len(x.Cols))
			for i, c := range x.Cols {
				ts[i] = c.T
			}
			for from := 0; from < rows.Rows; from += cteBatchRows {
				to := min(from+cteBatchRows, rows.Rows)
				b := types.NewBatch(ts, to-from)
				for j, v := range rows.Cols {
					expr.AppendVector(b.Cols[j], v, from, to)
				}
				b.Rows = to - from
				if err := out.push(b); err != nil {
					return err
				}
			}
			return nil
		}, out)
	}
}

// materialize returns the rows of c, running its definition the first
// time. The rows count against the query's memory limit; a definition
// over it fails with 53200 naming the WITH query.
func (r *runner) materialize(c *plan.CTE) (*types.Batch, error) {
	if b := r.mem.ctes[c]; b != nil {
		return b, nil
	}
	out := c.Root.Output()
	ts := make([]types.Type, len(out))
	for i, col := range out {
		ts[i] = col.T
	}
	acc := types.NewBatch(ts, 0)
	err := r.run(c.Root, func(b *types.Batch) error {
		if b.Rows == 0 {
			return nil
		}
		if err := r.mem.grow(batchBytes(b)); err != nil {
			return sqlerr.New(CodeOutOfMemory, "out of memory: WITH query %q needs more than %d bytes (memory limit)", c.Name, r.mem.limit).
				WithHint("write it AS NOT MATERIALIZED to compute it at each reference instead, or raise the query memory limit (Options.QueryMemLimit)")
		}
		appendBatch(acc, b)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	if r.mem.ctes == nil {
		r.mem.ctes = map[*plan.CTE]*types.Batch{}
	}
	r.mem.ctes[c] = acc
	return acc, nil
}
