package logictest

import (
	"strings"
	"testing"
)

// FuzzParse: no input makes Parse panic, and every record it returns lies
// inside the input, in order.
func FuzzParse(f *testing.F) {
	f.Add("statement ok\nSELECT 1\n\nquery IT rowsort label-1\nSELECT 1, 'a'\n----\n1 a\n")
	f.Add("skipif mysql\r\nonlyif postgresql\r\nquery I\r\nSELECT 1\r\n----\r\n3 values hashing to 00000000000000000000000000000000\r\n")
	f.Add("statement error (unclosed\nx\n\nrestart\n\nhalt\n\nhash-threshold 8\n# c\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("f.slt", []byte(src), DialectAuto)
		if err != nil {
			return
		}
		lines := strings.Count(src, "\n") + 1
		prev := 0
		for _, r := range s.Records {
			if r.Line <= prev || r.Line > lines || r.EndLine < r.Line || r.EndLine > lines {
				t.Fatalf("record at line %d..%d after %d, input has %d lines", r.Line, r.EndLine, prev, lines)
			}
			if r.Kind == KindQuery && (r.Types == "" || strings.Trim(r.Types, "ITRB") != "") {
				t.Fatalf("query with types %q", r.Types)
			}
			prev = r.EndLine
		}
	})
}

// FuzzRender: no engine text makes Render panic, every letter gives a
// non-empty rendering, and R always has three decimals when it is a number.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"1", "-0.5", "1e5", "+.5e-3", "abc", "", "naïve", "99999999999999999999.99999", "1e999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []byte("ITRB") {
			for _, d := range []Dialect{Conformance, Classic} {
				out := Render(Text(s), typ, d)
				if out == "" {
					t.Fatalf("Render(%q, %c, %v) is empty", s, typ, d)
				}
				if typ == 'R' && parseNumber(s).ok {
					if k := strings.IndexByte(out, '.'); k < 0 || len(out)-k-1 != 3 {
						t.Fatalf("Render(%q, R) = %q, want three decimals", s, out)
					}
				}
			}
		}
	})
}
