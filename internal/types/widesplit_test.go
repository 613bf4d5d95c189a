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
		for shape, n := range shapesAndSizes() {
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
							// Words zero in every value, which the
							// decoder skips: all but the low word,
							// only word 1, or all of them.
							if shape == 1 && w > 0 || shape == 2 && w == 1 || shape == 3 {
								x[w] = 0
							}
						}
						if signed && c.size == 16 && x[1]>>63 != 0 {
							x[2], x[3] = ^uint64(0), ^uint64(0)
						}
						want.AppendWide(&x)
						vals = append(vals, x)
					}
					if !got.AppendWideSplit(splitOf(vals, c.size), c.size, signed, defs, n) {
						t.Fatalf("%s shape=%d n=%d nulls=%d before=%d: refused", c.kind, shape, n, nulls, before)
					}
					if got.Len() != want.Len() {
						t.Fatalf("%s n=%d: %d rows, want %d", c.kind, n, got.Len(), want.Len())
					}
					for i := range want.Len() {
						if got.IsNull(i) != want.IsNull(i) || got.Wides()[i] != want.Wides()[i] {
							t.Fatalf("%s shape=%d n=%d nulls=%d before=%d row %d: %v (null %v), want %v (null %v)",
								c.kind, shape, n, nulls, before, i, got.Wides()[i], got.IsNull(i), want.Wides()[i], want.IsNull(i))
						}
					}
				}
			}
		}
	}
}

// shapesAndSizes yields TestAppendWideSplit's cases: each value shape
// (0 every word random, 1 only the low word, 2 word 1 zero, 3 every word
// zero) with each row count (whole groups of eight and a tail).
func shapesAndSizes() func(yield func(int, int) bool) {
	return func(yield func(int, int) bool) {
		for shape := range 4 {
			for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000} {
				if !yield(shape, n) {
					return
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

// BenchmarkAppendWideSplit decodes an 8 192-row page of UINT256 streams,
// as a cold AS OF lookup does for the history's amounts: "small" values
// below 2^40 (three of the four words zero in every row, what bench/'s
// balances hold) and "full" values with every word in use.
func BenchmarkAppendWideSplit(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, shape := range []string{"small", "full"} {
		vals := make([]uint256.Int, 8192)
		for i := range vals {
			vals[i][0] = rng.Uint64() >> 24
			if shape == "full" {
				vals[i][1], vals[i][2], vals[i][3] = rng.Uint64(), rng.Uint64(), rng.Uint64()
			}
		}
		streams := splitOf(vals, 32)
		v := NewVector(Of(Uint256), len(vals))
		b.Run(shape, func(b *testing.B) {
			b.SetBytes(int64(len(streams)))
			for b.Loop() {
				v.Reset()
				if !v.AppendWideSplit(streams, 32, false, nil, len(vals)) {
					b.Fatal("refused")
				}
			}
		})
	}
}
