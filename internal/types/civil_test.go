package types

import (
	"testing"
	"time"
)

// TestCivil checks the calendar arithmetic against the time package over
// two thousand years.
func TestCivil(t *testing.T) {
	for days := int64(-719162); days < 2932897; days += 17 {
		tm := time.Unix(days*86400, 0).UTC()
		y, m, d := civilFromDays(days)
		if y != int64(tm.Year()) || m != int(tm.Month()) || d != tm.Day() {
			t.Fatalf("civilFromDays(%d) = %d-%d-%d, want %s", days, y, m, d, tm.Format("2006-01-02"))
		}
		if back := daysFromCivil(y, m, d); back != days {
			t.Fatalf("daysFromCivil(%d-%d-%d) = %d, want %d", y, m, d, back, days)
		}
	}
	if daysIn(2000, 2) != 29 || daysIn(1900, 2) != 28 || daysIn(2024, 2) != 29 || daysIn(2026, 4) != 30 {
		t.Errorf("daysIn")
	}
}

func TestFloorDiv(t *testing.T) {
	for _, tc := range []struct{ a, b, q, r int64 }{{7, 2, 3, 1}, {-7, 2, -4, 1}, {-8, 2, -4, 0}, {0, 5, 0, 0}} {
		if q, r := floorDiv(tc.a, tc.b); q != tc.q || r != tc.r {
			t.Errorf("floorDiv(%d, %d) = %d, %d; want %d, %d", tc.a, tc.b, q, r, tc.q, tc.r)
		}
	}
}
