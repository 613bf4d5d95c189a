package parser

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/ast"
)

// parseBoth parses sql with compact VALUES rows and without, and returns
// both results with the compact rows expanded into nodes.
func parseBoth(sql string) (general, compact ast.Stmt, gerr, cerr error, lits bool) {
	noCompact = true
	general, gerr = Parse(sql)
	noCompact = false
	compact, cerr = Parse(sql)
	if cerr == nil {
		lits = expandLits(compact)
	}
	return general, compact, gerr, cerr, lits
}

// expandLits turns every compact VALUES list in n into nodes (the tree
// the general loop builds) and reports whether there was one: the
// datadriven cases print trees in that one form.
func expandLits(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if v, ok := n.(*ast.Values); ok && v.Lits != nil {
			found = true
			v.Rows, v.Lits = v.AllRows(), nil
		}
		return true
	})
	return found
}

// TestCompactValuesSame checks that an INSERT's VALUES rows kept compact
// (ast.Values.Lits) stand for exactly the nodes the general loop builds,
// spans included, and that every statement fails with the same error
// either way: random lists of literals, NULLs and the items that end the
// compact form (DEFAULT, signs, casts, parameters, expressions), rows of
// other widths, comments, trailing clauses and malformed rows.
func TestCompactValuesSame(t *testing.T) {
	defer func() { noCompact = false }()
	rng := rand.New(rand.NewPCG(7, 8))
	plain := []string{"0", "7", "42", "18446744073709551616", "3.25", "1e5", ".5", "'x'", "''", "'it''s'", "E'a\\nb'",
		"'0x00000000000000000000000000000000000000ff'", "'2026-10-01 12:05:00.000'", "NULL", "null", "115792089237316195423570985008687907853269984665640564039457584007913129639935"}
	other := []string{"DEFAULT", "-1", "+2", "1 + 2", "$1", "'a'::STRING", "NULL::INT64", "TRUE", "(SELECT 1)", "'a' 'b'", "x", "now()", "- 3", "'a' || 'b'", "NULL IS NULL"}
	broken := []string{"", "'open", "(", "1 2", ",", "1,"}
	sep := []string{", ", ",", " , ", ",\n", " /* c */ , ", ", -- c\n"}
	count, lits := 0, 0
	for trial := range 3000 {
		rows := 1 + rng.IntN(6)
		width := 1 + rng.IntN(4)
		var b strings.Builder
		b.WriteString([]string{"INSERT INTO t ", "UPSERT INTO t (a, b) ", "insert into s.t AS x "}[rng.IntN(3)])
		b.WriteString("VALUES ")
		for r := range rows {
			if r > 0 {
				b.WriteString(sep[rng.IntN(len(sep))])
			}
			b.WriteString("(")
			w := width
			if rng.IntN(20) == 0 {
				w += rng.IntN(3) - 1
			}
			for j := range w {
				if j > 0 {
					b.WriteString(sep[rng.IntN(len(sep))])
				}
				switch k := rng.IntN(100); {
				case k < 88:
					b.WriteString(plain[rng.IntN(len(plain))])
				case k < 98:
					b.WriteString(other[rng.IntN(len(other))])
				default:
					b.WriteString(broken[rng.IntN(len(broken))])
				}
			}
			b.WriteString(")")
		}
		b.WriteString([]string{"", "", "", ";", " ATTRIBUTE GROUP g", " RETURNING a", " UNION SELECT 1", " ORDER BY 1", ", x", ",", " ("}[rng.IntN(11)])
		sql := b.String()
		g, c, gerr, cerr, compact := parseBoth(sql)
		if fmt.Sprint(gerr) != fmt.Sprint(cerr) {
			t.Fatalf("trial %d: %q\ngeneral error: %v\ncompact error: %v", trial, sql, gerr, cerr)
		}
		if gerr == nil && !reflect.DeepEqual(g, c) {
			t.Fatalf("trial %d: %q\ngeneral: %s\ncompact: %s", trial, sql, ast.Format(g), ast.Format(c))
		}
		if gerr == nil {
			count++
		}
		if compact {
			lits++
		}
	}
	// The mix must exercise both forms and both outcomes.
	if count < 500 || lits < 300 {
		t.Fatalf("%d statements parsed, %d of them compact", count, lits)
	}
}

// TestCompactValuesKept checks that a list of lone literals is kept in
// Lits, one of anything else in Rows, and that a VALUES list that is not
// INSERT's own is never kept compact.
func TestCompactValuesKept(t *testing.T) {
	body := func(sql string) *ast.Values {
		t.Helper()
		s, err := Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		switch x := s.(type) {
		case *ast.InsertStmt:
			return x.Source.Body.(*ast.Values)
		case *ast.SelectStmt:
			return x.Body.(*ast.Values)
		}
		t.Fatalf("%T", s)
		return nil
	}
	v := body("INSERT INTO t VALUES (1, 'a', NULL), (2, 'b', 3)")
	if v.Lits == nil || v.Rows != nil || v.NumRows() != 2 || v.Lits.Width != 3 {
		t.Fatalf("literal rows: %+v", v)
	}
	if c := v.Lits.Cells[1]; c.Kind != ast.LitString || c.Text != "a" || c.Start != 25 || c.Stop != 28 {
		t.Fatalf("cell 1: %+v", c)
	}
	if v := body("INSERT INTO t VALUES (1, 'a'), (2, DEFAULT)"); v.Lits != nil || len(v.Rows) != 2 {
		t.Fatalf("a DEFAULT in row 2: %+v", v)
	}
	if v := body("VALUES (1, 'a'), (2, 'b')"); v.Lits != nil || len(v.Rows) != 2 {
		t.Fatalf("a query's VALUES: %+v", v)
	}
	s, err := Parse("INSERT INTO t SELECT * FROM (VALUES (1), (2)) AS v")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	ast.Inspect(s, func(n ast.Node) bool {
		if v, ok := n.(*ast.Values); ok {
			found++
			if v.Lits != nil {
				t.Fatalf("a subquery's VALUES kept compact: %+v", v)
			}
		}
		return true
	})
	if found != 1 {
		t.Fatalf("%d VALUES lists", found)
	}
}

// FuzzCompactValues parses "INSERT INTO t VALUES " followed by the input
// with compact rows and without, and requires the same tree (compact rows
// expanded) and the same error.
func FuzzCompactValues(f *testing.F) {
	for _, s := range []string{"(1, 'a', NULL), (2, 'b', 3)", "(1), (2, 3)", "(1, DEFAULT), (2, 3)", "('x''y', 1e5) RETURNING a",
		"(1), (", "(1), x", "(1 /* c */, -- d\n 2)", "(1), (2) UNION SELECT 3", "('open", "(NULL, null, 0.5)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rows string) {
		defer func() { noCompact = false }()
		sql := "INSERT INTO t VALUES " + rows
		g, c, gerr, cerr, _ := parseBoth(sql)
		if fmt.Sprint(gerr) != fmt.Sprint(cerr) {
			t.Fatalf("%q\ngeneral error: %v\ncompact error: %v", sql, gerr, cerr)
		}
		if gerr == nil && !reflect.DeepEqual(g, c) {
			t.Fatalf("%q\ngeneral: %s\ncompact: %s", sql, ast.Dump(g), ast.Dump(c))
		}
	})
}

// TestCompactValuesAtDepthLimit checks that a NULL at the nesting limit
// fails compact as it fails in the general loop (which reads NULL through
// expr, a level deeper), and that a number there parses either way.
func TestCompactValuesAtDepthLimit(t *testing.T) {
	defer func() { noCompact = false }()
	for _, item := range []string{"NULL", "1"} {
		sql := strings.Repeat("INSERT INTO t WITH c AS (", maxDepth-1) + "INSERT INTO t VALUES (" + item + ")" + strings.Repeat(") SELECT 1", maxDepth-1)
		_, _, gerr, cerr, _ := parseBoth(sql)
		if fmt.Sprint(gerr) != fmt.Sprint(cerr) {
			t.Fatalf("%s at the limit:\ngeneral error: %v\ncompact error: %v", item, gerr, cerr)
		}
	}
}

// TestCompactValuesRoom checks that the room literalRows makes for the
// rows after the first is bounded by maxLitRows, not by the text after
// the list: a short list before a long comment, and a script of many
// one-row INSERTs each seeing the rest of the script after it.
func TestCompactValuesRoom(t *testing.T) {
	allocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	comment := "INSERT INTO t VALUES (1) /* " + strings.Repeat("x", 10<<20) + " */"
	if n := allocated(func() {
		if _, err := Parse(comment); err != nil {
			t.Fatal(err)
		}
	}); n > 8<<20 {
		t.Fatalf("a one-row list before a 10 MB comment allocated %d bytes", n)
	}
	var script strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&script, "INSERT INTO t VALUES (%d, 'abc');\n", i)
	}
	if n := allocated(func() {
		if _, err := ParseAll(script.String()); err != nil {
			t.Fatal(err)
		}
	}); n > 200<<20 {
		t.Fatalf("a script of 20 000 one-row INSERTs allocated %d bytes", n)
	}
}
