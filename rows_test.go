package strata_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/strata-db/strata"
)

// TestQueryRows: Query hands out a query's rows one by one, each valid
// after Next, with the columns before the first and the tag after the
// last; the session is free again at the end.
func TestQueryRows(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	rows, err := s.Query(ctx, "SELECT x, 'v' || x AS v FROM generate_series(1, $1) AS g(x)", 5000)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if cols := rows.Columns(); len(cols) != 2 || cols[1].Name != "v" || cols[1].Type != "STRING" {
		t.Fatalf("columns %+v", cols)
	}
	if rows.Result() != nil {
		t.Fatal("a result before the rows were read")
	}
	var kept [][]strata.Value
	for rows.Next() {
		kept = append(kept, rows.Row())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 5000 {
		t.Fatalf("%d rows", len(kept))
	}
	for i, row := range kept {
		if row[0].String() != fmt.Sprint(i+1) || row[1].String() != fmt.Sprintf("v%d", i+1) {
			t.Fatalf("row %d kept as %v %v", i, row[0], row[1])
		}
	}
	if res := rows.Result(); res == nil || res.Tag != "SELECT 5000" || res.RowsAffected != 5000 || res.Rows != nil {
		t.Fatalf("result %+v", rows.Result())
	}
	if _, err := s.Run(ctx, "SELECT 1"); err != nil {
		t.Fatalf("the session after the rows: %v", err)
	}
}

// TestQueryCloseEarly: rows closed before their end stop the query without
// failing it, even inside a transaction, and report the rows read.
func TestQueryCloseEarly(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	if _, err := s.Exec(ctx, "CREATE TABLE kv (k INT64 NOT NULL, PRIMARY KEY (k)); BEGIN; INSERT INTO kv VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Query(ctx, "SELECT x FROM generate_series(1, 100000) AS g(x)")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() || rows.Row()[0].String() != "1" || !rows.Next() {
		t.Fatalf("first rows: %v", rows.Err())
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Fatal("a row after Close")
	}
	if res := rows.Result(); res == nil || res.Tag != "SELECT 2" || res.RowsAffected != 2 || len(res.Columns) != 1 {
		t.Fatalf("result after an early close: %+v", res)
	}
	if _, err := s.Run(ctx, "COMMIT"); err != nil {
		t.Fatalf("COMMIT after an early close: %v", err)
	}
	res, err := s.Run(ctx, "SELECT count(*) FROM kv")
	if err != nil || res.Rows[0][0].String() != "1" {
		t.Fatalf("the transaction's row: %v %v", res, err)
	}
}

// TestQueryErrors: errors before the first row come from Query; one met
// part way ends the rows with Err (after the rows made before it) and,
// inside a transaction, fails it as any error does.
func TestQueryErrors(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	var e *strata.Error
	if _, err := s.Query(ctx, "SELECT nosuch FROM nowhere"); !errors.As(err, &e) || e.Code != "42P01" {
		t.Fatalf("planning error: %v", err)
	}
	if _, err := s.Query(ctx, "SELECT $1", struct{}{}); !errors.As(err, &e) || e.Code != "22023" {
		t.Fatalf("parameter error: %v", err)
	}
	if _, err := s.Run(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Query(ctx, "SELECT 1 / (3000 - x) FROM generate_series(1, 5000) AS g(x)")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if !errors.As(rows.Err(), &e) || e.Code != "22012" || n == 0 || n >= 3000 {
		t.Fatalf("%d rows, then %v", n, rows.Err())
	}
	if err := rows.Close(); !errors.As(err, &e) || e.Code != "22012" {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s.Run(ctx, "SELECT 1"); !errors.As(err, &e) || e.Code != "25P02" {
		t.Fatalf("the failed transaction: %v", err)
	}
	if _, err := s.Run(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// TestQueryWholeResults: statements that return their rows at once (SHOW,
// RETURNING) or none (INSERT) run through Query too.
func TestQueryWholeResults(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	if _, err := s.Run(ctx, "CREATE TABLE kv (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Query(ctx, "INSERT INTO kv VALUES (1, 'a'), (2, 'b') RETURNING k")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		got = append(got, rows.Row()[0].String())
	}
	if rows.Close() != nil || fmt.Sprint(got) != "[1 2]" || len(rows.Columns()) != 1 || rows.Result().Commit == 0 {
		t.Fatalf("RETURNING: %v %+v %v", got, rows.Result(), rows.Err())
	}
	rows, err = s.Query(ctx, "INSERT INTO kv VALUES (3, 'c')")
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() || rows.Columns() != nil || rows.Close() != nil || rows.Result().RowsAffected != 1 {
		t.Fatalf("INSERT: %+v", rows.Result())
	}
	rows, err = s.Query(ctx, "SHOW TimeZone")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() || rows.Row()[0].String() == "" || rows.Next() || rows.Close() != nil {
		t.Fatalf("SHOW: %v", rows.Err())
	}
}

// TestQueryDroppedSession: a session dropped with its rows open does not
// leave its statement suspended for good: once the session is collected
// its coroutine is stopped and ends.
func TestQueryDroppedSession(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	settle := func() {
		for i := 0; i < 3; i++ {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	settle()
	before := runtime.NumGoroutine()
	func() {
		s := db.NewSession()
		rows, err := s.Query(ctx, "SELECT x FROM generate_series(1, 100000) AS g(x)")
		if err != nil || !rows.Next() {
			t.Fatal(err)
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		settle()
		if runtime.NumGoroutine() <= before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before the dropped session", runtime.NumGoroutine(), before)
		}
	}
}

// TestQueryInterleaved: a statement run while rows are open (database/sql's
// tx.Exec inside a tx.Query loop) first reads the rest of them into memory:
// it runs, and the rows go on, the current one included, as they would
// have from a result gathered whole; the write does not show in them.
func TestQueryInterleaved(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	if _, err := s.Exec(ctx, "CREATE TABLE kv (k INT64 NOT NULL, PRIMARY KEY (k)); INSERT INTO kv SELECT x FROM generate_series(1, 5000) AS g(x)"); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Query(ctx, "SELECT k FROM kv ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		if n == 3 {
			if _, err := s.Run(ctx, "INSERT INTO kv VALUES (6000)"); err != nil {
				t.Fatal(err)
			}
		}
		if got := rows.Row()[0].String(); got != fmt.Sprint(n) {
			t.Fatalf("row %d is %s", n, got)
		}
	}
	if rows.Err() != nil || n != 5000 {
		t.Fatalf("%d rows, %v", n, rows.Err())
	}
	res, err := s.Run(ctx, "SELECT count(*) FROM kv")
	if err != nil || res.Rows[0][0].String() != "5001" {
		t.Fatalf("count: %v %v", res, err)
	}
}

// TestQueryAfterDBClose: rows still open when their DB closes end with
// 57P01 at their next batch rather than reading a closed directory.
func TestQueryAfterDBClose(t *testing.T) {
	ctx := context.Background()
	db, s := openDB(t)
	rows, err := s.Query(ctx, "SELECT x FROM generate_series(1, 100000) AS g(x)")
	if err != nil || !rows.Next() {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	var e *strata.Error
	if !errors.As(rows.Err(), &e) || e.Code != "57P01" {
		t.Fatalf("rows after Close: %v", rows.Err())
	}
}

// TestSessionClose: Close closes the open rows and ends the session's
// coroutine; the session goes on with a new one.
func TestSessionClose(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	rows, err := s.Query(ctx, "SELECT x FROM generate_series(1, 100000) AS g(x)")
	if err != nil || !rows.Next() {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if rows.Next() || rows.Result() == nil || rows.Result().Tag != "SELECT 1" {
		t.Fatalf("rows after the session's Close: %+v", rows.Result())
	}
	rows, err = s.Query(ctx, "SELECT 2")
	if err != nil || !rows.Next() || rows.Row()[0].String() != "2" || rows.Close() != nil {
		t.Fatalf("a query after Close: %v", err)
	}
}
