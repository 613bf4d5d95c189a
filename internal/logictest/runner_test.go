package logictest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// numbered joins lines into a script; a test reads line numbers off the
// slice index (index k is line k+1).
func numbered(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func TestRunConformancePasses(t *testing.T) {
	e := newFake().
		ok("CREATE TABLE b (k INT64 NOT NULL, v STRING, PRIMARY KEY (k));").
		ok("INSERT INTO b VALUES (1, 'write 1'), (2, '');").
		fail("SELECT * FROM b AS OF COMMIT 42;", "commit 42 is after the newest commit, 3").
		fail("SELEC 1;", `syntax error at line 1, column 1: "SELEC"`).
		rows("SELECT k, v FROM b ORDER BY k", 2, "1|write 1", "2|").
		rows("SELECT v, k FROM b", 2, "write 1|1", "NULL|2").
		rows("SELECT k FROM b", 1, "2", "10", "1").
		rows("SELECT f, ok FROM n", 2, "1.5|true", "-0.25|f").
		rows("SELECT count(*) FROM b", 1, "2")
	script := numbered(
		"# comment",
		"statement ok",
		"CREATE TABLE b (k INT64 NOT NULL, v STRING, PRIMARY KEY (k));",
		"",
		"statement ok",
		"INSERT INTO b VALUES (1, 'write 1'), (2, '');",
		"",
		"statement error (newest|latest).*3|3.*(newest|latest)",
		"SELECT * FROM b AS OF COMMIT 42;",
		"",
		"statement error",
		"SELEC 1;",
		"",
		"query IT",
		"SELECT k, v FROM b ORDER BY k",
		"----",
		"1 write 1",
		"2 (empty)",
		"",
		"# rowsort sorts rows as whole lines, on both sides",
		"query TI rowsort",
		"SELECT v, k FROM b",
		"----",
		"write 1 1",
		"NULL 2",
		"",
		"query I valuesort",
		"SELECT k FROM b",
		"----",
		"1",
		"10",
		"2",
		"",
		"query RB",
		"SELECT f, ok FROM n",
		"----",
		"1.500 true",
		"-0.250 false",
		"",
		"restart",
		"",
		"query I",
		"SELECT count(*) FROM b",
		"----",
		"2",
	)
	rep := runFake(t, e, "pass.slt", script, Options{})
	wantFailures(t, rep)
	if rep.Records != 10 || rep.Passed != 10 || rep.Dialect != Conformance {
		t.Errorf("report %+v, want 10 records, all passed, conformance", rep)
	}
	if !rep.OK() || rep.Seconds <= 0 {
		t.Errorf("report not OK or not timed: %+v", rep)
	}
	// restart closes, then opens the same directory again; the end closes too.
	if len(e.opens) != 2 || e.opens[0] != e.opens[1] || e.closes != 2 {
		t.Errorf("opens %v, closes %d; want the same directory twice and two closes", e.opens, e.closes)
	}
	if got, want := strings.Join(e.events, ", "), "open "+e.opens[0]+", close, open "+e.opens[0]+", close"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	// The count after the restart was asked of the reopened database.
	if last := e.sent[len(e.sent)-1]; last != "SELECT count(*) FROM b" {
		t.Errorf("last statement %q", last)
	}
}

func TestRunConformanceFailures(t *testing.T) {
	e := newFake().
		ok("CREATE TABLE t (k INT64)").
		rows("SELECT k FROM t ORDER BY k", 1, "1", "2", "3").
		rows("SELECT 1, 2", 2, "1|2").
		fail("SELECT nosuch FROM t", `column "nosuch" does not exist`).
		ok("DELETE FROM ev").
		fail("UPDATE ev SET n = 2", "cannot update t: it is a MODE UPSERT table").
		rows("SELECT 1", 1, "1")
	script := numbered(
		"statement ok", // 1
		"CREATE TABLE t (k INT64)",
		"",
		"# a wrong value", // 4
		"query I",
		"SELECT k FROM t ORDER BY k",
		"----",
		"1",
		"5",
		"3",
		"", // 11
		"# a wrong row count",
		"query I",
		"SELECT k FROM t ORDER BY k",
		"----",
		"1",
		"2",
		"", // 18
		"# a wrong order under nosort",
		"query I nosort",
		"SELECT k FROM t ORDER BY k",
		"----",
		"3",
		"2",
		"1",
		"", // 26
		"# a wrong column count",
		"query I",
		"SELECT 1, 2",
		"----",
		"1 2",
		"", // 32
		"# an error where ok was expected",
		"statement ok",
		"SELECT nosuch FROM t",
		"", // 36
		"# a query that fails",
		"query I",
		"SELECT nosuch FROM t",
		"----",
		"1",
		"", // 42
		"# ok where an error was expected",
		"statement error append",
		"DELETE FROM ev",
		"", // 46
		"# an error that does not match the regex",
		"statement error append",
		"UPDATE ev SET n = 2",
		"", // 50
		"# and the run goes on after failures",
		"query I",
		"SELECT 1",
		"----",
		"1",
	)
	rep := runFake(t, e, "fail.slt", script, Options{})
	wantFailures(t, rep,
		5, "wrong result",
		13, "wrong number of rows: expected 2, got 3",
		20, "wrong result",
		28, "expected 1 columns",
		34, `expected success, got error: column "nosuch" does not exist`,
		38, "query failed",
		44, `expected an error matching "append", statement succeeded`,
		48, `does not match "append"`,
	)
	if rep.Passed != 2 || rep.OK() {
		t.Errorf("passed %d (want the first statement and the last query), OK %v", rep.Passed, rep.OK())
	}
	// The wrong value's report shows the SQL and a diff.
	s := rep.Failures[0].String()
	for _, frag := range []string{"fail.slt:5: wrong result", "    SELECT k FROM t ORDER BY k", "- 5", "+ 2", "    1\n"} {
		if !strings.Contains(s, frag) {
			t.Errorf("failure text lacks %q:\n%s", frag, s)
		}
	}
}

func TestRunClassic(t *testing.T) {
	select1 := "358 364 376 382 398 402 410 426 432 440 458 468 478 486 490 1000 1050 1120 " +
		"1180 1240 1290 1300 1390 1430 1450 1510 1580 1600 1670 1700"
	var shuffled []string
	vals := strings.Fields(select1)
	for k := range vals { // reversed, to prove valuesort sorts before hashing
		shuffled = append(shuffled, vals[len(vals)-1-k])
	}
	e := newFake().
		// the compatibility rewrite: the fake knows only the rewritten text
		ok("CREATE TABLE t1(a INTEGER, b INTEGER) MODE APPEND").
		ok("CREATE TABLE t2(a INTEGER PRIMARY KEY, b FLOAT)").
		rows("SELECT x FROM t1 ORDER BY 1", 1, vals...).
		rows("SELECT x FROM t1", 1, shuffled...).
		rows("SELECT a, b FROM t1", 2, "2|b", "10|a", "2|a").
		rows("SELECT a, b FROM t1 ORDER BY a", 2, "1|x", "2|y").
		rows("SELECT 'na\u00efve', 7.9", 2, "na\u00efve|7.9").
		rows("SELECT 1 + 1", 1, "2").
		rows("SELECT 1 + 2", 1, "3").
		rows("SELECT 'skip'", 1, "skip")
	script := numbered(
		"hash-threshold 8", // 1
		"",
		"statement ok", // 3
		"CREATE TABLE t1(a INTEGER, b INTEGER)",
		"",
		"statement ok", // 6
		"CREATE TABLE t2(a INTEGER PRIMARY KEY, b FLOAT)",
		"",
		"query I nosort", // 9
		"SELECT x FROM t1 ORDER BY 1",
		"----",
		"30 values hashing to 3c13dee48d9356ae19af2515e05e6b54",
		"",
		"# valuesort sorts as text before hashing: printf the values | LC_ALL=C sort | md5sum",
		"query I valuesort", // 15
		"SELECT x FROM t1",
		"----",
		"30 values hashing to 55d5be1a73595fe92f388d9940e7fabe",
		"",
		"# rowsort: column by column, strcmp; one value per line", // 20
		"query IT rowsort",
		"SELECT a, b FROM t1",
		"----",
		"10",
		"a",
		"2",
		"a",
		"2",
		"b",
		"",
		"# a row per line is accepted when the line count says so", // 31
		"query IT",
		"SELECT a, b FROM t1 ORDER BY a",
		"----",
		"1 x",
		"2 y",
		"",
		"query TI", // 38
		"SELECT 'na\u00efve', 7.9",
		"----",
		"na@@ve",
		"7",
		"",
		"skipif postgresql", // 44
		"query I",
		"SELECT 'not sent'",
		"----",
		"1",
		"",
		"onlyif mysql", // 50
		"statement ok",
		"DROP TABLE nowhere",
		"",
		"onlyif postgresql", // 54
		"skipif mysql",
		"query I nosort label-1",
		"SELECT 1 + 1",
		"----",
		"2",
		"",
		"query I nosort label-1", // 61
		"SELECT 1 + 1",
		"----",
		"2",
		"",
		"query I nosort label-1", // 66: same label, different result
		"SELECT 1 + 2",
		"----",
		"3",
		"",
		"onlyif mysql", // 71
		"halt",
		"",
		"query I", // 74: a wrong hash
		"SELECT x FROM t1 ORDER BY 1",
		"----",
		"30 values hashing to 00000000000000000000000000000000",
		"",
		"onlyif sqlite", // 79
		"halt",
		"",
		"skipif postgresql",
		"halt",
		"",
		"query T", // 85
		"SELECT 'skip'",
		"----",
		"skip",
		"",
		"onlyif postgresql", // 90
		"halt",
		"",
		"query T",
		"SELECT 'never sent'",
		"----",
		"x",
	)
	rep := runFake(t, e, "classic.test", script, Options{})
	wantFailures(t, rep,
		66, "labeled result [label-1] does not agree with the result at line 56",
		74, "wrong result hash",
	)
	if rep.Dialect != Classic || !rep.Halted {
		t.Errorf("dialect %v halted %v", rep.Dialect, rep.Halted)
	}
	if rep.Records != 15 || rep.Passed != 10 || rep.Skipped != 2 || rep.NotRun != 1 {
		t.Errorf("report %+v: want 15 records, 10 passed, 2 failed, 2 skipped, 1 not run", rep)
	}
	for _, s := range e.sent {
		if s == "SELECT 'not sent'" || s == "DROP TABLE nowhere" || s == "SELECT 'never sent'" {
			t.Errorf("a skipped record was sent: %q", s)
		}
	}
	// The hash failure shows both hash lines and the values got.
	s := rep.Failures[1].String()
	for _, frag := range []string{"- 30 values hashing to 00000000000000000000000000000000",
		"+ 30 values hashing to 3c13dee48d9356ae19af2515e05e6b54", "+ 358"} {
		if !strings.Contains(s, frag) {
			t.Errorf("failure text lacks %q:\n%s", frag, s)
		}
	}
}

func TestRunClassicValueMismatch(t *testing.T) {
	e := newFake().rows("SELECT a FROM t", 1, "1", "2")
	rep := runFake(t, e, "v.test", numbered(
		"query I nosort",
		"SELECT a FROM t",
		"----",
		"1",
		"3",
	), Options{})
	wantFailures(t, rep, 1, "wrong result")
	f := rep.Failures[0]
	if strings.Join(f.Expected, ",") != "1,3" || strings.Join(f.Got, ",") != "1,2" {
		t.Errorf("expected %v got %v", f.Expected, f.Got)
	}
}

func TestRunSkippedLabel(t *testing.T) {
	// A skipped labelled query still takes part in its label through its
	// expected text (upstream's verify mode).
	e := newFake().rows("SELECT 5", 1, "5")
	rep := runFake(t, e, "l.test", numbered(
		"skipif postgresql",
		"query I nosort label-x",
		"SELECT 4",
		"----",
		"4",
		"",
		"query I nosort label-x",
		"SELECT 5",
		"----",
		"5",
	), Options{})
	wantFailures(t, rep, 7, "labeled result [label-x]")
	if rep.Skipped != 1 {
		t.Errorf("skipped %d, want 1", rep.Skipped)
	}
}

func TestRunTimeout(t *testing.T) {
	e := newFake()
	e.answers["SELECT pg_sleep(10)"] = answer{hang: true}
	e.rows("SELECT 1", 1, "1")
	rep := runFake(t, e, "slow.slt", numbered(
		"# timing out must not count as the expected error",
		"statement error",
		"SELECT pg_sleep(10)",
		"",
		"query I",
		"SELECT 1",
		"----",
		"1",
	), Options{QueryTimeout: 20 * time.Millisecond})
	wantFailures(t, rep, 2, "timed out")
	if rep.Passed != 1 || rep.Stopped != nil {
		t.Errorf("report %+v: the query after the timeout must still run", rep)
	}
}

func TestRunEnginePanics(t *testing.T) {
	e := newFake().rows("SELECT 1", 1, "1")
	e.answers["SELECT boom()"] = answer{panics: true}
	rep := runFake(t, e, "panic.slt", numbered(
		"# a panic is a failure of its record, never the expected error",
		"statement error",
		"SELECT boom()",
		"",
		"query I",
		"SELECT boom()",
		"----",
		"1",
		"",
		"query I",
		"SELECT 1",
		"----",
		"1",
	), Options{})
	wantFailures(t, rep, 2, "the engine panicked: fake: index out of range", 5, "the engine panicked")
	if rep.Passed != 1 || !strings.Contains(rep.Failures[0].Message, "goroutine") {
		t.Errorf("report %s; want the stack in the message and the last query passed", rep.Summary())
	}
}

func TestRunHungEngine(t *testing.T) {
	defer func(g time.Duration) { cancelGrace = g }(cancelGrace)
	cancelGrace = 10 * time.Millisecond
	e := newFake()
	defer close(e.release)
	e.answers["SELECT forever()"] = answer{ignore: true}
	rep := runFake(t, e, "hung.slt", numbered(
		"statement ok",
		"SELECT forever()",
		"",
		"statement ok",
		"SELECT forever()",
	), Options{QueryTimeout: 10 * time.Millisecond})
	wantFailures(t, rep, 1, "did not stop")
	if rep.Stopped == nil || rep.NotRun != 1 {
		t.Errorf("report %+v: want stopped with one record not run", rep)
	}
	if e.closes != 0 {
		t.Errorf("a hung database was closed")
	}
}

func TestRunContextEnds(t *testing.T) {
	e := newFake().ok("SELECT 1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, writeScript(t, "c.slt", numbered("statement ok", "SELECT 1", "", "statement ok", "SELECT 1")), e.open, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rep.Stopped, context.Canceled) || rep.NotRun != 2 || rep.OK() {
		t.Errorf("report %+v: want stopped by the context with two records not run", rep)
	}
}

func TestRunErrors(t *testing.T) {
	e := newFake()
	if _, err := Run(context.Background(), writeScript(t, "bad.slt", "frobnicate\n"), e.open, Options{}); err == nil ||
		!strings.Contains(err.Error(), "bad.slt:1") {
		t.Errorf("parse error: got %v", err)
	}
	if len(e.opens) != 0 {
		t.Errorf("a script that does not parse opened a database")
	}
	e.openErr = errors.New("disk on fire")
	if _, err := Run(context.Background(), writeScript(t, "ok.slt", "statement ok\nSELECT 1\n"), e.open, Options{}); err == nil ||
		!strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("open error: got %v", err)
	}
	if _, err := Run(context.Background(), "/nonexistent/x.slt", e.open, Options{}); err == nil {
		t.Errorf("a missing file ran")
	}
}

func TestRunMaxFailuresAndCallback(t *testing.T) {
	e := newFake()
	var lines []int
	rep := runFake(t, e, "many.slt", numbered(
		"statement ok", "SELECT 1", "",
		"statement ok", "SELECT 2", "",
		"statement ok", "SELECT 3",
	), Options{MaxFailures: 2, OnFailure: func(f Failure) { lines = append(lines, f.Line) }})
	if rep.Failed != 3 || len(rep.Failures) != 2 {
		t.Errorf("failed %d, kept %d: want 3 counted and 2 kept", rep.Failed, len(rep.Failures))
	}
	if len(lines) != 3 || lines[2] != 7 {
		t.Errorf("callback saw lines %v, want 1 4 7", lines)
	}
}

func TestRunFile(t *testing.T) {
	e := newFake().ok("SELECT 1")
	RunFile(t, writeScript(t, "one.slt", "statement ok\nSELECT 1\n"), e.open, Options{})
	if len(e.sent) != 1 {
		t.Errorf("sent %v", e.sent)
	}
}

func TestRunOptions(t *testing.T) {
	// Engine decides skipif/onlyif; Dialect overrides the file name.
	e := newFake().rows("SELECT 1", 2, "1|a")
	script := numbered(
		"skipif sqlite",
		"query IT",
		"SELECT 1",
		"----",
		"1",
		"a",
	)
	rep := runFake(t, e, "o.slt", script, Options{Engine: "SQLite", Dialect: Classic})
	if rep.Skipped != 1 || rep.Dialect != Classic {
		t.Errorf("report %+v: want the record skipped for engine SQLite, classic dialect", rep)
	}
	rep = runFake(t, e, "o.slt", script, Options{Dialect: Classic})
	if rep.Passed != 1 {
		t.Errorf("report %s: want one value per line to pass in the classic dialect", rep.Summary())
	}
	rep = runFake(t, e, "o.slt", script, Options{})
	wantFailures(t, rep, 2, "wrong number of rows: expected 2, got 1")
}

func TestDiff(t *testing.T) {
	got := Diff([]string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	want := "  a\n- b\n+ x\n  c\n+ d\n"
	if got != want {
		t.Errorf("Diff:\n%s\nwant\n%s", got, want)
	}
	// Long equal runs fold; huge inputs fall back to a positional diff.
	var a, b []string
	for k := 0; k < 3000; k++ {
		a = append(a, "same")
		b = append(b, "same")
	}
	b[1500] = "other"
	d := Diff(a, b)
	if !strings.Contains(d, "- same\n+ other") || !strings.Contains(d, "equal lines") || strings.Count(d, "\n") > 12 {
		t.Errorf("long diff:\n%s", d)
	}
}

func TestFormatTable(t *testing.T) {
	got := FormatTable("/c", []Report{
		{Path: "/c/select1.test", Records: 10, Passed: 7, Failed: 1, Skipped: 2, Seconds: 1.5},
		{Path: "/elsewhere/x.slt", Records: 4, Passed: 0, NotRun: 4, Stopped: context.DeadlineExceeded},
	})
	// The name column is as wide as its widest entry, numbers right-aligned.
	want := "" +
		"file                        records  passed  failed  skipped  not run  pass %  seconds\n" +
		"select1.test                     10       7       1        2        0    87.5     1.50\n" +
		"/elsewhere/x.slt (stopped)        4       0       0        0        4       -     0.00\n" +
		"total                            14       7       1        2        4    87.5     1.50\n"
	if got != want {
		t.Errorf("FormatTable:\n%s\nwant\n%s", got, want)
	}
}
