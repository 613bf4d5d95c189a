package types

import (
	"math"
	"math/big"
	"testing"

	"github.com/holiman/uint256"
	"pgregory.net/rapid"
)

func TestFitsInt(t *testing.T) {
	tests := []struct {
		k    Kind
		n    string
		want bool
	}{
		{Int8, "-128", true}, {Int8, "-129", false}, {Int8, "127", true}, {Int8, "128", false},
		{Uint8, "255", true}, {Uint8, "256", false}, {Uint8, "-1", false},
		{Int128, "-" + minI128, true}, {Int128, minI128, false},
		{Int256, "-57896044618658097711785492504343953926634992332820282019728792003956564819968", true},
		{Int256, "57896044618658097711785492504343953926634992332820282019728792003956564819968", false},
		{Int256, "-57896044618658097711785492504343953926634992332820282019728792003956564819969", false},
		{Uint256, maxU256, true},
	}
	for _, tc := range tests {
		neg := tc.n[0] == '-'
		digits := tc.n
		if neg {
			digits = digits[1:]
		}
		mag, over := parseMag(digits)
		if over {
			t.Fatalf("parseMag(%s) overflowed", digits)
		}
		n := num{neg: neg, mag: mag}
		if got := fitsInt(tc.k, &n); got != tc.want {
			t.Errorf("fitsInt(%s, %s) = %v, want %v", tc.k, tc.n, got, tc.want)
		}
	}
	if _, over := parseMag(twoTo256); !over {
		t.Errorf("parseMag(2^256) did not overflow")
	}
}

func TestWideHelpers(t *testing.T) {
	if got := string(appendMag(nil, &pow10[77])); got != "1"+"00000000000000000000000000000000000000000000000000000000000000000000000000000" {
		t.Errorf("appendMag(10^77) = %s", got)
	}
	if got := string(appendPadded(nil, 42, 5)); got != "00042" {
		t.Errorf("appendPadded = %s", got)
	}
	var m uint256.Int
	m.SetAllOne()
	if got := magFloat(&m); got != math.Ldexp(1, 256) {
		t.Errorf("magFloat(2^256-1) = %v", got)
	}
	// Ties round to even: 2^64 + 2^11 lies halfway between two floats.
	tie := uint256.Int{1 << 11, 1}
	if got := magFloat(&tie); got != math.Ldexp(1, 64) {
		t.Errorf("magFloat(2^64+2^11) = %v", got)
	}
	above := uint256.Int{1<<11 + 1, 1}
	if got := magFloat(&above); got != math.Ldexp(1, 64)+math.Ldexp(1, 12) {
		t.Errorf("magFloat(2^64+2^11+1) = %v", got)
	}
	if q, r := divmod64(&uint256.Int{0, 1}, 10); q[0] != 1844674407370955161 || r != 6 {
		t.Errorf("divmod64 = %v, %d", q, r)
	}
}

// TestDivPow10Round checks the long division against math/big.
func TestDivPow10Round(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x, y uint256.Int
		for i := range 4 {
			x[i] = rapid.Uint64().Draw(t, "x")
			if i < rapid.IntRange(1, 4).Draw(t, "ylen") {
				y[i] = rapid.Uint64().Draw(t, "y")
			}
		}
		if y.IsZero() {
			y[0] = 1
		}
		k := rapid.IntRange(0, 160).Draw(t, "k")
		got, over := divPow10Round(&x, &y, k)
		bx, by := x.ToBig(), y.ToBig()
		num := new(big.Int).Mul(bx, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
		q, r := new(big.Int).QuoRem(num, by, new(big.Int))
		if new(big.Int).Lsh(r, 1).Cmp(by) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		if q.BitLen() > 256 {
			if !over {
				t.Fatalf("%s×10^%d/%s: no overflow reported", bx, k, by)
			}
			return
		}
		if over || got.ToBig().Cmp(q) != 0 {
			t.Fatalf("%s×10^%d/%s = %s (over %v), want %s", bx, k, by, got.ToBig(), over, q)
		}
	})
}
