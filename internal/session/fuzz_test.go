package session

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/sqlgen"
	"github.com/strata-db/strata/internal/storage"
)

// runRandomSQL runs n generated statements on a fresh database and checks
// R13.5 for each: no panic, no internal error (XX000), every error a
// *sqlerr.Error with a SQLSTATE, and a position for the errors that are
// about the statement's text (syntax, names, types: class 42). It returns
// the first failure with the statements that led to it.
func runRandomSQL(t testing.TB, seed uint64, n int) {
	eng, err := storage.Open(t.TempDir(), storage.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s := New(eng, Options{MemLimit: 64 << 20})
	g := sqlgen.New(seed)
	var history []string
	outcomes := map[string]int{}
	defer func() { t.Logf("seed %d: outcomes %v", seed, outcomes) }()
	fail := func(format string, args ...any) {
		if path := os.Getenv("STRATA_SQLGEN_DUMP"); path != "" {
			os.WriteFile(path, []byte(strings.Join(history, ";\n")+";\n"), 0o644)
		}
		start := max(0, len(history)-15)
		t.Fatalf("seed %d, statement %d: %s\nlast statements:\n  %s", seed, len(history), fmt.Sprintf(format, args...),
			strings.Join(history[start:], ";\n  "))
	}
	for i := 0; i < n; i++ {
		sql := g.Next()
		history = append(history, sql)
		var execErr error
		func() {
			defer func() {
				if r := recover(); r != nil {
					fail("panic: %v\n%s", r, debug.Stack())
				}
			}()
			stmt, err := parser.Parse(sql)
			if err != nil {
				execErr = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, execErr = s.Execute(ctx, stmt, sql, nil)
		}()
		g.Result(execErr)
		if execErr == nil {
			outcomes["ok"]++
			continue
		}
		outcomes[sqlerr.CodeOf(execErr)]++
		e, ok := sqlerr.As(execErr)
		switch {
		case !ok:
			fail("error without a SQLSTATE (%T): %v", execErr, execErr)
		case e.Code == sqlerr.CodeInternal:
			fail("internal error: %v", e)
		case len(e.Code) != 5:
			fail("malformed SQLSTATE %q: %v", e.Code, e)
		case e.Message == "":
			fail("error %s without a message", e.Code)
		case strings.HasPrefix(e.Code, "42") && e.Pos < 0:
			fail("%s error without a position: %v", e.Code, e)
		case e.Pos > len(sql):
			fail("error position %d past the statement's end (%d): %v", e.Pos, len(sql), e)
		}
	}
}

// TestRandomSQL runs a bounded number of generated statements on a few
// seeds (seconds); STRATA_SQLGEN_N and STRATA_SQLGEN_SEEDS run it longer.
func TestRandomSQL(t *testing.T) {
	n, seeds := 400, 4
	if testing.Short() {
		n, seeds = 100, 2
	}
	if v, err := strconv.Atoi(os.Getenv("STRATA_SQLGEN_N")); err == nil {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("STRATA_SQLGEN_SEEDS")); err == nil {
		seeds = v
	}
	base := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("STRATA_SQLGEN_BASE"), 10, 64); err == nil {
		base = v
	}
	for i := 0; i < seeds; i++ {
		seed := base + uint64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runRandomSQL(t, seed, n) })
	}
}

// FuzzRandomSQL lets the fuzzer pick the generator's seed and length.
func FuzzRandomSQL(f *testing.F) {
	f.Add(uint64(1), uint8(50))
	f.Add(uint64(99), uint8(200))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) { runRandomSQL(t, seed, int(n)) })
}

// TestLimitOverScan: a LIMIT satisfied inside a table scan ends the scan
// quietly; the executor's stop signal once escaped as an internal error
// (found by TestRandomSQL).
func TestLimitOverScan(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE t (k INT64, PRIMARY KEY (k)) MODE VERSIONED")
	h.ok("INSERT INTO t VALUES (1), (2), (3)")
	h.ok("CREATE TABLE a (x INT64) MODE APPEND")
	h.ok("INSERT INTO a VALUES (1), (2), (3)")
	for q, want := range map[string]int{"SELECT k FROM t LIMIT 1": 1, "SELECT k FROM t LIMIT 2": 2,
		"SELECT x FROM a LIMIT 1": 1, "SELECT * FROM versions(t) LIMIT 1": 1} {
		if res := h.ok(q); len(res.Rows) != want {
			t.Errorf("%s: %d rows, want %d", q, len(res.Rows), want)
		}
	}
}
