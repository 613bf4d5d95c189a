package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sltRecord is one record of a conformance script: its SQL, whether it must
// fail, and for a query its expected rows (values joined by one space).
type sltRecord struct {
	sql   string
	fails bool
	query bool
	rows  []string
}

// readSLT reads the records of a sqllogictest script, enough of the format
// (conformance/README.md) for the seed: statement ok|error and query.
func readSLT(t *testing.T, path string) []sltRecord {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("conformance script not beside the repository: %v", err)
	}
	var recs []sltRecord
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		head := strings.Fields(lines[i])
		if len(head) == 0 || (head[0] != "statement" && head[0] != "query") {
			continue
		}
		r := sltRecord{fails: head[0] == "statement" && len(head) > 1 && head[1] == "error", query: head[0] == "query"}
		var sql []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "" && lines[i] != "----"; i++ {
			sql = append(sql, lines[i])
		}
		r.sql = strings.TrimSuffix(strings.Join(sql, "\n"), ";")
		if i < len(lines) && lines[i] == "----" {
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				r.rows = append(r.rows, lines[i])
			}
		}
		recs = append(recs, r)
	}
	return recs
}

// jsonlLine is one line of --format jsonl.
type jsonlLine struct {
	OK      *bool       `json:"ok"`
	Tag     string      `json:"tag"`
	Columns []string    `json:"columns"`
	Types   []string    `json:"types"`
	Rows    [][]*string `json:"rows"`
	Error   string      `json:"error"`
	Line    int         `json:"line"`
	Column  int         `json:"column"`
}

// TestSeedEndToEnd builds the strata binary and runs the seed's statements
// (../shared/conformance/seed.slt) through `strata sql -c` and `-f` in a
// subprocess on a fresh data directory each, checking every jsonl line.
func TestSeedEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	recs := readSLT(t, filepath.Join("..", "..", "..", "shared", "conformance", "seed.slt"))
	dir := t.TempDir()
	bin := filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stmts := make([]string, len(recs))
	for i, r := range recs {
		stmts[i] = r.sql
	}
	script := strings.Join(stmts, ";\n") + ";\n"
	file := filepath.Join(dir, "seed.sql")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range [][]string{{"-c", script}, {"-f", file}} {
		t.Run(mode[0], func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			cmd := exec.Command(bin, "sql", "--data", data, "--format", "jsonl", mode[0], mode[1])
			out, err := cmd.Output()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("exit: %v, want status 1 (the seed has a statement that must fail)", err)
			}
			checkJSONL(t, recs, out)
		})
	}
}

// checkJSONL compares each statement's jsonl line with its record.
func checkJSONL(t *testing.T, recs []sltRecord, out []byte) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(recs) {
			t.Fatalf("more lines than statements: %s", sc.Text())
		}
		var l jsonlLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.OK == nil {
			t.Fatalf("line %d %q: not a jsonl object (%v)", i, sc.Text(), err)
		}
		r := recs[i]
		switch {
		case r.fails:
			if *l.OK || l.Error == "" || l.Line < 1 || l.Column < 1 {
				t.Errorf("statement %d %q: want a positioned error, got %s", i, r.sql, sc.Text())
			}
		case !*l.OK:
			t.Errorf("statement %d %q failed: %s", i, r.sql, l.Error)
		case len(l.Columns) != len(l.Types):
			t.Errorf("statement %d: %d columns, %d types", i, len(l.Columns), len(l.Types))
		case r.query:
			var got []string
			for _, row := range l.Rows {
				vals := make([]string, len(row))
				for j, v := range row {
					switch {
					case v == nil:
						vals[j] = "NULL"
					case *v == "":
						vals[j] = "(empty)"
					default:
						vals[j] = *v
					}
				}
				got = append(got, strings.Join(vals, " "))
			}
			if strings.Join(got, "\n") != strings.Join(r.rows, "\n") {
				t.Errorf("query %d %q:\n got %q\nwant %q", i, r.sql, got, r.rows)
			}
		default:
			if len(l.Columns) != 0 || l.Rows == nil || len(l.Rows) != 0 || l.Tag == "" {
				t.Errorf("statement %d: want a tag and empty columns/types/rows, got %s", i, sc.Text())
			}
		}
	}
	if i != len(recs) {
		t.Errorf("%d lines for %d statements:\n%s", i, len(recs), out)
	}
}
