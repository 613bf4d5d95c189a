package ast_test

import (
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sql/token"
)

func TestFormatIdent(t *testing.T) {
	for in, want := range map[string]string{
		"a": "a", "_commit": "_commit", "x1$": "x1$", "naïve": "naïve",
		"commit": "commit", "mode": "mode", // non-reserved keywords stay bare
		"select": `"select"`, "group": `"group"`, "Mixed": `"Mixed"`,
		"1a": `"1a"`, "a b": `"a b"`, `q"uote`: `"q""uote"`, "": `""`,
	} {
		if got := ast.FormatIdent(in); got != want {
			t.Errorf("FormatIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func col(name string) *ast.ColumnRef { return &ast.ColumnRef{Name: name} }
func num(text string) *ast.NumberLit { return &ast.NumberLit{Text: text} }

// TestFormatBuiltTrees checks that trees built by hand, without ParenExpr
// nodes, print with the parentheses their shape needs.
func TestFormatBuiltTrees(t *testing.T) {
	bin := func(op token.Token, l, r ast.Expr) *ast.BinaryExpr { return &ast.BinaryExpr{Op: op, L: l, R: r} }
	sel := func(x string) ast.QueryBody {
		return &ast.SelectBlock{Items: []*ast.SelectItem{{Expr: col(x)}}}
	}
	for _, c := range []struct {
		n    ast.Node
		want string
	}{
		{bin(token.MUL, bin(token.PLUS, col("a"), col("b")), col("c")), "(a + b) * c"},
		{bin(token.MINUS, col("a"), bin(token.MINUS, col("b"), col("c"))), "a - (b - c)"},
		{bin(token.AND, bin(token.OR, col("a"), col("b")), &ast.UnaryExpr{Op: token.NOT, X: bin(token.OR, col("c"), col("d"))}), "(a OR b) AND NOT (c OR d)"},
		{&ast.UnaryExpr{Op: token.MINUS, X: &ast.UnaryExpr{Op: token.MINUS, X: num("1")}}, "- -1"},
		{&ast.UnaryExpr{Op: token.MINUS, X: bin(token.PLUS, num("1"), num("2"))}, "-(1 + 2)"},
		{&ast.CastExpr{X: bin(token.PLUS, col("a"), num("1")), Type: &ast.TypeName{Name: "INT64"}, Colons: true}, "(a + 1)::INT64"},
		{&ast.IsExpr{X: &ast.UnaryExpr{Op: token.NOT, X: col("a")}, Kind: ast.IsNull}, "(NOT a) IS NULL"},
		{&ast.StringLit{Value: "it's"}, "'it''s'"},
		{&ast.TypedLit{Type: &ast.TypeName{Name: "MY TYPE"}, Value: "x"}, `"MY TYPE" 'x'`},
		{&ast.SelectStmt{Body: &ast.SetOp{Op: ast.Union, Left: sel("a"), Right: &ast.SetOp{Op: ast.Union, Left: sel("b"), Right: sel("c")}}},
			"SELECT a UNION (SELECT b UNION SELECT c)"},
		{&ast.SelectStmt{Body: &ast.SetOp{Op: ast.Intersect, Left: &ast.SetOp{Op: ast.Except, All: true, Left: sel("a"), Right: sel("b")}, Right: sel("c")}},
			"(SELECT a EXCEPT ALL SELECT b) INTERSECT SELECT c"},
		{&ast.JoinExpr{Kind: ast.JoinCross, Left: &ast.TableRef{Name: &ast.ObjectName{Name: "a"}},
			Right: &ast.JoinExpr{Kind: ast.JoinCross, Left: &ast.TableRef{Name: &ast.ObjectName{Name: "b"}}, Right: &ast.TableRef{Name: &ast.ObjectName{Name: "c"}}}},
			"a CROSS JOIN (b CROSS JOIN c)"},
	} {
		if got := ast.Format(c.n); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
		if ast.String(c.n) != ast.Format(c.n) {
			t.Error("String and Format differ")
		}
	}
}

func mustParse(t *testing.T, sql string) ast.Stmt {
	t.Helper()
	s, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEqualIgnoresPositions(t *testing.T) {
	a := mustParse(t, "SELECT a+1 FROM t WHERE b")
	b := mustParse(t, "select   a + 1\nfrom T where (b)")
	c := mustParse(t, "SELECT a + 1 FROM t WHERE b")
	if ast.Equal(a, b) {
		t.Fatal("a parenthesised WHERE must differ (ParenExpr)")
	}
	if !ast.Equal(a, c) {
		t.Fatal("same statement at different positions must be equal")
	}
	if ast.Equal(a, mustParse(t, "SELECT a + 2 FROM t WHERE b")) {
		t.Fatal("different literal compared equal")
	}
	if ast.Equal(a, nil) || !ast.Equal(nil, nil) {
		t.Fatal("nil handling")
	}
}

func TestInspect(t *testing.T) {
	s := mustParse(t, "SELECT a, f(b) FROM t AS OF COMMIT (SELECT max(c) FROM u) WHERE d IN (SELECT e FROM v) ORDER BY g")
	var names []string
	ast.Inspect(s, func(n ast.Node) bool {
		if c, ok := n.(*ast.ColumnRef); ok {
			names = append(names, c.Name)
		}
		return true
	})
	if got := strings.Join(names, " "); got != "a b c d e g" {
		t.Fatalf("column refs in order: %q", got)
	}
	// Returning false skips subqueries.
	names = names[:0]
	ast.Inspect(s, func(n ast.Node) bool {
		if c, ok := n.(*ast.ColumnRef); ok {
			names = append(names, c.Name)
		}
		_, sub := n.(*ast.SelectStmt)
		return !sub || n == s
	})
	if got := strings.Join(names, " "); got != "a b d g" {
		t.Fatalf("outer column refs: %q", got)
	}
}

func TestInspectVisitsEveryStatementKind(t *testing.T) {
	script := `CREATE TABLE t (k INT64 DEFAULT 1 CODEC(ZSTD(1)), PRIMARY KEY (k), ATTRIBUTE GROUP g (k) VALID BY (k)) SHARDS 2;
ALTER TABLE t ADD COLUMN c INT64 TO ATTRIBUTE GROUP g, ADD ATTRIBUTE GROUP h (x INT64), DROP COLUMN c, RENAME c TO d, RENAME TO u,
  ALTER c SET DEFAULT 2, ALTER c DROP DEFAULT, ALTER c TYPE INT8, SET POLICY p;
DROP TABLE t; CREATE INDEX i ON t (k) POLICY p; CREATE POLICY p FOR retention (a = (1, 2));
CREATE TRANSFORMATION x INTO t ATTRIBUTE GROUP g AS SELECT 1; CREATE USER u; ALTER USER u PASSWORD 'p';
INSERT INTO t (k) VALUES (1) ATTRIBUTE GROUP g; UPDATE t AS a SET k = 1 WHERE k = 2; DELETE FROM t AS a WHERE k = 1;
EXPLAIN SHOW CREATE TABLE t; DESCRIBE t; SET a = 1;
SELECT CASE WHEN x IS DISTINCT FROM y THEN CAST(z AS INT8) END, DATE '2026-01-01', (1, 2), x BETWEEN 1 AND 2, s LIKE 'a' ESCAPE 'b', EXISTS (SELECT 1)
FROM (a JOIN b USING (k)) AS j, versions(v) AS OF COMMIT 1 AS w, (VALUES (1)) AS vv WITH_NO_AS
`
	script = strings.Replace(script, " WITH_NO_AS", "", 1)
	stmts, err := parser.ParseAll(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		n := 0
		ast.Inspect(s, func(ast.Node) bool { n++; return true })
		if n < 2 {
			t.Errorf("%s: Inspect visited %d nodes", ast.Format(s), n)
		}
	}
}

func TestDump(t *testing.T) {
	got := ast.Dump(mustParse(t, "SELECT -1 FROM t AS OF TIMESTAMP '2026-01-01'"))
	want := `SelectStmt@0-45{Body:SelectBlock@0-45{Items:[SelectItem@7-9{Expr:UnaryExpr@7-9{Op:- X:NumberLit@8-9{Text:"1"}}}] From:[TableRef@15-45{Name:ObjectName@15-16{Name:"t"} AsOf:AsOf@17-45{Kind:TIMESTAMP Expr:StringLit@33-45{Value:"2026-01-01"}}}]}}`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
