package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-db/strata"
)

func runCheck(t *testing.T, dir string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := rootCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"check", dir})
	err := cmd.Execute()
	return out.String(), err
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession()
	for _, q := range []string{
		"CREATE TABLE t (k INT64 NOT NULL, v STRING, PRIMARY KEY (k)) MODE VERSIONED",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO t VALUES (1, 'c')",
	} {
		if _, err := s.Run(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := runCheck(t, dir)
	if err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("check of a healthy database: %q, %v", out, err)
	}

	// Damage the last WAL segment in the middle of a record that is not the
	// tail: check must fail and say so.
	segs, _ := filepath.Glob(filepath.Join(dir, "wal", "wal-*.log"))
	if len(segs) == 0 {
		t.Fatal("no WAL segment")
	}
	seg := segs[len(segs)-1]
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	b[40] ^= 0xff
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCheck(t, dir); err == nil {
		t.Fatal("check of a damaged WAL passed")
	}
}
