package types

import (
	"strings"
	"testing"
)

func TestFromName(t *testing.T) {
	i := func(x int64) Param { return Param{Int: x} }
	s := func(x string) Param { return Param{Str: x, IsStr: true} }
	tests := []struct {
		name   string
		params []Param
		want   string // Type.String(), or "!" + error substring
	}{
		{"int", nil, "INT32"},
		{"BIGINT", nil, "INT64"},
		{"tinyint", nil, "INT8"},
		{"UINT256", nil, "UINT256"},
		{"double  precision", nil, "FLOAT64"},
		{"REAL", nil, "FLOAT32"},
		{"float", []Param{i(10)}, "FLOAT32"},
		{"float", []Param{i(40)}, "FLOAT64"},
		{"boolean", nil, "BOOL"},
		{"text", nil, "STRING"},
		{"varchar", []Param{i(10)}, "VARCHAR(10)"},
		{"varchar", []Param{i(0)}, "!positive length"},
		{"bytea", nil, "BYTES"},
		{"decimal", nil, "DECIMAL(38,0)"},
		{"numeric", []Param{i(10), i(2)}, "DECIMAL(10,2)"},
		{"decimal", []Param{i(77)}, "!precision"},
		{"decimal", []Param{i(5), i(6)}, "!scale"},
		{"datetime64", []Param{i(3), s("UTC")}, "DATETIME64(3, 'UTC')"},
		{"datetime64", []Param{i(3), s("Europe/Paris")}, "DATETIME64(3, 'Europe/Paris')"},
		{"datetime64", []Param{i(10)}, "!precision"},
		{"datetime64", nil, "!needs a precision"},
		{"datetime64", []Param{i(3), s("Mars/Base")}, "!unknown time zone"},
		{"datetime", nil, "DATETIME64(0)"},
		{"timestamp", nil, "DATETIME64(6)"},
		{"uuid", nil, "UUID"},
		{"date", []Param{i(1)}, "!takes no parameters"},
		{"blob", nil, "!unknown type blob"},
	}
	for _, tc := range tests {
		got, err := FromName(tc.name, tc.params)
		if strings.HasPrefix(tc.want, "!") {
			if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
				t.Errorf("FromName(%q, %v) = %s, %v; want error %q", tc.name, tc.params, got, err, tc.want[1:])
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("FromName(%q, %v) = %s, %v; want %s", tc.name, tc.params, got, err, tc.want)
		}
	}
}

func TestCanWiden(t *testing.T) {
	d := func(p, s uint8) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }
	tests := []struct {
		from, to Type
		want     bool
	}{
		{Of(Int32), Of(Int64), true},
		{Of(Int64), Of(Int32), false},
		{Of(Uint8), Of(Int16), true},
		{Of(Uint8), Of(Int8), false},
		{Of(Int8), Of(Uint64), false},
		{Of(Uint64), Of(Uint256), true},
		{Of(Float32), Of(Float64), true},
		{d(10, 2), d(12, 3), true},
		{d(10, 2), d(10, 3), false},
		{Type{Kind: String, Len: 5}, Of(String), true},
		{Of(String), Type{Kind: String, Len: 5}, false},
		{Of(Date), Of(Date), true},
	}
	for _, tc := range tests {
		if got := CanWiden(tc.from, tc.to); got != tc.want {
			t.Errorf("CanWiden(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestKindPredicates(t *testing.T) {
	if !Of(Uint256).Orderable() || !Of(Date).Orderable() || Of(String).Orderable() || Of(Float64).Orderable() {
		t.Errorf("Orderable")
	}
	if !Int128.IsSigned() || Uint8.IsSigned() || !Uint8.IsUnsigned() || !Decimal.IsNumeric() || Date.IsNumeric() {
		t.Errorf("kind predicates")
	}
	if Kind(99).String() != "Kind(99)" || Uint256.String() != "UINT256" || Int256.Bits() != 256 || String.Bits() != 0 {
		t.Errorf("String/Bits")
	}
}
