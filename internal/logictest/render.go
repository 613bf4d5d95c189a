package logictest

import (
	"math/big"
	"strconv"
	"strings"
)

// Render returns the text a result value is compared as, under the record's
// type letter typ and the script's dialect. The rules (doc.go, "Rendering"):
//
//   - NULL is "NULL" under every letter;
//   - I: integer text is kept digit for digit (any width); a non-integer
//     number is truncated toward zero; true/false become 1/0;
//   - R: a number is printed with exactly three decimals;
//   - B: true/t/1 and false/f/0 (any case) become true and false;
//   - T: the text as it is; in the classic dialect every byte outside
//     printable ASCII becomes '@', as upstream does;
//   - an empty result under any letter is "(empty)".
//
// Text that does not fit the letter (a word under I, say) is kept unchanged,
// so the mismatch shows in the failure instead of being masked by a 0.
func Render(v Value, typ byte, d Dialect) string {
	if v.Null {
		return "NULL"
	}
	s := v.Text
	switch typ {
	case 'I':
		s = renderInt(s)
	case 'R':
		s = renderReal(s)
	case 'B':
		s = renderBool(s)
	case 'T':
		if d == Classic {
			s = printable(s)
		}
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

// number is a decimal numeral split into its parts: [sign] int [. frac] [exp].
type number struct {
	neg      bool
	intPart  string // digits before the point, possibly empty or with leading zeros
	fracPart string // digits after the point, possibly empty
	hasExp   bool
	ok       bool // parsed as a numeral at all
}

// maxExpDigits bounds the digits of an exponent Render converts: up to 1e999.
const maxExpDigits = 3

// parseNumber splits s as [+-]digits[.digits][(e|E)[+-]digits]; at least one
// digit is needed before or after the point.
func parseNumber(s string) number {
	var n number
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		n.neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n.intPart = s[start:i]
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n.fracPart = s[j:i]
	}
	if n.intPart == "" && n.fracPart == "" {
		return number{}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		// An exponent past maxExpDigits digits is not a numeral here: big
		// conversions of 1e999999999 would spend gigabytes on digits.
		if i == j || i-j > maxExpDigits {
			return number{}
		}
		n.hasExp = true
	}
	if i != len(s) {
		return number{}
	}
	n.ok = true
	return n
}

// trimZeros drops leading zeros of an integer part, keeping at least one digit.
func trimZeros(digits string) string {
	k := 0
	for k < len(digits)-1 && digits[k] == '0' {
		k++
	}
	if digits == "" {
		return "0"
	}
	return digits[k:]
}

// renderInt renders s under I. The common case, canonical integer text, is
// returned as is, without allocating.
func renderInt(s string) string {
	switch {
	case strings.EqualFold(s, "true") || strings.EqualFold(s, "t"):
		return "1"
	case strings.EqualFold(s, "false") || strings.EqualFold(s, "f"):
		return "0"
	}
	n := parseNumber(s)
	if !n.ok {
		return s
	}
	if n.hasExp {
		f, _, err := big.ParseFloat(s, 10, uint(len(s))*4+64, big.ToZero)
		if err != nil || f.IsInf() {
			return s
		}
		i, _ := f.Int(nil) // truncates toward zero
		return i.String()
	}
	digits := trimZeros(n.intPart)
	if digits == "0" {
		return "0" // -0, -0.5, .5 and 0.9 all truncate to 0
	}
	if !n.neg {
		if s[0] != '+' && len(digits) == len(s) {
			return s
		}
		return digits
	}
	if len(digits)+1 == len(s) {
		return s
	}
	return "-" + digits
}

// renderReal renders s under R with three decimals. A numeral with at most
// three decimals is padded exactly (so integers of any width stay exact); one
// with more goes through float64 and %.3f, which is what upstream's printf
// does and what the corpus' expected values were made with; one whose integer
// part is too wide for float64 to hold exactly is rounded in big.Float.
func renderReal(s string) string {
	n := parseNumber(s)
	if !n.ok {
		return s
	}
	if !n.hasExp && len(n.fracPart) <= 3 {
		var b strings.Builder
		b.Grow(len(s) + 5)
		if n.neg {
			b.WriteByte('-')
		}
		b.WriteString(trimZeros(n.intPart))
		b.WriteByte('.')
		b.WriteString(n.fracPart)
		for k := len(n.fracPart); k < 3; k++ {
			b.WriteByte('0')
		}
		return b.String()
	}
	if n.hasExp || len(trimZeros(n.intPart)) <= 15 {
		f, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return strconv.FormatFloat(f, 'f', 3, 64)
		}
	}
	f, _, err := big.ParseFloat(s, 10, uint(len(s))*4+64, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return s
	}
	return f.Text('f', 3)
}

// renderBool renders s under B.
func renderBool(s string) string {
	switch {
	case strings.EqualFold(s, "true") || strings.EqualFold(s, "t") || s == "1":
		return "true"
	case strings.EqualFold(s, "false") || strings.EqualFold(s, "f") || s == "0":
		return "false"
	}
	return s
}

// printable replaces every byte outside ' '..'~' with '@', byte by byte, the
// way upstream's C runner does (so a two-byte UTF-8 letter becomes "@@").
func printable(s string) string {
	k := 0
	for k < len(s) && s[k] >= ' ' && s[k] <= '~' {
		k++
	}
	if k == len(s) {
		return s
	}
	b := []byte(s)
	for ; k < len(b); k++ {
		if b[k] < ' ' || b[k] > '~' {
			b[k] = '@'
		}
	}
	return string(b)
}
