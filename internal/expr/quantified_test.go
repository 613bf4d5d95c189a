package expr

import (
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// TestQuantified checks x op ANY/ALL against the rows' three-valued OR and
// AND, computed row by row, for every operator the binder sends here.
func TestQuantified(t *testing.T) {
	null := types.Null(types.Of(types.Int64))
	sets := [][]types.Value{
		{types.NewInt64(2)},
		{types.NewInt64(2), types.NewInt64(2)},
		{types.NewInt64(1), types.NewInt64(3)},
		{types.NewInt64(2), null},
		{types.NewInt64(1), types.NewInt64(3), null},
		{null},
	}
	for _, rows := range sets {
		r := &subResult{exists: true}
		for _, v := range rows {
			if v.IsNull() {
				r.hasNull = true
				continue
			}
			if r.nonNull == 0 || types.Compare(v, r.min) < 0 {
				r.min = v
			}
			if r.nonNull == 0 || types.Compare(v, r.max) > 0 {
				r.max = v
			}
			r.nonNull++
		}
		for x := int64(0); x <= 4; x++ {
			xv := types.NewInt64(x)
			for _, op := range []CmpOp{EQ, NE, LT, LE, GT, GE} {
				for _, all := range []bool{false, true} {
					if op == EQ && !all || op == NE && all {
						continue // bound as IN / NOT IN
					}
					// The reference: fold the rows with three-valued OR (ANY)
					// or AND (ALL).
					want := 0
					if all {
						want = 1
					}
					for _, v := range rows {
						c := -1
						if !v.IsNull() {
							c = 0
							if op.Holds(types.Compare(xv, v)) {
								c = 1
							}
						}
						switch {
						case all && (c == 0 || want == 0):
							want = 0
						case all && c == -1:
							want = -1
						case !all && (c == 1 || want == 1):
							want = 1
						case !all && c == -1:
							want = -1
						}
					}
					if got := quantified(op, all, xv, r); got != want {
						t.Errorf("%d %s all=%v over %v: got %d, want %d", x, op, all, rows, got, want)
					}
				}
			}
		}
	}
}
