package manifest

import (
	"math"
	"testing"
)

func TestKeyRangeSplit(t *testing.T) {
	lo, hi, ok := FullRange.Split()
	if !ok || lo != (KeyRange{0, 1 << 63}) || hi != (KeyRange{1 << 63, 0}) {
		t.Fatalf("full range split into %s %s %v", lo, hi, ok)
	}
	// Splitting repeatedly keeps the halves adjacent, disjoint and
	// covering the original, down to single hashes.
	r := KeyRange{Lo: 10, Hi: 17}
	for {
		a, b, ok := r.Split()
		if !ok {
			if r.Hi-r.Lo != 1 {
				t.Fatalf("%s refused to split", r)
			}
			break
		}
		if a.Lo != r.Lo || a.Hi != b.Lo || b.Hi != r.Hi || a.overlaps(b) {
			t.Fatalf("%s split into %s %s", r, a, b)
		}
		r = b
	}
	if _, _, ok := (KeyRange{math.MaxUint64, 0}).Split(); ok {
		t.Fatal("the last single hash split")
	}
}

func TestKeyRangeContainsOverlaps(t *testing.T) {
	upper := KeyRange{Lo: 1 << 63}
	if !upper.Contains(math.MaxUint64) || upper.Contains(1<<63-1) || !upper.Contains(1<<63) {
		t.Fatal("Contains at the top of the space")
	}
	if !FullRange.Contains(0) || !FullRange.Contains(math.MaxUint64) {
		t.Fatal("the full range misses a hash")
	}
	cases := []struct {
		a, b KeyRange
		want bool
	}{
		{KeyRange{0, 10}, KeyRange{10, 20}, false},
		{KeyRange{0, 11}, KeyRange{10, 20}, true},
		{KeyRange{5, 0}, KeyRange{0, 5}, false},
		{KeyRange{5, 0}, KeyRange{0, 6}, true},
		{FullRange, KeyRange{3, 4}, true},
		{KeyRange{1 << 63, 0}, FullRange, true},
	}
	for _, c := range cases {
		if c.a.overlaps(c.b) != c.want || c.b.overlaps(c.a) != c.want {
			t.Errorf("%s overlaps %s: want %v", c.a, c.b, c.want)
		}
	}
	if (KeyRange{5, 5}).valid() || (KeyRange{6, 5}).valid() || !(KeyRange{5, 0}).valid() {
		t.Fatal("valid")
	}
}
