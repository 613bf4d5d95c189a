package pgwire

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestDescribePortalEachRun: a client that describes each portal rather
// than the statement (libpq's PQexecPrepared: Bind, Describe, Execute,
// Sync per run) gets the statement's columns every time, kept from the
// previous portal's Describe while the catalog is unchanged and described
// again after DDL (here another session's ALTER TABLE that gives SELECT *
// a column more), and rows that match them.
func TestDescribePortalEachRun(t *testing.T) {
	srv, url := startServer(t)
	other := connect(t, url)
	execAll(t, other, "CREATE TABLE kv (k BIGINT PRIMARY KEY, a TEXT, b BIGINT)",
		"INSERT INTO kv VALUES (1, 'one', 10), (2, 'two', 20)")
	fe := rawFrontend(t, srv)
	roundTrip := func(msgs ...pgproto3.FrontendMessage) []pgproto3.BackendMessage {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		fe.Send(&pgproto3.Sync{})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var got []pgproto3.BackendMessage
		for {
			m, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			switch m := m.(type) {
			case *pgproto3.ReadyForQuery:
				return got
			case *pgproto3.RowDescription:
				fields := append([]pgproto3.FieldDescription(nil), m.Fields...)
				got = append(got, &pgproto3.RowDescription{Fields: fields})
			case *pgproto3.DataRow:
				got = append(got, &pgproto3.DataRow{Values: append([][]byte(nil), m.Values...)})
			default:
				got = append(got, m)
			}
		}
	}
	roundTrip(&pgproto3.Parse{Name: "p", Query: "SELECT * FROM kv WHERE k = $1"})
	// run binds k (text, as libpq sends it), describes and executes the
	// portal, and returns the announced column names and the row's width.
	run := func(k string) ([]string, int) {
		t.Helper()
		got := roundTrip(&pgproto3.Bind{PreparedStatement: "p", Parameters: [][]byte{[]byte(k)}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{})
		var names []string
		width := -1
		for _, m := range got {
			switch m := m.(type) {
			case *pgproto3.RowDescription:
				for _, f := range m.Fields {
					names = append(names, string(f.Name))
				}
			case *pgproto3.DataRow:
				width = len(m.Values)
			case *pgproto3.ErrorResponse:
				t.Fatalf("k = %s: %s %s", k, m.Code, m.Message)
			}
		}
		return names, width
	}
	for _, k := range []string{"1", "2", "1"} {
		if names, width := run(k); len(names) != 3 || width != 3 {
			t.Fatalf("k = %s: columns %v, row of %d", k, names, width)
		}
	}
	execAll(t, other, "ALTER TABLE kv ADD COLUMN c BIGINT DEFAULT 7")
	for _, k := range []string{"2", "1"} {
		if names, width := run(k); len(names) != 4 || names[3] != "c" || width != 4 {
			t.Fatalf("after ALTER TABLE, k = %s: columns %v, row of %d", k, names, width)
		}
	}
}
