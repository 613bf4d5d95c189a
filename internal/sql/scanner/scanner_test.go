package scanner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/token"
)

// scanAll renders every token of src as kind:lit@pos-end, or the error.
func scanAll(src string) string {
	var s Scanner
	s.Init(src)
	var out []string
	for {
		tok, pos, end, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.ILLEGAL {
			out = append(out, "ERR "+s.Err().Error()+fmt.Sprintf("@%d", s.Err().Pos))
			break
		}
		out = append(out, fmt.Sprintf("%v:%s@%d-%d", tok, lit, pos, end))
	}
	return strings.Join(out, " ")
}

func TestScan(t *testing.T) {
	cases := []struct{ src, want string }{
		{"SELECT a FROM T", "SELECT:select@0-6 identifier:a@7-8 FROM:from@9-13 identifier:t@14-15"},
		{`"Quoted ""x""" "select"`, `identifier:Quoted "x"@0-14 identifier:select@15-23`},
		{"'it''s' ''", "string:it's@0-7 string:@8-10"},
		{`E'a\nb\x41\101\u00e9\\\''`, "string:a\nbAAé\\'@0-25"},
		{"e'x' E 'y'", "string:x@0-4 identifier:e@5-6 string:y@7-10"},
		{"1 12.5 .5 1e10 2E-3 1.", "number:1@0-1 number:12.5@2-6 number:.5@7-9 number:1e10@10-14 number:2E-3@15-19 number:1.@20-22"},
		{"115792089237316195423570985008687907853269984665640564039457584007913129639935",
			"number:115792089237316195423570985008687907853269984665640564039457584007913129639935@0-78"},
		{"$1 $23", "parameter:1@0-2 parameter:23@3-6"},
		{"$$it's$$ $t$a;$$b$t$ $$$$", "string:it's@0-8 string:a;$$b@9-20 string:@21-25"},
		{"$$open", `ERR unterminated dollar-quoted string at or near "$$open"@0`},
		{"a $ b", `identifier:a@0-1 ERR syntax error at or near "$"@2`},
		{"a::b || c <> d != e <= f >= g < h > i = j", "identifier:a@0-1 :::@1-3 identifier:b@3-4 ||:@5-7 identifier:c@8-9 <>:@10-12 identifier:d@13-14 <>:@15-17 identifier:e@18-19 <=:@20-22 identifier:f@23-24 >=:@25-27 identifier:g@28-29 <:@30-31 identifier:h@32-33 >:@34-35 identifier:i@36-37 =:@38-39 identifier:j@40-41"},
		{"(a, b.c); * / % + - ^ [ ] :", "(:@0-1 identifier:a@1-2 ,:@2-3 identifier:b@4-5 .:@5-6 identifier:c@6-7 ):@7-8 ;:@8-9 *:@10-11 /:@12-13 %:@14-15 +:@16-17 -:@18-19 ^:@20-21 [:@22-23 ]:@24-25 ::@26-27"},
		{"a -- comment\n/* x /* nested */ y */ b", "identifier:a@0-1 identifier:b@36-37"},
		{"a--", "identifier:a@0-1"},
		{"naïve _commit x$1", "identifier:naïve@0-6 identifier:_commit@7-14 identifier:x$1@15-18"},
		{"1-1", "number:1@0-1 -:@1-2 number:1@2-3"},
		{"SELECT 'unterminated FROM st;", `SELECT:select@0-6 ERR unterminated quoted string at or near "'unterminated FROM st;"@7`},
		{"a /* open", `identifier:a@0-1 ERR unterminated /* comment at or near "/* open"@2`},
		{`"open`, `ERR unterminated quoted identifier at or near ""open"@0`},
		{`""`, `ERR zero-length delimited identifier at or near """"@0`},
		{"a ? b", `identifier:a@0-1 ERR syntax error at or near "?"@2`},
		{"a # b & c | d << e >> f ~g", `identifier:a@0-1 #:@2-3 identifier:b@4-5 &:@6-7 identifier:c@8-9 |:@10-11 identifier:d@12-13 <<:@14-16 identifier:e@17-18 >>:@19-21 identifier:f@22-23 ~:@24-25 identifier:g@25-26`},
		{"a<<b>>=c<>d||e", `identifier:a@0-1 <<:@1-3 identifier:b@3-4 >>:@4-6 =:@6-7 identifier:c@7-8 <>:@8-10 identifier:d@10-11 ||:@11-13 identifier:e@13-14`},
		{"12abc", `ERR trailing junk after numeric literal at or near "12abc"@0`},
		{`E'\u12'`, `ERR invalid Unicode escape value at or near "\u12"@2`},
		{"'multi\nline", `ERR unterminated quoted string at or near "'multi..."@0`},
		{"a @ b", `identifier:a@0-1 ERR syntax error at or near "@"@2`},
		{"a ☃", `identifier:a@0-1 identifier:☃@2-5`},
	}
	for _, c := range cases {
		if got := scanAll(c.src); got != c.want {
			t.Errorf("scan %q:\n got  %s\n want %s", c.src, got, c.want)
		}
	}
}

func TestIllegalIsSticky(t *testing.T) {
	var s Scanner
	s.Init("'x")
	if tok, _, _, _ := s.Scan(); tok != token.ILLEGAL {
		t.Fatal("want ILLEGAL")
	}
	if tok, _, _, _ := s.Scan(); tok != token.ILLEGAL {
		t.Fatal("scanning after an error must keep reporting it")
	}
}

// TestLinear checks that inputs built to trip quadratic scanning (many
// doubled quotes, long comments, deep comment nesting) scan quickly.
func TestLinear(t *testing.T) {
	n := 1 << 20
	for _, src := range []string{
		"'" + strings.Repeat("''", n) + "'",
		"/*" + strings.Repeat("/*", n) + strings.Repeat("*/", n+1),
		strings.Repeat("-- c\n", n),
		strings.Repeat("a,", n),
	} {
		var s Scanner
		s.Init(src)
		for {
			tok, _, _, _ := s.Scan()
			if tok == token.EOF || tok == token.ILLEGAL {
				break
			}
		}
		if s.Err() != nil {
			t.Fatalf("unexpected error %v", s.Err())
		}
	}
}

func BenchmarkScan(b *testing.B) {
	src := "INSERT INTO t VALUES " + strings.Repeat("(1, 'abc', 2.5, NULL), ", 10000) + "(1, 'x', 3, NULL)"
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		var s Scanner
		s.Init(src)
		for {
			tok, _, _, _ := s.Scan()
			if tok == token.EOF {
				break
			}
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{"SELECT 'a''b', E'\\x41', \"Q\" FROM t -- c", "/* /* */ */ $1::int", "1.5e3 || x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var s Scanner
		s.Init(src)
		last := -1
		for {
			tok, pos, end, _ := s.Scan()
			if tok == token.EOF || tok == token.ILLEGAL {
				if tok == token.ILLEGAL && s.Err() == nil {
					t.Fatal("ILLEGAL without an error")
				}
				return
			}
			if pos < last || end <= pos || end > len(src) {
				t.Fatalf("bad range %d-%d after %d", pos, end, last)
			}
			last = end
		}
	})
}
