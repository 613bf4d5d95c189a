package types

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestBinaryRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		v := genValue(ty).Draw(t, "v")
		enc := AppendBinary([]byte{0xaa}, v)
		got, rest, err := DecodeBinary(ty, append(enc[1:], 7))
		if err != nil || len(rest) != 1 || rest[0] != 7 || !same(got, v) {
			t.Fatalf("DecodeBinary(%s %s) = %s, %v, %v", ty, v, got, rest, err)
		}
		for i := range len(enc) - 1 {
			if _, _, err := DecodeBinary(ty, enc[1:1+i]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeBinary of %d-byte prefix of %s: %v", i, v, err)
			}
		}
		// DecodeBinaryTo appends what DecodeBinary returns, after what the
		// vector held, and judges a truncated value corrupt as well.
		vec := NewVector(ty, 2)
		vec.AppendNull()
		rest, err = DecodeBinaryTo(vec, append(enc[1:], 7))
		if err != nil || len(rest) != 1 || rest[0] != 7 || vec.Len() != 2 || !same(vec.Get(1), v) || !vec.IsNull(0) {
			t.Fatalf("DecodeBinaryTo(%s %s) = %s, %v, %v", ty, v, vec.Get(1), rest, err)
		}
		for i := range len(enc) - 1 {
			if _, err := DecodeBinaryTo(NewVector(ty, 1), enc[1:1+i]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeBinaryTo of %d-byte prefix of %s: %v", i, v, err)
			}
		}
	})
}

func TestBinaryLayout(t *testing.T) {
	tests := []struct {
		v    Value
		want []byte
	}{
		{Null(Of(Int64)), []byte{0}},
		{NewInt64(-1), []byte{1, 1}},
		{NewInt64(64), []byte{1, 0x80, 1}},
		{NewUint64(300), []byte{1, 0xac, 2}},
		{pt(t, Of(Int128), "-258"), []byte{1, 0x82, 1, 2}},
		{pt(t, Of(Uint256), "0"), []byte{1, 0}},
		{NewString("hé"), []byte{1, 3, 'h', 0xc3, 0xa9}},
		{NewFloat64(math.Copysign(0, -1)), []byte{1, 0, 0, 0, 0, 0, 0, 0, 0x80}},
	}
	for _, tc := range tests {
		got := AppendBinary(nil, tc.v)
		if string(got) != string(tc.want) {
			t.Errorf("AppendBinary(%s %s) = %x, want %x", tc.v.Type(), tc.v, got, tc.want)
		}
	}
	// A value too wide for its type is corrupt, not silently truncated.
	if _, _, err := DecodeBinary(Of(Uint8), []byte{1, 0xac, 2}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("UINT8 300 decoded: %v", err)
	}
	if _, _, err := DecodeBinary(Type{Kind: Decimal, Precision: 2}, AppendBinary(nil, NewInt64(100))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DECIMAL(2,0) 100 decoded: %v", err)
	}
	// The same through DecodeBinaryTo's direct path for wide integers:
	// 2^128 is not a UINT128, 2^127 not an INT128, -1 not a UINT256.
	for _, c := range []struct {
		ty  Kind
		enc []byte
	}{
		{Uint128, AppendBinary(nil, pt(t, Of(Uint256), "340282366920938463463374607431768211456"))},
		{Int128, AppendBinary(nil, pt(t, Of(Uint256), "170141183460469231731687303715884105728"))},
		{Uint256, AppendBinary(nil, pt(t, Of(Int256), "-1"))},
	} {
		if _, err := DecodeBinaryTo(NewVector(Of(c.ty), 1), c.enc); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s from %x decoded: %v", c.ty, c.enc, err)
		}
	}
}

func BenchmarkAppendBinary(b *testing.B) {
	u := pt(&testing.T{}, Of(Uint256), maxU256)
	buf := make([]byte, 0, 64)
	for _, c := range []struct {
		name string
		v    Value
	}{{"int64", NewInt64(42)}, {"uint256", u}, {"string", NewString("hello world")}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				buf = AppendBinary(buf[:0], c.v)
			}
		})
	}
}

// TestAppendBinaryColumn checks that a column is encoded byte for byte as
// AppendBinary encodes its values one by one.
func TestAppendBinaryColumn(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		vals := rapid.SliceOf(genValue(ty)).Draw(t, "vals")
		vec := NewVector(ty, len(vals))
		var want []byte
		for _, v := range vals {
			vec.Append(v)
			want = AppendBinary(want, v)
		}
		if got := AppendBinaryColumn(nil, vec, vec.Len()); !bytes.Equal(got, want) {
			t.Fatalf("AppendBinaryColumn(%s %v) = %x, want %x", ty, vals, got, want)
		}
	})
}
