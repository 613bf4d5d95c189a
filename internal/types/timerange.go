package types

// DATE and DATETIME64 values hold the years 1 to 9999: the years of the
// YYYY-MM-DD text that ParseText reads, so that every value's canonical
// text reads back as the value (invariant 2 of the package comment). A
// literal, cast, arithmetic result or wire value with a date outside them
// is a RangeError ("date out of range", "timestamp out of range"), which
// callers report with SQLSTATE 22008 naming the value. PostgreSQL allows
// later years (and BC dates); docs/conformance.md says so. A DATETIME64
// of precision 8 or 9 holds fewer years still: its ticks are an int64
// (precision 9: 1677-09-21 to 2262-04-11).
var (
	minDay = daysFromCivil(1, 1, 1)
	maxDay = daysFromCivil(9999, 12, 31)
)

// CheckTime returns nil for a value that is not a DATE or DATETIME64 or
// whose date is in years 1 to 9999 (a zoned DATETIME64's date in its
// zone, as its text shows it), and otherwise a RangeError naming it.
func CheckTime(v Value) error {
	if v.null {
		return nil
	}
	var days int64
	reason := "timestamp out of range"
	switch v.t.Kind {
	case Date:
		days, reason = v.Int64(), "date out of range"
	case DateTime64:
		sec, _ := splitTicks(v.Int64(), int(v.t.Precision))
		days, _ = floorDiv(sec+zoneOffset(v.t, sec), 86400)
	default:
		return nil
	}
	if days >= minDay && days <= maxDay {
		return nil
	}
	return &RangeError{Type: v.t, Value: v.String(), Reason: reason}
}

// checkedTime returns v, or CheckTime's error naming text (the value as
// written) when text is not empty.
func checkedTime(v Value, text string) (Value, error) {
	if err := CheckTime(v); err != nil {
		if text != "" {
			err.(*RangeError).Value = text
		}
		return Value{}, err
	}
	return v, nil
}
