package types

import (
	"math"
	"testing"

	"github.com/holiman/uint256"
)

func TestAppendText(t *testing.T) {
	var max256 uint256.Int
	max256.SetAllOne()
	minI256 := uint256.Int{0, 0, 0, 1 << 63}
	d52 := Type{Kind: Decimal, Precision: 5, Scale: 2}
	mustDec := func(t Type, x int64) Value {
		v, err := NewDecimal(t, x)
		if err != nil {
			panic(err)
		}
		return v
	}
	tests := []struct {
		v    Value
		want string
	}{
		{Null(Of(Int64)), "NULL"},
		{NewBool(true), "true"},
		{NewBool(false), "false"},
		{NewInt64(math.MinInt64), "-9223372036854775808"},
		{NewUint64(math.MaxUint64), "18446744073709551615"},
		{mkWide(Of(Uint256), max256), maxU256},
		{mkWide(Of(Int256), minI256), "-57896044618658097711785492504343953926634992332820282019728792003956564819968"},
		{mkWide(Of(Uint128), uint256.Int{0, 1}), "18446744073709551616"},
		{mustDec(d52, 12345), "123.45"},
		{mustDec(d52, -5), "-0.05"},
		{mustDec(d52, 0), "0.00"},
		{mustDec(Type{Kind: Decimal, Precision: 3}, -7), "-7"},
		{NewFloat64(1.5), "1.5"},
		{NewFloat64(0.1), "0.1"},
		{NewFloat64(math.Copysign(0, -1)), "-0"},
		{NewFloat64(100), "100"},
		{NewFloat64(1e15), "1e+15"},
		{NewFloat64(123456789012345), "123456789012345"},
		{NewFloat64(0.0001), "0.0001"},
		{NewFloat64(0.00001), "1e-05"},
		{NewFloat64(math.NaN()), "NaN"},
		{NewFloat64(math.Inf(1)), "Infinity"},
		{NewFloat64(math.Inf(-1)), "-Infinity"},
		{NewFloat32(0.1), "0.1"},
		{NewFloat32(1e6), "1e+06"},
		{NewFloat32(123456), "123456"},
		{NewString("it's"), "it's"},
		{NewBytes([]byte{0x0a, 0xff}), "\\x0aff"},
		{NewBytes(nil), "\\x"},
		{NewDate(0), "1970-01-01"},
		{NewDate(-1), "1969-12-31"},
		{NewDate(20362), "2025-10-01"},
		{NewDateTime64(Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}, 1790856300123), "2026-10-01 12:05:00.123"},
		{NewDateTime64(Type{Kind: DateTime64, Precision: 3}, -1), "1969-12-31 23:59:59.999"},
		{NewDateTime64(Type{Kind: DateTime64, Precision: 0}, 1790856300), "2026-10-01 12:05:00"},
		{NewDateTime64(Type{Kind: DateTime64, Precision: 0, TZ: "Europe/Paris"}, 1790856300), "2026-10-01 14:05:00"},
		{NewDateTime64(Type{Kind: DateTime64, Precision: 9}, 1), "1970-01-01 00:00:00.000000001"},
		{NewUUID([16]byte{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0}), "123e4567-e89b-12d3-a456-426614174000"},
	}
	for _, tc := range tests {
		if got := string(AppendText(nil, tc.v)); got != tc.want {
			t.Errorf("AppendText(%s) = %q, want %q", tc.v.Type(), got, tc.want)
		}
		if got := tc.v.String(); got != tc.want {
			t.Errorf("String(%s) = %q, want %q", tc.v.Type(), got, tc.want)
		}
	}
}

// TestFloatRoundTrip checks that the canonical text of a float reads back
// to the same bits.
func TestFloatRoundTrip(t *testing.T) {
	for _, f := range []float64{math.Pi, 1e300, 5e-324, -1.7976931348623157e308, 0.3, 2.5e-5, 1e14, 1e16} {
		v := NewFloat64(f)
		back, err := ParseText(Of(Float64), v.String())
		if err != nil || back.Float64() != f {
			t.Errorf("%v: %q read back as %v, %v", f, v.String(), back.Float64(), err)
		}
	}
}

func TestAppendTextNoAlloc(t *testing.T) {
	var m uint256.Int
	m.SetAllOne()
	vals := []Value{NewInt64(-42), mkWide(Of(Uint256), m), NewFloat64(1.25),
		NewDateTime64(Type{Kind: DateTime64, Precision: 3}, 1790856300123)}
	buf := make([]byte, 0, 256)
	for _, v := range vals {
		if n := testing.AllocsPerRun(100, func() { buf = AppendText(buf[:0], v) }); n != 0 {
			t.Errorf("AppendText(%s) allocates %v times", v.Type(), n)
		}
	}
}

func BenchmarkAppendText(b *testing.B) {
	var m uint256.Int
	m.SetAllOne()
	dec, _ := ParseText(Type{Kind: Decimal, Precision: 18, Scale: 4}, "12345.6789")
	cases := []struct {
		name string
		v    Value
	}{
		{"int64", NewInt64(-1234567890)},
		{"uint256", mkWide(Of(Uint256), m)},
		{"decimal", dec},
		{"float64", NewFloat64(3.14159)},
		{"date", NewDate(20362)},
		{"datetime64", NewDateTime64(Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}, 1790856300123)},
		{"datetime64_zone", NewDateTime64(Type{Kind: DateTime64, Precision: 3, TZ: "Europe/Paris"}, 1790856300123)},
		{"uuid", NewUUID([16]byte{1, 2, 3})},
		{"string", NewString("naïve ☃ text")},
	}
	buf := make([]byte, 0, 128)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				buf = AppendText(buf[:0], c.v)
			}
		})
	}
}
