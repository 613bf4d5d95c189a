package strata_test

// The invariants of docs/ARCHITECTURE.md written as absences, checked over
// the import lists of every non-test Go file in the module.

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/strata-db/strata/"

// rule says which packages of ours a package (by path prefix) may import;
// nil allows any. ioFree packages may not import os, net or io/fs either.
type rule struct {
	prefix string
	allow  []string
	ioFree bool
}

var rules = []rule{
	{prefix: "internal/sqlerr", allow: []string{}, ioFree: true},
	{prefix: "internal/sql/", allow: []string{"internal/sql/", "internal/sqlerr"}, ioFree: true},
	{prefix: "internal/types", allow: []string{}, ioFree: true},
	{prefix: "internal/version", allow: []string{"internal/types"}, ioFree: true},
	{prefix: "internal/catalog", allow: []string{"internal/types", "internal/sqlerr"}, ioFree: true},
	{prefix: "internal/vfs", allow: []string{}},
	// System tables read a snapshot's catalog and statistics, nothing else;
	// the pg_catalog ones also use expr's PostgreSQL types and PGEnv.
	{prefix: "internal/system", allow: []string{"internal/catalog", "internal/storage", "internal/types", "internal/expr"}, ioFree: true},
	// The session layer reaches files only through storage.
	{prefix: "internal/session", allow: []string{"internal/sql/", "internal/sqlerr", "internal/catalog", "internal/types",
		"internal/storage", "internal/plan", "internal/exec", "internal/system"}, ioFree: true},
	// The database/sql driver is built on the public API alone.
	{prefix: "driver", allow: []string{}},
}

// osUsers may import "os" in non-test files: the file-system layer, the
// object-store layer (its drivers' settings are environment variables;
// its files go through internal/vfs) and the command line (flags,
// standard streams, exit codes).
var osUsers = []string{"internal/vfs", "internal/objstore", "cmd/", "internal/logictest"}

func hasPrefix(p string, list []string) bool {
	for _, l := range list {
		if p == strings.TrimSuffix(l, "/") || strings.HasPrefix(p, l) {
			return true
		}
	}
	return false
}

func TestLayering(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		pkg := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			for _, r := range rules {
				if pkg != strings.TrimSuffix(r.prefix, "/") && !strings.HasPrefix(pkg, r.prefix) {
					continue
				}
				if strings.HasPrefix(ip, module) && r.allow != nil && !hasPrefix(strings.TrimPrefix(ip, module), r.allow) {
					t.Errorf("%s imports %s: %s may import only %v", path, ip, r.prefix, r.allow)
				}
				if r.ioFree && (ip == "os" || ip == "net" || ip == "io/fs" || ip == "os/exec") {
					t.Errorf("%s imports %s: %s does no I/O", path, ip, r.prefix)
				}
			}
			if ip == "os" && !hasPrefix(pkg, osUsers) {
				t.Errorf("%s imports os: only %v touch os APIs (files go through internal/vfs)", path, osUsers)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files checked")
	}
}
