package logictest

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	cases := []struct {
		text string
		null bool
		typ  byte
		d    Dialect
		want string
	}{
		{null: true, typ: 'I', want: "NULL"},
		{null: true, typ: 'T', want: "NULL"},
		{null: true, typ: 'R', want: "NULL"},
		{null: true, typ: 'B', want: "NULL"},
		{text: "", typ: 'T', want: "(empty)"},
		{text: "", typ: 'T', d: Classic, want: "(empty)"},
		{text: "", typ: 'I', want: "(empty)"},

		// I: integers kept digit for digit, others truncated toward zero.
		{text: "42", typ: 'I', want: "42"},
		{text: "-42", typ: 'I', want: "-42"},
		{text: "+42", typ: 'I', want: "42"},
		{text: "007", typ: 'I', want: "7"},
		{text: "-0", typ: 'I', want: "0"},
		{text: "115792089237316195423570985008687907853269984665640564039457584007913129639935", typ: 'I',
			want: "115792089237316195423570985008687907853269984665640564039457584007913129639935"},
		{text: "3.99", typ: 'I', want: "3"},
		{text: "-3.99", typ: 'I', want: "-3"},
		{text: "-0.5", typ: 'I', want: "0"},
		{text: ".5", typ: 'I', want: "0"},
		{text: "12.", typ: 'I', want: "12"},
		{text: "1.5e3", typ: 'I', want: "1500"},
		{text: "-2.5E-1", typ: 'I', want: "0"},
		{text: "-1e20", typ: 'I', want: "-100000000000000000000"},
		{text: "true", typ: 'I', want: "1"},
		{text: "f", typ: 'I', want: "0"},
		{text: "abc", typ: 'I', want: "abc"},
		{text: "Infinity", typ: 'I', want: "Infinity"},
		{text: "1e", typ: 'I', want: "1e"},
		{text: "1e999999999", typ: 'I', want: "1e999999999"},
		{text: "1e999999999", typ: 'R', want: "1e999999999"},

		// R: three decimals.
		{text: "1.5", typ: 'R', want: "1.500"},
		{text: "2", typ: 'R', want: "2.000"},
		{text: "-0.25", typ: 'R', want: "-0.250"},
		{text: "0.1239", typ: 'R', want: "0.124"},
		{text: "-7.0005", typ: 'R', want: "-7.000"}, // as printf("%.3f") on the double
		{text: "1e-7", typ: 'R', want: "0.000"},
		{text: "1.5E2", typ: 'R', want: "150.000"},
		{text: "12345678901234567890", typ: 'R', want: "12345678901234567890.000"},
		{text: "12345678901234567890.12349", typ: 'R', want: "12345678901234567890.123"},
		{text: "NaN", typ: 'R', want: "NaN"},

		// B.
		{text: "true", typ: 'B', want: "true"},
		{text: "t", typ: 'B', want: "true"},
		{text: "TRUE", typ: 'B', want: "true"},
		{text: "1", typ: 'B', want: "true"},
		{text: "false", typ: 'B', want: "false"},
		{text: "f", typ: 'B', want: "false"},
		{text: "0", typ: 'B', want: "false"},
		{text: "maybe", typ: 'B', want: "maybe"},

		// T: kept in the conformance dialect, '@' per unprintable byte in the classic one.
		{text: "naïve ☃", typ: 'T', d: Conformance, want: "naïve ☃"},
		{text: "naïve", typ: 'T', d: Classic, want: "na@@ve"},
		{text: "a\tb\x7f", typ: 'T', d: Classic, want: "a@b@"},
		{text: "write 1", typ: 'T', d: Classic, want: "write 1"},
		{text: "12.5", typ: 'T', want: "12.5"},
	}
	for _, c := range cases {
		d := c.d
		if d == DialectAuto {
			d = Conformance
		}
		got := Render(Value{Text: c.text, Null: c.null}, c.typ, d)
		if got != c.want {
			t.Errorf("Render(%q null=%v, %c, %v) = %q, want %q", c.text, c.null, c.typ, d, got, c.want)
		}
	}
}

// The common cases render without allocating: canonical integers and
// printable text are returned as they came.
func TestRenderAllocations(t *testing.T) {
	ints := Value{Text: "-1234567"}
	trunc := Value{Text: "3.75"}
	text := Value{Text: "write 1"}
	n := testing.AllocsPerRun(100, func() {
		_ = Render(ints, 'I', Classic)
		_ = Render(trunc, 'I', Classic)
		_ = Render(text, 'T', Classic)
		_ = Render(text, 'T', Conformance)
	})
	if n != 0 {
		t.Errorf("%v allocations per render of the common cases, want 0", n)
	}
}

func TestHashValues(t *testing.T) {
	// Computed with md5sum over the same bytes: printf '1\n2\n3\n' | md5sum.
	if got := hashValues([]string{"1", "2", "3"}); got != "c0710d6b4f15dfa88f600b0e6b624077" {
		t.Errorf("hash of 1,2,3 = %s", got)
	}
	if got := hashValues([]string{"NULL", "(empty)", "x y"}); got != "5c65f993a3c4e7c262f638912e29969c" {
		t.Errorf("hash of NULL,(empty),x y = %s", got)
	}
	// The first query of select1.test, its 30 values computed with SQLite:
	// upstream's expected line is "30 values hashing to 3c13dee4...".
	vals := strings.Fields("358 364 376 382 398 402 410 426 432 440 458 468 478 486 490 1000 1050 1120 " +
		"1180 1240 1290 1300 1390 1430 1450 1510 1580 1600 1670 1700")
	if got := hashValues(vals); got != "3c13dee48d9356ae19af2515e05e6b54" {
		t.Errorf("hash of select1's first query = %s", got)
	}
}

func TestSortValues(t *testing.T) {
	// rowsort compares column by column with strcmp: "10" before "9", and
	// a row's later columns break ties.
	vals := []string{"9", "b", "10", "z", "10", "a", "NULL", "x"}
	sortValues(vals, 2, RowSort)
	if got := strings.Join(vals, ","); got != "10,a,10,z,9,b,NULL,x" {
		t.Errorf("rowsort: %s", got)
	}
	vals = []string{"9", "b", "10", "z", "10", "a"}
	sortValues(vals, 2, ValueSort)
	if got := strings.Join(vals, ","); got != "10,10,9,a,b,z" {
		t.Errorf("valuesort: %s", got)
	}
	vals = []string{"3", "1", "2"}
	sortValues(vals, 1, NoSort)
	if got := strings.Join(vals, ","); got != "3,1,2" {
		t.Errorf("nosort moved values: %s", got)
	}
}
