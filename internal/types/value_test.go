package types

import (
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"
)

func TestConstructors(t *testing.T) {
	d := Type{Kind: Decimal, Precision: 4, Scale: 2}
	tests := []struct {
		name string
		mk   func() (Value, error)
		want string // canonical text or "!" + error substring
	}{
		{"NewInt INT8 ok", func() (Value, error) { return NewInt(Of(Int8), -128) }, "-128"},
		{"NewInt INT8 range", func() (Value, error) { return NewInt(Of(Int8), 128) }, "!value 128 is out of range for INT8"},
		{"NewInt UINT8 negative", func() (Value, error) { return NewInt(Of(Uint8), -1) }, "!out of range for UINT8"},
		{"NewInt INT256", func() (Value, error) { return NewInt(Of(Int256), -7) }, "-7"},
		{"NewInt not an integer", func() (Value, error) { return NewInt(Of(Date), 1) }, "!cannot cast"},
		{"NewUint UINT16", func() (Value, error) { return NewUint(Of(Uint16), 65535) }, "65535"},
		{"NewUint UINT16 range", func() (Value, error) { return NewUint(Of(Uint16), 65536) }, "!out of range"},
		{"NewUint UINT128", func() (Value, error) { return NewUint(Of(Uint128), 1<<63) }, "9223372036854775808"},
		{"NewWide UINT128 range", func() (Value, error) { return NewWide(Of(Uint128), uint256.Int{0, 0, 1}) }, "!out of range for UINT128"},
		{"NewWide INT128 negative", func() (Value, error) {
			var w uint256.Int
			w.SetAllOne()
			return NewWide(Of(Int128), w)
		}, "-1"},
		{"NewWide DECIMAL", func() (Value, error) { return NewWide(d, uint256.Int{9999}) }, "99.99"},
		{"NewWide DECIMAL range", func() (Value, error) { return NewWide(d, uint256.Int{10000}) }, "!value 100.00 is out of range for DECIMAL(4,2)"},
		{"NewWide STRING", func() (Value, error) { return NewWide(Of(String), uint256.Int{}) }, "!cannot cast"},
		{"NewDecimal negative", func() (Value, error) { return NewDecimal(d, -1) }, "-0.01"},
		{"FromTime DATE", func() (Value, error) {
			return FromTime(Of(Date), time.Date(2026, 10, 1, 23, 0, 0, 0, time.UTC))
		}, "2026-10-01"},
		{"FromTime DATETIME64", func() (Value, error) {
			return FromTime(Type{Kind: DateTime64, Precision: 3}, time.Date(2026, 10, 1, 12, 5, 0, 123456789, time.UTC))
		}, "2026-10-01 12:05:00.123"},
		{"FromTime out of range", func() (Value, error) {
			return FromTime(Type{Kind: DateTime64, Precision: 9}, time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC))
		}, "!out of range"},
	}
	for _, tc := range tests {
		v, err := tc.mk()
		if strings.HasPrefix(tc.want, "!") {
			if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
				t.Errorf("%s = %v, %v; want error %q", tc.name, v, err, tc.want[1:])
			}
			continue
		}
		if err != nil || v.String() != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.name, v.String(), err, tc.want)
		}
	}
}

func TestAccessors(t *testing.T) {
	if v := NewInt64(-3); v.Int64() != -3 || v.Kind() != Int64 || v.IsNull() {
		t.Errorf("NewInt64: %v", v)
	}
	if v := NewUint64(3); v.Uint64() != 3 {
		t.Errorf("NewUint64: %v", v)
	}
	if v := NewFloat32(0.1); v.Float64() != float64(float32(0.1)) || v.Kind() != Float32 {
		t.Errorf("NewFloat32 is not rounded to float32: %v", v.Float64())
	}
	if v := NewBool(true); !v.Bool() {
		t.Errorf("NewBool")
	}
	if v := NewString("x"); v.Str() != "x" {
		t.Errorf("NewString")
	}
	if v := NewBytes([]byte("x")); string(v.Bytes()) != "x" {
		t.Errorf("NewBytes")
	}
	if v := NewUUID([16]byte{9}); v.UUID()[0] != 9 {
		t.Errorf("NewUUID")
	}
	w := uint256.Int{1, 2, 3, 4}
	if v, _ := NewWide(Of(Uint256), w); v.Wide() != w {
		t.Errorf("Wide")
	}
	if v := Null(Of(Date)); !v.IsNull() || v.Type() != Of(Date) {
		t.Errorf("Null")
	}
	paris := Type{Kind: DateTime64, Precision: 3, TZ: "Europe/Paris"}
	v := pt(t, paris, "2026-10-01 14:05:00.250")
	tm := v.Time()
	if tm.Location().String() != "Europe/Paris" || tm.Hour() != 14 || tm.Nanosecond() != 250000000 || !tm.Equal(time.Date(2026, 10, 1, 12, 5, 0, 250000000, time.UTC)) {
		t.Errorf("Time() = %v", tm)
	}
	if got := NewDate(-1).Time(); !got.Equal(time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("DATE Time() = %v", got)
	}
	if Of(Uint256).Kind.Class() != ClassWide || Of(Date).Kind.Class() != ClassInt64 || Kind(200).Class() != ClassNone {
		t.Errorf("Class")
	}
}

func TestLocationCached(t *testing.T) {
	ty := Type{Kind: DateTime64, TZ: "Asia/Tokyo"}
	first := ty.Location()
	if ty.Location() != first || first.String() != "Asia/Tokyo" {
		t.Errorf("Location is not cached")
	}
	if (Type{Kind: DateTime64, TZ: "No/Such"}).Location() != time.UTC {
		t.Errorf("unknown zone is not UTC")
	}
}
