package storage

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestInRanges checks the binary search of inRanges against a linear test
// over random ranges as normRanges leaves them (sorted, merged), unbounded
// ends included.
func TestInRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte { return []byte{byte(rng.IntN(40))} }
	for range 500 {
		var rs []KeyRange
		for range rng.IntN(6) {
			lo, hi := key(), key()
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			r := KeyRange{Lo: lo, Hi: hi}
			switch rng.IntN(8) {
			case 0:
				r.Lo = nil
			case 1:
				r.Hi = nil
			}
			rs = append(rs, r)
		}
		norm := normRanges(rs)
		for range 20 {
			k := key()
			want := len(rs) == 0
			for _, r := range rs {
				if bytes.Compare(k, r.Lo) >= 0 && (r.Hi == nil || bytes.Compare(k, r.Hi) < 0) {
					want = true
				}
			}
			if got := inRanges(k, norm); got != want {
				t.Fatalf("key %v in %v (normalized %v): %v, want %v", k, rs, norm, got, want)
			}
		}
	}
}
