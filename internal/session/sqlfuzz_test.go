package session

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/logictest"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/vfs"
)

// fuzzSchema is the small database every FuzzSQL input runs on: a keyed
// versioned table with a VALID BY column and two attribute groups, a
// plain keyed table, an append table and a view over two of them.
var fuzzSchema = []string{
	`CREATE TABLE t (k INT64 NOT NULL, v INT64, s STRING, idx INT64, PRIMARY KEY (k), ATTRIBUTE GROUP g (s, idx) VALID BY (idx)) MODE VERSIONED`,
	`CREATE TABLE u (k STRING NOT NULL, v DOUBLE, d DECIMAL(20, 4), PRIMARY KEY (k))`,
	`CREATE TABLE log (ts DATETIME64(3, 'UTC') NOT NULL, kind STRING, n INT64) MODE APPEND`,
	`INSERT INTO t VALUES (1, 10, 'a', 1), (2, 20, 'b', 1), (3, NULL, NULL, 2)`,
	`UPDATE t SET v = v + 1, s = 'c', idx = 2 WHERE k = 2`,
	`INSERT INTO u VALUES ('x', 1.5, 2.25), ('y', -0.5, NULL)`,
	`INSERT INTO log VALUES ('2026-01-01 00:00:00', 'a', 1), ('2026-01-02 12:00:00', 'b', 2)`,
	`CREATE VIEW tv AS SELECT t.k, t.v, log.kind FROM t JOIN log ON t.k = log.n`,
}

// Limits of one FuzzSQL input: statements run, the time a statement may
// take before it is canceled (statement_timeout's job), the time after
// which it counts as hung (it ignored the cancel), and the live heap it
// may reach.
const (
	fuzzMaxStmts  = 8
	fuzzTimeout   = 2 * time.Second
	fuzzHang      = 10 * time.Second
	fuzzMaxHeap   = 1 << 30
	fuzzMaxScript = 4 << 10
)

// fuzzEngine opens a fresh engine holding fuzzSchema.
func fuzzEngine(t testing.TB) (*storage.Engine, *Session) {
	// The manifest is a bbolt file on the OS's file system; the WAL and
	// the parts are in memory.
	dir := t.TempDir()
	mem := vfs.NewMem()
	if err := mem.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	eng, err := storage.Open(dir, storage.Options{FS: mem, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s := New(eng, Options{MemLimit: 64 << 20})
	for _, sql := range fuzzSchema {
		stmt, err := parser.Parse(sql)
		if err == nil {
			_, err = s.Execute(context.Background(), stmt, sql, nil)
		}
		if err != nil {
			eng.Close()
			t.Fatalf("%s: %v", sql, err)
		}
	}
	return eng, s
}

// fuzzSeeds returns runs of consecutive statements from the logic test
// scripts (test/sql and the shared conformance scripts), each run short
// enough to stay a small input, so that the fuzzer starts from every
// piece of syntax they use, with the tables they create.
func fuzzSeeds(t testing.TB) []string {
	var files []string
	for _, pat := range []string{"../../test/sql/*.slt", "/work/shared/conformance/*.slt"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	var seeds []string
	for _, f := range files {
		s, err := logictest.ParseFile(f, logictest.DialectAuto)
		if err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		var run []string
		flush := func() {
			if len(run) > 0 {
				seeds = append(seeds, strings.Join(run, ";\n"))
				run = nil
			}
		}
		for _, r := range s.Records {
			if r.Kind != logictest.KindStatement && r.Kind != logictest.KindQuery || r.SQL == "" {
				continue
			}
			if len(run) == 4 || len(strings.Join(run, ";\n"))+len(r.SQL) > fuzzMaxScript {
				flush()
			}
			run = append(run, r.SQL)
		}
		flush()
	}
	return seeds
}

// fuzzing reports whether the test binary runs with -test.fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// FuzzSQL runs scripts through the whole front end (parse, bind, plan,
// execute) on a fresh database holding fuzzSchema. For every statement:
// no panic (Execute turns one into XX000, which counts too), no internal
// error, every error a *sqlerr.Error with a SQLSTATE and a position
// inside the statement, no commit taken by a statement that failed, no
// statement running past fuzzHang once canceled at fuzzTimeout, and none
// holding more than fuzzMaxHeap of live heap at once.
//
// Its seeds are runs of statements from the logic test scripts; without
// -fuzz every tenth of them runs, to keep `go test` quick.
func FuzzSQL(f *testing.F) {
	seeds := fuzzSeeds(f)
	for i, s := range seeds {
		if fuzzing() || i%10 == 0 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, script string) {
		if len(script) > fuzzMaxScript {
			return
		}
		stmts, perr := parser.ParseAll(script)
		if perr != nil {
			if _, ok := sqlerr.As(perr); !ok {
				t.Fatalf("parse error %T is not an *sqlerr.Error: %v", perr, perr)
			}
			return
		}
		eng, s := fuzzEngine(t)
		defer eng.Close()
		for i, stmt := range stmts {
			if i == fuzzMaxStmts {
				break
			}
			sql := script[stmt.Pos():stmt.End()]
			// Positions in stmt refer to script: run it with the whole
			// script as its text, as a client's multi-statement Query.
			runFuzzStmt(t, s, stmt, script, sql)
		}
	})
}

// runFuzzStmt runs one statement of a FuzzSQL script and checks it.
func runFuzzStmt(t *testing.T, s *Session, stmt ast.Stmt, script, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
	defer cancel()
	hung := time.AfterFunc(fuzzHang, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(os.Stderr, "statement still running %s after its %s cancel: %q\n%s", fuzzHang, fuzzTimeout, sql, buf)
		panic("FuzzSQL: statement hung")
	})
	// The live heap is sampled while the statement runs: what it
	// allocates and frees again (a long scan, a canceled recursion) is
	// churn, what it holds at once is what could exhaust memory.
	peak := watchHeap()
	commit := s.eng.LastCommit()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%q: panic outside Execute: %v\n%s", sql, r, debug.Stack())
			}
		}()
		_, err = s.Execute(ctx, stmt, script, nil)
	}()
	hung.Stop()
	if p := peak(); p > fuzzMaxHeap {
		t.Fatalf("%q held %d MiB of heap at once", sql, p>>20)
	}
	if err == nil {
		return
	}
	// A failed statement takes no commit (docs/ARCHITECTURE.md,
	// Invariants): nothing of it was written.
	if c := s.eng.LastCommit(); c != commit {
		t.Fatalf("%q failed (%v) but the last commit moved from %d to %d", sql, err, commit, c)
	}
	e, ok := sqlerr.As(err)
	switch {
	case !ok:
		t.Fatalf("%q: error without a SQLSTATE (%T): %v", sql, err, err)
	case e.Code == sqlerr.CodeInternal:
		t.Fatalf("%q: %v (%s)", sql, e, e.Detail)
	case len(e.Code) != 5 || e.Message == "":
		t.Fatalf("%q: malformed error %q %q", sql, e.Code, e.Message)
	case e.Pos > len(script):
		t.Fatalf("%q: error position %d past the script's end (%d): %v", sql, e.Pos, len(script), e)
	case errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("%q: deadline error not turned into 57014: %v", sql, err)
	}
}

// watchHeap samples the live heap every few milliseconds until the
// function it returns is called, which reports the largest sample.
func watchHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		peak := read()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- max(peak, read())
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-done
	}
}
