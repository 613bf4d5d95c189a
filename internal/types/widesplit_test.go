package types

import (
	"math/rand/v2"
	"testing"

	"github.com/holiman/uint256"
)

// splitOf is the BYTE_STREAM_SPLIT form of the big-endian size-byte
// encodings of xs: stream k holds byte k of every value.
func splitOf(xs []uint256.Int, size int) []byte {
	out := make([]byte, len(xs)*size)
	for j := range xs {
		be := xs[j].Bytes32()
		for k := range size {
			out[k*len(xs)+j] = be[32-size+k]
		}
	}
	return out
}

// TestAppendWideSplit: appending from streams gives the rows appending
// value by value gives, NULLs and all, whatever the row count (whole
// groups of eight and a tail), the width, the sign and the rows the
// vector held before.
func TestAppendWideSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		kind Kind
		size int
	}{{Uint256, 32}, {Int256, 32}, {Uint128, 16}, {Int128, 16}} {
		signed := c.kind.IsSigned()
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000} {
			for _, nulls := range []int{0, 1, 2} { // none, some, all
				for _, before := range []int{0, 3, 70} {
					want := NewVector(Of(c.kind), 0)
					got := NewVector(Of(c.kind), 0)
					for i := range before {
						// Rows already there, one NULL among them when
						// before > 3, so both bitmap states are covered.
						if before > 3 && i == 1 {
							want.AppendNull()
							got.AppendNull()
							continue
						}
						x := uint256.NewInt(uint64(i))
						want.AppendWide(x)
						got.AppendWide(x)
					}
					var vals []uint256.Int
					var defs []byte
					if nulls > 0 {
						defs = make([]byte, n)
					}
					for i := range n {
						if nulls == 2 || nulls == 1 && rng.IntN(3) == 0 {
							want.AppendNull()
							continue
						}
						if defs != nil {
							defs[i] = 1
						}
						var x uint256.Int
						for w := range c.size / 8 {
							x[w] = rng.Uint64() >> (rng.IntN(4) * 16)
						}
						if signed && c.size == 16 && x[1]>>63 != 0 {
							x[2], x[3] = ^uint64(0), ^uint64(0)
						}
						want.AppendWide(&x)
						vals = append(vals, x)
					}
					if !got.AppendWideSplit(splitOf(vals, c.size), c.size, signed, defs, n) {
						t.Fatalf("%s n=%d nulls=%d before=%d: refused", c.kind, n, nulls, before)
					}
					if got.Len() != want.Len() {
						t.Fatalf("%s n=%d: %d rows, want %d", c.kind, n, got.Len(), want.Len())
					}
					for i := range want.Len() {
						if got.IsNull(i) != want.IsNull(i) || got.Wides()[i] != want.Wides()[i] {
							t.Fatalf("%s n=%d nulls=%d before=%d row %d: %v (null %v), want %v (null %v)",
								c.kind, n, nulls, before, i, got.Wides()[i], got.IsNull(i), want.Wides()[i], want.IsNull(i))
						}
					}
				}
			}
		}
	}
}

// TestAppendWideSplitRefuses: streams that do not fit the rows, bad
// levels, widths other than 16 and 32 and vectors that are not wide are
// refused and leave the vector as it was.
func TestAppendWideSplitRefuses(t *testing.T) {
	v := NewVector(Of(Uint256), 0)
	v.AppendWide(uint256.NewInt(5))
	for name, ok := range map[string]bool{
		"short":       v.AppendWideSplit(make([]byte, 31), 32, false, nil, 1),
		"long":        v.AppendWideSplit(make([]byte, 64), 32, false, nil, 1),
		"levels":      v.AppendWideSplit(make([]byte, 32), 32, false, []byte{1, 1}, 2),
		"level two":   v.AppendWideSplit(make([]byte, 32), 32, false, []byte{2}, 1),
		"level count": v.AppendWideSplit(make([]byte, 32), 32, false, []byte{1}, 2),
		"width":       v.AppendWideSplit(make([]byte, 8), 8, false, nil, 1),
		"not wide":    NewVector(Of(Int64), 0).AppendWideSplit(make([]byte, 32), 32, false, nil, 1),
	} {
		if ok {
			t.Errorf("%s: accepted", name)
		}
	}
	if v.Len() != 1 || v.Wides()[0] != *uint256.NewInt(5) {
		t.Fatalf("refusals changed the vector: %d rows", v.Len())
	}
}
