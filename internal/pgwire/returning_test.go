package pgwire

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestReturning: a write with RETURNING sends RowDescription, its rows and
// its own command tag, in the simple and the extended protocol.
func TestReturning(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE kv (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec} {
		k := int64(mode) * 10
		rows, err := c.Query(ctx, "INSERT INTO kv VALUES ($1, 'a'), ($2, 'b') RETURNING k + 100 AS big, v", mode, k, k+1)
		if err != nil {
			t.Fatal(err)
		}
		fields := rows.FieldDescriptions()
		var got []string
		for rows.Next() {
			var big int64
			var v string
			if err := rows.Scan(&big, &v); err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.Join([]string{v, string(rune('0' + big - 100 - k))}, ""))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if tag := rows.CommandTag().String(); tag != "INSERT 0 2" {
			t.Fatalf("mode %v: tag %q", mode, tag)
		}
		if len(fields) != 2 || fields[0].Name != "big" || fields[0].DataTypeOID != 20 || fields[1].Name != "v" || fields[1].DataTypeOID != 25 {
			t.Fatalf("mode %v: fields %+v", mode, fields)
		}
		if strings.Join(got, " ") != "a0 b1" {
			t.Fatalf("mode %v: rows %v", mode, got)
		}
	}
	var k int64
	var v string
	if err := c.QueryRow(ctx, "DELETE FROM kv WHERE k = $1 RETURNING *", 10).Scan(&k, &v); err != nil || k != 10 || v != "a" {
		t.Fatalf("DELETE RETURNING: %d %q %v", k, v, err)
	}
	if err := c.QueryRow(ctx, "UPDATE kv SET v = v || '!' WHERE k = $1 RETURNING k, v", 11).Scan(&k, &v); err != nil || k != 11 || v != "b!" {
		t.Fatalf("UPDATE RETURNING: %d %q %v", k, v, err)
	}
	// Without RETURNING a write still describes no rows (NoData).
	sd, err := c.PgConn().Prepare(ctx, "plain", "INSERT INTO kv VALUES ($1, $2)", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.Fields) != 0 {
		t.Fatalf("plain INSERT described %d columns", len(sd.Fields))
	}
}

// TestReturningPortal: Describe of a portal whose write has RETURNING
// describes its rows before Execute; an Execute with a row limit sends
// them in pieces, and the write's tag at the end. The write happens once.
func TestReturningPortal(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE kv (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	pc := c.PgConn()
	if _, err := pc.Prepare(ctx, "w", "INSERT INTO kv SELECT x, 'v' || x FROM generate_series(1, 3) AS g(x) RETURNING v", nil); err != nil {
		t.Fatal(err)
	}
	fe := pc.Frontend()
	fe.SendBind(&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "w"})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'P', Name: "p"})
	fe.SendExecute(&pgproto3.Execute{Portal: "p", MaxRows: 2})
	fe.SendExecute(&pgproto3.Execute{Portal: "p", MaxRows: 2})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			got = append(got, "desc:"+string(m.Fields[0].Name))
		case *pgproto3.NoData:
			got = append(got, "nodata")
		case *pgproto3.DataRow:
			got = append(got, string(m.Values[0]))
		case *pgproto3.PortalSuspended:
			got = append(got, "suspended")
		case *pgproto3.CommandComplete:
			got = append(got, string(m.CommandTag))
		case *pgproto3.ErrorResponse:
			t.Fatalf("error: %s", m.Message)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	want := "desc:v v1 v2 suspended v3 INSERT 0 3"
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("got  %s\nwant %s", g, want)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM kv").Scan(&n); err != nil || n != 3 {
		t.Fatalf("count %d %v", n, err)
	}
	// A RETURNING list naming no column fails at Prepare, as in PostgreSQL.
	if _, err := pc.Prepare(ctx, "bad", "DELETE FROM kv RETURNING nope", nil); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("bad RETURNING prepared: %v", err)
	}
}
