package types

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// INTERVAL is an expression type only (no column has it, SPEC §2): what
// timestamp - timestamp returns and timestamp ± interval takes, as in
// PostgreSQL. A value has PostgreSQL's three fields, months, days and
// microseconds, kept apart because a month and a day have no fixed length
// in the calendar (timestamp + '1 mon' clamps to the month's end, + '1 day'
// keeps the wall clock across a DST change).
//
// It lives in the ClassWide word: w[0] the microseconds, w[1] the days (low
// 32 bits) and months (high 32 bits), and w[2], w[3] the span as a signed
// 128-bit integer (w[3] high): months × 30 days + days × 24 h + the
// microseconds, PostgreSQL's measure for comparing intervals. Compare, Hash
// and the key encodings use the span only, so '1 day' equals '24 hours'
// (and groups with it) while each prints as written.

// Microseconds per unit of the interval fields.
const (
	usecsPerSec   = 1_000_000
	usecsPerMin   = 60 * usecsPerSec
	usecsPerHour  = 60 * usecsPerMin
	usecsPerDay   = 24 * usecsPerHour
	daysPerMonth  = 30
	usecsPerMonth = daysPerMonth * usecsPerDay
)

// NewInterval returns the interval of months, days and microseconds; a
// field outside PostgreSQL's range (months and days are 32-bit) is a
// *RangeError.
func NewInterval(months, days, micros int64) (Value, error) {
	if months != int64(int32(months)) || days != int64(int32(days)) {
		return Value{}, &RangeError{Type: Of(Interval), Reason: "interval out of range"}
	}
	return mkInterval(int32(months), int32(days), micros), nil
}

func mkInterval(months, days int32, micros int64) Value {
	v := Value{t: Of(Interval)}
	v.w[0] = uint64(micros)
	v.w[1] = uint64(uint32(days)) | uint64(uint32(months))<<32
	hi, lo := mul128(int64(months), usecsPerMonth)
	h2, l2 := mul128(int64(days), usecsPerDay)
	hi, lo = add128(hi, lo, h2, l2)
	hi, lo = add128(hi, lo, micros>>63, uint64(micros))
	v.w[2], v.w[3] = lo, uint64(hi)
	return v
}

// Interval returns an INTERVAL's months, days and microseconds.
func (v Value) Interval() (months, days int32, micros int64) {
	return int32(uint32(v.w[1] >> 32)), int32(uint32(v.w[1])), int64(v.w[0])
}

// mul128 is the signed 128-bit product a × b as (high, low) words.
func mul128(a, b int64) (int64, uint64) {
	hi, lo := bits.Mul64(absInt(a), absInt(b))
	if (a < 0) != (b < 0) {
		lo = ^lo + 1
		hi = ^hi
		if lo == 0 {
			hi++
		}
	}
	return int64(hi), lo
}

func add128(h1 int64, l1 uint64, h2 int64, l2 uint64) (int64, uint64) {
	lo, c := bits.Add64(l1, l2, 0)
	return h1 + h2 + int64(c), lo
}

// cmpSpan orders two intervals by their span.
func cmpSpan(a, b *Value) int {
	if a.w[3] != b.w[3] {
		return cmpInt64(int64(a.w[3]), int64(b.w[3]))
	}
	return cmpUint64(a.w[2], b.w[2])
}

// appendSpanKey appends an order-preserving encoding of an interval's span.
func appendSpanKey(dst []byte, w0, w1, w2, w3 uint64) []byte {
	_, _ = w0, w1
	return appendBE(appendBE(dst, w3^1<<63, 8), w2, 8)
}

// appendInterval appends PostgreSQL's default ("postgres" style) text of
// an interval: "1 year 2 mons -3 days +04:05:06.5", "00:00:00" for zero.
// A field after a negative one carries an explicit +.
func appendInterval(dst []byte, months, days int32, micros int64) []byte {
	zero, before := true, false
	part := func(n int64, unit string) {
		if n == 0 {
			return
		}
		if !zero {
			dst = append(dst, ' ')
		}
		if before && n > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, n, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if n != 1 {
			dst = append(dst, 's')
		}
		before, zero = n < 0, false
	}
	part(int64(months/12), "year")
	part(int64(months%12), "mon")
	part(int64(days), "day")
	if zero || micros != 0 {
		if !zero {
			dst = append(dst, ' ')
		}
		switch {
		case micros < 0:
			dst = append(dst, '-')
		case before:
			dst = append(dst, '+')
		}
		u := absInt(micros)
		h, m, s, f := u/usecsPerHour, u%usecsPerHour/usecsPerMin, u%usecsPerMin/usecsPerSec, u%usecsPerSec
		dst = append2(dst, h)
		dst = append(dst, ':')
		dst = append2(dst, m)
		dst = append(dst, ':')
		dst = append2(dst, s)
		if f != 0 {
			var frac [7]byte
			frac[0] = '.'
			for i := 6; i >= 1; i-- {
				frac[i] = byte('0' + f%10)
				f /= 10
			}
			n := 7
			for frac[n-1] == '0' {
				n--
			}
			dst = append(dst, frac[:n]...)
		}
	}
	return dst
}

// append2 appends n with at least two digits.
func append2(dst []byte, n uint64) []byte {
	if n < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendUint(dst, n, 10)
}

// IntervalField is the unit of an interval literal's qualifier
// (INTERVAL '5' MINUTE): a bare number counts in it, and the fields finer
// than it are dropped, as PostgreSQL does.
type IntervalField uint8

// The interval qualifiers; NoField is none.
const (
	NoField IntervalField = iota
	FieldYear
	FieldMonth
	FieldDay
	FieldHour
	FieldMinute
	FieldSecond
)

// IntervalFieldOf returns the qualifier a word names (YEAR, MONTH, DAY,
// HOUR, MINUTE, SECOND; case-insensitive), or NoField.
func IntervalFieldOf(word string) IntervalField {
	switch strings.ToLower(word) {
	case "year":
		return FieldYear
	case "month":
		return FieldMonth
	case "day":
		return FieldDay
	case "hour":
		return FieldHour
	case "minute":
		return FieldMinute
	case "second":
		return FieldSecond
	}
	return NoField
}

// intervalUnit is what one unit word adds per 1: months, days or
// microseconds.
type intervalUnit struct {
	months, days, micros int64
	bit                  uint16 // the unit, for refusing it twice
}

// The unit bits of ParseInterval.
const (
	unitMicro uint16 = 1 << iota
	unitMilli
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitYear
	unitDecade
	unitCentury
	unitMillennium
)

var intervalUnits = map[string]intervalUnit{}

func init() {
	add := func(u intervalUnit, names ...string) {
		for _, n := range names {
			intervalUnits[n] = u
		}
	}
	add(intervalUnit{micros: 1, bit: unitMicro}, "microsecond", "microseconds", "usec", "usecs", "us", "usecond", "useconds")
	add(intervalUnit{micros: 1000, bit: unitMilli}, "millisecond", "milliseconds", "msec", "msecs", "ms", "mseconds")
	add(intervalUnit{micros: usecsPerSec, bit: unitSecond}, "second", "seconds", "sec", "secs", "s")
	add(intervalUnit{micros: usecsPerMin, bit: unitMinute}, "minute", "minutes", "min", "mins", "m")
	add(intervalUnit{micros: usecsPerHour, bit: unitHour}, "hour", "hours", "hr", "hrs", "h")
	add(intervalUnit{days: 1, bit: unitDay}, "day", "days", "d")
	add(intervalUnit{days: 7, bit: unitWeek}, "week", "weeks", "w")
	add(intervalUnit{months: 1, bit: unitMonth}, "month", "months", "mon", "mons")
	add(intervalUnit{months: 12, bit: unitYear}, "year", "years", "yr", "yrs", "y")
	add(intervalUnit{months: 120, bit: unitDecade}, "decade", "decades", "dec", "decs")
	add(intervalUnit{months: 1200, bit: unitCentury}, "century", "centuries", "c", "cent")
	add(intervalUnit{months: 12000, bit: unitMillennium}, "millennium", "millennia", "mil", "mils")
}

var fieldUnit = [...]intervalUnit{
	FieldYear: {months: 12, bit: unitYear}, FieldMonth: {months: 1, bit: unitMonth}, FieldDay: {days: 1, bit: unitDay},
	FieldHour: {micros: usecsPerHour, bit: unitHour}, FieldMinute: {micros: usecsPerMin, bit: unitMinute},
	FieldSecond: {micros: usecsPerSec, bit: unitSecond},
}

// ParseInterval reads an interval as PostgreSQL's input does: quantities
// in ISO 8601 ("P1Y2M3DT4H5M6S", "P0001-02-03T04:05:06", interval_iso.go),
// with units ("1 day", "90 days", "1 hour 30 minutes", "1.5 hours", "2
// years 3 mons"), optionally a leading @ and a trailing "ago" (negating),
// a time "[-]hh:mm[:ss[.ffffff]]", and a bare number, which counts seconds
// or the qualifier's unit. A fraction of a month spills into days (30 to a
// month) and of a day into microseconds. q, when not NoField, then drops
// the fields finer than it.
func ParseInterval(s string, q IntervalField) (Value, error) {
	bad := func(detail string) (Value, error) {
		return Value{}, &ParseError{Value: s, Type: Of(Interval), Detail: detail}
	}
	outOfRange := func() (Value, error) { return Value{}, intervalInputRange(s) }
	if t := strings.TrimSpace(s); len(t) > 0 && t[0] == 'P' {
		m, d, us, ok := parseISOInterval(t)
		if !ok {
			return bad("")
		}
		return qualified(s, m, d, us, q)
	}
	toks := strings.Fields(strings.ToLower(s))
	if len(toks) > 0 && toks[0] == "@" {
		toks = toks[1:]
	} else if len(toks) > 0 && strings.HasPrefix(toks[0], "@") {
		toks[0] = toks[0][1:]
	}
	ago := false
	if len(toks) > 0 && toks[len(toks)-1] == "ago" {
		ago, toks = true, toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return bad("")
	}
	var months, days, micros float64
	var imonths, idays, imicros int64
	// seen marks the units given so far: each may be given once, and a
	// time (h:m:s) stands for hours, minutes and seconds (PostgreSQL).
	var seen uint16
	once := func(bit uint16) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	add := func(u intervalUnit, ip int64, frac float64) bool {
		// The integral part adds exactly; the fraction spills downwards.
		m, ok1 := mulAdd(imonths, ip, u.months)
		d, ok2 := mulAdd(idays, ip, u.days)
		us, ok3 := mulAdd(imicros, ip, u.micros)
		if !ok1 || !ok2 || !ok3 {
			return false
		}
		imonths, idays, imicros = m, d, us
		months += frac * float64(u.months)
		days += frac * float64(u.days)
		micros += frac * float64(u.micros)
		return true
	}
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if strings.ContainsRune(tok, ':') {
			us, ok := parseClock(tok)
			if !ok || !once(unitHour|unitMinute|unitSecond) {
				return bad("")
			}
			if imicros, ok = addInt64(imicros, us); !ok {
				return outOfRange()
			}
			continue
		}
		// The number, and a unit written onto it ("90days") or next.
		j := 0
		if j < len(tok) && (tok[j] == '-' || tok[j] == '+') {
			j++
		}
		for j < len(tok) && (tok[j] >= '0' && tok[j] <= '9' || tok[j] == '.') {
			j++
		}
		numText, unit := tok[:j], tok[j:]
		if numText == "" || numText == "-" || numText == "+" {
			return bad("")
		}
		if unit == "" && i+1 < len(toks) {
			if _, ok := intervalUnits[toks[i+1]]; ok {
				unit = toks[i+1]
				i++
			}
		}
		var u intervalUnit
		switch {
		case unit != "":
			var ok bool
			if u, ok = intervalUnits[unit]; !ok || !once(u.bit) {
				return bad("")
			}
		case q != NoField:
			u = fieldUnit[q]
		default:
			u = intervalUnit{micros: usecsPerSec, bit: unitSecond}
		}
		if unit == "" && !once(u.bit) {
			return bad("")
		}
		ip, frac, ok := splitNumber(numText)
		if !ok || !add(u, ip, frac) {
			return outOfRange()
		}
	}
	// Spill fractions: months to days (30 a month), days to microseconds.
	wm := math.Trunc(months)
	days += (months - wm) * daysPerMonth
	wd := math.Trunc(days)
	micros += (days - wd) * usecsPerDay
	m, ok1 := addInt64(imonths, int64(wm))
	d, ok2 := addInt64(idays, int64(wd))
	us, ok3 := addInt64(imicros, int64(math.RoundToEven(micros)))
	if !ok1 || !ok2 || !ok3 || math.Abs(micros) > math.MaxInt64/2 {
		return outOfRange()
	}
	if ago {
		m, d, us = -m, -d, -us
	}
	return qualified(s, m, d, us, q)
}

// qualified is the interval of months, days and microseconds with the
// fields finer than q dropped (q is NoField: none), as read from s.
func qualified(s string, m, d, us int64, q IntervalField) (Value, error) {
	switch q {
	case FieldYear:
		m, d, us = m/12*12, 0, 0
	case FieldMonth:
		d, us = 0, 0
	case FieldDay:
		us = 0
	case FieldHour:
		us = us / usecsPerHour * usecsPerHour
	case FieldMinute:
		us = us / usecsPerMin * usecsPerMin
	}
	v, err := NewInterval(m, d, us)
	if err != nil {
		return Value{}, intervalInputRange(s)
	}
	return v, nil
}

// splitNumber splits a decimal number into its integral part and its
// fraction (both with the number's sign).
func splitNumber(s string) (int64, float64, bool) {
	if s == "" {
		return 0, 0, false // the seconds of "04:05:" (found by FuzzSQL)
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg, s = s[0] == '-', s[1:]
	}
	ipText, fracText, _ := strings.Cut(s, ".")
	if ipText == "" && fracText == "" || strings.ContainsRune(fracText, '.') {
		return 0, 0, false
	}
	var ip int64
	if ipText != "" {
		x, err := strconv.ParseInt(ipText, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ip = x
	}
	var frac float64
	if fracText != "" {
		f, err := strconv.ParseFloat("0."+fracText, 64)
		if err != nil {
			return 0, 0, false
		}
		frac = f
	}
	if neg {
		ip, frac = -ip, -frac
	}
	return ip, frac, true
}

// parseClock reads [+-]h:m[:s[.f]] as microseconds.
func parseClock(s string) (int64, bool) {
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg, s = s[0] == '-', s[1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0, false
	}
	var us int64
	for i, p := range parts {
		mult := []int64{usecsPerHour, usecsPerMin, usecsPerSec}[i]
		if i == 2 {
			ip, frac, ok := splitNumber(p)
			if !ok || ip < 0 || ip > 59 {
				return 0, false
			}
			us += ip*usecsPerSec + int64(math.RoundToEven(frac*usecsPerSec))
			continue
		}
		x, err := strconv.ParseInt(p, 10, 64)
		if err != nil || x < 0 || i > 0 && x > 59 || x > math.MaxInt64/usecsPerHour {
			return 0, false
		}
		us += x * mult
	}
	if neg {
		us = -us
	}
	return us, true
}

// mulAdd returns acc + x × m, reporting overflow.
func mulAdd(acc, x, m int64) (int64, bool) {
	if m == 0 || x == 0 {
		return acc, true
	}
	hi, lo := mul128(x, m)
	if hi != int64(lo)>>63 {
		return 0, false
	}
	return addInt64(acc, int64(lo))
}

func addInt64(a, b int64) (int64, bool) {
	r := a + b
	if (b > 0 && r < a) || (b < 0 && r > a) {
		return 0, false
	}
	return r, true
}

// intervalInputRange is the error of interval text that is well formed
// but whose fields leave their range (months and days are 32-bit,
// microseconds 64): like every input range error it names the value (and,
// through WithColumn, the column), `value "99999999999 years" is out of
// range for INTERVAL`, where PostgreSQL says "interval field value out of
// range".
func intervalInputRange(s string) error {
	return &RangeError{Type: Of(Interval), Value: strconv.Quote(s)}
}

// intervalRange is the error of interval arithmetic that leaves the range.
func intervalRange() error {
	return &RangeError{Type: Of(Interval), Reason: "interval out of range"}
}

// AddIntervals returns a + b (sub: a - b), field by field.
func AddIntervals(a, b Value, sub bool) (Value, error) {
	am, ad, au := a.Interval()
	m32, d32, bu := b.Interval()
	// Months and days are negated as int64: -MinInt32 is not an int32.
	bm, bd := int64(m32), int64(d32)
	if sub {
		if bu == math.MinInt64 {
			return Value{}, intervalRange()
		}
		bm, bd, bu = -bm, -bd, -bu
	}
	us, ok := addInt64(au, bu)
	if !ok {
		return Value{}, intervalRange()
	}
	v, err := NewInterval(int64(am)+bm, int64(ad)+bd, us)
	if err != nil {
		return Value{}, intervalRange()
	}
	return v, nil
}

// NegInterval returns -v.
func NegInterval(v Value) (Value, error) {
	return AddIntervals(mkInterval(0, 0, 0), v, true)
}

// tsRound rounds to microsecond precision in seconds (PostgreSQL's
// TSROUND), so that fractions such as 0.1 of a month spill exactly.
func tsRound(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }

// ScaleInterval returns v × f (div: v / f) as PostgreSQL's interval_mul and
// interval_div compute it: each field scaled and truncated, the fractions
// of months spilled into days (30 to a month) and of days into time.
func ScaleInterval(v Value, f float64, div bool) (Value, error) {
	if div && f == 0 {
		return Value{}, ErrDivisionByZero
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, intervalRange()
	}
	// Divided, not multiplied by 1/f, as interval_div does: m × (1/3)
	// and m / 3 may differ in the last bit, and so in a truncated field.
	scale := func(x float64) float64 {
		if div {
			return x / f
		}
		return x * f
	}
	m, d, us := v.Interval()
	rm := scale(float64(m))
	rd := scale(float64(d))
	if math.Abs(rm) > math.MaxInt32 || math.Abs(rd) > math.MaxInt32 {
		return Value{}, intervalRange()
	}
	months, days := int64(rm), int64(rd)
	monthRemDays := tsRound((rm - float64(months)) * daysPerMonth)
	secRem := tsRound((rd - float64(days) + monthRemDays - math.Trunc(monthRemDays)) * 86400)
	if math.Abs(secRem) >= 86400 {
		days += int64(secRem / 86400)
		secRem -= math.Trunc(secRem/86400) * 86400
	}
	days += int64(monthRemDays)
	t := math.RoundToEven(scale(float64(us)) + secRem*usecsPerSec)
	if math.Abs(t) >= math.MaxInt64 {
		return Value{}, intervalRange()
	}
	r, err := NewInterval(months, days, int64(t))
	if err != nil {
		return Value{}, intervalRange()
	}
	return r, nil
}

// AddTimeInterval returns ts + iv (sub: ts - iv) as a DATETIME64 of type
// t: the months first, on the calendar of ts's zone, clamping the day to
// the target month's last (Jan 31 + 1 mon is Feb 28 or 29); then the days,
// keeping the wall-clock time; then the microseconds. A DATE is its
// midnight.
func AddTimeInterval(ts, iv Value, sub bool, t Type) (Value, error) {
	var tm time.Time
	if ts.t.Kind == Date {
		tm = time.Unix(ts.Int64()*86400, 0).UTC()
	} else {
		tm = ts.Time()
	}
	months, days, us := iv.Interval()
	m64, d64 := int64(months), int64(days)
	if sub {
		if us == math.MinInt64 {
			return Value{}, &RangeError{Type: t, Reason: "timestamp out of range"}
		}
		m64, d64, us = -m64, -d64, -us
	}
	loc := tm.Location()
	if m64 != 0 {
		y, mon, d := tm.Date()
		h, mi, s := tm.Clock()
		total := int64(y)*12 + int64(mon-1) + m64
		ty, tmon := floorDiv(total, 12)
		if ty < -1_000_000 || ty > 1_000_000 {
			return Value{}, &RangeError{Type: t, Reason: "timestamp out of range"}
		}
		if dim := daysIn(ty, int(tmon)+1); d > dim {
			d = dim
		}
		tm = WallIn(int(ty), time.Month(tmon+1), d, h, mi, s, tm.Nanosecond(), loc)
	}
	if d64 != 0 {
		if d64 > 400_000_000 || d64 < -400_000_000 {
			return Value{}, &RangeError{Type: t, Reason: "timestamp out of range"}
		}
		y, mon, d := tm.Date()
		h, mi, s := tm.Clock()
		tm = WallIn(y, mon, d+int(d64), h, mi, s, tm.Nanosecond(), loc)
	}
	if us != 0 {
		sec, ok := addInt64(tm.Unix(), us/usecsPerSec)
		if !ok {
			return Value{}, &RangeError{Type: t, Reason: "timestamp out of range"}
		}
		tm = time.Unix(sec, int64(tm.Nanosecond())+us%usecsPerSec*1000).In(loc)
	}
	v, err := FromTime(t, tm)
	if err != nil {
		if re, ok := err.(*RangeError); ok && re.Reason != "" {
			return Value{}, re // names the result
		}
		return Value{}, &RangeError{Type: t, Reason: "timestamp out of range"}
	}
	return v, nil
}

// SubTimes returns a - b of two DATETIME64 (or DATE) values as an
// interval of days and time, as PostgreSQL's timestamp - timestamp does
// (whole 24-hour days, then the rest; no months).
func SubTimes(a, b Value) (Value, error) {
	ua, ok1 := timeMicros(a)
	ub, ok2 := timeMicros(b)
	if !ok1 || !ok2 {
		return Value{}, intervalRange()
	}
	diff, ok := addInt64(ua, -ub)
	if !ok {
		return Value{}, intervalRange()
	}
	return NewInterval(0, diff/usecsPerDay, diff%usecsPerDay)
}

// timeMicros is a DATE's or DATETIME64's instant in microseconds since the
// epoch (finer ticks truncated).
func timeMicros(v Value) (int64, bool) {
	if v.t.Kind == Date {
		return mulAdd(0, v.Int64(), usecsPerDay)
	}
	p := int(v.t.Precision)
	ticks := v.Int64()
	if p >= 6 {
		div := int64(pow10u[p-6])
		q := ticks / div
		if ticks%div < 0 {
			q--
		}
		return q, true
	}
	return mulAdd(0, ticks, int64(pow10u[6-p]))
}

// IntervalPart returns, as exact decimal text, the field EXTRACT reads
// of an interval, as PostgreSQL computes it: epoch (the whole span in
// seconds, a year counted as 365.25 days and a month as 30), millennium,
// century, decade, year, quarter, month (of the year), day, hour, minute,
// second (with its microseconds), millisecond and microsecond (of the
// minute); scale is the text's fractional digits. ok is false for another
// field.
func IntervalPart(field string, v Value) (text string, scale int, ok bool) {
	m, d, us := v.Interval()
	i := func(n int64) (string, int, bool) { return strconv.FormatInt(n, 10), 0, true }
	frac := func(whole, part int64, digits int) (string, int, bool) {
		// whole + part / 10^digits, with the sign of the sum.
		neg := whole < 0 || whole == 0 && part < 0
		if neg {
			whole, part = -whole, -part
		}
		s := strconv.FormatInt(whole, 10) + "." + fmt6(part, digits)
		if neg {
			s = "-" + s
		}
		return s, digits, true
	}
	switch field {
	case "epoch":
		sec := int64(m/12)*31557600 + int64(m%12)*daysPerMonth*86400 + int64(d)*86400
		sec += us / usecsPerSec
		part := us % usecsPerSec
		if sec > 0 && part < 0 {
			sec, part = sec-1, part+usecsPerSec
		} else if sec < 0 && part > 0 {
			sec, part = sec+1, part-usecsPerSec
		}
		return frac(sec, part, 6)
	case "millennium", "millennia":
		return i(int64(m / 12000))
	case "century", "centuries":
		return i(int64(m / 1200))
	case "decade", "decades":
		return i(int64(m / 120))
	case "year", "years":
		return i(int64(m / 12))
	case "quarter":
		return i(int64(m%12/3 + 1))
	case "month", "months", "mon", "mons":
		return i(int64(m % 12))
	case "day", "days":
		return i(int64(d))
	case "hour", "hours":
		return i(us / usecsPerHour)
	case "minute", "minutes":
		return i(us % usecsPerHour / usecsPerMin)
	case "second", "seconds":
		r := us % usecsPerMin
		return frac(r/usecsPerSec, r%usecsPerSec, 6)
	case "millisecond", "milliseconds":
		r := us % usecsPerMin
		return frac(r/1000, r%1000, 3)
	case "microsecond", "microseconds":
		return i(us % usecsPerMin)
	}
	return "", 0, false
}

// fmt6 formats the non-negative n with digits digits, zero-padded.
func fmt6(n int64, digits int) string {
	s := strconv.FormatInt(n, 10)
	for len(s) < digits {
		s = "0" + s
	}
	return s
}

// TruncInterval is date_trunc(unit, v) of an interval: the fields finer
// than unit are zeroed (PostgreSQL's interval_trunc). ok is false for a
// unit it does not take (week: months have no whole weeks).
func TruncInterval(unit string, v Value) (Value, bool) {
	m, d, us := v.Interval()
	switch unit {
	case "millennium":
		return mkInterval(m/12000*12000, 0, 0), true
	case "century":
		return mkInterval(m/1200*1200, 0, 0), true
	case "decade":
		return mkInterval(m/120*120, 0, 0), true
	case "year":
		return mkInterval(m/12*12, 0, 0), true
	case "quarter":
		return mkInterval(m/12*12+m%12/3*3, 0, 0), true
	case "month":
		return mkInterval(m, 0, 0), true
	case "day":
		return mkInterval(m, d, 0), true
	case "hour":
		return mkInterval(m, d, us/usecsPerHour*usecsPerHour), true
	case "minute":
		return mkInterval(m, d, us/usecsPerMin*usecsPerMin), true
	case "second":
		return mkInterval(m, d, us/usecsPerSec*usecsPerSec), true
	case "millisecond", "milliseconds":
		return mkInterval(m, d, us/1000*1000), true
	case "microsecond", "microseconds":
		return v, true
	}
	return Value{}, false
}

// TimeType returns the result type of a op b when one operand is an
// INTERVAL, or both are DATE or DATETIME64, or a DATE meets an integer, as
// PostgreSQL types them: timestamp ± interval keeps the timestamp's zone
// (at least microsecond precision), date ± interval is a timestamp,
// timestamp - timestamp an interval, date - date an INT32 count of days,
// date ± integer a date, interval ± interval and interval × or / a number
// an interval. ok is false when op has no such meaning for the operands.
func TimeType(op Op, a, b Type) (Type, bool) {
	ka, kb := a.Kind, b.Kind
	isTime := func(k Kind) bool { return k == Date || k == DateTime64 }
	tsOf := func(t Type) Type {
		if t.Kind == Date {
			return Type{Kind: DateTime64, Precision: 6}
		}
		return Type{Kind: DateTime64, Precision: max(t.Precision, 6), TZ: t.TZ}
	}
	switch {
	case ka == Interval && kb == Interval && (op == OpAdd || op == OpSub):
		return a, true
	case isTime(ka) && kb == Interval && (op == OpAdd || op == OpSub):
		return tsOf(a), true
	case ka == Interval && isTime(kb) && op == OpAdd:
		return tsOf(b), true
	case ka == Date && kb == Date && op == OpSub:
		return Of(Int32), true
	case isTime(ka) && isTime(kb) && op == OpSub:
		return Of(Interval), true
	case ka == Date && kb.IsInteger() && (op == OpAdd || op == OpSub), ka.IsInteger() && kb == Date && op == OpAdd:
		return Of(Date), true
	case ka == Interval && kb.IsNumeric() && (op == OpMul || op == OpDiv), ka.IsNumeric() && kb == Interval && op == OpMul:
		return Of(Interval), true
	}
	return Type{}, false
}

// TimeArith computes a op b for the operands TimeType accepts, into type
// t (what TimeType returned). Neither operand is NULL.
func TimeArith(op Op, a, b Value, t Type) (Value, error) {
	ka, kb := a.t.Kind, b.t.Kind
	switch {
	case ka == Interval && kb == Interval:
		return AddIntervals(a, b, op == OpSub)
	case kb == Interval && ka != Interval && !ka.IsNumeric():
		return AddTimeInterval(a, b, op == OpSub, t)
	case ka == Interval && !kb.IsNumeric():
		return AddTimeInterval(b, a, false, t)
	case ka == Date && kb == Date:
		return NewInt(t, a.Int64()-b.Int64())
	case ka == Date && kb.IsInteger(), ka.IsInteger() && kb == Date:
		d, n := a, b
		if kb == Date {
			d, n = b, a
		}
		nv, err := Cast(n, Of(Int64))
		if err != nil {
			return Value{}, &RangeError{Type: t, Reason: "date out of range"}
		}
		k := nv.Int64()
		if op == OpSub {
			k = -k
		}
		r, ok := addInt64(d.Int64(), k)
		if !ok || r > 100_000_000 || r < -100_000_000 {
			return Value{}, &RangeError{Type: t, Reason: "date out of range"}
		}
		return checkedTime(NewDate(r), "")
	case ka == Interval || kb == Interval:
		iv, n := a, b
		if kb == Interval {
			iv, n = b, a
		}
		f, err := Cast(n, Of(Float64))
		if err != nil {
			return Value{}, err
		}
		return ScaleInterval(iv, f.Float64(), op == OpDiv)
	}
	return SubTimes(a, b)
}
