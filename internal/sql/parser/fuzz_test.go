package parser

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
)

// FuzzParse checks, for any input, that parsing never panics, that every
// error is a positioned *sqlerr.Error, that node spans nest inside the
// input (ast invariant 1), that Split finds the statements ParseAll finds,
// and that a successful parse survives printing
// and re-parsing unchanged (ast invariant 2).
func FuzzParse(f *testing.F) {
	for _, r := range corpus(f) {
		f.Add(r.sql)
	}
	for _, in := range testdataInputs(f) {
		f.Add(in)
	}
	for _, s := range []string{
		"SELECT - -1, a::INT64::STRING, NOT NOT TRUE, 'a' || E'\\n'",
		"SELECT * FROM (a JOIN b USING (k)) AS j NATURAL LEFT JOIN c",
		"WITH RECURSIVE r (n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM r) SELECT * FROM r",
		"SELECT CASE WHEN a THEN b ELSE c END FROM t AS OF TIMESTAMP '2026-01-01' AS x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmts, err := ParseAll(sql)
		if err != nil {
			e, ok := sqlerr.As(err)
			if !ok {
				t.Fatalf("error %T %v is not an *sqlerr.Error", err, err)
			}
			if e.Pos < 0 || e.Pos > len(sql) {
				t.Fatalf("error position %d outside the input of %d bytes", e.Pos, len(sql))
			}
			return
		}
		ranges := Split(sql)
		if len(ranges) != len(stmts) {
			t.Fatalf("Split found %d statements, ParseAll %d, in %q", len(ranges), len(stmts), sql)
		}
		for i, s := range stmts {
			if ranges[i] != (Range{s.Pos(), s.End()}) {
				t.Fatalf("Split range %v, statement %d-%d, in %q", ranges[i], s.Pos(), s.End(), sql)
			}
			checkSpans(t, sql, s)
			out := ast.Format(s)
			again, err := Parse(out)
			if err != nil {
				t.Fatalf("printed form does not parse: %v\ninput:   %q\nprinted: %q", err, sql, out)
			}
			if !ast.Equal(s, again) {
				t.Fatalf("round trip changed the tree\ninput:   %q\nprinted: %q\nbefore: %s\nafter:  %s", sql, out, ast.Dump(s), ast.Dump(again))
			}
		}
	})
}

// testdataInputs returns the inputs of the datadriven cases, which cover
// more syntax than the conformance scripts.
func testdataInputs(f *testing.F) []string {
	files, _ := filepath.Glob("testdata/*")
	var out []string
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue // directories (testdata/fuzz)
		}
		for _, block := range strings.Split(string(b), "\n----\n") {
			if i := strings.LastIndex(block, "\nparse\n"); i >= 0 {
				out = append(out, block[i+len("\nparse\n"):])
			} else if i := strings.LastIndex(block, "\nexpr\n"); i >= 0 {
				out = append(out, "SELECT "+block[i+len("\nexpr\n"):])
			}
		}
	}
	if len(out) == 0 {
		f.Fatal("no datadriven inputs found")
	}
	return out
}

// checkSpans walks a tree and fails if a node's span is outside the input
// or outside its parent's span.
func checkSpans(t testing.TB, sql string, root ast.Node) {
	t.Helper()
	var walk func(v reflect.Value, lo, hi int)
	walk = func(v reflect.Value, lo, hi int) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), lo, hi)
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), lo, hi)
			}
		case reflect.Struct:
			if f := v.FieldByName("Span"); f.IsValid() {
				s := f.Interface().(ast.Span)
				if s.Start < lo || s.Stop > hi || s.Start > s.Stop {
					t.Fatalf("%s span %d-%d outside %d-%d in %q", v.Type().Name(), s.Start, s.Stop, lo, hi, sql)
				}
				lo, hi = s.Start, s.Stop
			}
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i), lo, hi)
			}
		}
	}
	walk(reflect.ValueOf(root), 0, len(sql))
}
