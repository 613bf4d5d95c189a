package types

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestParseDateTimeFast: wherever the fast path answers, ParseText gives
// the same ticks; wherever ParseText rejects the text, the fast path does
// not answer. Texts are drawn in and around its form: every field's range
// and one past it, leap days, the first and last days, fractions longer
// than the precision (rounding into the next day and past 9999), and one
// character replaced by something else.
func TestParseDateTimeFast(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := Type{Kind: DateTime64, Precision: uint8(rapid.IntRange(0, MaxDateTimePrecision).Draw(rt, "p")),
			TZ: rapid.SampledFrom([]string{"", "UTC", "Europe/Berlin"}).Draw(rt, "tz")}
		y := rapid.SampledFrom([]int{0, 1, 2, 1900, 2000, 2023, 2024, 9999}).Draw(rt, "y")
		s := fmt.Sprintf("%04d-%02d-%02d%s%02d:%02d:%02d", y,
			rapid.IntRange(0, 13).Draw(rt, "m"), rapid.IntRange(0, 32).Draw(rt, "d"),
			rapid.SampledFrom([]string{" ", "T", "t", "x"}).Draw(rt, "sep"),
			rapid.IntRange(0, 24).Draw(rt, "hh"), rapid.IntRange(0, 60).Draw(rt, "mm"), rapid.IntRange(0, 60).Draw(rt, "ss"))
		switch rapid.IntRange(0, 3).Draw(rt, "tail") {
		case 1:
			s += "." + rapid.StringMatching(`[0-9]{0,12}`).Draw(rt, "frac")
		case 2:
			s += rapid.SampledFrom([]string{"Z", "+01:00", " ", ".5Z", ".9999999999"}).Draw(rt, "zone")
		}
		if rapid.IntRange(0, 4).Draw(rt, "mutate") == 0 {
			i := rapid.IntRange(0, len(s)-1).Draw(rt, "at")
			s = s[:i] + rapid.SampledFrom([]string{"a", "-", ":", " ", "9", "0", ""}).Draw(rt, "with") + s[i+1:]
		}
		ticks, ok := ParseDateTimeFast(typ, s)
		v, err := ParseText(typ, s)
		if !ok {
			return
		}
		if err != nil {
			rt.Fatalf("%s as %s: fast path gave %d, ParseText: %v", s, typ, ticks, err)
		}
		if v.Int64() != ticks {
			rt.Fatalf("%s as %s: fast path gave %d, ParseText %d", s, typ, ticks, v.Int64())
		}
	})
}

// TestParseDateTimeFastCovers: the fast path does answer the form bulk
// loads send, so the property above is not vacuous.
func TestParseDateTimeFastCovers(t *testing.T) {
	typ := Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}
	for _, s := range []string{"2024-02-29 23:59:59.999", "2024-01-01T00:00:00", "0001-01-01 00:00:00.0005", "9999-12-31 23:59:59.9994"} {
		ticks, ok := ParseDateTimeFast(typ, s)
		v, err := ParseText(typ, s)
		if !ok || err != nil || v.Int64() != ticks {
			t.Errorf("%s: fast %d %v, ParseText %v %v", s, ticks, ok, v, err)
		}
	}
	for _, s := range []string{"9999-12-31 23:59:59.9995", "2023-02-29 00:00:00", "2024-01-01 00:00:00Z", " 2024-01-01 00:00:00", "0000-01-01 00:00:00", "2024-13-01 00:00:00"} {
		if ticks, ok := ParseDateTimeFast(typ, s); ok {
			t.Errorf("%s: fast path answered %d", s, ticks)
		}
	}
}

// BenchmarkParseDateTime is a bulk INSERT's timestamp, through ParseText
// and through the fast path.
func BenchmarkParseDateTime(b *testing.B) {
	typ := Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}
	const s = "2026-10-01 12:05:00.123"
	b.Run("ParseText", func(b *testing.B) {
		for b.Loop() {
			if _, err := ParseText(typ, s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, ok := ParseDateTimeFast(typ, s); !ok {
				b.Fatal(s)
			}
		}
	})
}
