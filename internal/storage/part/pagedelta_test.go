package part

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/format"
)

// TestDeltaInt32s decodes parquet-go's DELTA_BINARY_PACKED runs of random
// int32s (small and wide deltas, runs shorter and longer than a block,
// wrapping arithmetic) and checks the values and the bytes taken.
func TestDeltaInt32s(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var enc delta.BinaryPackedEncoding
	for trial := range 300 {
		n := rng.IntN(700)
		xs := make([]int32, n)
		for i := range xs {
			switch trial % 3 {
			case 0:
				xs[i] = int32(rng.IntN(50))
			case 1:
				xs[i] = int32(rng.Uint32())
			default:
				if i > 0 {
					xs[i] = xs[i-1] + int32(rng.IntN(9)) - 2
				}
			}
		}
		b, err := enc.EncodeInt32(nil, xs)
		if err != nil {
			t.Fatal(err)
		}
		tail := []byte{1, 2, 3}
		got, used, err := deltaInt32s(nil, append(b, tail...), n)
		if err != nil || !slices.Equal(got, xs) || used != len(b) {
			t.Fatalf("trial %d (%d values): %v, used %d of %d, values equal %v", trial, n, err, used, len(b), slices.Equal(got, xs))
		}
		if n > 0 {
			if _, _, err := deltaInt32s(nil, b, n-1); err == nil {
				t.Fatalf("trial %d: a run of %d values accepted for a page of %d", trial, n, n-1)
			}
		}
	}
}

// TestCheckDeltaByteArray checks DELTA_BYTE_ARRAY pages parquet-go
// encodes pass, and that lengths claiming more than the page holds do
// not.
func TestCheckDeltaByteArray(t *testing.T) {
	var enc delta.ByteArrayEncoding
	vals := [][]byte{[]byte("apple"), []byte("applesauce"), []byte("apricot"), nil, []byte("banana")}
	var data []byte
	var offs []uint32
	for _, v := range vals {
		offs = append(offs, uint32(len(data)))
		data = append(data, v...)
	}
	offs = append(offs, uint32(len(data)))
	b, err := enc.EncodeByteArray(nil, data, offs)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDelta(format.DeltaByteArray, b, len(vals)); err != nil {
		t.Fatalf("parquet-go's page: %v", err)
	}
	if err := checkDelta(format.DeltaByteArray, b[:len(b)-1], len(vals)); err == nil {
		t.Fatal("a page missing a byte of its suffixes passed")
	}
	if err := checkDelta(format.DeltaByteArray, b, len(vals)-1); err == nil {
		t.Fatal("a page of more values than its header says passed")
	}
}

// TestDeltaInt32sAtEnd decodes runs that end exactly where their bytes
// do, so that the last values of the last miniblock are read without the
// 8-byte loads that would run past b, for every bit width.
func TestDeltaInt32sAtEnd(t *testing.T) {
	var enc delta.BinaryPackedEncoding
	for w := 0; w <= 31; w++ {
		xs := make([]int32, 200)
		for i := range xs {
			if i%2 == 1 && w > 0 {
				xs[i] = xs[i-1] + int32(uint32(1)<<(w-1))
			} else if i > 0 {
				xs[i] = xs[i-1]
			}
		}
		b, err := enc.EncodeInt32(nil, xs)
		if err != nil {
			t.Fatal(err)
		}
		got, used, err := deltaInt32s(nil, b, len(xs))
		if err != nil || used != len(b) || !slices.Equal(got, xs) {
			t.Fatalf("width %d: %v, used %d of %d, equal %v", w, err, used, len(b), slices.Equal(got, xs))
		}
	}
}

// TestDeltaInt32sBeyondInt32 checks that a run whose first value or a
// block's minimum delta does not fit int32 is refused, not wrapped.
func TestDeltaInt32sBeyondInt32(t *testing.T) {
	// block of 128 values in 4 miniblocks, 2 values; first value as zigzag.
	run := func(first, minDelta uint64) []byte {
		b := binary.AppendUvarint(nil, 128)
		b = binary.AppendUvarint(b, 4)
		b = binary.AppendUvarint(b, 2)
		b = binary.AppendUvarint(b, first)
		b = binary.AppendUvarint(b, minDelta)
		return append(b, 0, 0, 0, 0) // bit widths 0
	}
	if got, _, err := deltaInt32s(nil, run(2*7, 2*3), 2); err != nil || !slices.Equal(got, []int32{7, 10}) {
		t.Fatalf("well-formed run: %v, %v", got, err)
	}
	if _, _, err := deltaInt32s(nil, run(2*(1<<31), 2*3), 2); err == nil {
		t.Fatal("first value 2^31 accepted")
	}
	if _, _, err := deltaInt32s(nil, run(2*7, 2*(1<<32)), 2); err == nil {
		t.Fatal("minimum delta 2^32 accepted")
	}
}
