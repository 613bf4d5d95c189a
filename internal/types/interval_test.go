package types

import (
	"errors"
	"testing"
)

func TestParseFormatInterval(t *testing.T) {
	cases := []struct {
		in   string
		q    IntervalField
		want string
	}{
		{"1 day", NoField, "1 day"},
		{"90 days", NoField, "90 days"},
		{"1 hour 30 minutes", NoField, "01:30:00"},
		{"5", FieldMinute, "00:05:00"},
		{"5", NoField, "00:00:05"},
		{"1 day 02:00:00", NoField, "1 day 02:00:00"},
		{"-1 days 2 hours", NoField, "-1 days +02:00:00"},
		{"1 year 2 mons 3 days 04:05:06.789", NoField, "1 year 2 mons 3 days 04:05:06.789"},
		{"1.5 months", NoField, "1 mon 15 days"},
		{"0.1 seconds", NoField, "00:00:00.1"},
		{"2 days ago", NoField, "-2 days"},
		{"@ 1 minute", NoField, "00:01:00"},
		{"90days", NoField, "90 days"},
		{"-1 years -1 mons", NoField, "-1 years -1 mons"},
		{"1 day 2 hours 3 minutes", FieldHour, "1 day 02:00:00"},
		{"14 months", FieldYear, "1 year"},
		{"00:00:00", NoField, "00:00:00"},
	}
	for _, c := range cases {
		v, err := ParseInterval(c.in, c.q)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := v.String(); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
		// The text reads back to an equal interval.
		back, err := ParseInterval(v.String(), NoField)
		if err != nil || Compare(back, v) != 0 {
			t.Errorf("%q: %q reads back as %v (%v)", c.in, v, back, err)
		}
	}
	for _, bad := range []string{"", "soon", "1 fortnight", "1 day 1 day", "1 hour 00:30:00", "1:2:3:4", "--1 day", "9999999999999 years"} {
		if _, err := ParseInterval(bad, NoField); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestIntervalOrderAndKeys(t *testing.T) {
	day, _ := ParseInterval("1 day", NoField)
	hours, _ := ParseInterval("24 hours", NoField)
	month, _ := ParseInterval("1 mon", NoField)
	neg, _ := ParseInterval("-1 days", NoField)
	if Compare(day, hours) != 0 || Hash(1, day) != Hash(1, hours) || string(AppendKey(nil, day)) != string(AppendKey(nil, hours)) {
		t.Error("1 day and 24 hours differ")
	}
	if Compare(neg, day) >= 0 || Compare(month, day) <= 0 || string(AppendKey(nil, neg)) >= string(AppendKey(nil, day)) {
		t.Error("interval order is wrong")
	}
	if day.String() != "1 day" || hours.String() != "24:00:00" {
		t.Error("equal intervals lost their own fields")
	}
}

func TestIntervalArithmetic(t *testing.T) {
	iv := func(s string) Value {
		v, err := ParseInterval(s, NoField)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ts := func(s string) Value {
		v, err := ParseText(Type{Kind: DateTime64, Precision: 6}, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ts6 := Type{Kind: DateTime64, Precision: 6}
	cases := []struct {
		got  func() (Value, error)
		want string
	}{
		{func() (Value, error) { return AddTimeInterval(ts("2026-01-31 10:00:00"), iv("1 mon"), false, ts6) }, "2026-02-28 10:00:00.000000"},
		{func() (Value, error) { return AddTimeInterval(ts("2024-03-31"), iv("1 mon"), true, ts6) }, "2024-02-29 00:00:00.000000"},
		{func() (Value, error) { return AddTimeInterval(ts("2026-01-01"), iv("1 day 1.5 seconds"), false, ts6) }, "2026-01-02 00:00:01.500000"},
		{func() (Value, error) { return SubTimes(ts("2026-03-01 12:00:00"), ts("2026-02-27 09:30:00")) }, "2 days 02:30:00"},
		{func() (Value, error) { return AddIntervals(iv("1 day"), iv("1 mon"), true) }, "-1 mons +1 day"},
		{func() (Value, error) { return ScaleInterval(iv("1 mon"), 3, true) }, "10 days"},
		{func() (Value, error) { return ScaleInterval(iv("1 day"), 1.5, false) }, "1 day 12:00:00"},
		{func() (Value, error) { return NegInterval(iv("1 day 02:00:00")) }, "-1 days -02:00:00"},
	}
	for i, c := range cases {
		v, err := c.got()
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if v.String() != c.want {
			t.Errorf("case %d: got %q, want %q", i, v, c.want)
		}
	}
	if _, err := ScaleInterval(iv("1 day"), 0, true); err != ErrDivisionByZero {
		t.Errorf("interval / 0: %v", err)
	}
	if _, err := AddIntervals(iv("2000000000 mons"), iv("2000000000 mons"), false); err == nil {
		t.Error("month overflow passed")
	}
	if _, err := AddTimeInterval(ts("2026-01-01"), iv("170000000 years"), false, ts6); err == nil {
		t.Error("timestamp overflow passed")
	}
}

// TestIntervalInputRangeError checks that interval text whose fields do
// not fit is a range error naming the value, and the column once a caller
// names it, as every other input range error does; malformed text stays a
// parse error.
func TestIntervalInputRangeError(t *testing.T) {
	for _, s := range []string{"99999999999 years", "3000000000 days", "P99999999999Y", "@ 2147483648 mons"} {
		_, err := ParseInterval(s, NoField)
		var re *RangeError
		if !errors.As(err, &re) {
			t.Errorf("%q: %v (%T), want a *RangeError", s, err, err)
			continue
		}
		want := `value "` + s + `" is out of range for INTERVAL`
		if err.Error() != want {
			t.Errorf("%q: %q, want %q", s, err, want)
		}
		if got := WithColumn(err, "i").Error(); got != `column "i": `+want {
			t.Errorf("%q with a column: %q", s, got)
		}
	}
	var pe *ParseError
	if _, err := ParseInterval("1 zork", NoField); !errors.As(err, &pe) {
		t.Errorf("1 zork: %v, want a *ParseError", err)
	}
}
