package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSQL runs -c strings and a -f file on a real data directory in
// process: statements after a failing one still run, the run reports
// errFailed, and what was committed is there when the directory is opened
// again.
func TestRunSQL(t *testing.T) {
	data := filepath.Join(t.TempDir(), "nested", "data") // created if missing
	var out, errOut bytes.Buffer
	fl := sqlFlags{data: data, format: "table", commands: []string{
		"CREATE TABLE t (k INT64, v STRING, PRIMARY KEY (k)); INSERT INTO t VALUES (1, 2, 3); INSERT INTO t VALUES (1, 'x')",
	}}
	err := runSQL(context.Background(), fl, strings.NewReader(""), &out, &errOut)
	if !errors.Is(err, errFailed) {
		t.Fatalf("runSQL = %v, want errFailed", err)
	}
	if want := "CREATE TABLE\nINSERT 0 1\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if !strings.HasPrefix(errOut.String(), "ERROR: ") || !strings.Contains(errOut.String(), "\nLINE 1: INSERT INTO t VALUES (1, 2, 3)\n") {
		t.Errorf("stderr %q", errOut.String())
	}

	// Standard input as a script when it is not a terminal; the table is
	// still there.
	out.Reset()
	errOut.Reset()
	fl = sqlFlags{data: data, format: "jsonl"}
	if err := runSQL(context.Background(), fl, strings.NewReader("INSERT INTO t VALUES (2, NULL);"), &out, &errOut); err != nil {
		t.Fatalf("runSQL: %v (%s)", err, errOut.String())
	}
	if want := `{"ok":true,"tag":"INSERT 0 1","columns":[],"types":[],"rows":[]}` + "\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}

	fl.format = "xml"
	if err := runSQL(context.Background(), fl, strings.NewReader(""), &out, &errOut); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("format xml: %v", err)
	}
}

// TestSQLCommandFlags checks the cobra wiring: -c may be repeated and a
// failed statement makes Execute return errFailed (exit status 1 in main).
func TestSQLCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := rootCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetArgs([]string{"sql", "--data", t.TempDir(), "--format", "csv", "-c", "CREATE TABLE a (k INT64 PRIMARY KEY)", "-c", "CREATE TABLE a (k INT64 PRIMARY KEY)"})
	if err := cmd.Execute(); !errors.Is(err, errFailed) {
		t.Fatalf("Execute = %v, want errFailed", err)
	}
	if !strings.Contains(errOut.String(), "ERROR: ") || out.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
}

// TestSQLAsOfIndexFlag: --asof-index opens the embedded directory with the
// AS OF index on (statements run as without it), and is refused beside
// --url, where the server's process decides.
func TestSQLAsOfIndexFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	fl := sqlFlags{data: t.TempDir(), format: "table", asofIndex: true, commands: []string{
		"CREATE TABLE t (k INT64, v STRING, PRIMARY KEY (k)) MODE VERSIONED; INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (1, 'b'); SELECT v FROM t AS OF COMMIT 2",
	}}
	if err := runSQL(context.Background(), fl, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("runSQL: %v (%s)", err, errOut.String())
	}
	if !strings.Contains(out.String(), " a\n(1 row)") {
		t.Errorf("stdout %q, want the row as of commit 2", out.String())
	}
	fl = sqlFlags{url: "postgres://strata@127.0.0.1:1/strata", format: "table", asofIndex: true}
	if err := runSQL(context.Background(), fl, strings.NewReader(""), &out, &errOut); err == nil || !strings.Contains(err.Error(), "--asof-index") {
		t.Errorf("--asof-index with --url: %v, want an error naming the flag", err)
	}
}
