package types

import "testing"

// TestParseISOInterval: ISO 8601 input, each expected value PostgreSQL
// 15's answer to SELECT interval '<in>'.
func TestParseISOInterval(t *testing.T) {
	cases := []struct{ in, want string }{
		{"P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"},
		{"PT1.5S", "00:00:01.5"},
		{"P1W", "7 days"},
		{"P-1Y", "-1 years"},
		{"PT-1.5S", "-00:00:01.5"},
		{"P1.5M", "1 mon 15 days"},
		{"P1.5Y", "1 year 6 mons"},
		{"P1.1Y", "1 year 1 mon"},
		{"P0.5W", "3 days 12:00:00"},
		{"P0001-02-03T04:05:06", "1 year 2 mons 3 days 04:05:06"},
		{"P00010203T040506", "1 year 2 mons 3 days 04:05:06"},
		{"PT", "00:00:00"},
		{"P1", "1 year"},
		{"P1DT", "1 day"},
		{"PT1", "01:00:00"},
		{"P000102", "102 years"},
		{"P00010203", "1 year 2 mons 3 days"},
		{"PT0405", "405:00:00"},
		{"PT04:05", "04:05:00"},
		{"P1Y-2M", "10 mons"},
		{"P1DT2", "1 day 02:00:00"},
		{"P1.5", "1 year 6 mons"},
		{"PT1.5", "01:30:00"},
		{"PT1H2H", "03:00:00"},
		{"P1D1D", "2 days"},
		{"P1Y1M1Y", "2 years 1 mon"},
		{"P1DT1HT", "1 day 01:00:00"},
	}
	for _, c := range cases {
		v, err := ParseInterval(c.in, NoField)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := v.String(); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
	// Each an error in PostgreSQL too.
	for _, bad := range []string{"P", "p1d", "P1d", "P1Y T1H", "PT1D", "P1X", "P1-", "PT1:", "P99999999999Y"} {
		if v, err := ParseInterval(bad, NoField); err == nil {
			t.Errorf("%q parsed as %s", bad, v)
		}
	}
}
