package expr

import (
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// The date and time functions of PostgreSQL beyond date_trunc and extract
// (docs/functions.md, "Dates and times"): to_timestamp(seconds),
// make_date, make_timestamp, date_bin, age and justify_hours,
// justify_days and justify_interval. They follow PostgreSQL 15's
// arithmetic and error texts; where Strata's types hold less (years 1 to
// 9999, no infinite timestamps), a value PostgreSQL would return is
// 22008 "… out of range" instead. Timestamps are computed in
// microseconds, PostgreSQL's resolution.

// tsType is the type the functions return for PostgreSQL's timestamp and
// timestamptz: DATETIME64(6) in UTC.
var tsType = types.Type{Kind: types.DateTime64, Precision: 6}

// The Unix seconds of 0001-01-01 00:00:00 and 10000-01-01 00:00:00 UTC:
// the DATETIME64 range (package types, timerange.go), checked before a
// float is converted so that no conversion overflows.
const (
	minUnixSec = -62135596800
	endUnixSec = 253402300800
	// pgEpochSec is PostgreSQL's epoch, 2000-01-01, in Unix seconds.
	pgEpochSec = 946684800
)

// usecsPerDay is the microseconds of a day, PostgreSQL's USECS_PER_DAY.
const usecsPerDay = 86_400_000_000

// dateFunc binds the date and time functions above; ok is false for
// another name. It leaves f.fn and f.vec nil when the arguments do not
// fit.
func dateFunc(f *Func, sig *Signature, name string, argTypes []types.Type) bool {
	n := len(argTypes)
	i8, iv := types.Of(types.Int64), types.Of(types.Interval)
	isInt := func(t types.Type) bool { return t.Kind.IsInteger() || t.Kind == types.Unknown }
	isIv := func(t types.Type) bool { return t.Kind == types.Interval || t.Kind == types.Unknown }
	switch name {
	case "to_timestamp":
		// Only PostgreSQL's to_timestamp(double precision): an integer or
		// numeric argument is cast to it, as there.
		if n != 1 || !argTypes[0].Kind.IsNumeric() && argTypes[0].Kind != types.Unknown {
			return true
		}
		sig.Params, sig.Result = []types.Type{tFloat8}, tsType
		f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
			v := vs[0]
			xs, nulls := v.Float64s(), v.HasNulls()
			for i := range n {
				if nulls && v.IsNull(i) {
					out.AppendNull()
					continue
				}
				us, err := unixToMicros(xs[i])
				if err != nil {
					return err
				}
				out.AppendInt64(us)
			}
			return nil
		}
	case "make_date":
		if n != 3 || !isInt(argTypes[0]) || !isInt(argTypes[1]) || !isInt(argTypes[2]) {
			return true
		}
		sig.Params, sig.Result = []types.Type{i8, i8, i8}, types.Of(types.Date)
		f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
			ys, ms, ds := vs[0].Int64s(), vs[1].Int64s(), vs[2].Int64s()
			return rows(vs, n, out, func(i int) error {
				days, err := makeDate(ys[i], ms[i], ds[i])
				if err != nil {
					return err
				}
				out.AppendInt64(days)
				return nil
			})
		}
	case "make_timestamp":
		if n != 6 {
			return true
		}
		for _, t := range argTypes[:5] {
			if !isInt(t) {
				return true
			}
		}
		if !argTypes[5].Kind.IsNumeric() && argTypes[5].Kind != types.Unknown {
			return true
		}
		sig.Params, sig.Result = []types.Type{i8, i8, i8, i8, i8, tFloat8}, tsType
		f.vec = func(vs []*types.Vector, n int, out *types.Vector) error {
			return rows(vs, n, out, func(i int) error {
				us, err := makeTimestamp(vs[0].Int64s()[i], vs[1].Int64s()[i], vs[2].Int64s()[i],
					vs[3].Int64s()[i], vs[4].Int64s()[i], vs[5].Float64s()[i])
				if err != nil {
					return err
				}
				out.AppendInt64(us)
				return nil
			})
		}
	case "date_bin":
		if n != 3 || !isIv(argTypes[0]) {
			return true
		}
		t, ok := timestampParam(argTypes[1:]...)
		if !ok {
			return true
		}
		sig.Params, sig.Result = []types.Type{iv, t, t}, t
		f.fn = func(a []types.Value, t types.Type) (types.Value, error) {
			return dateBin(a[0], a[1], a[2], t)
		}
	case "age":
		// age(ts) is bound by the planner as age(current_date, ts).
		if n != 2 {
			return true
		}
		t, ok := timestampParam(argTypes...)
		if !ok {
			return true
		}
		sig.Params, sig.Result = []types.Type{t, t}, iv
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			return age(a[0], a[1])
		}
	case "justify_hours", "justify_days", "justify_interval":
		if n != 1 || !isIv(argTypes[0]) {
			return true
		}
		sig.Params, sig.Result = []types.Type{iv}, iv
		f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
			m, d, us := a[0].Interval()
			var err error
			switch name {
			case "justify_hours":
				m, d, us, err = justifyHours(m, d, us)
			case "justify_days":
				m, d, us, err = justifyDays(m, d, us)
			default:
				m, d, us, err = justifyInterval(m, d, us)
			}
			if err != nil {
				return types.Value{}, err
			}
			return types.NewInterval(int64(m), int64(d), us)
		}
	default:
		return false
	}
	return true
}

// timestampParam is the type the timestamp arguments of date_bin and age
// are cast to: their common DATETIME64 type (a zoned one keeps its zone),
// or DATETIME64(6) when none is a DATETIME64 (a DATE or an untyped
// literal, which PostgreSQL reads as timestamptz). ok is false when an
// argument is no time at all.
func timestampParam(ts ...types.Type) (types.Type, bool) {
	var t types.Type
	for _, a := range ts {
		switch a.Kind {
		case types.DateTime64:
			if t.Kind == types.Invalid {
				t = a
			} else if c, ok := types.Common(t, a); ok {
				t = c
			}
		case types.Date, types.Unknown:
		default:
			return t, false
		}
	}
	if t.Kind == types.Invalid {
		t = tsType
	}
	return t, true
}

// fmtG formats x as C's %g does (six significant digits), which
// PostgreSQL's messages about a float input use.
func fmtG(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// unixToMicros is to_timestamp(x): x seconds after the Unix epoch in
// microseconds, rounded half to even as PostgreSQL's float8_timestamptz
// rounds, after moving x to its own epoch (so the same float rounds the
// same way in both).
func unixToMicros(x float64) (int64, error) {
	if math.IsNaN(x) {
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "timestamp cannot be NaN")
	}
	// PostgreSQL returns ±infinity for an infinite x; DATETIME64 has no
	// infinity, so that is out of range here.
	if !(x >= minUnixSec && x < endUnixSec) {
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "timestamp out of range: \"%s\"", fmtG(x))
	}
	us := int64(math.RoundToEven((x-pgEpochSec)*1e6)) + pgEpochSec*1e6
	// Rounding may still step past the last microsecond of 9999.
	if us < minUnixSec*1e6 || us >= endUnixSec*1e6 {
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "timestamp out of range: \"%s\"", fmtG(x))
	}
	return us, nil
}

// civilDays checks year, month and day as PostgreSQL's make_date and
// make_timestamp do and returns the date's days since 1970-01-01. ok is
// false for fields that name no date (22008 "date field value out of
// range"); in is false for a real date outside DATETIME64's years 1 to
// 9999: one after 9999, or a negative year, which PostgreSQL reads as BC
// (-44 is 44 BC) and checks in its astronomical year (1 BC is year 0,
// a leap year).
func civilDays(y, m, d int64) (days int64, in, ok bool) {
	cy := y
	if y < 0 {
		cy = (y+1)%400 + 400 // leap years repeat every 400 years
	}
	if y == 0 || m < 1 || m > 12 || d < 1 {
		return 0, false, false
	}
	dim := int64(31)
	switch m {
	case 4, 6, 9, 11:
		dim = 30
	case 2:
		dim = 28
		if cy%4 == 0 && (cy%100 != 0 || cy%400 == 0) {
			dim = 29
		}
	}
	if d > dim {
		return 0, false, false
	}
	if y < 0 || y > 9999 {
		return 0, false, true
	}
	return time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix() / 86400, true, true
}

// makeDate is make_date(y, m, d) in days since 1970-01-01.
func makeDate(y, m, d int64) (int64, error) {
	days, in, ok := civilDays(y, m, d)
	switch {
	case !ok:
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	case !in:
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "date out of range: %d-%02d-%02d", y, m, d)
	}
	return days, nil
}

// makeTimestamp is make_timestamp(y, mo, d, h, mi, sec) in microseconds
// since the Unix epoch, with PostgreSQL's checks: the date's fields, then
// the time's, which allow 24:00:00 and a leap second's 60 (both carry
// into the next minute or day) but nothing past 24:00:00.
func makeTimestamp(y, mo, d, h, mi int64, sec float64) (int64, error) {
	days, in, ok := civilDays(y, mo, d)
	if !ok {
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "date field value out of range: %d-%02d-%02d", y, mo, d)
	}
	secText := func() string {
		s := fmtG(sec)
		if len(s) < 2 {
			s = "0" + s // %02g
		}
		return s
	}
	// PostgreSQL's float_time_overflows.
	var usec float64
	bad := h < 0 || h > 24 || mi < 0 || mi >= 60 || math.IsNaN(sec)
	if !bad {
		usec = math.RoundToEven(sec * 1e6)
		bad = usec < 0 || usec > 60e6 || (h*60+mi)*60e6+int64(usec) > usecsPerDay
	}
	if bad {
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "time field value out of range: %d:%02d:%s", h, mi, secText())
	}
	us := days*usecsPerDay + (h*60+mi)*60e6 + int64(usec)
	if !in || us >= endUnixSec*1e6 {
		return 0, sqlerr.New(sqlerr.CodeDatetimeOverflow, "timestamp out of range: %d-%02d-%02d %d:%02d:%s", y, mo, d, h, mi, secText())
	}
	return us, nil
}

// tickScale returns how a DATETIME64 of precision p is computed in
// microseconds: ticks are multiplied by up (p < 6) or divided by down
// (p > 6); one of them is 1.
func tickScale(p int) (up, down int64) {
	up, down = 1, 1
	for ; p < 6; p++ {
		up *= 10
	}
	for ; p > 6; p-- {
		down *= 10
	}
	return up, down
}

// subChecked is a - b, ok false on overflow.
func subChecked(a, b int64) (int64, bool) {
	d := a - b
	return d, (a >= 0) == (b >= 0) || (d >= 0) == (a >= 0)
}

// mulChecked is a × b, ok false on overflow.
func mulChecked(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(absI64(a)), uint64(absI64(b)))
	if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
		return 0, false
	}
	if (a < 0) != (b < 0) {
		return -int64(lo), true
	}
	return int64(lo), true
}

func absI64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// dateBin is date_bin(stride, source, origin) of PostgreSQL 14 and later:
// the start of the stride-long bin, counted from origin, that holds
// source, rounded towards the past for a source before origin. A stride
// with months has no fixed length and is 0A000; one of zero or less is
// 22008. It counts in the type's ticks (microseconds for a precision
// below 6, whose results are then cut to a tick), so a DATETIME64(9)
// keeps its nanoseconds.
func dateBin(stride, source, origin types.Value, t types.Type) (types.Value, error) {
	m, d, us := stride.Interval()
	if m != 0 {
		return types.Value{}, sqlerr.New(sqlerr.CodeFeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	ivRange := func() error { return sqlerr.New(sqlerr.CodeDatetimeOverflow, "interval out of range") }
	step, ok := mulChecked(int64(d), usecsPerDay)
	if ok {
		step, ok = subChecked(step, -us)
	}
	if !ok {
		return types.Value{}, ivRange()
	}
	if step <= 0 {
		return types.Value{}, sqlerr.New(sqlerr.CodeDatetimeOverflow, "stride must be greater than zero")
	}
	up, down := tickScale(int(t.Precision))
	src, org := source.Int64()*up, origin.Int64()*up // years 1–9999 in µs: no overflow
	if step, ok = mulChecked(step, down); !ok {
		return types.Value{}, ivRange()
	}
	diff, ok := subChecked(src, org)
	if !ok {
		return types.Value{}, ivRange()
	}
	mod := diff % step
	r := org + (diff - mod) // between origin and source: no overflow
	if diff < 0 && mod != 0 {
		if r, ok = subChecked(r, step); !ok {
			return types.Value{}, sqlerr.New(sqlerr.CodeDatetimeOverflow, "timestamp out of range")
		}
	}
	if up > 1 {
		r = floorDivI64(r, up)
	}
	v := types.NewDateTime64(t, r)
	if err := types.CheckTime(v); err != nil {
		return types.Value{}, sqlerr.New(sqlerr.CodeDatetimeOverflow, "timestamp out of range")
	}
	return v, nil
}

func floorDivI64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// daysInMonth is the length of month m (1–12) of year y, PostgreSQL's
// day_tab.
func daysInMonth(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// age is age(a, b), PostgreSQL's timestamp_age: the field-wise difference
// of the two times' calendar dates and clocks (in the type's zone), each
// negative field borrowed from the next larger one, a day borrowing the
// length of the month of the earlier time. So age('2024-03-31',
// '2023-01-31 12:00') is 1 year 1 mon 30 days 12:00:00, not a count of
// days as a - b is.
func age(a, b types.Value) (types.Value, error) {
	ta, tb := a.Time(), b.Time()
	y1, mo1, d1 := ta.Date()
	y2, mo2, d2 := tb.Date()
	neg := a.Int64() < b.Int64()
	fsec := int64(ta.Nanosecond()/1000 - tb.Nanosecond()/1000)
	sec := int64(ta.Second() - tb.Second())
	mi := int64(ta.Minute() - tb.Minute())
	h := int64(ta.Hour() - tb.Hour())
	day := int64(d1 - d2)
	mon := int64(mo1 - mo2)
	yr := int64(y1 - y2)
	if neg {
		fsec, sec, mi, h, day, mon, yr = -fsec, -sec, -mi, -h, -day, -mon, -yr
	}
	for fsec < 0 {
		fsec += 1_000_000
		sec--
	}
	for sec < 0 {
		sec += 60
		mi--
	}
	for mi < 0 {
		mi += 60
		h--
	}
	for h < 0 {
		h += 24
		day--
	}
	for day < 0 {
		if neg {
			day += int64(daysInMonth(y1, mo1))
		} else {
			day += int64(daysInMonth(y2, mo2))
		}
		mon--
	}
	for mon < 0 {
		mon += 12
		yr--
	}
	if neg {
		fsec, sec, mi, h, day, mon, yr = -fsec, -sec, -mi, -h, -day, -mon, -yr
	}
	return types.NewInterval(yr*12+mon, day, ((h*60+mi)*60+sec)*1_000_000+fsec)
}

// ivRange is PostgreSQL's error for an interval result past its fields.
func ivRange() error { return sqlerr.New(sqlerr.CodeDatetimeOverflow, "interval out of range") }

// add32 is a + b as PostgreSQL's pg_add_s32_overflow checks it.
func add32(a int32, b int64) (int32, error) {
	s := int64(a) + b
	if s != int64(int32(s)) {
		return 0, ivRange()
	}
	return int32(s), nil
}

// justifyHours moves whole 24-hour days of the time into days, giving
// the time the sign of the days (PostgreSQL's interval_justify_hours).
func justifyHours(m, d int32, us int64) (int32, int32, int64, error) {
	d, err := add32(d, us/usecsPerDay)
	if err != nil {
		return 0, 0, 0, err
	}
	us %= usecsPerDay
	switch {
	case d > 0 && us < 0:
		us += usecsPerDay
		d--
	case d < 0 && us > 0:
		us -= usecsPerDay
		d++
	}
	return m, d, us, nil
}

// justifyDays moves whole 30-day months of the days into months, giving
// the days the sign of the months (interval_justify_days).
func justifyDays(m, d int32, us int64) (int32, int32, int64, error) {
	m, err := add32(m, int64(d/30))
	if err != nil {
		return 0, 0, 0, err
	}
	d %= 30
	switch {
	case m > 0 && d < 0:
		d += 30
		m--
	case m < 0 && d > 0:
		d -= 30
		m++
	}
	return m, d, us, nil
}

// justifyInterval is justify_days of justify_hours with every field
// given one sign (interval_justify_interval of PostgreSQL 15, which
// moves months out of the days first when that keeps the days in range).
func justifyInterval(m, d int32, us int64) (int32, int32, int64, error) {
	var err error
	if d > 0 && us > 0 || d < 0 && us < 0 {
		if m, err = add32(m, int64(d/30)); err != nil {
			return 0, 0, 0, err
		}
		d %= 30
	}
	if d, err = add32(d, us/usecsPerDay); err != nil {
		return 0, 0, 0, err
	}
	us %= usecsPerDay
	if m, err = add32(m, int64(d/30)); err != nil {
		return 0, 0, 0, err
	}
	d %= 30
	switch {
	case m > 0 && (d < 0 || d == 0 && us < 0):
		d += 30
		m--
	case m < 0 && (d > 0 || d == 0 && us > 0):
		d -= 30
		m++
	}
	switch {
	case d > 0 && us < 0:
		us += usecsPerDay
		d--
	case d < 0 && us > 0:
		us -= usecsPerDay
		d++
	}
	return m, d, us, nil
}
