package sqlerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestLineCol(t *testing.T) {
	cases := []struct {
		sql       string
		pos       int
		line, col int
	}{
		{"SELEC 1;", 0, 1, 1},
		{"SELECT 1;", 7, 1, 8},
		{"SELECT\n  x", 9, 2, 3},
		{"SELECT 'naïve', x", 16, 1, 16}, // ï is two bytes, one column
		{"a\nb\n", 4, 3, 1},
		{"abc", 99, 1, 4},
		{"abc", -5, 1, 1},
		{"", 0, 1, 1},
	}
	for _, c := range cases {
		line, col := LineCol(c.sql, c.pos)
		if line != c.line || col != c.col {
			t.Errorf("LineCol(%q, %d) = %d:%d, want %d:%d", c.sql, c.pos, line, col, c.line, c.col)
		}
	}
}

func TestSyntaxMessages(t *testing.T) {
	e := Syntax(0, "SELEC", "")
	if e.Code != CodeSyntax || e.Error() != `syntax error at or near "SELEC"` {
		t.Fatalf("got %q %q", e.Code, e.Error())
	}
	e = e.WithSQL("SELEC 1;")
	if got := e.Error(); got != `syntax error at or near "SELEC" (line 1, column 1)` {
		t.Fatalf("with SQL: %q", got)
	}
	if got := Syntax(9, "", "").WithSQL("SELECT 1 +").Error(); got != "syntax error at end of input (line 1, column 10)" {
		t.Fatalf("end of input: %q", got)
	}
}

func TestFormat(t *testing.T) {
	sql := "SELECT a,\n\tb FROM t WHERE ,"
	e := Syntax(strings.LastIndex(sql, ","), ",", "").WithDetail(`expected expression, found ","`).WithHint("remove it")
	want := `ERROR: syntax error at or near "," (line 2, column 17)
LINE 2:  b FROM t WHERE ,
                        ^
DETAIL: expected expression, found ","
HINT: remove it
`
	if got := e.Format(sql); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := New(CodeInternal, "boom").Format(""); got != "ERROR: boom\n" {
		t.Fatalf("no position: %q", got)
	}
}

func TestFormatLongLine(t *testing.T) {
	sql := "SELECT " + strings.Repeat("x, ", 100) + "FROM"
	e := Syntax(len(sql)-4, "FROM", "").WithSQL(sql)
	out := e.Format("")
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[1], "LINE 1: ...") || len([]rune(lines[1])) > 100 {
		t.Fatalf("long line not cut: %q", lines[1])
	}
	caret := strings.Index(lines[2], "^")
	if lines[1][caret:caret+4] != "FROM" {
		t.Fatalf("caret at %d does not point at FROM:\n%s", caret, out)
	}
}

func TestWithCopies(t *testing.T) {
	e := New(CodeUndefinedColumn, "column %q does not exist", "a")
	f := e.WithPos(3).WithSQL("abcdef").WithHint("h")
	if e.Pos != -1 || e.Hint != "" {
		t.Fatal("With… mutated the receiver")
	}
	if f.CharPos() != 4 {
		t.Fatalf("CharPos = %d", f.CharPos())
	}
	wrapped := fmt.Errorf("plan: %w", f)
	got, ok := As(wrapped)
	if !ok || got != f {
		t.Fatal("As did not unwrap")
	}
	if _, ok := As(errors.New("x")); ok {
		t.Fatal("As matched a plain error")
	}
	if CodeOf(wrapped) != CodeUndefinedColumn || CodeOf(errors.New("x")) != CodeInternal || CodeOf(nil) != "" {
		t.Fatal("CodeOf")
	}
}

func TestConstructors(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		code string
		msg  string
	}{
		{UndefinedColumn(1, "a"), CodeUndefinedColumn, `column "a" does not exist`},
		{UndefinedTable(1, "t"), CodeUndefinedTable, `relation "t" does not exist`},
		{DuplicateTable(1, "t"), CodeDuplicateTable, `relation "t" already exists`},
		{NotNull(1, "k"), CodeNotNull, `null value in column "k" violates not-null constraint`},
		{OutOfRange(1, "%d out of range", 300), CodeNumericOutOfRange, "300 out of range"},
		{InvalidText(1, "bad"), CodeInvalidText, "bad"},
		{NotSupported(1, "no"), CodeFeatureNotSupported, "no"},
		{Internal(errors.New("disk")), CodeInternal, "internal error: disk"},
	} {
		if c.e.Code != c.code || c.e.Message != c.msg {
			t.Errorf("got %s %q, want %s %q", c.e.Code, c.e.Message, c.code, c.msg)
		}
	}
}
