package pgwire

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestStaleResultShape: a prepared statement whose result columns change
// after it was described (another session's ALTER TABLE under its *)
// fails its next run with PostgreSQL's 0A000 "cached plan must not change
// result type" rather than return rows of another shape than the client
// decodes by; the connection stays usable, preparing the statement again
// gives the new shape, and statements whose shape did not change run on.
func TestStaleResultShape(t *testing.T) {
	_, url := startServer(t)
	c, other := connect(t, url), connect(t, url)
	ctx := context.Background()
	exec := func(conn *pgx.Conn, q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// columns runs q (pgx caches its prepared statement) and returns its
	// result's column names and the values of its one row.
	columns := func(q string) ([]string, []any, error) {
		rows, err := c.Query(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		var names []string
		for _, f := range rows.FieldDescriptions() {
			names = append(names, f.Name)
		}
		var vals []any
		for rows.Next() {
			if vals, err = rows.Values(); err != nil {
				return nil, nil, err
			}
		}
		return names, vals, rows.Err()
	}
	shape := func(q string, want int) {
		t.Helper()
		names, vals, err := columns(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(names) != want || len(vals) != want {
			t.Fatalf("%s: columns %v, values %v; want %d", q, names, vals, want)
		}
	}
	stale := func(q string) {
		t.Helper()
		_, _, err := columns(q)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "0A000" || pe.Message != "cached plan must not change result type" {
			t.Fatalf("%s: got %v, want 0A000 cached plan must not change result type", q, err)
		}
		// The connection is usable after the error.
		var one int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("after the error: %v %d", err, one)
		}
	}
	exec(c, "CREATE TABLE t (a INT64 NOT NULL, b INT32, PRIMARY KEY (a))")
	exec(c, "INSERT INTO t VALUES (1, 5)")
	const star, named = "SELECT * FROM t", "SELECT a, b FROM t"
	shape(star, 2)
	shape(named, 2)
	if _, err := c.Prepare(ctx, "s", star); err != nil {
		t.Fatal(err)
	}

	exec(other, "ALTER TABLE t ADD COLUMN c INT64")
	stale(star)
	shape(star, 3) // pgx dropped the statement on the error and prepares it anew
	shape(named, 2)
	// A statement the client prepared itself stays stale until it is
	// prepared again, as in PostgreSQL.
	for i := 0; i < 2; i++ {
		stale("s")
	}
	if err := c.Deallocate(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prepare(ctx, "s", star); err != nil {
		t.Fatal(err)
	}
	shape("s", 3)
	shape(star, 3) // pgx forgot star's statement on the error of "s", its text

	exec(other, "ALTER TABLE t DROP COLUMN c")
	stale(star)
	shape(star, 2)
	shape(named, 2)

	// Same names and count, another wire type (int4 to int8).
	exec(other, "ALTER TABLE t ALTER COLUMN b TYPE INT64")
	stale(star)
	stale(named)
	shape(star, 2)
	shape(named, 2)

	// DDL on another table changes nothing here.
	exec(other, "CREATE TABLE u (k INT64 NOT NULL, PRIMARY KEY (k))")
	exec(other, "ALTER TABLE u ADD COLUMN z STRING")
	shape(star, 2)
	shape(named, 2)

	// Inside a transaction the error fails it, as every error does.
	exec(other, "ALTER TABLE t ADD COLUMN d STRING")
	exec(c, "BEGIN")
	_, _, err := columns(star)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "0A000" {
		t.Fatalf("in a transaction: got %v, want 0A000", err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); !errors.As(err, &pe) || pe.Code != "25P02" {
		t.Fatalf("after the error in a transaction: got %v, want 25P02", err)
	}
	exec(c, "ROLLBACK")
	shape(star, 3)
}

// TestStalePortal: a portal described on its own (its statement never
// was) is checked by that description: bound and described in a
// transaction block, then run after another session's ALTER TABLE, it
// fails with 0A000 and sends no rows.
func TestStalePortal(t *testing.T) {
	_, url := startServer(t)
	c, other := connect(t, url), connect(t, url)
	ctx := context.Background()
	execAll(t, other, "CREATE TABLE t (a INT64 NOT NULL, PRIMARY KEY (a))", "INSERT INTO t VALUES (1)")
	pc := c.PgConn()
	fe := pc.Frontend()
	// roundTrip sends msgs, then Sync unless they are a simple Query, and
	// returns what came back before ReadyForQuery.
	roundTrip := func(msgs ...pgproto3.FrontendMessage) []pgproto3.BackendMessage {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if _, simple := msgs[0].(*pgproto3.Query); !simple {
			fe.Send(&pgproto3.Sync{})
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var got []pgproto3.BackendMessage
		for {
			m, err := pc.ReceiveMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				return got
			}
			got = append(got, m)
		}
	}
	roundTrip(&pgproto3.Query{String: "BEGIN"})
	got := roundTrip(&pgproto3.Parse{Name: "p", Query: "SELECT * FROM t"},
		&pgproto3.Bind{PreparedStatement: "p"},
		&pgproto3.Describe{ObjectType: 'P'})
	if rd, ok := got[len(got)-1].(*pgproto3.RowDescription); !ok || len(rd.Fields) != 1 {
		t.Fatalf("describe: %#v", got)
	}
	if _, err := other.Exec(ctx, "ALTER TABLE t ADD COLUMN b INT64"); err != nil {
		t.Fatal(err)
	}
	got = roundTrip(&pgproto3.Execute{})
	if len(got) != 1 {
		t.Fatalf("execute: %#v", got)
	}
	if e, ok := got[0].(*pgproto3.ErrorResponse); !ok || e.Code != "0A000" {
		t.Fatalf("execute: %#v, want 0A000", got[0])
	}
	roundTrip(&pgproto3.Query{String: "ROLLBACK"})
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the error: %v %d", err, n)
	}
}
