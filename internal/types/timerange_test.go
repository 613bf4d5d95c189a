package types

import (
	"errors"
	"testing"
	"time"
)

// Every way a DATE or DATETIME64 comes to be — text, cast, arithmetic,
// time.Time — agrees on years 1 to 9999: the last and first values read,
// cast, add and format back; one step past them is a RangeError naming
// the value, never a value whose text does not read back.
func TestTimeRange(t *testing.T) {
	ts6 := Type{Kind: DateTime64, Precision: 6}
	tokyo := Type{Kind: DateTime64, Precision: 0, TZ: "Asia/Tokyo"}
	date := Of(Date)
	for _, c := range []struct {
		t    Type
		text string
	}{
		{date, "9999-12-31"}, {date, "0001-01-01"},
		{ts6, "9999-12-31 23:59:59.999999"}, {ts6, "0001-01-01 00:00:00.000000"},
		{tokyo, "9999-12-31 23:59:59"}, {tokyo, "0001-01-01 00:00:00"},
	} {
		v, err := ParseText(c.t, c.text)
		if err != nil {
			t.Fatalf("%s %s: %v", c.t, c.text, err)
		}
		if got := v.String(); got != c.text {
			t.Errorf("%s %s formats as %s", c.t, c.text, got)
		}
	}
	outOfRange := func(what string, v Value, err error, want string) {
		t.Helper()
		var re *RangeError
		if !errors.As(err, &re) || re.Value != want {
			t.Errorf("%s: got %v, %v; want a RangeError naming %q", what, v, err, want)
		}
	}
	for _, c := range []struct {
		t    Type
		text string
	}{
		{date, "10000-01-01"}, {date, "0000-12-31"}, {date, "123456789-01-01"},
		{ts6, "10000-01-01 00:00:00"}, {ts6, "0000-12-31 23:59:59"},
		{ts6, "9999-12-31 23:59:59.9999996"}, // rounds to year 10000
		{tokyo, "9999-12-31 20:00:00Z"},      // 10000-01-01 05:00 in Tokyo
		{Type{Kind: DateTime64, Precision: 0, TZ: "UTC"}, "0001-01-01 01:00:00+09"},
	} {
		v, err := ParseText(c.t, c.text)
		outOfRange(c.t.String()+" "+c.text, v, err, c.text)
	}
	if _, err := ParseText(date, "2024-02-30"); err == nil || errors.As(err, new(*RangeError)) {
		t.Errorf("2024-02-30: %v, want a ParseError (no such day)", err)
	}

	last, _ := ParseText(ts6, "9999-12-31 23:59:59.999999")
	lastDate, _ := ParseText(date, "9999-12-31")
	firstDate, _ := ParseText(date, "0001-01-01")
	sec, _ := NewInterval(0, 0, 1)
	day, _ := NewInterval(0, 1, 0)
	v, err := AddTimeInterval(last, sec, false, ts6)
	outOfRange("timestamp + 1 second", v, err, "10000-01-01 00:00:00.000000")
	v, err = AddTimeInterval(lastDate, day, false, ts6)
	outOfRange("date + 1 day", v, err, "10000-01-01 00:00:00.000000")
	v, err = TimeArith(OpAdd, lastDate, NewInt64(1), date)
	outOfRange("date + 1", v, err, "10000-01-01")
	v, err = TimeArith(OpSub, firstDate, NewInt64(1), date)
	outOfRange("date - 1", v, err, "0000-12-31")
	if v, err := TimeArith(OpSub, lastDate, NewInt64(1), date); err != nil || v.String() != "9999-12-30" {
		t.Errorf("date - 1: %v %v", v, err)
	}

	// Casts: to a zone whose wall clock is past 9999, to a lower precision
	// that rounds into year 10000.
	v, err = Cast(last, tokyo)
	outOfRange("cast to Asia/Tokyo", v, err, "9999-12-31 23:59:59.999999")
	v, err = Cast(last, Type{Kind: DateTime64, Precision: 0})
	outOfRange("cast to DATETIME64(0)", v, err, "9999-12-31 23:59:59.999999")
	if v, err := Cast(lastDate, ts6); err != nil || v.String() != "9999-12-31 00:00:00.000000" {
		t.Errorf("cast of the last date: %v %v", v, err)
	}

	v, err = FromTime(date, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	outOfRange("FromTime DATE", v, err, "10000-01-01")
	v, err = FromTime(ts6, time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC))
	outOfRange("FromTime DATETIME64", v, err, "0000-12-31 00:00:00.000000")
	if err := CheckTime(NewInt64(1 << 62)); err != nil {
		t.Errorf("CheckTime of an integer: %v", err)
	}
}
