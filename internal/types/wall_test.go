package types

import (
	"testing"
	"time"
)

// TestWallIn: PostgreSQL's readings of wall-clock times a daylight-saving
// change skips or repeats, and ordinary times unchanged.
func TestWallIn(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zoneinfo:", err)
	}
	lh, err := time.LoadLocation("Australia/Lord_Howe") // 30-minute changes
	if err != nil {
		t.Skip("no zoneinfo:", err)
	}
	for _, tc := range []struct {
		loc           *time.Location
		y             int
		mo            time.Month
		d, h, mi      int
		wantUTC, wall string
	}{
		{ny, 2026, 11, 1, 1, 30, "2026-11-01 06:30", "01:30 EST"}, // passed twice: standard time
		{ny, 2026, 11, 1, 0, 59, "2026-11-01 04:59", "00:59 EDT"},
		{ny, 2026, 11, 1, 2, 0, "2026-11-01 07:00", "02:00 EST"},
		{ny, 2026, 3, 8, 2, 30, "2026-03-08 07:30", "03:30 EDT"}, // skipped: the offset before
		{ny, 2026, 3, 8, 1, 59, "2026-03-08 06:59", "01:59 EST"},
		{ny, 2026, 3, 8, 3, 0, "2026-03-08 07:00", "03:00 EDT"},
		{ny, 2026, 7, 1, 12, 0, "2026-07-01 16:00", "12:00 EDT"},
		{lh, 2026, 4, 5, 1, 45, "2026-04-04 15:15", "01:45 +1030"}, // passed twice (+11 then +10:30)
		{lh, 2026, 10, 4, 2, 15, "2026-10-03 15:45", "02:45 +11"},  // skipped
	} {
		got := WallIn(tc.y, tc.mo, tc.d, tc.h, tc.mi, 0, 0, tc.loc)
		if u := got.UTC().Format("2006-01-02 15:04"); u != tc.wantUTC {
			t.Errorf("%s %d-%02d-%02d %02d:%02d: UTC %s, want %s", tc.loc, tc.y, tc.mo, tc.d, tc.h, tc.mi, u, tc.wantUTC)
		}
		if w := got.Format("15:04 MST"); w != tc.wall {
			t.Errorf("%s %d-%02d-%02d %02d:%02d: reads back as %s, want %s", tc.loc, tc.y, tc.mo, tc.d, tc.h, tc.mi, w, tc.wall)
		}
	}
}
