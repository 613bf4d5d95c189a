package parser

import (
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT 1; SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"  SELECT 'a;b' ; -- c;\n /* d; */ SELEC 2;;  ", []string{"SELECT 'a;b'", "SELEC 2"}},
		{`INSERT INTO "t;" VALUES (1);`, []string{`INSERT INTO "t;" VALUES (1)`}},
		{"SELECT 1; SELECT 'open; SELECT 3", []string{"SELECT 1", "SELECT 'open; SELECT 3"}},
		// a stray character or a bad number ends where it ends: the
		// statements after its own still split
		{"SELECT 7 & 3; SELECT 1;SELECT 2 ^ 'a;b'; SELECT 3", []string{"SELECT 7 & 3", "SELECT 1", "SELECT 2 ^ 'a;b'", "SELECT 3"}},
		{"SELECT 1x; SELECT #; SELECT 2", []string{"SELECT 1x", "SELECT #", "SELECT 2"}},
		{"SELECT & 'open; SELECT 3", []string{"SELECT & 'open; SELECT 3"}},
		{"-- nothing\n;", nil},
		{"", nil},
	} {
		var got []string
		for _, r := range Split(c.sql) {
			got = append(got, c.sql[r.Start:r.End])
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.sql, got, c.want)
		}
	}
}

// TestSplitAgreesWithParseAll checks that on the corpus the splitter finds
// the same statement ranges as the parser.
func TestSplitAgreesWithParseAll(t *testing.T) {
	for _, r := range corpus(t) {
		stmts, err := ParseAll(r.sql)
		if err != nil {
			continue
		}
		ranges := Split(r.sql)
		if len(ranges) != len(stmts) {
			t.Fatalf("%s:%d: %d ranges, %d statements", r.file, r.line, len(ranges), len(stmts))
		}
		for i, s := range stmts {
			if ranges[i] != (Range{s.Pos(), s.End()}) {
				t.Errorf("%s:%d: range %v, statement %d-%d", r.file, r.line, ranges[i], s.Pos(), s.End())
			}
		}
	}
}
