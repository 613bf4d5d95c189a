package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chzyer/readline"
)

// fakeEngine answers from a table of statements and records what it ran.
// A statement it does not know fails with a positioned error at its first
// character of "nope", like an unknown column.
type fakeEngine struct {
	answers map[string]*result
	ran     []string
}

func (f *fakeEngine) run(_ context.Context, sql string) (*result, *stmtError) {
	f.ran = append(f.ran, sql)
	if r, ok := f.answers[sql]; ok {
		return r, nil
	}
	if i := strings.Index(sql, "nope"); i >= 0 {
		head := sql[:i]
		line := strings.Count(head, "\n") + 1
		col := len([]rune(head[strings.LastIndexByte(head, '\n')+1:])) + 1
		return nil, &stmtError{message: `column "nope" does not exist`, line: line, column: col}
	}
	return &result{tag: "OK"}, nil
}

func newFake() *fakeEngine {
	return &fakeEngine{answers: map[string]*result{
		"SELECT 1":                        {tag: "SELECT 1", columns: []column{{"x", "INT64"}}, rows: [][]cell{{{text: "1"}}}},
		"SHOW TABLES":                     {tag: "SELECT 1", columns: []column{{"name", "STRING"}}, rows: [][]cell{{{text: "t"}}}},
		"DESCRIBE t":                      {tag: "SELECT 1", columns: []column{{"column", "STRING"}, {"type", "STRING"}}, rows: [][]cell{{{text: "k"}, {text: "INT64"}}}},
		"INSERT INTO t VALUES (1, 'a;b')": {tag: "INSERT 0 1"},
	}}
}

// TestScriptGoesOnAfterError runs several statements with an error in the
// middle: the later statements still run, and the failure is counted.
func TestScriptGoesOnAfterError(t *testing.T) {
	eng := newFake()
	var out, errOut bytes.Buffer
	sh := newShell(eng, &out, &errOut, formatJSONL)
	src := "INSERT INTO t VALUES (1, 'a;b'); -- a comment; still a comment\nSELECT\n  nope FROM t;\nSELECT 1"
	if err := sh.script(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	if sh.failed != 1 {
		t.Errorf("failed = %d, want 1", sh.failed)
	}
	wantRan := []string{"INSERT INTO t VALUES (1, 'a;b')", "SELECT\n  nope FROM t", "SELECT 1"}
	if strings.Join(eng.ran, "|") != strings.Join(wantRan, "|") {
		t.Errorf("ran %q, want %q", eng.ran, wantRan)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 jsonl lines, got %q", out.String())
	}
	type line struct {
		OK      bool       `json:"ok"`
		Tag     string     `json:"tag"`
		Columns []string   `json:"columns"`
		Types   []string   `json:"types"`
		Rows    [][]string `json:"rows"`
		Error   string     `json:"error"`
		Line    int        `json:"line"`
		Column  int        `json:"column"`
	}
	var got [3]line
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &got[i]); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
	}
	if !got[0].OK || got[0].Tag != "INSERT 0 1" || got[0].Columns == nil || len(got[0].Columns) != 0 {
		t.Errorf("line 0 = %+v", got[0])
	}
	// The error sits on line 3, column 3 of the whole input.
	if got[1].OK || got[1].Error != `column "nope" does not exist` || got[1].Line != 3 || got[1].Column != 3 {
		t.Errorf("line 1 = %+v", got[1])
	}
	if !got[2].OK || got[2].Tag != "SELECT 1" || len(got[2].Rows) != 1 || got[2].Rows[0][0] != "1" {
		t.Errorf("line 2 = %+v", got[2])
	}
	if errOut.Len() != 0 {
		t.Errorf("jsonl wrote to stderr: %q", errOut.String())
	}
}

// TestJSONLErrorColumnOnFirstLine checks that a statement starting mid-line
// shifts the column of an error on its first line.
func TestJSONLErrorColumnOnFirstLine(t *testing.T) {
	var out bytes.Buffer
	sh := newShell(newFake(), &out, io.Discard, formatJSONL)
	if err := sh.script(context.Background(), "SELECT 1; SELECT nope"); err != nil {
		t.Fatal(err)
	}
	want := `{"ok":false,"error":"column \"nope\" does not exist","line":1,"column":18}`
	if got := strings.Split(out.String(), "\n")[1]; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestTableErrors checks the human format: results on stdout, errors with
// LINE and caret (relative to the statement) on stderr.
func TestTableErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	sh := newShell(newFake(), &out, &errOut, formatTable)
	if err := sh.script(context.Background(), "SELECT 1;\nSELECT 'é',\n  nope;"); err != nil {
		t.Fatal(err)
	}
	if want := " x \n---\n 1\n(1 row)\n\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	want := "ERROR: column \"nope\" does not exist\nLINE 2:   nope\n          ^\n"
	if errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

// TestScriptMetaCommands checks backslash lines between the statements of a
// script: they run in order, \q ends the script, and a backslash inside a
// statement is left to the SQL.
func TestScriptMetaCommands(t *testing.T) {
	eng := newFake()
	var out bytes.Buffer
	sh := newShell(eng, &out, io.Discard, formatJSONL)
	src := "SELECT 1;\n\\dt\n  \\d t\nSELECT 'a\n\\dt';\n\n\nSELECT nope;\n\\q\nSELECT 1;"
	if err := sh.script(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	want := []string{"SELECT 1", "SHOW TABLES", "DESCRIBE t", "SELECT 'a\n\\dt'", "SELECT nope"}
	if strings.Join(eng.ran, "|") != strings.Join(want, "|") {
		t.Errorf("ran %q, want %q", eng.ran, want)
	}
	// Line numbers still count from the start of the input.
	if !strings.Contains(out.String(), `"line":8,"column":8}`) {
		t.Errorf("output %s", out.String())
	}
}

func TestMetaCommands(t *testing.T) {
	eng := newFake()
	var out, errOut bytes.Buffer
	sh := newShell(eng, &out, &errOut, formatTable)
	ctx := context.Background()
	for _, m := range []string{`\dt`, `\d t`, `\d`} {
		if err := sh.meta(ctx, m); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	if want := "SHOW TABLES|DESCRIBE t|SHOW TABLES"; strings.Join(eng.ran, "|") != want {
		t.Errorf("ran %q, want %s", eng.ran, want)
	}
	if !strings.Contains(out.String(), " column | type  \n--------+-------\n k      | INT64\n(1 row)") {
		t.Errorf("\\d t printed %q", out.String())
	}
	out.Reset()
	if err := sh.meta(ctx, `\?`); err != nil || !strings.Contains(out.String(), `\timing`) {
		t.Errorf(`\? printed %q, %v`, out.String(), err)
	}
	if err := sh.meta(ctx, `\timing`); err != nil || !sh.timing {
		t.Fatalf("timing not on: %v", err)
	}
	out.Reset()
	if err := sh.exec(ctx, "SELECT 1", 1, 1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(1 row)\n\nTime: ") || !strings.HasSuffix(out.String(), " ms\n") {
		t.Errorf("timing output %q", out.String())
	}
	if err := sh.meta(ctx, `\timing off`); err != nil || sh.timing {
		t.Errorf("timing still on: %v", err)
	}
	if err := sh.meta(ctx, `\q`); err != errQuit {
		t.Errorf(`\q returned %v`, err)
	}
	errOut.Reset()
	if err := sh.meta(ctx, `\frob`); err != nil || !strings.Contains(errOut.String(), `invalid command \frob`) {
		t.Errorf(`\frob: %v, %q`, err, errOut.String())
	}
	if sh.failed != 0 {
		t.Errorf("meta-commands counted %d failures", sh.failed)
	}
}

func TestComplete(t *testing.T) {
	for s, want := range map[string]bool{
		"SELECT 1;":            true,
		"SELECT 1;  \n":        true,
		"SELECT 1":             false,
		"SELECT 'a;":           false,
		"SELECT 'a;';":         true,
		`SELECT "x;`:           false,
		"SELECT 1 /* ; */":     false,
		"SELECT 1 /* ;":        false,
		"SELECT 1 -- ;":        false,
		"SELECT 1;\nSELECT 2;": true,
		"SELECT 1;\nSELECT 2":  false,
		"SELECT E'it\\';":      false,
		"SELECT E'it\\'s';":    true,
	} {
		if got := complete(s); got != want {
			t.Errorf("complete(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestTakeTerminated(t *testing.T) {
	for _, c := range []struct{ buf, done, rest string }{
		{"SELECT 1;", "SELECT 1;", ""},
		{"SELECT 1", "", "SELECT 1"},
		{"SELECT 1; SELECT", "SELECT 1;", " SELECT"},
		{"SELECT 1 ; SELECT 2; SELECT 'a;", "SELECT 1 ; SELECT 2;", " SELECT 'a;"},
		{"SELECT 1; -- done", "SELECT 1;", " -- done"},
		{"SELECT 1; /* open", "SELECT 1;", " /* open"},
	} {
		done, rest := takeTerminated(c.buf)
		if done != c.done || rest != c.rest {
			t.Errorf("takeTerminated(%q) = %q, %q; want %q, %q", c.buf, done, rest, c.done, c.rest)
		}
	}
	for s, want := range map[string]bool{"": true, "  \n": true, " -- done": true, "/* c */": true, " /* open": false, "SELECT": false, "'a": false} {
		if got := blank(s); got != want {
			t.Errorf("blank(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestInteractive drives the readline loop with in-memory input: a
// statement over three lines, a meta-command, a statement with an error,
// and \q, which ends the loop before the last line.
func TestInteractive(t *testing.T) {
	eng := newFake()
	// readline's own goroutines may still write after the loop ends.
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	sh := newShell(eng, out, errOut, formatTable)
	// Ctrl-C (\x03) drops the statement being typed.
	input := "INSERT INTO t\n  VALUES (1, 'a;b')\n  ;\n\\dt\nDROP\nTABLE\x03SELECT nope; -- a comment\n\\q\nSELECT 1;\n"
	hist := filepath.Join(t.TempDir(), "history")
	cfg := &readline.Config{
		HistoryFile:         hist,
		Stdin:               io.NopCloser(strings.NewReader(input)),
		Stdout:              out,
		Stderr:              errOut,
		FuncIsTerminal:      func() bool { return true },
		FuncMakeRaw:         func() error { return nil },
		FuncExitRaw:         func() error { return nil },
		FuncGetWidth:        func() int { return 80 },
		FuncOnWidthChanged:  func(func()) {},
		ForceUseInteractive: true,
	}
	done := make(chan error, 1)
	go func() { done <- sh.interactive(context.Background(), cfg) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("interactive loop did not end")
	}
	want := []string{"INSERT INTO t\n  VALUES (1, 'a;b')", "SHOW TABLES", "SELECT nope"}
	if strings.Join(eng.ran, "|") != strings.Join(want, "|") {
		t.Errorf("ran %q, want %q", eng.ran, want)
	}
	if !strings.HasPrefix(out.String(), "strata "+version+"\n") || !strings.Contains(out.String(), promptMore) || !strings.Contains(out.String(), "\nOK\n") {
		t.Errorf("output lacks the continuation prompt or the tag: %q", out.String())
	}
	if !strings.Contains(errOut.String(), "ERROR: column \"nope\" does not exist\nLINE 1: SELECT nope\n               ^\n") {
		t.Errorf("stderr %q", errOut.String())
	}
	if sh.failed != 1 {
		t.Errorf("failed = %d", sh.failed)
	}
	// One history line per statement or meta-command.
	h, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	if want := "INSERT INTO t VALUES (1, 'a;b') ;\n\\dt\nSELECT nope;\n\\q\n"; string(h) != want {
		t.Errorf("history %q, want %q", h, want)
	}
}

// TestNoticesPrinted: a statement's warnings go to the error stream, its
// result to the output, so machine-read output stays clean.
func TestNoticesPrinted(t *testing.T) {
	eng := newFake()
	eng.answers["SET TIME ZONE 'Europe/Berlin'"] = &result{tag: "SET",
		notices: []string{"WARNING: TimeZone is set to Europe/Berlin\nHINT: cast\n"}}
	var out, errOut bytes.Buffer
	sh := newShell(eng, &out, &errOut, formatJSONL)
	if err := sh.script(context.Background(), "SET TIME ZONE 'Europe/Berlin'"); err != nil {
		t.Fatal(err)
	}
	if errOut.String() != "WARNING: TimeZone is set to Europe/Berlin\nHINT: cast\n" {
		t.Errorf("error stream %q", errOut.String())
	}
	if strings.Contains(out.String(), "WARNING") || !strings.Contains(out.String(), "SET") {
		t.Errorf("output %q", out.String())
	}
}
