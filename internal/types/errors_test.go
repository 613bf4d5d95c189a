package types

import (
	"errors"
	"testing"
)

func TestErrorsNameColumn(t *testing.T) {
	_, err := ParseText(Of(Uint8), "256")
	err = WithColumn(err, "k")
	if got, want := err.Error(), `column "k": value 256 is out of range for UINT8`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var re *RangeError
	if !errors.As(err, &re) || re.Column != "k" || re.Value != "256" {
		t.Errorf("not a RangeError with column: %#v", err)
	}
	ts := Type{Kind: DateTime64, Precision: 3, TZ: "UTC"}
	_, err = ParseText(ts, "yesterday")
	err = WithColumn(err, "ts")
	if got, want := err.Error(), `invalid DATETIME64(3, 'UTC') value "yesterday" for column "ts"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if e := WithColumn(ErrDivisionByZero, "x"); e != ErrDivisionByZero {
		t.Errorf("WithColumn changed an unrelated error")
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&RangeError{Value: "300", Type: Of(Uint8)}, "value 300 is out of range for UINT8"},
		{&RangeError{Type: Of(Uint256)}, "UINT256 overflow"},
		{&RangeError{Value: "abcd", Type: Type{Kind: String, Len: 3}, Reason: "value too long", Column: "s"}, `column "s": value too long for VARCHAR(3): "abcd"`},
		{&ParseError{Value: "maybe", Type: Of(Bool)}, `invalid BOOL value "maybe"`},
		{&ParseError{Value: `\x0`, Type: Of(Bytes), Detail: "odd number of hex digits"}, `invalid BYTES value "\\x0": odd number of hex digits`},
		{&CastError{From: Of(Bool), To: Of(UUID)}, "cannot cast BOOL to UUID"},
		{&OpError{Op: "+", Left: Of(Bool), Right: Of(Date)}, "operator does not exist: BOOL + DATE"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	var pe *ParseError
	if err := WithColumn(&ParseError{Value: "x", Type: Of(Int8)}, "c"); !errors.As(err, &pe) || pe.Column != "c" {
		t.Errorf("WithColumn(ParseError) = %v", err)
	}
}
