package types

import (
	"math"
	"testing"

	"github.com/holiman/uint256"
)

func pt(t *testing.T, ty Type, s string) Value {
	t.Helper()
	v, err := ParseText(ty, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCompare(t *testing.T) {
	u256 := Of(Uint256)
	d2 := Type{Kind: Decimal, Precision: 10, Scale: 2}
	d0 := Type{Kind: Decimal, Precision: 10}
	d5 := Type{Kind: Decimal, Precision: 20, Scale: 5}
	ts3 := Type{Kind: DateTime64, Precision: 3}
	ts0 := Type{Kind: DateTime64}
	nan := NewFloat64(math.NaN())
	tests := []struct {
		a, b Value
		want int
	}{
		{NewInt64(1), NewInt64(2), -1},
		{NewInt64(-1), NewInt64(-1), 0},
		{Null(Of(Int64)), NewInt64(math.MaxInt64), 1},
		{NewInt64(math.MaxInt64), Null(Of(Int64)), -1},
		{Null(Of(Int64)), Null(Of(String)), 0},
		{NewInt64(-1), pt(t, u256, maxU256), -1},
		{pt(t, u256, maxU256), pt(t, u256, "115792089237316195423570985008687907853269984665640564039457584007913129639934"), 1},
		{NewInt64(-1), NewUint64(math.MaxUint64), -1},
		{NewUint64(5), NewInt64(5), 0},
		{pt(t, Of(Int128), "-"+minI128), NewInt64(math.MinInt64), -1},
		{pt(t, Of(Int256), "-1"), pt(t, Of(Int256), "1"), -1},
		{pt(t, Of(Int256), "-2"), pt(t, Of(Int256), "-1"), -1},
		{pt(t, d2, "1.50"), pt(t, d5, "1.5"), 0},
		{pt(t, d2, "1.50"), pt(t, d5, "1.50001"), -1},
		{pt(t, d2, "-1.50"), pt(t, d5, "-1.50001"), 1},
		{pt(t, d2, "2.00"), NewInt64(2), 0},
		{pt(t, d2, "1.99"), NewInt64(2), -1},
		{pt(t, d0, "3"), pt(t, u256, maxU256), -1},
		{pt(t, d2, "-0.01"), NewUint64(0), -1},
		{NewFloat64(1.5), pt(t, d2, "1.50"), 0},
		{NewFloat64(1.25), pt(t, d2, "1.24"), 1},
		{NewFloat64(-1.25), pt(t, d2, "-1.24"), -1},
		{NewFloat64(1e80), pt(t, u256, maxU256), 1},
		{NewFloat64(1e76), pt(t, u256, maxU256), -1},
		{NewFloat64(1e78), pt(t, u256, maxU256), 1},
		{NewFloat64(9007199254740993), NewInt64(9007199254740993), -1}, // the float is 2^53
		{NewFloat64(math.Inf(-1)), NewInt64(math.MinInt64), -1},
		{nan, NewFloat64(math.Inf(1)), 1},
		{nan, nan, 0},
		{nan, NewInt64(1), 1},
		{NewFloat64(math.Copysign(0, -1)), NewFloat64(0), 0},
		{NewFloat64(math.Copysign(0, -1)), NewInt64(0), 0},
		{NewFloat32(0.5), NewFloat64(0.5), 0},
		{NewString("a"), NewString("ab"), -1},
		{NewString("b"), NewString("ab"), 1},
		{NewBytes([]byte{0}), NewBytes(nil), 1},
		{NewBool(false), NewBool(true), -1},
		{NewUUID([16]byte{1}), NewUUID([16]byte{0, 2}), 1},
		{NewDate(1), NewDate(0), 1},
		{NewDateTime64(ts3, 1500), NewDateTime64(ts0, 1), 1},
		{NewDateTime64(ts3, 1000), NewDateTime64(ts0, 1), 0},
		{NewDate(1), NewDateTime64(ts0, 86400), 0},
		{NewDate(1), NewDateTime64(ts3, 86400001), -1},
		{pt(t, Type{Kind: DateTime64, TZ: "Europe/Paris"}, "2026-10-01 00:00:00"), pt(t, Of(Date), "2026-10-01"), 0},
		{NewBool(true), NewString("a"), -1},
	}
	for _, tc := range tests {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%s %s, %s %s) = %d, want %d", tc.a.Type(), tc.a, tc.b.Type(), tc.b, got, tc.want)
		}
		if got := Compare(tc.b, tc.a); got != -tc.want {
			t.Errorf("Compare(%s %s, %s %s) = %d, want %d", tc.b.Type(), tc.b, tc.a.Type(), tc.a, got, -tc.want)
		}
		if tc.want == 0 && tc.a.Kind().IsNumeric() == tc.b.Kind().IsNumeric() {
			integral := tc.a.Kind().IsInteger() || tc.b.Kind().IsInteger() || tc.a.Kind() == tc.b.Kind()
			if integral && Hash(7, tc.a) != Hash(7, tc.b) {
				t.Errorf("Equal %s %s and %s %s hash differently", tc.a.Type(), tc.a, tc.b.Type(), tc.b)
			}
		}
	}
}

func TestHash(t *testing.T) {
	d2 := Type{Kind: Decimal, Precision: 10, Scale: 2}
	d1 := Type{Kind: Decimal, Precision: 10, Scale: 1}
	equal := [][2]Value{
		{NewInt64(5), NewUint64(5)},
		{NewInt64(5), mkWide(Of(Uint256), uint256.Int{5})},
		{NewInt64(-5), pt(t, Of(Int128), "-5")},
		{NewInt64(5), pt(t, d2, "5.00")},
		{NewInt64(5), NewFloat64(5)},
		{NewFloat64(math.Copysign(0, -1)), NewInt64(0)},
		{pt(t, d2, "1.50"), pt(t, d1, "1.5")},
		{NewUint64(math.MaxUint64), pt(t, Of(Int128), "18446744073709551615")},
		{NewFloat64(1e30), pt(t, Of(Uint128), "1000000000000000019884624838656")},
		{NewFloat64(math.NaN()), NewFloat64(-math.NaN())},
		{NewDateTime64(Type{Kind: DateTime64, Precision: 3}, 1000), NewDateTime64(Type{Kind: DateTime64}, 1)},
		{Null(Of(Int64)), Null(Of(String))},
	}
	for _, p := range equal {
		if !Equal(p[0], p[1]) {
			t.Errorf("%s %s != %s %s", p[0].Type(), p[0], p[1].Type(), p[1])
		}
		if Hash(1, p[0]) != Hash(1, p[1]) {
			t.Errorf("Hash(%s %s) != Hash(%s %s)", p[0].Type(), p[0], p[1].Type(), p[1])
		}
	}
	// Different values, different seeds: collisions would show a broken mix.
	seen := map[uint64]int{}
	for i := range 10000 {
		seen[Hash(0, NewInt64(int64(i)))]++
		seen[Hash(0, NewString(string(rune('a'+i%26))+string(rune(i))))]++
	}
	if len(seen) < 19990 {
		t.Errorf("%d distinct hashes of 20000 values", len(seen))
	}
	if Hash(1, NewInt64(1)) == Hash(2, NewInt64(1)) {
		t.Errorf("the seed does not change the hash")
	}
}

func BenchmarkCompare(b *testing.B) {
	var m, m1 uint256.Int
	m.SetAllOne()
	m1.SubUint64(&m, 1)
	d := Type{Kind: Decimal, Precision: 18, Scale: 4}
	cases := []struct {
		name string
		a, b Value
	}{
		{"int64", NewInt64(1), NewInt64(2)},
		{"uint256", mkWide(Of(Uint256), m), mkWide(Of(Uint256), m1)},
		{"int256", mkWide(Of(Int256), m), mkWide(Of(Int256), m1)},
		{"int64_uint256", NewInt64(-1), mkWide(Of(Uint256), m)},
		{"decimal", mkWide(d, uint256.Int{123456}), mkWide(d, uint256.Int{123457})},
		{"float64", NewFloat64(1.5), NewFloat64(2.5)},
		{"string", NewString("hello world a"), NewString("hello world b")},
		{"datetime64", NewDateTime64(Type{Kind: DateTime64, Precision: 3}, 1), NewDateTime64(Type{Kind: DateTime64, Precision: 3}, 2)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Compare(c.a, c.b)
			}
		})
	}
}

func BenchmarkHash(b *testing.B) {
	var m uint256.Int
	m.SetAllOne()
	for _, c := range []struct {
		name string
		v    Value
	}{{"int64", NewInt64(12345)}, {"uint256", mkWide(Of(Uint256), m)}, {"string", NewString("hello world, hashed")}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Hash(1, c.v)
			}
		})
	}
}
