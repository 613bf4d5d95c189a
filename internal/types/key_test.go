package types

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var zoneNames = []string{"", "UTC", "Europe/Paris", "America/New_York"}

// genType draws a column type of any kind, parameters included.
func genType() *rapid.Generator[Type] {
	return rapid.Custom(func(t *rapid.T) Type {
		k := Kind(rapid.IntRange(int(Bool), int(UUID)).Draw(t, "kind"))
		switch k {
		case Decimal:
			p := rapid.IntRange(1, MaxDecimalPrecision).Draw(t, "p")
			s := rapid.IntRange(0, p).Draw(t, "s")
			return Type{Kind: Decimal, Precision: uint8(p), Scale: uint8(s)}
		case DateTime64:
			return Type{Kind: DateTime64, Precision: uint8(rapid.IntRange(0, 9).Draw(t, "p")),
				TZ: rapid.SampledFrom(zoneNames).Draw(t, "tz")}
		}
		return Of(k)
	})
}

// genValue draws a value of type ty, NULL one time in ten.
func genValue(ty Type) *rapid.Generator[Value] {
	return rapid.Custom(func(t *rapid.T) Value {
		if rapid.IntRange(0, 9).Draw(t, "null") == 0 {
			return Null(ty)
		}
		k := ty.Kind
		switch {
		case k.IsInteger():
			return genInt(k).Draw(t, "int")
		case k == Decimal:
			n := rapid.IntRange(0, int(ty.Precision)).Draw(t, "digits")
			var sb strings.Builder
			for range n {
				sb.WriteByte(byte('0' + rapid.IntRange(0, 9).Draw(t, "d")))
			}
			d := sb.String()
			sc := int(ty.Scale)
			for len(d) < sc+1 {
				d = "0" + d
			}
			txt := d[:len(d)-sc] + "." + d[len(d)-sc:]
			if rapid.Bool().Draw(t, "neg") {
				txt = "-" + txt
			}
			v, err := ParseText(ty, txt)
			if err != nil {
				t.Fatalf("ParseText(%s, %q): %v", ty, txt, err)
			}
			return v
		case k == Float64:
			switch rapid.IntRange(0, 7).Draw(t, "special") {
			case 0:
				return NewFloat64(math.NaN())
			case 1:
				return NewFloat64(math.Inf(rapid.SampledFrom([]int{1, -1}).Draw(t, "sign")))
			case 2:
				return NewFloat64(math.Copysign(0, -1))
			}
			return NewFloat64(rapid.Float64().Draw(t, "f") * float64(rapid.SampledFrom([]int{1, -1}).Draw(t, "sign")))
		case k == Float32:
			if rapid.IntRange(0, 9).Draw(t, "special") == 0 {
				return NewFloat32(float32(math.NaN()))
			}
			return NewFloat32(rapid.Float32().Draw(t, "f") * float32(rapid.SampledFrom([]int{1, -1}).Draw(t, "sign")))
		case k == Bool:
			return NewBool(rapid.Bool().Draw(t, "b"))
		case k == String:
			return NewString(rapid.SampledFrom([]string{"", "\x00", "a\x00", "a", "ab", "\x00\x00\xff"}).Draw(t, "s") + rapid.String().Draw(t, "s2"))
		case k == Bytes:
			return NewBytes(rapid.SliceOf(rapid.SampledFrom([]byte{0, 1, 0xff, 'a'})).Draw(t, "b"))
		case k == Date:
			return NewDate(rapid.Int64Range(-800000, 3000000).Draw(t, "days"))
		case k == DateTime64:
			return NewDateTime64(ty, rapid.Int64().Draw(t, "ticks"))
		case k == UUID:
			var u [16]byte
			copy(u[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "u"))
			return NewUUID(u)
		}
		return Null(ty)
	})
}

// same reports whether two values are the same value of one type, bit for
// bit where Compare is looser (-0, NaN).
func same(a, b Value) bool {
	if a.Type() != b.Type() || Compare(a, b) != 0 || a.IsNull() != b.IsNull() {
		return false
	}
	if a.Kind().IsFloat() && !a.IsNull() {
		return math.Float64bits(a.Float64()) == math.Float64bits(b.Float64()) || (a.Float64() != a.Float64())
	}
	return true
}

func TestKeyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		v := genValue(ty).Draw(t, "v")
		suffix := []byte("rest")
		enc := append(AppendKey(nil, v), suffix...)
		got, rest, err := DecodeKey(ty, enc)
		if err != nil || !bytes.Equal(rest, suffix) || Compare(got, v) != 0 || got.Type() != ty {
			t.Fatalf("DecodeKey(%s %s) = %s, %q, %v", ty, v, got, rest, err)
		}
		// Every strict prefix is corrupt, never a panic or a wrong value.
		key := enc[:len(enc)-len(suffix)]
		for i := range len(key) {
			if _, _, err := DecodeKey(ty, key[:i]); !errors.Is(err, ErrCorrupt) {
				if ty.Kind == String || ty.Kind == Bytes {
					continue // a shorter escaped string may still be well formed
				}
				t.Fatalf("DecodeKey of %d-byte prefix of %s: %v", i, v, err)
			}
		}
	})
}

func TestKeyOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		a := genValue(ty).Draw(t, "a")
		b := genValue(ty).Draw(t, "b")
		if rapid.IntRange(0, 3).Draw(t, "dup") == 0 {
			b = a
		}
		ka, kb := AppendKey(nil, a), AppendKey(nil, b)
		if got, want := bytes.Compare(ka, kb), Compare(a, b); got != want {
			t.Fatalf("bytes.Compare(key(%s), key(%s)) = %d, Compare = %d", a, b, got, want)
		}
		// Composite keys sort column by column.
		c := genValue(Of(Int64)).Draw(t, "c")
		d := genValue(Of(Int64)).Draw(t, "d")
		ca, cb := AppendKey(ka, c), AppendKey(kb, d)
		want := Compare(a, b)
		if want == 0 {
			want = Compare(c, d)
		}
		if got := bytes.Compare(ca, cb); got != want {
			t.Fatalf("composite (%s,%s) vs (%s,%s): %d, want %d", a, c, b, d, got, want)
		}
	})
}

// TestDecodeGarbage feeds random bytes to both decoders: an error or a
// value, never a panic, and a decoded value re-encodes to the bytes read.
func TestDecodeGarbage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		b := rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "b")
		if v, _, err := DecodeBinary(ty, b); err == nil {
			back, rest, err := DecodeBinary(ty, AppendBinary(nil, v))
			if err != nil || len(rest) != 0 || !same(back, v) {
				t.Fatalf("decoded %s does not round-trip: %s, %v", v, back, err)
			}
		}
		if _, _, err := DecodeKey(ty, b); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("DecodeKey error does not wrap ErrCorrupt: %v", err)
		}
	})
}

func TestKeyLayout(t *testing.T) {
	tests := []struct {
		v    Value
		want []byte
	}{
		{Null(Of(Int64)), []byte{2}},
		{NewInt64(-1), []byte{1, 0x7f}},
		{NewInt64(0), []byte{1, 0x80}},
		{NewInt64(-256), []byte{1, 0x7e, 0x00}},
		{pt(t, Of(Int8), "-128"), []byte{1, 0x7e, 0x80}},
		{pt(t, Of(Uint16), "258"), []byte{1, 0x82, 1, 2}},
		{pt(t, Of(Int128), "-129"), []byte{1, 0x7e, 0x7f}},
		{pt(t, Of(Float32), "1.5"), []byte{1, 0xbf, 0xf8, 0, 0, 0, 0, 0, 0}},
		{NewString("a\x00"), []byte{1, 'a', 0, 0xff, 0, 1}},
		{NewBool(true), []byte{1, 1}},
	}
	for _, tc := range tests {
		if got := AppendKey(nil, tc.v); !bytes.Equal(got, tc.want) {
			t.Errorf("AppendKey(%s %s) = %x, want %x", tc.v.Type(), tc.v, got, tc.want)
		}
	}
}

// TestKeyWidthIndependent: an integer's (and a float's) encoding does not
// depend on the width of its type, so widening a key or ordering column
// (R8.1) keeps stored keys equal, ordered and in the same shard.
func TestKeyWidthIndependent(t *testing.T) {
	ints := []Kind{Int8, Int16, Int32, Int64, Int128, Int256, Uint8, Uint16, Uint32, Uint64, Uint128, Uint256}
	texts := []string{"0", "1", "-1", "127", "-128", "255", "256", "-32768", "65535", "2147483647", "-2147483648",
		"4294967295", "9223372036854775807", "-9223372036854775808", "18446744073709551615", "18446744073709551616",
		"-170141183460469231731687303715884105728", "340282366920938463463374607431768211455",
		"115792089237316195423570985008687907853269984665640564039457584007913129639935",
		"-57896044618658097711785492504343953926634992332820282019728792003956564819968"}
	for _, text := range texts {
		var enc []byte
		var from Kind
		for _, k := range ints {
			v, err := ParseText(Of(k), text)
			if err != nil {
				continue // not a value of k
			}
			got := AppendKey(nil, v)
			if enc == nil {
				enc, from = got, k
			} else if !bytes.Equal(got, enc) {
				t.Errorf("%s: %s encodes %x, %s encodes %x", text, k, got, from, enc)
			}
			// Every kind that holds the value decodes it; the others refuse.
			for _, k2 := range ints {
				want, werr := ParseText(Of(k2), text)
				d, rest, err := DecodeKey(Of(k2), got)
				switch {
				case werr != nil && err == nil:
					t.Errorf("%s as %s decodes to %s, want out of range", text, k2, d)
				case werr == nil && (err != nil || len(rest) != 0 || Compare(d, want) != 0):
					t.Errorf("%s as %s: %s %x %v", text, k2, d, rest, err)
				}
			}
		}
	}
	f32, _ := ParseText(Of(Float32), "-2.25")
	f64, _ := ParseText(Of(Float64), "-2.25")
	if !bytes.Equal(AppendKey(nil, f32), AppendKey(nil, f64)) {
		t.Errorf("FLOAT32 and FLOAT64 -2.25 encode differently")
	}
	if _, _, err := DecodeKey(Of(Float32), AppendKey(nil, NewFloat64(0.1))); err == nil {
		t.Errorf("FLOAT64 0.1 decodes as a FLOAT32")
	}
	// Non-canonical encodings (a leading zero or 0xff byte) are corrupt.
	for _, b := range [][]byte{{1, 0x81, 0}, {1, 0x7e, 0xff}, {1, 0xa1}, {1, 0x5e}, {1, 0x82, 1}} {
		if v, _, err := DecodeKey(Of(Int256), b); err == nil {
			t.Errorf("DecodeKey(%x) = %s, want corrupt", b, v)
		}
	}
}

func BenchmarkAppendKey(b *testing.B) {
	u := pt(&testing.T{}, Of(Uint256), maxU256)
	buf := make([]byte, 0, 64)
	for _, c := range []struct {
		name string
		v    Value
	}{{"int64", NewInt64(42)}, {"uint256", u}, {"string", NewString("hello world")}, {"address", NewString("0x52908400098527886e0f7030069857d2e4169ee7")}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				buf = AppendKey(buf[:0], c.v)
			}
		})
	}
}

// TestAppendKeyAt checks that a vector's rows are encoded byte for byte as
// AppendKey encodes their values.
func TestAppendKeyAt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		vals := rapid.SliceOf(genValue(ty)).Draw(t, "vals")
		vec := NewVector(ty, len(vals))
		for _, v := range vals {
			vec.Append(v)
		}
		for i, v := range vals {
			if got, want := AppendKeyAt([]byte{7}, vec, i), AppendKey([]byte{7}, v); !bytes.Equal(got, want) {
				t.Fatalf("AppendKeyAt(%s %s) = %x, want %x", ty, v, got, want)
			}
		}
	})
}
