package part

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/delta"
)

// TestFrontCodeMatchesParquetGo encodes pages of byte arrays (sorted keys
// sharing long prefixes, random ones, empty values, one value, none) and
// checks frontScratch writes exactly parquet-go's DELTA_BYTE_ARRAY bytes.
func TestFrontCodeMatchesParquetGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var f frontScratch
	var pg delta.ByteArrayEncoding
	for trial := range 400 {
		n := rng.IntN(300)
		if trial < 3 {
			n = trial
		}
		var data []byte
		offs := []uint32{0}
		prev := []byte{}
		for range n {
			var v []byte
			switch trial % 3 {
			case 0: // a sort key: the previous one's first bytes, then new ones
				keep := min(len(prev), rng.IntN(40))
				v = append(append(v, prev[:keep]...), randBytes(rng, rng.IntN(30))...)
			case 1:
				v = randBytes(rng, rng.IntN(20))
			default:
				v = bytes.Repeat([]byte{byte(rng.IntN(2))}, rng.IntN(20))
			}
			data = append(data, v...)
			offs = append(offs, uint32(len(data)))
			prev = v
		}
		want, err := pg.EncodeByteArray(nil, data, offs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.encode([]byte("junk")[:0], data, offs)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("trial %d (%d values): %v\n got %x\nwant %x", trial, n, err, got, want)
		}
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(4)) // few symbols: long shared runs
	}
	return b
}

func TestSharedPrefix(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 0}, {"abcdefghij", "abcdefghiX", 9}, {"abcdefgh", "abcdefgh", 8}, {"abcdefghijklmnopq", "abcdefghijklmnopq", 17}, {"abcdefgXij", "abcdefghij", 7}, {"ab", "abc", 2}} {
		if got := sharedPrefix([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("sharedPrefix(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
