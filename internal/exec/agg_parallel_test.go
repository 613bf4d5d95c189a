package exec_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// parallelFake is a table of 200 000 rows handed on in batches of 1 000:
// g a STRING of 25 values with NULLs and 9 more in its later rows, k an INT64 of 3, x an INT64 with
// NULLs, u a UINT256 of up to 200 bits with NULLs, y an INT32, and v a
// UINT256 that is 2^255 in two late rows (of one k: their sum overflows),
// i the row's number, and f a FLOAT64.
func parallelFake(t *testing.T) *fakeSource {
	t.Helper()
	cat := catalog.New()
	str, i64, u256, i32 := types.Of(types.String), types.Of(types.Int64), types.Of(types.Uint256), types.Of(types.Int32)
	tb, _, err := cat.CreateTable(catalog.TableSpec{Name: "t", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{
		{Name: "g", Type: str}, {Name: "k", Type: i64}, {Name: "x", Type: i64},
		{Name: "u", Type: u256}, {Name: "y", Type: i32}, {Name: "v", Type: u256}, {Name: "i", Type: i64},
		{Name: "f", Type: types.Of(types.Float64)}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSource{Cat: cat, Newest: 2, Rows: map[catalog.TableID][]fakeRow{}, BatchRows: 1000}
	rng := rand.New(rand.NewPCG(7, 11))
	id := func(i int) catalog.ColumnID { return tb.Columns[i].ID }
	for i := range 200_000 {
		r := fakeRow{Commit: 2, Vals: map[catalog.ColumnID]types.Value{}}
		r.Vals[id(0)] = types.NewString(fmt.Sprintf("g%02d", rng.IntN(25)))
		if i%101 == 3 {
			r.Vals[id(0)] = types.Null(str)
		}
		if i >= 120_000 && i%7 == 0 {
			// Groups first met after the helpers started.
			r.Vals[id(0)] = types.NewString(fmt.Sprintf("late%d", i/7%9))
		}
		r.Vals[id(1)] = types.NewInt64(int64(i % 3))
		r.Vals[id(2)] = types.NewInt64(rng.Int64N(2e12) - 1e12)
		if i%13 == 0 {
			r.Vals[id(2)] = types.Null(i64)
		}
		w := uint256.Int{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64() >> 56}
		r.Vals[id(3)], _ = types.NewWide(u256, w)
		if i%17 == 0 {
			r.Vals[id(3)] = types.Null(u256)
		}
		r.Vals[id(4)], _ = types.NewInt(i32, int64(rng.Int32()))
		var big uint256.Int
		if i == 150_007 || i == 180_007 {
			big[3] = 1 << 63
		}
		r.Vals[id(5)], _ = types.NewWide(u256, big)
		r.Vals[id(6)] = types.NewInt64(int64(i))
		r.Vals[id(7)] = types.NewFloat64(float64(i%5) - 2)
		f.Rows[tb.ID] = append(f.Rows[tb.ID], r)
	}
	return f
}

// TestParallelAggregate runs aggregates that fold on several goroutines
// (agg_parallel.go) and the same with every aggregate serial: the rows,
// their order (a serial run's: groups as their first rows meet them) and
// the errors must be the same.
func TestParallelAggregate(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	f := parallelFake(t)
	cases := []struct {
		sql      string
		parallel bool
	}{
		{"SELECT g, count(*), count(x), sum(x), avg(x), min(x), max(x), sum(u), min(u), max(g), max(y), min(y) FROM t GROUP BY g", true},
		{"SELECT g, k, count(*), sum(x), min(u), max(g) FROM t GROUP BY g, k", true},
		{"SELECT k, sum(y), avg(y), count(y), sum(k) FROM t GROUP BY k", true},
		{"SELECT count(*), sum(x), sum(u), min(x), max(x), avg(x), max(u) FROM t", true},
		{"SELECT g, count(*), sum(x) FROM t WHERE x > 0 GROUP BY g", true},
		{"SELECT count(*) FROM t WHERE x > 2e12", false},
		// About one group a row: no helpers (parallelFanIn).
		{"SELECT x, count(*) FROM t GROUP BY x", false},
		// Not mergeable exactly: serial.
		{"SELECT g, count(DISTINCT k), sum(x) FROM t GROUP BY g", false},
		{"SELECT g, string_agg(k::STRING, ',') FROM t WHERE k = 0 GROUP BY g", false},
		{"SELECT g, min(f), max(f) FROM t GROUP BY g", false},
		{"SELECT sum(v) FROM t", true},
		// An error in the scan's filter after the helpers started.
		{"SELECT g, count(*) FROM t WHERE 1 / (i - 150000) >= 0 GROUP BY g", true},
		{"SELECT k, sum(v) FROM t GROUP BY k", true},
	}
	goroutines := runtime.NumGoroutine()
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			exec.SetParallel(false)
			want, werr := query(t, f, c.sql)
			exec.SetParallel(true)
			before := exec.ParallelRuns()
			got, err := query(t, f, c.sql)
			if ran := exec.ParallelRuns() > before; ran != c.parallel {
				t.Fatalf("helpers started: %v, want %v", ran, c.parallel)
			}
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("error %v, serial %v", err, werr)
			}
			if got != want {
				t.Fatalf("parallel:\n%s\nserial:\n%s", head(got), head(want))
			}
			if werr == nil && strings.Count(want, "\n") == 0 {
				t.Fatal("no rows")
			}
		})
	}
	// Every helper has ended, after errors too. A helper's wg.Done runs
	// just before its goroutine exits, so on a loaded machine the count
	// can lag the statement's end by a moment: a leaked helper stays.
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); n > goroutines && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if n > goroutines {
		t.Fatalf("%d goroutines, %d before", n, goroutines)
	}
}

// TestParallelAggregateMemLimit: a parallel aggregate fails on the
// statement's memory limit exactly when a serial run does. At the least
// limit (to 256 bytes) a serial run passes with, the parallel one passes
// too; 256 bytes below it, both fail with the limit's error. The 9 groups
// first met after row 120 000 are the helpers' to make.
func TestParallelAggregateMemLimit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	f := parallelFake(t)
	for _, sql := range []string{
		"SELECT g, count(*), sum(x), min(x), max(x) FROM t GROUP BY g",
		"SELECT g, k, count(*), sum(u) FROM t GROUP BY g, k",
	} {
		run := func(limit int64) error {
			stmt, err := parser.Parse(sql)
			if err != nil {
				t.Fatal(err)
			}
			env := &plan.Env{Source: f, MemLimit: limit}
			p, err := plan.Build(stmt, env)
			if err != nil {
				t.Fatal(err)
			}
			return exec.Run(context.Background(), p, env, func(*types.Batch) error { return nil })
		}
		exec.SetParallel(false)
		limit := int64(1024)
		for run(limit) != nil {
			limit += 256
		}
		exec.SetParallel(true)
		before := exec.ParallelRuns()
		if err := run(limit); err != nil {
			t.Fatalf("%s: at the limit a serial run passes with (%d): %v", sql, limit, err)
		}
		if exec.ParallelRuns() == before {
			t.Fatalf("%s: no helpers started", sql)
		}
		err := run(limit - 256)
		if se, ok := sqlerr.As(err); !ok || se.Code != exec.CodeOutOfMemory {
			t.Fatalf("%s: at %d, below what a serial run needs: %v, want the memory limit's error", sql, limit-256, err)
		}
	}
}

// head is the first lines of s.
func head(s string) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(len(lines), 30)], "")
}
