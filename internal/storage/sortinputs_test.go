package storage

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/version"
)

// TestSortInputsMatchesStableSort: sortInputs orders like a stable sort by
// position, ties (equal positions) kept in input order, for sizes on both
// sides of its index buffer.
func TestSortInputsMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, n := range []int{0, 1, 2, 3, 7, 20, 64, 65, 130} {
		for range 50 {
			ins := make([]keyInput, n)
			for i := range ins {
				// Few distinct positions, so ties are common; the
				// version's Seq records the input order to check
				// stability.
				ins[i] = keyInput{pos: version.Pos{Commit: uint64(rng.IntN(4)), Seq: uint32(rng.IntN(3))}}
				ins[i].mv.v.Seq = uint32(i)
			}
			want := slices.Clone(ins)
			slices.SortStableFunc(want, func(a, b keyInput) int { return a.pos.Compare(b.pos) })
			sortInputs(ins)
			for i := range ins {
				if ins[i].pos != want[i].pos || ins[i].mv.v.Seq != want[i].mv.v.Seq {
					t.Fatalf("n=%d: position %d holds input %d, want %d", n, i, ins[i].mv.v.Seq, want[i].mv.v.Seq)
				}
			}
		}
	}
}
