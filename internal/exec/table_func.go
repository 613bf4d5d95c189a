package exec

import (
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// buildTableFunction runs a set-returning function in FROM: its arguments
// once (they read only constants, parameters and the enclosing row), then
// its rows in batches of up to expr.TableFuncBatch rows.
func (r *runner) buildTableFunction(x *plan.TableFunction, out sink) func() error {
	return func() error {
		c := r.newCtx()
		one := &types.Batch{Rows: 1}
		args := make([]types.Value, len(x.Args))
		for i, a := range x.Args {
			v, err := a.Eval(c, one)
			if err != nil {
				return err
			}
			args[i] = v.Get(0)
		}
		// A LIMIT above stops Generate through drive's errStop.
		return drive(func() error {
			return x.Fn.Generate(args, func(v *types.Vector) error {
				// A series of billions of rows stops at a cancel or
				// statement_timeout between batches, as a scan does.
				if err := r.ctx.Err(); err != nil {
					return err
				}
				return out.push(&types.Batch{Cols: []*types.Vector{v}, Rows: v.Len()})
			})
		}, out)
	}
}
