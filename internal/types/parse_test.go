package types

import (
	"strings"
	"testing"
)

const (
	maxU256  = "115792089237316195423570985008687907853269984665640564039457584007913129639935"
	twoTo256 = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
	minI128  = "170141183460469231731687303715884105728"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		typ  string
		text string
		err  string
	}{
		{"0", "INT64", "0", ""},
		{"007", "INT64", "7", ""},
		{"9223372036854775807", "INT64", "9223372036854775807", ""},
		{"9223372036854775808", "UINT64", "9223372036854775808", ""},
		{"18446744073709551615", "UINT64", "18446744073709551615", ""},
		{"18446744073709551616", "INT128", "18446744073709551616", ""},
		{minI128, "UINT128", minI128, ""},
		{"340282366920938463463374607431768211456", "INT256", "340282366920938463463374607431768211456", ""},
		{maxU256, "UINT256", maxU256, ""},
		{twoTo256, "", "", "out of range for UINT256"},
		{"1.5", "DECIMAL(2,1)", "1.5", ""},
		{"0.05", "DECIMAL(2,2)", "0.05", ""},
		{".5", "DECIMAL(1,1)", "0.5", ""},
		{"5.", "DECIMAL(1,0)", "5", ""},
		{"00012.340", "DECIMAL(5,3)", "12.340", ""},
		{strings.Repeat("9", 76) + ".0", "", "", "out of range"},
		{strings.Repeat("9", 75) + ".0", "DECIMAL(76,1)", strings.Repeat("9", 75) + ".0", ""},
		{"1e3", "FLOAT64", "1000", ""},
		{"1.5E-3", "FLOAT64", "0.0015", ""},
		{"1e400", "", "", "out of range for FLOAT64"},
		{"", "", "", "invalid"},
		{"1.2.3", "", "", "invalid"},
		{"1e", "", "", "invalid"},
		{"abc", "", "", "invalid"},
	}
	for _, tc := range tests {
		v, err := ParseNumber(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseNumber(%q) = %v, %v; want error %q", tc.in, v, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseNumber(%q): %v", tc.in, err)
			continue
		}
		if v.Type().String() != tc.typ || v.String() != tc.text {
			t.Errorf("ParseNumber(%q) = %s %s; want %s %s", tc.in, v.Type(), v, tc.typ, tc.text)
		}
	}
}

func TestNegLiteral(t *testing.T) {
	tests := []struct{ in, typ, text string }{
		{"9223372036854775808", "INT64", "-9223372036854775808"},
		{minI128, "INT128", "-" + minI128},
		{"5", "INT64", "-5"},
		{"0", "INT64", "0"},
		{"1.50", "DECIMAL(3,2)", "-1.50"},
	}
	for _, tc := range tests {
		v, err := ParseNumber(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		n, err := Neg(v)
		if err != nil {
			t.Fatalf("Neg(%s): %v", v, err)
		}
		n = Narrow(n)
		if n.Type().String() != tc.typ || n.String() != tc.text {
			t.Errorf("-%s = %s %s; want %s %s", tc.in, n.Type(), n, tc.typ, tc.text)
		}
	}
	// -(2^256-1) fits no type.
	v, _ := ParseNumber(maxU256)
	if _, err := Neg(v); err == nil {
		t.Errorf("Neg(2^256-1) succeeded")
	}
}

func TestParseText(t *testing.T) {
	ts3 := Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}
	ts0 := Type{Kind: DateTime64}
	ts6 := Type{Kind: DateTime64, Precision: 6}
	ny := Type{Kind: DateTime64, Precision: 0, TZ: "America/New_York"}
	dec := Type{Kind: Decimal, Precision: 5, Scale: 2}
	tests := []struct {
		typ  Type
		in   string
		want string // canonical text, or "!" + error substring
	}{
		{Of(Uint8), "255", "255"},
		{Of(Uint8), "256", "!value 256 is out of range for UINT8"},
		{Of(Uint8), "-1", "!out of range"},
		{Of(Uint8), "-0", "0"},
		{Of(Int8), "-128", "-128"},
		{Of(Int8), "128", "!out of range for INT8"},
		{Of(Int32), " 42 ", "42"},
		{Of(Int32), "+42", "42"},
		{Of(Int32), "4x", "!invalid INT32 value \"4x\""},
		{Of(Int64), "-9223372036854775808", "-9223372036854775808"},
		{Of(Int64), "9223372036854775808", "!out of range"},
		{Of(Uint64), "18446744073709551616", "!out of range for UINT64"},
		{Of(Int128), "-" + minI128, "-" + minI128},
		{Of(Int128), minI128, "!out of range"},
		{Of(Uint256), maxU256, maxU256},
		{Of(Uint256), twoTo256, "!out of range for UINT256"},
		{Of(Uint256), "-1", "!out of range"},
		{Of(Int256), "-57896044618658097711785492504343953926634992332820282019728792003956564819968", "-57896044618658097711785492504343953926634992332820282019728792003956564819968"},
		{Of(Int256), "57896044618658097711785492504343953926634992332820282019728792003956564819968", "!out of range"},
		{dec, "123.45", "123.45"},
		{dec, "1.005", "1.01"},
		{dec, "-1.005", "-1.01"},
		{dec, "1.004", "1.00"},
		{dec, "999.995", "!out of range"},
		{dec, "1e2", "100.00"},
		{dec, "12345e-4", "1.23"},
		{dec, "1000", "!out of range"},
		{dec, "-0.001", "0.00"},
		{dec, "abc", "!invalid DECIMAL(5,2)"},
		{Of(Float64), "1.5", "1.5"},
		{Of(Float64), "NaN", "NaN"},
		{Of(Float64), "Infinity", "Infinity"},
		{Of(Float64), "-inf", "-Infinity"},
		{Of(Float64), "1e309", "!out of range"},
		{Of(Float32), "0.1", "0.1"},
		{Of(Float32), "1e39", "!out of range"},
		{Of(Bool), "true", "true"},
		{Of(Bool), "OFF", "false"},
		{Of(Bool), "1", "true"},
		{Of(Bool), "maybe", "!invalid BOOL value \"maybe\""},
		{Of(Date), "2026-10-01", "2026-10-01"},
		{Of(Date), "2024-02-29", "2024-02-29"},
		{Of(Date), "2026-02-29", "!invalid DATE"},
		{Of(Date), "2026-02-30", "!invalid DATE"},
		{Of(Date), "2026-13-01", "!invalid DATE"},
		{Of(Date), "yesterday", "!invalid DATE"},
		{Of(Date), "1969-12-31", "1969-12-31"},
		{Of(Date), "0001-01-01", "0001-01-01"},
		{ts3, "2026-10-01 12:05:00.123", "2026-10-01 12:05:00.123"},
		{ts3, "2026-10-01 12:05:00", "2026-10-01 12:05:00.000"},
		{ts3, "2026-10-01T12:05:00.1Z", "2026-10-01 12:05:00.100"},
		{ts3, "2026-10-01 12:05:00.1235", "2026-10-01 12:05:00.124"},
		{ts3, "2026-10-01 23:59:59.9996", "2026-10-02 00:00:00.000"},
		{ts3, "2026-10-01 12:05:00+02:00", "2026-10-01 10:05:00.000"},
		{ts3, "2026-10-01 12:05:00-0130", "2026-10-01 13:35:00.000"},
		{ts3, "2026-10-01", "2026-10-01 00:00:00.000"},
		{ts3, "1969-12-31 23:59:59.999", "1969-12-31 23:59:59.999"},
		{ts3, "2026-13-01 00:00:00", "!invalid DATETIME64(3, 'UTC') value \"2026-13-01 00:00:00\""},
		{ts3, "yesterday", "!invalid DATETIME64(3, 'UTC') value \"yesterday\""},
		{ts3, "2026-10-01 24:00:00", "!invalid"},
		{ts3, "2026-10-01 12:05:00 junk", "!invalid"},
		{ts0, "2026-10-01 12:05:00.5", "2026-10-01 12:05:01"},
		{ts6, "2026-10-01 12:05:00.123456", "2026-10-01 12:05:00.123456"},
		{ny, "2026-07-01 12:00:00", "2026-07-01 12:00:00"},
		{ny, "2026-07-01 12:00:00Z", "2026-07-01 08:00:00"},
		{Type{Kind: DateTime64, Precision: 9}, "2300-01-01", "!out of range"},
		{Of(UUID), "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"},
		{Of(UUID), "123E4567E89B12D3A456426614174000", "123e4567-e89b-12d3-a456-426614174000"},
		{Of(UUID), "{123E4567-E89B-12D3-A456-426614174000}", "123e4567-e89b-12d3-a456-426614174000"},
		{Of(UUID), "123e4567-e89b-12d3-a456-42661417400g", "!invalid UUID"},
		{Of(UUID), "123e4567--89b-12d3-a456-426614174000", "!invalid UUID"},
		{Of(UUID), "123e4567-e89b-12d3-a456-42661417400-", "!invalid UUID"},
		{Of(UUID), "123e4567-e89b-12d3-a456-4266141740", "!invalid UUID"},
		{Of(Bytes), "\\x0a0B", "\\x0a0b"},
		{Of(Bytes), "ab", "\\x6162"},
		{Of(Bytes), "\\x0", "!invalid BYTES"},
		{Of(String), "naïve ☃", "naïve ☃"},
		{Of(String), "\xff", "!invalid UTF-8"},
		{Type{Kind: String, Len: 3}, "☃☃☃", "☃☃☃"},
		{Type{Kind: String, Len: 3}, "abcd", "!value too long for VARCHAR(3)"},
		{Of(Unknown), "x", "!invalid"},
	}
	for _, tc := range tests {
		v, err := ParseText(tc.typ, tc.in)
		if strings.HasPrefix(tc.want, "!") {
			if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
				t.Errorf("ParseText(%s, %q) = %v, %v; want error %q", tc.typ, tc.in, v, err, tc.want[1:])
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseText(%s, %q): %v", tc.typ, tc.in, err)
			continue
		}
		if got := v.String(); got != tc.want || v.Type() != tc.typ {
			t.Errorf("ParseText(%s, %q) = %s %q; want %q", tc.typ, tc.in, v.Type(), got, tc.want)
		}
		// Canonical text reads back to the same value (invariant 2).
		back, err := ParseText(tc.typ, v.String())
		if err != nil || !Equal(back, v) {
			t.Errorf("ParseText(%s, %q) does not read back: %v %v", tc.typ, v.String(), back, err)
		}
	}
}

func BenchmarkParseNumber(b *testing.B) {
	for _, in := range []string{"12345", maxU256, "123.45", "1.5e10"} {
		b.Run(in[:min(len(in), 8)], func(b *testing.B) {
			for b.Loop() {
				if _, err := ParseNumber(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseText(b *testing.B) {
	cases := []struct {
		name string
		t    Type
		in   string
	}{
		{"int64", Of(Int64), "-1234567890"},
		{"uint256", Of(Uint256), maxU256},
		{"decimal", Type{Kind: Decimal, Precision: 18, Scale: 4}, "12345.6789"},
		{"float64", Of(Float64), "3.14159"},
		{"date", Of(Date), "2026-10-01"},
		{"datetime64", Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}, "2026-10-01 12:05:00.123"},
		{"uuid", Of(UUID), "123e4567-e89b-12d3-a456-426614174000"},
		{"string", Of(String), "naïve ☃ text"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ParseText(c.t, c.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzParseText checks that no text panics the parsers and that whatever
// parses reads back from its canonical text (invariant 2).
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"1", "-1", maxU256, "1.5", "1e3", "2026-10-01 12:05:00.123", "2026-02-30",
		"true", "\\x0a", "123e4567-e89b-12d3-a456-426614174000", "NaN", " 7 ", "2026-10-01T00:00:00+01:00"} {
		f.Add(s, uint8(0))
	}
	types := []Type{Of(Int8), Of(Int64), Of(Uint64), Of(Int128), Of(Uint256), Of(Float32), Of(Float64),
		{Kind: Decimal, Precision: 10, Scale: 3}, {Kind: Decimal, Precision: 76, Scale: 10}, Of(Bool), Of(String),
		{Kind: String, Len: 4}, Of(Bytes), Of(Date), {Kind: DateTime64, Precision: 3}, {Kind: DateTime64, Precision: 9, TZ: "Europe/Paris"}, Of(UUID)}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		if v, err := ParseNumber(s); err == nil {
			if back, err := ParseNumber(v.String()); err == nil && !Equal(back, v) && v.Kind() != Float64 {
				t.Fatalf("ParseNumber(%q) = %s, reads back as %s", s, v, back)
			}
		}
		ty := types[int(which)%len(types)]
		v, err := ParseText(ty, s)
		if err != nil {
			return
		}
		back, err := ParseText(ty, v.String())
		if err != nil {
			t.Fatalf("ParseText(%s, %q) = %q, which does not parse: %v", ty, s, v.String(), err)
		}
		if !Equal(back, v) && ty.TZ == "" {
			t.Fatalf("ParseText(%s, %q) = %q, reads back as %q", ty, s, v.String(), back.String())
		}
	})
}
