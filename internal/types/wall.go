package types

import "time"

// WallIn returns the instant the wall-clock time y-mo-d h:mi:s.ns names in
// loc, deciding the two cases a daylight-saving change makes as PostgreSQL
// does (time.Date leaves them unspecified): a time the clocks skip over
// (02:30 on a spring-forward night) takes the UTC offset in force just
// before the change, so it reads back as the hour after (03:30); a time the
// clocks pass twice (01:30 on a fall-back night) takes the offset in force
// just after it (standard time, the second pass).
func WallIn(y int, mo time.Month, d, h, mi, s, ns int, loc *time.Location) time.Time {
	wall := time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	if loc == time.UTC {
		return wall // no changes to decide
	}
	at := func(off int) time.Time { return wall.Add(-time.Duration(off) * time.Second) }
	offAt := func(t time.Time) int { _, off := t.In(loc).Zone(); return off }
	// The offsets a day either side; a zone changes at most once a day.
	before, after := offAt(wall.Add(-24*time.Hour)), offAt(wall.Add(24*time.Hour))
	if before == after {
		if t := at(before); offAt(t) == before {
			return t.In(loc)
		}
		// Not a change a day either side can see: what time.Date says.
		return time.Date(y, mo, d, h, mi, s, ns, loc)
	}
	okBefore, okAfter := offAt(at(before)) == before, offAt(at(after)) == after
	switch {
	case okAfter: // the only reading, or the second of two
		return at(after).In(loc)
	case okBefore:
		return at(before).In(loc)
	}
	return at(before).In(loc) // skipped over: the offset before the change
}
