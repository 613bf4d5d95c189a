package logictest

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oracleCounts counts records by a naive scan independent of the parser:
// lines that start with statement, query or restart, and hash lines.
func oracleCounts(t *testing.T, data []byte) (records, hashed int) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(l, "statement ") || strings.HasPrefix(l, "query ") || l == "restart" {
			records++
		}
		if strings.Contains(l, " values hashing to ") && hashLine.MatchString(l) {
			hashed++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return records, hashed
}

func parseCounts(s *Script) (records, hashed int) {
	for _, r := range s.Records {
		if counted(r.Kind) {
			records++
		}
		if r.Hashed {
			hashed++
		}
	}
	return records, hashed
}

// checkParsed parses one file and compares its counts with the oracle.
func checkParsed(t *testing.T, path string) (records int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(path, data, DialectAuto)
	if err != nil {
		t.Errorf("%v", err)
		return 0
	}
	gotRec, gotHash := parseCounts(s)
	wantRec, wantHash := oracleCounts(t, data)
	if gotRec != wantRec || gotHash != wantHash {
		t.Errorf("%s: parsed %d records (%d hashed), a line scan finds %d (%d)", path, gotRec, gotHash, wantRec, wantHash)
	}
	for _, r := range s.Records {
		if (r.Kind == KindStatement || r.Kind == KindQuery) && strings.TrimSpace(r.SQL) == "" {
			t.Errorf("%s:%d: empty SQL", path, r.Line)
		}
	}
	return gotRec
}

func TestParseConformance(t *testing.T) {
	files := globOrFatal(t, filepath.Join(conformanceDir(t), "*.slt"))
	files = append(files, globOrFatal(t, filepath.Join(sqlDir(t), "*.slt"))...)
	total := 0
	for _, f := range files {
		n := checkParsed(t, f)
		if n == 0 {
			t.Errorf("%s: no records", f)
		}
		total += n
	}
	t.Logf("%d files, %d records", len(files), total)
}

func TestParseCorpus(t *testing.T) {
	files := corpusFiles(t)
	start := time.Now()
	var total, bytesRead int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bytesRead += len(data)
		s, err := Parse(f, data, DialectAuto)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if s.Dialect != Classic {
			t.Errorf("%s: dialect %v, want classic", f, s.Dialect)
		}
		n, _ := parseCounts(s)
		total += n
	}
	elapsed := time.Since(start)
	t.Logf("parsed %d files, %.1f MB, %d records in %v", len(files), float64(bytesRead)/1e6, total, elapsed)
	if elapsed > 10*time.Second {
		t.Errorf("parsing the corpus took %v, want well under 10s", elapsed)
	}
	// The oracle check, separately so the timing above is the parser's alone.
	for _, f := range files {
		checkParsed(t, f)
	}
}

func TestParseRecords(t *testing.T) {
	src := "# leading comment\r\n" +
		"hash-threshold 8\r\n" +
		"\r\n" +
		"statement ok\r\n" +
		"CREATE TABLE t(a INT64)\r\n" +
		"# a comment inside a record is dropped\r\n" +
		"MODE APPEND\r\n" +
		"   \r\n" + // whitespace only: a blank line
		"skipif mysql\n" +
		"onlyif postgresql\n" +
		"query IT rowsort label-7\n" +
		"SELECT a,\n" +
		"  b FROM t\n" +
		"----\n" +
		"1 x y\n" +
		"2 (empty)\n" +
		"\n" +
		"query I valuesort\n" +
		"SELECT a FROM t\n" +
		"----\n" +
		"30 values hashing to 3c13dee48d9356ae19af2515e05e6b54\n" +
		"\n" +
		"query B\n" +
		"SELECT true\n" +
		"\n" +
		"statement error (newest|latest).*3\n" +
		"SELECT 1\n" +
		"\n" +
		"statement error\n" +
		"SELEC 1\n" +
		"\n" +
		"restart\n" +
		"\n" +
		"skipif sqlite\n" +
		"halt\n"
	s, err := Parse("x.slt", []byte(src), DialectAuto)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dialect != Conformance {
		t.Errorf("dialect %v", s.Dialect)
	}
	want := []Record{
		{Kind: KindHashThreshold, Line: 2, EndLine: 2, Threshold: 8},
		{Kind: KindStatement, Line: 4, EndLine: 7, SQL: "CREATE TABLE t(a INT64)\nMODE APPEND"},
		{Kind: KindQuery, Line: 11, EndLine: 16, Conditions: []Condition{{Skip: true, Engine: "mysql"}, {Engine: "postgresql"}},
			SQL: "SELECT a,\n  b FROM t", Types: "IT", Sort: RowSort, Label: "label-7",
			Expected: []string{"1 x y", "2 (empty)"}, ExpectedLine: 15, SepLine: 14},
		{Kind: KindQuery, Line: 18, EndLine: 21, SQL: "SELECT a FROM t", Types: "I", Sort: ValueSort,
			Expected: []string{"30 values hashing to 3c13dee48d9356ae19af2515e05e6b54"}, ExpectedLine: 21, SepLine: 20,
			Hashed: true, HashCount: 30, Hash: "3c13dee48d9356ae19af2515e05e6b54"},
		{Kind: KindQuery, Line: 23, EndLine: 24, SQL: "SELECT true", Types: "B"},
		{Kind: KindStatement, Line: 26, EndLine: 27, SQL: "SELECT 1", ExpectError: true, ErrorPattern: "(newest|latest).*3"},
		{Kind: KindStatement, Line: 29, EndLine: 30, SQL: "SELEC 1", ExpectError: true},
		{Kind: KindRestart, Line: 32, EndLine: 32},
		{Kind: KindHalt, Line: 35, EndLine: 35, Conditions: []Condition{{Skip: true, Engine: "sqlite"}}},
	}
	if len(s.Records) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(s.Records), len(want), s.Records)
	}
	for i, w := range want {
		g := s.Records[i]
		if (g.Error == nil) != (w.ErrorPattern == "") {
			t.Errorf("record %d: compiled regex %v for pattern %q", i, g.Error, w.ErrorPattern)
		}
		g.Error = nil
		if !recordsEqual(g, w) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if re := s.Records[5].Error; re == nil || !re.MatchString("commit 9 is after the NEWEST commit, 3") {
		t.Errorf("error regex %v is not case-insensitive", re)
	}
}

func recordsEqual(a, b Record) bool {
	eq := func(x, y []string) bool {
		return strings.Join(x, "\x00") == strings.Join(y, "\x00") && len(x) == len(y)
	}
	if len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		if a.Conditions[i] != b.Conditions[i] {
			return false
		}
	}
	return a.Kind == b.Kind && a.Line == b.Line && a.SQL == b.SQL && a.ExpectError == b.ExpectError &&
		a.ErrorPattern == b.ErrorPattern && a.Types == b.Types && a.Sort == b.Sort && a.Label == b.Label &&
		eq(a.Expected, b.Expected) && a.ExpectedLine == b.ExpectedLine && a.SepLine == b.SepLine &&
		a.EndLine == b.EndLine && a.Hashed == b.Hashed &&
		a.HashCount == b.HashCount && a.Hash == b.Hash && a.Threshold == b.Threshold
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unknown record", "statement ok\nSELECT 1\n\nfrobnicate\n", 4, "unknown record type"},
		{"bad type letter", "query IX\nSELECT 1\n", 1, "unknown type letter"},
		{"bad sort", "query I sideways\nSELECT 1\n", 1, "unknown sort mode"},
		{"bad regex", "statement error (unclosed\nSELECT 1\n", 1, "bad error regex"},
		{"statement without SQL", "statement ok\n", 1, "without SQL"},
		{"query without SQL", "query I\n----\n1\n", 1, "without SQL"},
		{"statement neither", "statement maybe\nSELECT 1\n", 1, "ok or error"},
		{"threshold", "hash-threshold many\n", 1, "non-negative number"},
		{"dangling skipif", "statement ok\nSELECT 1\n\nskipif mysql\n", 4, "without a record"},
		{"restart with body", "restart\nSELECT 1\n", 1, "stands alone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.slt", []byte(c.src), DialectAuto)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if pe.Line != c.line || !strings.Contains(pe.Msg, c.msg) {
				t.Errorf("got %v, want line %d and %q", err, c.line, c.msg)
			}
			if !strings.HasPrefix(err.Error(), "bad.slt:") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestDialectOf(t *testing.T) {
	for path, want := range map[string]Dialect{
		"a/select1.test": Classic, "x.TEST": Classic, "seed.slt": Conformance, "noext": Conformance,
	} {
		if got := DialectOf(path); got != want {
			t.Errorf("DialectOf(%q) = %v, want %v", path, got, want)
		}
	}
}
