package types

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"pgregory.net/rapid"
)

func TestArith(t *testing.T) {
	d := func(p, s uint8) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }
	u256 := Of(Uint256)
	maxM1 := "115792089237316195423570985008687907853269984665640564039457584007913129639934"
	tests := []struct {
		op   Op
		a, b Value
		typ  string
		want string // canonical text or "!" + error substring
	}{
		{OpAdd, NewInt64(1), NewInt64(2), "INT64", "3"},
		{OpAdd, NewInt64(math.MaxInt64), NewInt64(1), "", "!INT64 overflow"},
		{OpSub, NewInt64(math.MinInt64), NewInt64(1), "", "!INT64 overflow"},
		{OpMul, NewInt64(math.MinInt64), NewInt64(-1), "", "!overflow"},
		{OpMul, NewInt64(-3037000499), NewInt64(3037000499), "INT64", "-9223372030926249001"},
		{OpMul, NewInt64(1 << 32), NewInt64(1 << 31), "INT64", "!overflow"},
		{OpMul, NewInt64(-(1 << 32)), NewInt64(1 << 31), "INT64", "-9223372036854775808"},
		{OpDiv, NewInt64(-7), NewInt64(2), "INT64", "-3"},
		{OpMod, NewInt64(-7), NewInt64(2), "INT64", "-1"},
		{OpMod, NewInt64(7), NewInt64(-2), "INT64", "1"},
		{OpDiv, NewInt64(math.MinInt64), NewInt64(-1), "", "!overflow"},
		{OpMod, NewInt64(math.MinInt64), NewInt64(-1), "INT64", "0"},
		{OpDiv, NewInt64(1), NewInt64(0), "", "!division by zero"},
		{OpMod, NewInt64(1), NewInt64(0), "", "!division by zero"},
		{OpAdd, pt(t, Of(Int8), "100"), pt(t, Of(Int8), "27"), "INT8", "127"},
		{OpAdd, pt(t, Of(Int8), "100"), pt(t, Of(Int8), "28"), "", "!INT8 overflow"},
		{OpAdd, pt(t, Of(Uint8), "200"), pt(t, Of(Int8), "100"), "INT16", "300"},
		{OpSub, pt(t, Of(Uint8), "5"), pt(t, Of(Uint8), "7"), "", "!UINT8 overflow"},
		{OpMul, NewUint64(1 << 32), NewUint64(1 << 32), "", "!UINT64 overflow"},
		{OpAdd, NewUint64(math.MaxUint64), NewInt64(1), "INT128", "18446744073709551616"},
		{OpSub, pt(t, u256, maxU256), NewInt64(1), "UINT256", maxM1},
		{OpAdd, pt(t, u256, maxU256), NewInt64(1), "", "!UINT256 overflow"},
		{OpAdd, pt(t, u256, "1606938044258990275541962092341162602522202993782792835301376"), pt(t, u256, "1606938044258990275541962092341162602522202993782792835301376"), "UINT256", "3213876088517980551083924184682325205044405987565585670602752"},
		{OpSub, pt(t, u256, "1"), NewInt64(2), "", "!UINT256 overflow"},
		{OpAdd, pt(t, u256, "1"), NewInt64(-1), "", "!out of range for UINT256"},
		{OpMul, pt(t, u256, "340282366920938463463374607431768211456"), pt(t, u256, "340282366920938463463374607431768211456"), "", "!UINT256 overflow"},
		{OpDiv, pt(t, u256, maxU256), pt(t, u256, "0"), "", "!division by zero"},
		{OpMod, pt(t, u256, maxU256), pt(t, u256, "10"), "UINT256", "5"},
		{OpAdd, pt(t, Of(Int128), "170141183460469231731687303715884105727"), pt(t, Of(Int128), "1"), "", "!INT128 overflow"},
		{OpMul, pt(t, Of(Int256), "-57896044618658097711785492504343953926634992332820282019728792003956564819968"), pt(t, Of(Int256), "1"), "INT256", "-57896044618658097711785492504343953926634992332820282019728792003956564819968"},
		{OpMul, pt(t, Of(Int256), "-57896044618658097711785492504343953926634992332820282019728792003956564819968"), pt(t, Of(Int256), "-1"), "", "!INT256 overflow"},
		{OpDiv, pt(t, Of(Int128), "-7"), pt(t, Of(Int128), "2"), "INT128", "-3"},
		{OpMod, pt(t, Of(Int128), "-7"), pt(t, Of(Int128), "2"), "INT128", "-1"},
		{OpAdd, pt(t, d(5, 2), "1.25"), pt(t, d(6, 3), "0.005"), "DECIMAL(7,3)", "1.255"},
		{OpSub, pt(t, d(5, 2), "1.25"), NewInt64(2), "DECIMAL(22,2)", "-0.75"},
		{OpMul, pt(t, d(5, 2), "1.25"), pt(t, d(5, 2), "-1.25"), "DECIMAL(10,4)", "-1.5625"},
		{OpDiv, pt(t, d(5, 2), "1.00"), pt(t, d(5, 2), "3.00"), "DECIMAL(11,6)", "0.333333"},
		{OpDiv, pt(t, d(5, 2), "2.00"), pt(t, d(5, 2), "3.00"), "DECIMAL(11,6)", "0.666667"},
		{OpDiv, pt(t, d(5, 2), "-2.00"), pt(t, d(5, 2), "3.00"), "DECIMAL(11,6)", "-0.666667"},
		{OpDiv, NewInt64(1), pt(t, d(5, 2), "0.00"), "", "!division by zero"},
		{OpMod, pt(t, d(5, 2), "7.50"), pt(t, d(5, 1), "2.0"), "DECIMAL(5,2)", "1.50"},
		{OpMul, pt(t, d(76, 0), strings.Repeat("9", 76)), pt(t, d(76, 0), "10"), "", "!DECIMAL(76,0) overflow"},
		{OpAdd, pt(t, d(76, 0), strings.Repeat("9", 76)), pt(t, d(76, 0), "1"), "", "!overflow"},
		{OpMul, pt(t, d(40, 38), "0.5"), pt(t, d(40, 38), "0.5"), "DECIMAL(76,76)", "0.2500000000000000000000000000000000000000000000000000000000000000000000000000"},
		{OpAdd, NewFloat64(1.5), NewInt64(1), "FLOAT64", "2.5"},
		{OpAdd, NewFloat64(1.5), pt(t, d(5, 2), "1.00"), "FLOAT64", "2.5"},
		{OpDiv, NewFloat64(1), NewFloat64(0), "", "!division by zero"},
		{OpMul, NewFloat64(1e300), NewFloat64(1e300), "", "!FLOAT64 overflow"},
		{OpAdd, NewFloat64(math.Inf(1)), NewFloat64(1), "FLOAT64", "Infinity"},
		{OpAdd, NewFloat32(0.1), NewFloat32(0.2), "FLOAT32", "0.3"},
		{OpAdd, Null(Of(Int64)), NewInt64(1), "INT64", "NULL"},
		{OpAdd, Null(Of(Unknown)), NewInt64(1), "INT64", "NULL"},
		{OpAdd, Null(Of(Unknown)), Null(Of(Unknown)), "UNKNOWN", "NULL"},
		{OpAdd, NewBool(true), NewInt64(1), "", "!operator does not exist: BOOL + INT64"},
		{OpAdd, NewString("a"), NewString("b"), "", "!operator does not exist"},
	}
	for _, tc := range tests {
		got, err := Arith(tc.op, tc.a, tc.b)
		name := tc.a.Type().String() + " " + tc.a.String() + " " + tc.op.String() + " " + tc.b.Type().String() + " " + tc.b.String()
		if strings.HasPrefix(tc.want, "!") {
			if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
				t.Errorf("%s = %v, %v; want error %q", name, got, err, tc.want[1:])
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.Type().String() != tc.typ || got.String() != tc.want {
			t.Errorf("%s = %s %s; want %s %s", name, got.Type(), got, tc.typ, tc.want)
		}
		rt, ok := ResultType(tc.op, tc.a.Type(), tc.b.Type())
		if !ok || rt != got.Type() {
			t.Errorf("ResultType(%s) = %s, %v; Arith gave %s", name, rt, ok, got.Type())
		}
	}
	if _, err := Div(NewInt64(1), NewInt64(0)); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("Div by zero: %v", err)
	}
	var re *RangeError
	if _, err := Add(NewInt64(math.MaxInt64), NewInt64(1)); !errors.As(err, &re) || re.Type != Of(Int64) {
		t.Errorf("overflow is not a RangeError: %v", err)
	}
}

func TestNeg(t *testing.T) {
	tests := []struct {
		v    Value
		typ  string
		want string
	}{
		{NewInt64(5), "INT64", "-5"},
		{NewInt64(math.MinInt64), "", "!INT64 overflow"},
		{pt(t, Of(Int8), "-128"), "", "!INT8 overflow"},
		{pt(t, Of(Int8), "127"), "INT8", "-127"},
		{pt(t, Of(Uint8), "255"), "INT16", "-255"},
		{NewUint64(math.MaxUint64), "INT128", "-18446744073709551615"},
		{pt(t, Of(Uint256), "57896044618658097711785492504343953926634992332820282019728792003956564819968"), "INT256", "-57896044618658097711785492504343953926634992332820282019728792003956564819968"},
		{pt(t, Of(Int256), "-57896044618658097711785492504343953926634992332820282019728792003956564819968"), "", "!INT256 overflow"},
		{pt(t, Type{Kind: Decimal, Precision: 3, Scale: 1}, "-1.5"), "DECIMAL(3,1)", "1.5"},
		{NewFloat64(1.5), "FLOAT64", "-1.5"},
		{Null(Of(Uint8)), "INT16", "NULL"},
		{NewString("x"), "", "!operator does not exist: - STRING"},
	}
	for _, tc := range tests {
		got, err := Neg(tc.v)
		if strings.HasPrefix(tc.want, "!") {
			if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
				t.Errorf("Neg(%s %s) = %v, %v; want error %q", tc.v.Type(), tc.v, got, err, tc.want[1:])
			}
			continue
		}
		if err != nil || got.Type().String() != tc.typ || got.String() != tc.want {
			t.Errorf("Neg(%s %s) = %s %s, %v; want %s %s", tc.v.Type(), tc.v, got.Type(), got, err, tc.typ, tc.want)
		}
	}
}

// integer kinds and their ranges, for the property test.
var intKinds = []Kind{Int8, Int16, Int32, Int64, Int128, Int256, Uint8, Uint16, Uint32, Uint64, Uint128, Uint256}

func kindRange(k Kind) (lo, hi *big.Int) {
	b := uint(k.Bits())
	one := big.NewInt(1)
	if k.IsUnsigned() {
		return new(big.Int), new(big.Int).Sub(new(big.Int).Lsh(one, b), one)
	}
	hi = new(big.Int).Sub(new(big.Int).Lsh(one, b-1), one)
	return new(big.Int).Neg(new(big.Int).Lsh(one, b-1)), hi
}

// genInt draws a value of integer kind k, biased toward its edges.
func genInt(k Kind) *rapid.Generator[Value] {
	return rapid.Custom(func(t *rapid.T) Value {
		lo, hi := kindRange(k)
		var x *big.Int
		switch rapid.IntRange(0, 4).Draw(t, "shape") {
		case 0:
			x = new(big.Int).Add(lo, big.NewInt(rapid.Int64Range(0, 3).Draw(t, "off")))
		case 1:
			x = new(big.Int).Sub(hi, big.NewInt(rapid.Int64Range(0, 3).Draw(t, "off")))
		case 2:
			x = big.NewInt(rapid.Int64Range(-1000, 1000).Draw(t, "small"))
		default:
			var buf [32]byte
			for i := range buf {
				buf[i] = rapid.Byte().Draw(t, "b")
			}
			x = new(big.Int).SetBytes(buf[:])
			span := new(big.Int).Add(new(big.Int).Sub(hi, lo), big.NewInt(1))
			x.Mod(x, span).Add(x, lo)
		}
		if x.Cmp(lo) < 0 {
			x = lo
		}
		if x.Cmp(hi) > 0 {
			x = hi
		}
		v, err := ParseText(Of(k), x.String())
		if err != nil {
			t.Fatalf("ParseText(%s, %s): %v", k, x, err)
		}
		return v
	})
}

// TestArithMatchesBig checks integer arithmetic of every pair of kinds
// against math/big: the exact result if it fits the result type, an
// overflow error otherwise.
func TestArithMatchesBig(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ka := rapid.SampledFrom(intKinds).Draw(t, "ka")
		kb := rapid.SampledFrom(intKinds).Draw(t, "kb")
		a := genInt(ka).Draw(t, "a")
		b := genInt(kb).Draw(t, "b")
		op := Op(rapid.IntRange(0, 4).Draw(t, "op"))
		x, _ := new(big.Int).SetString(a.String(), 10)
		y, _ := new(big.Int).SetString(b.String(), 10)
		rt, _ := ResultType(op, a.Type(), b.Type())
		got, err := Arith(op, a, b)
		// Operands that do not fit the result type are range errors.
		lo, hi := kindRange(rt.Kind)
		fits := func(z *big.Int) bool { return z.Cmp(lo) >= 0 && z.Cmp(hi) <= 0 }
		var re *RangeError
		if !fits(x) || !fits(y) {
			if !errors.As(err, &re) {
				t.Fatalf("%s %s %s %s %s = %v, %v; want a range error", a.Type(), a, op, b.Type(), b, got, err)
			}
			return
		}
		var want *big.Int
		switch op {
		case OpAdd:
			want = new(big.Int).Add(x, y)
		case OpSub:
			want = new(big.Int).Sub(x, y)
		case OpMul:
			want = new(big.Int).Mul(x, y)
		case OpDiv, OpMod:
			if y.Sign() == 0 {
				if !errors.Is(err, ErrDivisionByZero) {
					t.Fatalf("%s %s %s: %v, want division by zero", a, op, b, err)
				}
				return
			}
			if op == OpDiv {
				want = new(big.Int).Quo(x, y)
			} else {
				want = new(big.Int).Rem(x, y)
			}
		}
		if !fits(want) {
			if !errors.As(err, &re) {
				t.Fatalf("%s %s %s %s %s = %v, %v; want a range error (exact %s)", a.Type(), a, op, b.Type(), b, got, err, want)
			}
			return
		}
		if err != nil || got.String() != want.String() || got.Type() != rt {
			t.Fatalf("%s %s %s %s %s = %s %v, %v; want %s %s", a.Type(), a, op, b.Type(), b, got.Type(), got, err, rt, want)
		}
	})
}

func BenchmarkArith(b *testing.B) {
	var m uint256.Int
	m.SetAllOne()
	m.Rsh(&m, 2)
	u := mkWide(Of(Uint256), m)
	i := mkWide(Of(Int256), m)
	d, _ := ParseText(Type{Kind: Decimal, Precision: 18, Scale: 4}, "12345.6789")
	cases := []struct {
		name string
		op   Op
		a, b Value
	}{
		{"int64_add", OpAdd, NewInt64(12345), NewInt64(67890)},
		{"uint256_add", OpAdd, u, u},
		{"int256_add", OpAdd, i, i},
		{"uint256_mul", OpMul, u, mkWide(Of(Uint256), uint256.Int{3})},
		{"uint256_div", OpDiv, u, mkWide(Of(Uint256), uint256.Int{3})},
		{"uint256_plus_int64", OpAdd, u, NewInt64(1)},
		{"decimal_add", OpAdd, d, d},
		{"decimal_mul", OpMul, d, d},
		{"decimal_div", OpDiv, d, d},
		{"float64_mul", OpMul, NewFloat64(1.5), NewFloat64(2.5)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Arith(c.op, c.a, c.b); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// genDecimal draws a DECIMAL type and a value of it, biased toward long
// digit strings.
func genDecimal(t *rapid.T, label string) Value {
	p := rapid.IntRange(1, MaxDecimalPrecision).Draw(t, label+"p")
	s := rapid.IntRange(0, p).Draw(t, label+"s")
	ty := Type{Kind: Decimal, Precision: uint8(p), Scale: uint8(s)}
	n := rapid.IntRange(1, p).Draw(t, label+"digits")
	d := make([]byte, 0, p+2)
	for range n {
		d = append(d, byte('0'+rapid.IntRange(0, 9).Draw(t, label+"d")))
	}
	for len(d) < s+1 {
		d = append([]byte{'0'}, d...)
	}
	txt := string(d[:len(d)-s]) + "." + string(d[len(d)-s:])
	if rapid.Bool().Draw(t, label+"neg") {
		txt = "-" + txt
	}
	v, err := ParseText(ty, txt)
	if err != nil {
		t.Fatalf("ParseText(%s, %q): %v", ty, txt, err)
	}
	return v
}

// ratOf returns a DECIMAL's exact value.
func ratOf(v Value) *big.Rat {
	r, ok := new(big.Rat).SetString(v.String())
	if !ok {
		panic(v.String())
	}
	return r
}

// roundRat rounds r to scale digits, halves away from zero, and returns the
// unscaled integer.
func roundRat(r *big.Rat, scale int) *big.Int {
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	neg := x.Sign() < 0
	x.Abs(x)
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if new(big.Int).Mul(m, big.NewInt(2)).Cmp(x.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q
}

// TestDecimalMatchesRat checks DECIMAL arithmetic against math/big.Rat:
// the exact result rounded half away from zero at the result scale, or a
// range error when it has more digits than the result type.
func TestDecimalMatchesRat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genDecimal(t, "a")
		b := genDecimal(t, "b")
		if rapid.IntRange(0, 4).Draw(t, "int") == 0 {
			b = genInt(rapid.SampledFrom([]Kind{Int64, Uint8, Int128}).Draw(t, "ik")).Draw(t, "bint")
		}
		op := Op(rapid.IntRange(0, 4).Draw(t, "op"))
		rt, ok := ResultType(op, a.Type(), b.Type())
		if !ok {
			t.Fatalf("no ResultType for %s %s %s", a.Type(), op, b.Type())
		}
		got, err := Arith(op, a, b)
		x, y := ratOf(a), ratOf(b)
		var exact *big.Rat
		switch op {
		case OpAdd:
			exact = new(big.Rat).Add(x, y)
		case OpSub:
			exact = new(big.Rat).Sub(x, y)
		case OpMul:
			exact = new(big.Rat).Mul(x, y)
		case OpDiv, OpMod:
			if y.Sign() == 0 {
				if !errors.Is(err, ErrDivisionByZero) {
					t.Fatalf("%s %s %s: %v, want division by zero", a, op, b, err)
				}
				return
			}
			exact = new(big.Rat).Quo(x, y)
			if op == OpMod {
				q := new(big.Int).Quo(exact.Num(), exact.Denom()) // truncates toward zero
				exact = new(big.Rat).Sub(x, new(big.Rat).Mul(new(big.Rat).SetInt(q), y))
			}
		}
		want := roundRat(exact, int(rt.Scale))
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(rt.Precision)), nil)
		if new(big.Int).Abs(want).Cmp(limit) >= 0 {
			var re *RangeError
			if !errors.As(err, &re) {
				t.Fatalf("%s %s %s %s %s = %v, %v; want a range error", a.Type(), a, op, b.Type(), b, got, err)
			}
			return
		}
		if err != nil {
			// Aligning the operands of + - % to the result scale may pass
			// 256 bits although the result fits; only a range error is
			// acceptable then.
			var re *RangeError
			if errors.As(err, &re) && op != OpMul && op != OpDiv {
				return
			}
			t.Fatalf("%s %s %s %s %s: %v (want %s)", a.Type(), a, op, b.Type(), b, err, want)
		}
		n := got.num()
		gotInt, _ := new(big.Int).SetString(string(formatNum(nil, n)), 10)
		if got.Type() != rt || gotInt.Cmp(want) != 0 {
			t.Fatalf("%s %s %s %s %s = %s %s; want unscaled %s at %s", a.Type(), a, op, b.Type(), b, got.Type(), got, want, rt)
		}
	})
}

// A zero divisor of % is division by zero even when aligning the dividend
// to the divisor's scale would overflow (found by TestDecimalMatchesRat:
// 200000000000000 % 0.000…0 at DECIMAL(63,63) said overflow).
func TestDecimalModZeroBeforeAlignment(t *testing.T) {
	a, err := ParseText(Type{Kind: Decimal, Precision: 15, Scale: 0}, "200000000000000")
	if err != nil {
		t.Fatal(err)
	}
	zero, err := ParseText(Type{Kind: Decimal, Precision: 63, Scale: 63}, "0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Arith(OpMod, a, zero); !errors.Is(err, ErrDivisionByZero) {
		t.Fatalf("%s %% %s: %v, want division by zero", a, zero, err)
	}
	if _, err := Arith(OpDiv, a, zero); !errors.Is(err, ErrDivisionByZero) {
		t.Fatalf("%s / %s: %v, want division by zero", a, zero, err)
	}
}
