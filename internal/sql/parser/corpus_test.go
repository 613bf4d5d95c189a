package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
)

// sltRecord is one statement of a sqllogictest script.
type sltRecord struct {
	file string
	line int
	kind string // "ok", "error" or "query"
	sql  string
}

// splitSLT extracts the statements of a .slt script: records are separated
// by blank lines, "#" lines are comments, "statement ok|error …" and
// "query …" records carry SQL on the following lines (a query's SQL ends at
// "----"), and "restart" is a record of its own.
func splitSLT(file, text string) []sltRecord {
	var out []sltRecord
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		head := strings.TrimSpace(lines[i])
		var kind string
		switch {
		case strings.HasPrefix(head, "statement ok"):
			kind = "ok"
		case strings.HasPrefix(head, "statement error"):
			kind = "error"
		case strings.HasPrefix(head, "query"):
			kind = "query"
		default:
			continue // comments, blank lines, restart, expected rows
		}
		start := i + 1
		var sql []string
		for i++; i < len(lines); i++ {
			l := lines[i]
			if strings.TrimSpace(l) == "" || (kind == "query" && strings.TrimSpace(l) == "----") {
				break
			}
			sql = append(sql, l)
		}
		out = append(out, sltRecord{file: file, line: start + 1, kind: kind, sql: strings.Join(sql, "\n")})
		if kind == "query" {
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				i++
			}
		}
	}
	return out
}

// corpus returns every statement of the conformance scripts and of the
// project's own test/sql scripts.
func corpus(t testing.TB) []sltRecord {
	var files []string
	for _, dir := range []string{"../../../../shared/conformance", "../../../test/sql"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.slt"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no .slt corpus found")
	}
	var recs []sltRecord
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, splitSLT(filepath.Base(f), string(b))...)
	}
	return recs
}

// TestCorpusRoundTrip parses every corpus statement that must succeed,
// prints it, parses the print and checks the two trees are equal
// (ast invariant 2). Statements expected to fail may fail to parse; the
// ones that do are logged, and the two the conformance suite expects to be
// syntax errors must fail with the expected messages.
func TestCorpusRoundTrip(t *testing.T) {
	recs := corpus(t)
	n := 0
	for _, r := range recs {
		stmts, err := ParseAll(r.sql)
		if err != nil {
			if r.kind == "error" {
				t.Logf("%s:%d: statement error fails to parse: %v", r.file, r.line, err)
				continue
			}
			e, _ := sqlerr.As(err)
			t.Errorf("%s:%d: %v\n%s", r.file, r.line, err, e.Format(r.sql))
			continue
		}
		for _, s := range stmts {
			n++
			checkRoundTrip(t, r.file, r.line, s)
		}
	}
	if n < 100 {
		t.Fatalf("only %d statements round-tripped; the splitter is broken", n)
	}
	t.Logf("%d statements parsed and round-tripped", n)
}

func checkRoundTrip(t *testing.T, file string, line int, s ast.Stmt) {
	t.Helper()
	out := ast.Format(s)
	again, err := Parse(out)
	if err != nil {
		t.Errorf("%s:%d: printed form does not parse: %v\n%s", file, line, err, out)
		return
	}
	if !ast.Equal(s, again) {
		t.Errorf("%s:%d: round trip changed the tree\nprinted: %s\nbefore: %s\nafter:  %s", file, line, out, ast.Dump(s), ast.Dump(again))
	}
	if out2 := ast.Format(again); out2 != out {
		t.Errorf("%s:%d: printing is not stable:\n%s\n%s", file, line, out, out2)
	}
	// A query laid out as a view's definition means the same.
	if sel, ok := s.(*ast.SelectStmt); ok {
		view := ast.FormatView(sel)
		again, err := Parse(view)
		if err != nil {
			t.Errorf("%s:%d: view layout does not parse: %v\n%s", file, line, err, view)
		} else if !ast.Equal(s, again) {
			t.Errorf("%s:%d: view layout changed the tree\n%s", file, line, view)
		}
	}
}

func TestCorpusSyntaxErrors(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{"SELEC 1;", `syntax error at or near "SELEC" (line 1, column 1)`},
		{"SELECT 'unterminated FROM st;", `unterminated quoted string at or near "'unterminated FROM st;" (line 1, column 8)`},
	} {
		_, err := ParseAll(c.sql)
		if err == nil {
			t.Fatalf("%q parsed", c.sql)
		}
		e, ok := sqlerr.As(err)
		if !ok || e.Code != sqlerr.CodeSyntax {
			t.Fatalf("%q: %T %v is not a 42601 sqlerr.Error", c.sql, err, err)
		}
		if err.Error() != c.want {
			t.Errorf("%q:\n got  %s\n want %s", c.sql, err, c.want)
		}
	}
}
