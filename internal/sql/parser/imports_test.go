package parser

import (
	goparser "go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportBoundary enforces ast invariant 3 and ARCHITECTURE.md's rule
// that the SQL front end imports nothing of Strata's below it: the
// internal/sql packages may import each other and internal/sqlerr, and
// internal/sqlerr imports nothing of Strata's at all.
func TestImportBoundary(t *testing.T) {
	const module = "github.com/strata-db/strata/"
	check := func(dir string, allowed func(string) bool) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := goparser.ParseFile(gotoken.NewFileSet(), f, src, goparser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, module) && !allowed(strings.TrimPrefix(path, module)) {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
	dirs, _ := filepath.Glob("../*")
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			check(d, func(p string) bool {
				return strings.HasPrefix(p, "internal/sql/") || p == "internal/sqlerr"
			})
		}
	}
	check("../../sqlerr", func(string) bool { return false })
}
