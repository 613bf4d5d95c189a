package logictest

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestComplete(t *testing.T) {
	e := newFake().
		ok("CREATE TABLE t (k INT64)").
		rows("SELECT k, v FROM t", 2, "2|b", "1|write 1").
		rows("SELECT 1.5", 1, "1.5").
		rows("SELECT 'x'", 1, "x").
		fail("SELECT nosuch", "no such column")
	src := numbered(
		"# header comment, kept",
		"statement ok",
		"CREATE TABLE t (k INT64)",
		"",
		"query IT rowsort",
		"SELECT k, v FROM t",
		"----",
		"9 wrong",
		"# a comment inside the old block goes with it",
		"8 wrong",
		"# one after the block stays",
		"",
		"# a query without ---- gets one",
		"query R",
		"SELECT 1.5",
		"",
		"query T",
		"SELECT 'x'",
		"----",
		"",
		"query I",
		"SELECT nosuch",
		"----",
		"7",
	)
	want := numbered(
		"# header comment, kept",
		"statement ok",
		"CREATE TABLE t (k INT64)",
		"",
		"query IT rowsort",
		"SELECT k, v FROM t",
		"----",
		"1 write 1",
		"2 b",
		"# one after the block stays",
		"",
		"# a query without ---- gets one",
		"query R",
		"SELECT 1.5",
		"----",
		"1.500",
		"",
		"query T",
		"SELECT 'x'",
		"----",
		"x",
		"",
		"query I",
		"SELECT nosuch",
		"----",
		"7",
	)
	path := writeScript(t, "c.slt", src)
	got, rep, err := Complete(context.Background(), path, e.open, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Complete:\n%s\nwant\n%s\ndiff:\n%s", got, want, Diff(strings.Split(want, "\n"), strings.Split(string(got), "\n")))
	}
	if rep.Failed != 4 || rep.Passed != 1 {
		t.Errorf("the report compares with the old expected output: %s", rep.Summary())
	}
	// The completed script passes, except the query that cannot run.
	if err := os.WriteFile(path, got, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = Run(context.Background(), path, e.open, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantFailures(t, rep, 23, "query failed")
}

func TestCompleteClassic(t *testing.T) {
	vals := make([]string, 9)
	for k := range vals {
		vals[k] = string(rune('1' + k))
	}
	e := newFake().
		rows("SELECT a FROM t", 1, vals...).
		rows("SELECT a, b FROM t", 2, "1|x", "2|y").
		rows("SELECT 'caf\u00e9'", 1, "caf\u00e9")
	src := "hash-threshold 8\r\n\r\n" +
		"query I rowsort\r\nSELECT a FROM t\r\n----\r\n1\r\n\r\n" +
		"query IT nosort\r\nSELECT a, b FROM t\r\n\r\n" +
		"hash-threshold 0\r\n\r\n" +
		"query T\r\nSELECT 'caf\u00e9'\r\n----\r\ncafe\r\n"
	want := "hash-threshold 8\r\n\r\n" +
		"query I rowsort\r\nSELECT a FROM t\r\n----\r\n9 values hashing to " + hashValues(vals) + "\r\n\r\n" +
		"query IT nosort\r\nSELECT a, b FROM t\r\n----\r\n1\r\nx\r\n2\r\ny\r\n\r\n" +
		"hash-threshold 0\r\n\r\n" +
		"query T\r\nSELECT 'caf\u00e9'\r\n----\r\ncaf@@\r\n"
	got, _, err := Complete(context.Background(), writeScript(t, "c.test", src), e.open, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Complete:\n%q\nwant\n%q", got, want)
	}
}
