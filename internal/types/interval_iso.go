package types

import (
	"math"
	"strings"
)

// ISO 8601 interval input, as PostgreSQL's DecodeISO8601Interval reads it:
// the format with designators, P[nY][nM][nW][nD][T[nH][nM][nS]], each n
// possibly signed and fractional ('P1Y2M3DT4H5M6S', 'PT1.5S', 'P-1D'),
// and the alternative format, P[YYYY-MM-DD][Thh:mm:ss] or its basic form
// without separators ('P0001-02-03T04:05:06', 'P00010203T040506').
// Fractions spill as in PostgreSQL: a year's to whole months (rounded), a
// month's to days (30 a month) and on to seconds, a week's and a day's
// to seconds.

// isoInterval accumulates the fields of an ISO 8601 interval.
type isoInterval struct {
	months, days, micros int64
	ok                   bool
}

func (a *isoInterval) addMonths(n int64) { a.months, a.ok = addOK(a.months, n, a.ok) }
func (a *isoInterval) addDays(n int64)   { a.days, a.ok = addOK(a.days, n, a.ok) }

// addSeconds adds whole units of scale seconds plus frac of one.
func (a *isoInterval) addSeconds(n int64, frac float64, scale int64) {
	us, ok := mulAdd(a.micros, n, scale*usecsPerSec)
	a.micros, a.ok = us, a.ok && ok
	a.fracSeconds(frac * float64(scale))
}

// fracSeconds adds a fractional number of seconds, rounded to the
// microsecond (AdjustFractSeconds).
func (a *isoInterval) fracSeconds(sec float64) {
	if math.Abs(sec) > math.MaxInt64/usecsPerSec/2 {
		a.ok = false
		return
	}
	a.micros, a.ok = addOK(a.micros, int64(math.RoundToEven(sec*usecsPerSec)), a.ok)
}

// fracDays adds frac of scale days: whole days, the rest as seconds
// (AdjustFractDays).
func (a *isoInterval) fracDays(frac float64, scale float64) {
	d := frac * scale
	a.addDays(int64(d))
	a.fracSeconds((d - math.Trunc(d)) * 86400)
}

func addOK(a, b int64, ok bool) (int64, bool) {
	r, ok2 := addInt64(a, b)
	return r, ok && ok2
}

// isoNumber reads a signed decimal number at the start of s: its integral
// part, its fraction, how many digits the integral part had, and the rest.
func isoNumber(s string) (ip int64, frac float64, digits int, rest string, ok bool) {
	j := 0
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	start := j
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	digits = j - start
	if j < len(s) && (s[j] == '.' || s[j] == ',') {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	}
	if j == start {
		return 0, 0, 0, s, false
	}
	ip, frac, ok = splitNumber(strings.Replace(s[:j], ",", ".", 1))
	return ip, frac, digits, s[j:], ok
}

// parseISOInterval reads s (which starts with P) as an ISO 8601 interval,
// as DecodeISO8601Interval does: a designator may repeat (its values add
// up: 'P1D1D' is 2 days); a number without one is the alternative format,
// where only eight digits (YYYYMMDD) or, after T, six (hhmmss) are the
// basic form and anything else starts the extended form with the years
// or hours ('P1' is a year, 'PT1' an hour); the alternative format ends
// the date or time part. A T with nothing after it adds nothing.
func parseISOInterval(s string) (months, days, micros int64, ok bool) {
	a := isoInterval{ok: true}
	s = s[1:]
	if s == "" {
		return 0, 0, 0, false
	}
	datePart, seen := true, false
	bad := func() (int64, int64, int64, bool) { return 0, 0, 0, false }
	for s != "" {
		if s[0] == 'T' {
			// As in PostgreSQL, a T in the time part is accepted too.
			datePart, seen = false, false
			s = s[1:]
			continue
		}
		ip, frac, digits, rest, ok := isoNumber(s)
		if !ok {
			return bad()
		}
		unit := byte(0)
		if rest != "" {
			unit = rest[0]
		}
		if datePart {
			switch unit {
			case 'Y':
				a.addMonths(ip * 12)
				a.addMonths(int64(math.RoundToEven(frac * 12)))
			case 'M':
				a.addMonths(ip)
				a.fracDays(frac, daysPerMonth)
			case 'W':
				a.addDays(ip * 7)
				a.fracDays(frac, 7)
			case 'D':
				a.addDays(ip)
				a.fracSeconds(frac * 86400)
			case 0, 'T', '-':
				if seen {
					return bad()
				}
				if unit != '-' && digits == 8 && ip >= 0 {
					// Basic: YYYYMMDD.
					a.addMonths(ip / 10000 * 12)
					a.addMonths(ip / 100 % 100)
					a.addDays(ip % 100)
					a.fracSeconds(frac * 86400)
					s, seen = rest, true
					if unit == 0 {
						return a.months, a.days, a.micros, a.ok
					}
					continue
				}
				// Extended: YYYY[-MM[-DD]].
				a.addMonths(ip * 12)
				a.addMonths(int64(math.RoundToEven(frac * 12)))
				if unit == '-' {
					if ip, frac, _, rest, ok = isoNumber(rest[1:]); !ok {
						return bad()
					}
					a.addMonths(ip)
					a.fracDays(frac, daysPerMonth)
					if rest != "" && rest[0] == '-' {
						if ip, frac, _, rest, ok = isoNumber(rest[1:]); !ok {
							return bad()
						}
						a.addDays(ip)
						a.fracSeconds(frac * 86400)
					}
				}
				if rest != "" && rest[0] != 'T' {
					return bad()
				}
				s, seen = rest, true
				if rest == "" {
					return a.months, a.days, a.micros, a.ok
				}
				continue
			default:
				return bad()
			}
		} else {
			switch unit {
			case 'H':
				a.addSeconds(ip, frac, 3600)
			case 'M':
				a.addSeconds(ip, frac, 60)
			case 'S':
				a.addSeconds(ip, frac, 1)
			case 0, ':':
				if seen {
					return bad()
				}
				if unit == 0 && digits == 6 && ip >= 0 {
					// Basic: hhmmss.
					a.addSeconds(ip/10000, 0, 3600)
					a.addSeconds(ip/100%100, 0, 60)
					a.addSeconds(ip%100, frac, 1)
					return a.months, a.days, a.micros, a.ok
				}
				// Extended: hh[:mm[:ss]].
				a.addSeconds(ip, frac, 3600)
				if unit == ':' {
					if ip, frac, _, rest, ok = isoNumber(rest[1:]); !ok {
						return bad()
					}
					a.addSeconds(ip, frac, 60)
					if rest != "" && rest[0] == ':' {
						if ip, frac, _, rest, ok = isoNumber(rest[1:]); !ok {
							return bad()
						}
						a.addSeconds(ip, frac, 1)
					}
				}
				if rest != "" {
					return bad()
				}
				return a.months, a.days, a.micros, a.ok
			default:
				return bad()
			}
		}
		seen = true
		s = rest[1:]
	}
	return a.months, a.days, a.micros, a.ok
}
