package types

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCommon(t *testing.T) {
	d := func(p, s uint8) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }
	ts3 := Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}
	tests := []struct {
		a, b Type
		want Type
		ok   bool
	}{
		{Of(Int32), Of(Int64), Of(Int64), true},
		{Of(Uint8), Of(Int8), Of(Int16), true},
		{Of(Uint64), Of(Int64), Of(Int128), true},
		{Of(Uint32), Of(Int64), Of(Int64), true},
		{Of(Uint128), Of(Int8), Of(Int256), true},
		{Of(Uint16), Of(Uint64), Of(Uint64), true},
		{Of(Uint256), Of(Int64), Of(Uint256), true},
		{Of(Uint256), Of(Int256), Of(Int256), true},
		{Of(Int64), d(10, 2), d(21, 2), true},
		{d(10, 2), Of(Uint8), d(10, 2), true},
		{Of(Int256), d(10, 2), d(76, 2), true},
		{d(10, 2), d(20, 6), d(20, 6), true},
		{d(76, 0), d(76, 76), d(76, 76), true},
		{Of(Int64), Of(Float32), Of(Float64), true},
		{Of(Float32), Of(Float32), Of(Float32), true},
		{Of(Float32), Of(Float64), Of(Float64), true},
		{d(10, 2), Of(Float64), Of(Float64), true},
		{Of(Date), ts3, ts3, true},
		{Type{Kind: DateTime64}, ts3, Type{Kind: DateTime64, Precision: 3}, true},
		{Of(Unknown), Of(UUID), Of(UUID), true},
		{Of(Int64), Of(Unknown), Of(Int64), true},
		{Type{Kind: String, Len: 3}, Type{Kind: String, Len: 5}, Type{Kind: String, Len: 5}, true},
		{Type{Kind: String, Len: 3}, Of(String), Of(String), true},
		{Of(Bool), Of(Date), Type{}, false},
		{Of(String), Of(Int64), Type{}, false},
		{Of(Invalid), Of(Invalid), Type{}, false},
	}
	for _, tc := range tests {
		got, ok := Common(tc.a, tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Common(%s, %s) = %s, %v; want %s, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
		got2, ok2 := Common(tc.b, tc.a)
		if ok2 != ok || (tc.a.Kind != DateTime64 && got2 != got) {
			t.Errorf("Common(%s, %s) = %s, %v; not symmetric", tc.b, tc.a, got2, ok2)
		}
	}
}

func TestCast(t *testing.T) {
	d := func(p, s uint8) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }
	ts3 := Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}
	paris := Type{Kind: DateTime64, Precision: 0, TZ: "Europe/Paris"}
	tests := []struct {
		v    Value
		to   Type
		want string // canonical text or "!" + error substring
	}{
		{NewInt64(300), Of(Uint8), "!value 300 is out of range for UINT8"},
		{NewInt64(-1), Of(Uint256), "!out of range for UINT256"},
		{NewInt64(255), Of(Uint8), "255"},
		{pt(t, Of(Uint256), maxU256), Of(Int256), "!out of range"},
		{pt(t, Of(Uint256), "12"), Of(Int8), "12"},
		{pt(t, Of(Int128), "-"+minI128), Of(Int256), "-" + minI128},
		{NewInt64(7), d(5, 2), "7.00"},
		{NewInt64(1000), d(5, 2), "!out of range"},
		{pt(t, d(5, 3), "1.235"), d(5, 2), "1.24"},
		{pt(t, d(5, 3), "-1.235"), d(5, 2), "-1.24"},
		{pt(t, d(5, 3), "1.234"), d(5, 2), "1.23"},
		{pt(t, d(5, 2), "2.50"), Of(Int64), "3"},
		{pt(t, d(5, 2), "-2.50"), Of(Int64), "-3"},
		{pt(t, d(5, 2), "-2.49"), Of(Int64), "-2"},
		{pt(t, d(5, 2), "-0.40"), Of(Uint8), "0"},
		{pt(t, d(5, 2), "1.10"), Of(Float64), "1.1"},
		{pt(t, d(76, 40), "1."+strings.Repeat("1", 40)), Of(Float64), "1.1111111111111112"},
		{NewFloat64(2.5), Of(Int64), "3"},
		{NewFloat64(-2.5), Of(Int64), "-3"},
		{NewFloat64(1e20), Of(Int64), "!out of range"},
		{NewFloat64(1e20), Of(Uint128), "100000000000000000000"},
		{NewFloat64(math.NaN()), Of(Int64), "!out of range"},
		{NewFloat64(0.125), d(5, 2), "0.13"},
		{NewFloat64(1e10), d(5, 2), "!out of range"},
		{NewFloat64(0.1), Of(Float32), "0.1"},
		{NewFloat64(1e300), Of(Float32), "!out of range for FLOAT32"},
		{NewFloat64(math.Inf(-1)), Of(Float32), "-Infinity"},
		{pt(t, Of(Uint256), maxU256), Of(Float32), "!out of range for FLOAT32"},
		{NewFloat32(0.1), Of(Float64), "0.10000000149011612"},
		{pt(t, Of(Uint256), maxU256), Of(Float64), "1.157920892373162e+77"},
		{NewBool(true), Of(Int32), "1"},
		{NewInt64(0), Of(Bool), "false"},
		{NewInt64(42), Of(String), "42"},
		{NewDate(0), Of(String), "1970-01-01"},
		{NewString("hello"), Type{Kind: String, Len: 3}, "!value too long for VARCHAR(3)"},
		{NewString("☃☃"), Type{Kind: String, Len: 2}, "☃☃"},
		{NewInt64(12345), Type{Kind: String, Len: 4}, "!value too long"},
		{NewString("42"), Of(Int8), "42"},
		{NewString("x"), Of(Int8), "!invalid INT8"},
		{NewString("2026-10-01 12:05:00.5"), ts3, "2026-10-01 12:05:00.500"},
		{NewDate(1), ts3, "1970-01-02 00:00:00.000"},
		{pt(t, Of(Date), "2026-10-01"), paris, "2026-10-01 00:00:00"},
		{pt(t, paris, "2026-10-01 00:30:00"), Of(Date), "2026-10-01"},
		{pt(t, ts3, "2026-10-01 00:30:00"), Of(Date), "2026-10-01"},
		{pt(t, ts3, "1969-12-31 23:59:59.999"), Of(Date), "1969-12-31"},
		{pt(t, ts3, "2026-10-01 12:05:00.500"), Type{Kind: DateTime64}, "2026-10-01 12:05:01"},
		{pt(t, ts3, "2026-10-01 12:05:00.499"), Type{Kind: DateTime64}, "2026-10-01 12:05:00"},
		{pt(t, ts3, "2026-10-01 12:05:00.499"), Type{Kind: DateTime64, Precision: 6}, "2026-10-01 12:05:00.499000"},
		{pt(t, ts3, "2026-10-01 12:05:00"), paris, "2026-10-01 14:05:00"},
		{pt(t, Of(Date), "2300-01-01"), Type{Kind: DateTime64, Precision: 9}, "!out of range"},
		{NewBytes(make([]byte, 16)), Of(UUID), "00000000-0000-0000-0000-000000000000"},
		{NewBytes(make([]byte, 3)), Of(UUID), "!not 16 bytes"},
		{NewUUID([16]byte{0xab}), Of(Bytes), "\\xab000000000000000000000000000000"},
		{NewBool(true), Of(UUID), "!cannot cast BOOL to UUID"},
		{NewDate(0), Of(Int64), "!cannot cast DATE to INT64"},
		{Null(Of(Int64)), Of(Uint8), "NULL"},
		{Null(Of(Unknown)), Of(Date), "NULL"},
		{Null(Of(Bool)), Of(Date), "!cannot cast"},
	}
	for _, tc := range tests {
		got, err := Cast(tc.v, tc.to)
		if strings.HasPrefix(tc.want, "!") {
			if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
				t.Errorf("Cast(%s %s, %s) = %v, %v; want error %q", tc.v.Type(), tc.v, tc.to, got, err, tc.want[1:])
			}
			continue
		}
		if err != nil {
			t.Errorf("Cast(%s %s, %s): %v", tc.v.Type(), tc.v, tc.to, err)
			continue
		}
		if got.String() != tc.want || got.Type() != tc.to {
			t.Errorf("Cast(%s %s, %s) = %s %q; want %q", tc.v.Type(), tc.v, tc.to, got.Type(), got, tc.want)
		}
	}
	if !CanCast(Of(Int64), Of(String)) || !CanCast(Of(Unknown), Of(UUID)) || CanCast(Of(Bool), Of(Date)) || CanCast(Of(Int64), Of(Unknown)) {
		t.Errorf("CanCast")
	}
	var ce *CastError
	if _, err := Cast(NewBool(true), Of(Date)); !errors.As(err, &ce) || ce.From != Of(Bool) || ce.To != Of(Date) {
		t.Errorf("impossible cast is not a CastError naming both types: %v", err)
	}
}

func BenchmarkCast(b *testing.B) {
	v := NewInt64(12345)
	d := Type{Kind: Decimal, Precision: 18, Scale: 2}
	for _, to := range []Type{Of(Uint256), d, Of(Float64)} {
		b.Run(to.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := Cast(v, to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
