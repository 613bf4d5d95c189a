package types

import (
	"math/bits"

	"github.com/holiman/uint256"
)

// This file holds the 256-bit helpers the rest of the package shares. Signed
// wide values (INT128, INT256, DECIMAL) are two's complement in a
// uint256.Int; comparisons and conversions across kinds go through num, a
// sign-magnitude form wide enough for every integer of every kind (the
// magnitude of INT256's minimum, 2^255, and UINT256's maximum both fit).

// num is an exact integer in sign-magnitude form. Zero is never negative.
type num struct {
	neg bool
	mag uint256.Int
}

// pow10 holds 10^0 … 10^77; 10^77 < 2^256 < 10^78.
var pow10 [78]uint256.Int

// pow10u holds 10^0 … 10^19 as uint64.
var pow10u [20]uint64

func init() {
	pow10[0].SetOne()
	ten := uint256.NewInt(10)
	for i := 1; i < len(pow10); i++ {
		pow10[i].Mul(&pow10[i-1], ten)
	}
	pow10u[0] = 1
	for i := 1; i < len(pow10u); i++ {
		pow10u[i] = pow10u[i-1] * 10
	}
}

// wideNeg reports whether the two's complement value w is negative.
func wideNeg(w *uint256.Int) bool { return w[3]>>63 != 0 }

// signedNum reads a two's complement wide value as a num.
func signedNum(w *uint256.Int) num {
	if wideNeg(w) {
		var m uint256.Int
		m.Neg(w)
		return num{neg: true, mag: m}
	}
	return num{mag: *w}
}

// twos returns n in two's complement. The caller has checked that n fits in
// a signed 256-bit integer.
func (n num) twos() uint256.Int {
	if n.neg {
		var w uint256.Int
		w.Neg(&n.mag)
		return w
	}
	return n.mag
}

// int64Num returns x as a num.
func int64Num(x int64) num {
	if x < 0 {
		return num{neg: true, mag: uint256.Int{uint64(-(x + 1)) + 1}}
	}
	return num{mag: uint256.Int{uint64(x)}}
}

// cmpNum orders two nums.
func cmpNum(a, b *num) int {
	switch {
	case a.neg && !b.neg:
		return -1
	case !a.neg && b.neg:
		return 1
	}
	c := a.mag.Cmp(&b.mag)
	if a.neg {
		return -c
	}
	return c
}

// fitsInt reports whether n is a value of integer kind k: a signed kind of
// b bits holds -2^(b-1) … 2^(b-1)-1, an unsigned one 0 … 2^b-1.
func fitsInt(k Kind, n *num) bool {
	b := uint(k.Bits())
	if n.neg && n.mag.IsZero() {
		return true
	}
	if k.IsUnsigned() {
		if n.neg {
			return false
		}
		return b == 256 || n.mag.BitLen() <= int(b)
	}
	// Signed: positive values need BitLen ≤ b-1; negative ones may also be
	// exactly 2^(b-1).
	bl := n.mag.BitLen()
	if bl <= int(b)-1 {
		return true
	}
	if !n.neg || bl != int(b) {
		return false
	}
	// mag == 2^(b-1) exactly: one bit set.
	var p uint256.Int
	p.Lsh(uint256.NewInt(1), b-1)
	return n.mag.Eq(&p)
}

// fitsDecimal reports whether the unscaled magnitude has at most p digits.
func fitsDecimal(p uint8, mag *uint256.Int) bool {
	if p >= 77 {
		return true
	}
	return mag.Lt(&pow10[p])
}

// divmod64 divides x by d (d ≠ 0), returning the quotient and remainder.
func divmod64(x *uint256.Int, d uint64) (q uint256.Int, r uint64) {
	for i := 3; i >= 0; i-- {
		q[i], r = bits.Div64(r, x[i], d)
	}
	return q, r
}

// mulDivRound returns round(x*y/d) with halves rounded away from zero, for
// magnitudes, and whether the quotient overflowed 256 bits. d must not be zero.
func mulDivRound(x, y, d *uint256.Int) (uint256.Int, bool) {
	var q uint256.Int
	if _, over := q.MulDivOverflow(x, y, d); over {
		return q, true
	}
	// The true remainder x*y - q*d is below d < 2^256, so it equals the
	// difference of the two products taken modulo 2^256.
	var lo, qd, r uint256.Int
	lo.Mul(x, y)
	qd.Mul(&q, d)
	r.Sub(&lo, &qd)
	var rest uint256.Int
	rest.Sub(d, &r) // d - r > 0
	if !r.Lt(&rest) {
		if _, over := q.AddOverflow(&q, uint256.NewInt(1)); over {
			return q, true
		}
	}
	return q, false
}

// divPow10Round returns round(x × 10^k / y) with halves rounded away from
// zero, for magnitudes and any k ≥ 0, and whether the quotient overflowed
// 256 bits. y must not be zero. It is long division in steps of at most
// 10^77: each step's remainder is below y, so remainder × 10^step fits the
// 512-bit intermediate of MulDivOverflow.
func divPow10Round(x, y *uint256.Int, k int) (uint256.Int, bool) {
	var q, r uint256.Int
	q.DivMod(x, y, &r)
	for k > 0 {
		step := min(k, len(pow10)-1)
		k -= step
		var t, lo, ty uint256.Int
		t.MulDivOverflow(&r, &pow10[step], y) // < 10^step: no overflow
		lo.Mul(&r, &pow10[step])
		ty.Mul(&t, y)
		r.Sub(&lo, &ty)
		if _, over := q.MulOverflow(&q, &pow10[step]); over {
			return q, true
		}
		if _, over := q.AddOverflow(&q, &t); over {
			return q, true
		}
	}
	var rest uint256.Int
	rest.Sub(y, &r)
	if !r.Lt(&rest) {
		if _, over := q.AddOverflow(&q, uint256.NewInt(1)); over {
			return q, true
		}
	}
	return q, false
}

// rescaleDown divides mag by 10^k, rounding halves away from zero.
func rescaleDown(mag *uint256.Int, k int) uint256.Int {
	if k <= 0 {
		return *mag
	}
	if k >= len(pow10) {
		return uint256.Int{}
	}
	var q, r uint256.Int
	q.DivMod(mag, &pow10[k], &r)
	var rest uint256.Int
	rest.Sub(&pow10[k], &r)
	if !r.Lt(&rest) {
		q.AddUint64(&q, 1)
	}
	return q
}

// rescaleUp multiplies mag by 10^k, reporting overflow of 256 bits.
func rescaleUp(mag *uint256.Int, k int) (uint256.Int, bool) {
	if k <= 0 {
		return *mag, false
	}
	if mag.IsZero() {
		return uint256.Int{}, false
	}
	if k >= len(pow10) {
		return uint256.Int{}, true
	}
	var z uint256.Int
	_, over := z.MulOverflow(mag, &pow10[k])
	return z, over
}

// appendMag appends the decimal digits of mag.
func appendMag(dst []byte, mag *uint256.Int) []byte {
	if mag.IsUint64() {
		return appendUint(dst, mag[0])
	}
	// Split into base-10^19 chunks, least significant first.
	var chunks [5]uint64
	n := 0
	x := *mag
	for !x.IsZero() {
		var r uint64
		x, r = divmod64(&x, pow10u[19])
		chunks[n] = r
		n++
	}
	dst = appendUint(dst, chunks[n-1])
	for i := n - 2; i >= 0; i-- {
		dst = appendPadded(dst, chunks[i], 19)
	}
	return dst
}

// appendUint appends x in decimal without allocating.
func appendUint(dst []byte, x uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for x >= 10 {
		i--
		buf[i] = byte('0' + x%10)
		x /= 10
	}
	i--
	buf[i] = byte('0' + x)
	return append(dst, buf[i:]...)
}

// appendPadded appends x in decimal, zero-padded to width digits.
func appendPadded(dst []byte, x uint64, width int) []byte {
	var buf [20]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + x%10)
		x /= 10
	}
	return append(dst, buf[:width]...)
}

// parseMag reads a run of ASCII digits as a magnitude, reporting overflow
// of 256 bits. The caller has checked that digits holds digits only.
func parseMag(digits string) (uint256.Int, bool) {
	var z uint256.Int
	for len(digits) > 0 {
		k := min(len(digits), 19)
		var chunk uint64
		for i := 0; i < k; i++ {
			chunk = chunk*10 + uint64(digits[i]-'0')
		}
		digits = digits[k:]
		if z.IsZero() {
			z[0] = chunk
			continue
		}
		if _, over := z.MulOverflow(&z, &pow10[k]); over {
			return z, true
		}
		if _, over := z.AddOverflow(&z, &uint256.Int{chunk}); over {
			return z, true
		}
	}
	return z, false
}
