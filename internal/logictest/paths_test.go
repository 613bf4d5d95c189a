package logictest

import (
	"os"
	"path/filepath"
	"testing"
)

// repoRoot walks up from the test's working directory to the directory that
// holds go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// sharedDir is ../shared beside the repository (read-only project
// material: the conformance scripts and the external corpus).
func sharedDir(t testing.TB) string {
	return filepath.Join(filepath.Dir(repoRoot(t)), "shared")
}

// conformanceDir holds ../shared/conformance/*.slt.
func conformanceDir(t testing.TB) string { return filepath.Join(sharedDir(t), "conformance") }

// corpusDir holds SQLite's classic corpus (a subset), under its upstream
// layout.
func corpusDir(t testing.TB) string {
	return filepath.Join(sharedDir(t), "extern", "sqllogictest", "test")
}

// sqlDir holds the project's own scripts, test/sql/*.slt.
func sqlDir(t testing.TB) string { return filepath.Join(repoRoot(t), "test", "sql") }

// globOrFatal lists files matching pattern and fails the test when there is
// none: a missing directory must not turn a test into a silent pass.
func globOrFatal(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no files match %s", pattern)
	}
	return files
}

// corpusFiles lists every .test file under the corpus directory.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(corpusDir(t), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(p) == ".test" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no corpus files under %s", corpusDir(t))
	}
	return files
}
