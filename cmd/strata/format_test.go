package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sample is a result with a number column, a text column, a NULL and a
// wide character.
func sample() *result {
	return &result{
		tag:     "SELECT 2",
		columns: []column{{"k", "INT64"}, {"name", "STRING"}},
		rows: [][]cell{
			{{text: "1"}, {text: "x"}},
			{{text: "20"}, {null: true}},
			{{text: "300"}, {text: "日本"}},
		},
	}
}

func TestFormats(t *testing.T) {
	cases := []struct {
		f    format
		r    *result
		want string
	}{
		{formatTable, sample(), "  k  | name \n" +
			"-----+------\n" +
			"   1 | x\n" +
			"  20 | NULL\n" +
			" 300 | 日本\n" +
			"(3 rows)\n\n"},
		{formatTable, &result{tag: "SELECT 1", columns: []column{{"a", "STRING"}, {"b", "BOOL"}}, rows: [][]cell{{{text: "tab\there"}, {text: "true"}}}},
			"     a     |  b   \n" +
				"-----------+------\n" +
				` tab\there | true` + "\n" +
				"(1 row)\n\n"},
		// Multi-line values: one line per line of text, "+" where a value
		// continues, as psql prints them.
		{formatTable, &result{tag: "SELECT 2", columns: []column{{"a", "STRING"}, {"b", "STRING"}}, rows: [][]cell{
			{{text: "one\ntwo"}, {text: "x"}},
			{{text: "y"}, {text: "long\nz"}},
		}},
			"  a  |  b   \n" +
				"-----+------\n" +
				" one+| x\n" +
				" two | \n" +
				" y   | long+\n" +
				"     | z\n" +
				"(2 rows)\n\n"},
		{formatTable, &result{tag: "SELECT 0", columns: []column{{"amount", "UINT256"}}}, " amount \n--------\n(0 rows)\n\n"},
		{formatTable, &result{tag: "INSERT 0 2"}, "INSERT 0 2\n"},
		// A write with RETURNING: its rows, then its tag, as psql prints them.
		{formatTable, &result{tag: "UPDATE 1", columns: []column{{"k", "INT64"}}, rows: [][]cell{{{text: "7"}}}},
			" k \n---\n 7\n(1 row)\n\nUPDATE 1\n"},
		{formatTable, &result{tag: "UPSERT 1", columns: []column{{"k", "INT64"}}, rows: [][]cell{{{text: "7"}}}},
			" k \n---\n 7\n(1 row)\n\nUPSERT 1\n"},
		{formatCSV, sample(), "k,name\n1,x\n20,\n300,日本\n"},
		{formatCSV, &result{tag: "SELECT 1", columns: []column{{"a,b", "STRING"}}, rows: [][]cell{{{text: `say "hi"`}}}}, "\"a,b\"\n\"say \"\"hi\"\"\"\n"},
		{formatCSV, &result{tag: "CREATE TABLE"}, ""},
		{formatTSV, sample(), "k\tname\n1\tx\n20\t\\N\n300\t日本\n"},
		{formatTSV, &result{tag: "SELECT 1", columns: []column{{"a", "STRING"}}, rows: [][]cell{{{text: "a\tb\nc\\"}}}}, "a\na\\tb\\nc\\\\\n"},
		{formatJSON, sample(), "[\n  {\"k\":\"1\",\"name\":\"x\"},\n  {\"k\":\"20\",\"name\":null},\n  {\"k\":\"300\",\"name\":\"日本\"}\n]\n"},
		{formatJSON, &result{tag: "SELECT 0", columns: []column{{"a", "STRING"}}}, "[]\n"},
		{formatJSON, &result{tag: "DELETE 1"}, ""},
		{formatJSONL, sample(), `{"ok":true,"tag":"SELECT 2","columns":["k","name"],"types":["INT64","STRING"],"rows":[["1","x"],["20",null],["300","日本"]]}` + "\n"},
		{formatJSONL, &result{tag: "INSERT 0 2"}, `{"ok":true,"tag":"INSERT 0 2","columns":[],"types":[],"rows":[]}` + "\n"},
	}
	for i, c := range cases {
		var b bytes.Buffer
		if err := writeResult(&b, c.f, c.r); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("case %d (%s):\n got %q\nwant %q", i, c.f, b.String(), c.want)
		}
	}
}

// TestJSONLParses checks every jsonl line is one JSON object with exactly the
// agreed fields, values as strings and NULL as null.
func TestJSONLParses(t *testing.T) {
	var b bytes.Buffer
	if err := writeJSONLine(&b, sample()); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONLError(&b, "column \"nope\" does not exist \"\\", 2, 8); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", b.String())
	}
	var ok map[string]any
	if err := json.Unmarshal(lines[0], &ok); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"ok": true, "tag": "SELECT 2",
		"columns": []any{"k", "name"}, "types": []any{"INT64", "STRING"},
		"rows": []any{[]any{"1", "x"}, []any{"20", nil}, []any{"300", "日本"}},
	}
	if !reflect.DeepEqual(ok, want) {
		t.Errorf("ok line = %v, want %v", ok, want)
	}
	var bad map[string]any
	if err := json.Unmarshal(lines[1], &bad); err != nil {
		t.Fatal(err)
	}
	wantBad := map[string]any{"ok": false, "error": "column \"nope\" does not exist \"\\", "line": 2.0, "column": 8.0}
	if !reflect.DeepEqual(bad, wantBad) {
		t.Errorf("error line = %v, want %v", bad, wantBad)
	}
}

// TestJSONString checks the hand-written string escaper against
// encoding/json on awkward strings.
func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "a\nb\rc\td", "\x00\x1f\x7f", "<&>", "日本 é", "bad\xffutf8\xc3", "\u2028"} {
		var b strings.Builder
		writeJSONString(&b, s)
		var back string
		if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
			t.Errorf("%q: %s does not parse: %v", s, b.String(), err)
			continue
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); back != want && !strings.Contains(s, "\xff") {
			t.Errorf("%q came back as %q", s, back)
		}
		if strings.Contains(s, "\xff") && back != "bad\ufffdutf8\ufffd" {
			t.Errorf("%q came back as %q", s, back)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"table", "CSV", "tsv", "json", "jsonl"} {
		if _, err := parseFormat(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := parseFormat("xml"); err == nil {
		t.Error("xml accepted")
	}
}

func TestFormatError(t *testing.T) {
	cases := []struct {
		sql  string
		e    stmtError
		want string
	}{
		// A multi-line statement with a multi-byte character before the
		// error: the caret counts characters, not bytes.
		{"SELECT 'é', name\n  FROM t WHERE näme = 1", stmtError{message: `column "näme" does not exist`, line: 2, column: 16},
			"ERROR: column \"näme\" does not exist\n" +
				"LINE 2:   FROM t WHERE näme = 1\n" +
				"                       ^\n"},
		// Wide characters take two cells; tabs are copied.
		{"SELECT '日本',\tnope", stmtError{message: "boom", line: 1, column: 14, detail: "d", hint: "h"},
			"ERROR: boom\n" +
				"LINE 1: SELECT '日本',\tnope\n" +
				"                      \t^\n" +
				"DETAIL: d\nHINT: h\n"},
		{"SELECT 1", stmtError{message: "no position"}, "ERROR: no position\n"},
		// A column at the end of input points past the last character.
		{"SELECT (", stmtError{message: "syntax error at end of input", line: 1, column: 9},
			"ERROR: syntax error at end of input\nLINE 1: SELECT (\n                ^\n"},
	}
	for i, c := range cases {
		if got := formatError(c.sql, &c.e); got != c.want {
			t.Errorf("case %d:\n got %q\nwant %q", i, got, c.want)
		}
	}
}

func TestLineCol(t *testing.T) {
	src := "SELECT 1;\nSELECT 'é'; SELECT 2"
	for _, c := range []struct{ off, line, col int }{{0, 1, 1}, {10, 2, 1}, {22, 2, 12}, {100, 2, 21}} {
		if l, col := lineCol(src, c.off); l != c.line || col != c.col {
			t.Errorf("lineCol(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
}
