package types

import (
	"errors"
	"strconv"
)

// ErrDivisionByZero is returned by Div and Mod for a zero divisor, and by
// float division by zero as PostgreSQL does.
var ErrDivisionByZero = errors.New("division by zero")

// ErrCorrupt marks an encoded key or value that cannot be decoded: storage
// and the WAL test for it with errors.Is.
var ErrCorrupt = errors.New("types: corrupt encoding")

// RangeError is a value that is well formed but does not fit its type: a
// literal, a cast or the result of arithmetic. It carries the value as
// written (or computed) and the target type; the caller that knows the
// column names it with WithColumn.
type RangeError struct {
	// Value is the value as written; empty for arithmetic overflow, whose
	// result has no text.
	Value string
	// Type is the type the value did not fit.
	Type Type
	// Column names the target column when known.
	Column string
	// Reason replaces the generic "out of range" wording when set, e.g.
	// "value too long".
	Reason string
}

// Error returns e.g. `value 300 is out of range for UINT8`.
func (e *RangeError) Error() string {
	var b []byte
	if e.Column != "" {
		b = append(b, "column "...)
		b = strconv.AppendQuote(b, e.Column)
		b = append(b, ": "...)
	}
	switch {
	case e.Value == "" && e.Reason == "":
		b = append(b, e.Type.String()...)
		b = append(b, " overflow"...)
	case e.Reason != "":
		b = append(b, e.Reason...)
		b = append(b, " for "...)
		b = append(b, e.Type.String()...)
		if e.Value != "" {
			b = append(b, ": "...)
			b = strconv.AppendQuote(b, e.Value)
		}
	default:
		b = append(b, "value "...)
		b = append(b, e.Value...)
		b = append(b, " is out of range for "...)
		b = append(b, e.Type.String()...)
	}
	return string(b)
}

// WithColumn returns a copy of e naming column name.
func (e *RangeError) WithColumn(name string) error {
	c := *e
	c.Column = name
	return &c
}

// ParseError is text that is not a value of its type at all: 'yesterday'
// for a DATETIME64, 'maybe' for a BOOL, invalid UTF-8 for a STRING.
type ParseError struct {
	// Value is the text as written.
	Value string
	// Type is the type it was read as.
	Type Type
	// Column names the target column when known.
	Column string
	// Detail says what is wrong when that helps, e.g. "month out of range".
	Detail string
}

// Error returns e.g. `invalid DATETIME64(3, 'UTC') value "yesterday"`.
func (e *ParseError) Error() string {
	b := append([]byte(nil), "invalid "...)
	b = append(b, e.Type.String()...)
	b = append(b, " value "...)
	b = strconv.AppendQuote(b, e.Value)
	if e.Column != "" {
		b = append(b, " for column "...)
		b = strconv.AppendQuote(b, e.Column)
	}
	if e.Detail != "" {
		b = append(b, ": "...)
		b = append(b, e.Detail...)
	}
	return string(b)
}

// WithColumn returns a copy of e naming column name.
func (e *ParseError) WithColumn(name string) error {
	c := *e
	c.Column = name
	return &c
}

// CastError is a conversion that no value could make, e.g. BOOL to UUID.
type CastError struct {
	From, To Type
}

// Error returns e.g. `cannot cast BOOL to UUID`.
func (e *CastError) Error() string {
	return "cannot cast " + e.From.String() + " to " + e.To.String()
}

// WithColumn names a column in a RangeError or ParseError and returns any
// other error unchanged, so that callers need not switch on the type.
func WithColumn(err error, name string) error {
	var re *RangeError
	if errors.As(err, &re) {
		return re.WithColumn(name)
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe.WithColumn(name)
	}
	return err
}
