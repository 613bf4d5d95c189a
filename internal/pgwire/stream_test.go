package pgwire

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// receiveAll reads backend messages up to ReadyForQuery and returns them
// in a compact form: "D" per DataRow, "T" RowDescription, the tag of a
// CommandComplete, "E:code" an error, "S" PortalSuspended; values are in
// rows.
func receiveAll(t *testing.T, fe *pgproto3.Frontend) (got []string, rows []string) {
	t.Helper()
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			got = append(got, "T")
		case *pgproto3.DataRow:
			got = append(got, "D")
			rows = append(rows, string(m.Values[0]))
		case *pgproto3.CommandComplete:
			got = append(got, string(m.CommandTag))
		case *pgproto3.ErrorResponse:
			got = append(got, "E:"+m.Code)
		case *pgproto3.PortalSuspended:
			got = append(got, "S")
		case *pgproto3.ReadyForQuery:
			return got, rows
		}
	}
}

// countD counts the DataRows in got before its first other message past
// the leading ones (T, parse and bind replies are not recorded).
func countD(got []string) (n int, rest []string) {
	i := 0
	for i < len(got) && got[i] == "T" {
		i++
	}
	for i < len(got) && got[i] == "D" {
		n++
		i++
	}
	return n, got[i:]
}

// TestRowsStreamBeforeError: a query's rows go to the client as they are
// produced, so a query that fails part way has sent the rows made before
// the failure, then the error, as PostgreSQL does; a server that gathered
// the whole result first would send the error alone. Both protocols; the
// connection stays usable.
func TestRowsStreamBeforeError(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	fe := c.PgConn().Frontend()
	const q = "SELECT 1 / (3000 - x) FROM generate_series(1, 5000) AS g(x)"

	fe.SendQuery(&pgproto3.Query{String: q})
	got, _ := send(t, fe)
	n, rest := countD(got)
	if got[0] != "T" || n == 0 || n >= 3000 || len(rest) != 1 || rest[0] != "E:22012" {
		t.Fatalf("simple query: %d rows, then %v (messages %d)", n, rest, len(got))
	}

	fe.SendParse(&pgproto3.Parse{Query: q})
	fe.SendBind(&pgproto3.Bind{})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'P'})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	got, _ = send(t, fe)
	n, rest = countD(got)
	if n == 0 || n >= 3000 || len(rest) != 1 || rest[0] != "E:22012" {
		t.Fatalf("extended: %d rows, then %v", n, rest)
	}

	var v int
	if err := c.QueryRow(context.Background(), "SELECT 7").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after the errors: %d, %v", v, err)
	}
}

// TestStreamLargeResult: a result of many chunks (rowChunk bytes each)
// arrives whole and in order over both protocols, with one tag counting
// every row; a portal fetched in parts still suspends and resumes.
func TestStreamLargeResult(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	fe := c.PgConn().Frontend()
	const n = 20000
	q := fmt.Sprintf("SELECT repeat('x', 20) || x FROM generate_series(1, %d) AS g(x)", n)
	check := func(mode string, got, rows []string) {
		t.Helper()
		if len(rows) != n || got[len(got)-1] != fmt.Sprintf("SELECT %d", n) {
			t.Fatalf("%s: %d rows, last message %s", mode, len(rows), got[len(got)-1])
		}
		for i, r := range rows {
			if want := strings.Repeat("x", 20) + fmt.Sprint(i+1); r != want {
				t.Fatalf("%s: row %d is %q, want %q", mode, i, r, want)
			}
		}
	}
	fe.SendQuery(&pgproto3.Query{String: q})
	got, rows := send(t, fe)
	check("simple", got, rows)

	fe.SendParse(&pgproto3.Parse{Name: "big", Query: q})
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "big"})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	got, rows = send(t, fe)
	check("extended", got, rows)

	fe.SendBind(&pgproto3.Bind{PreparedStatement: "big", DestinationPortal: "p"})
	fe.SendExecute(&pgproto3.Execute{Portal: "p", MaxRows: n - 1})
	fe.SendExecute(&pgproto3.Execute{Portal: "p", MaxRows: n - 1})
	fe.SendSync(&pgproto3.Sync{})
	got, rows = send(t, fe)
	if len(rows) != n || got[n-1] != "S" || got[len(got)-1] != "SELECT 1" {
		t.Fatalf("in parts: %d rows, messages %v … %v", len(rows), got[n-2:n], got[len(got)-1])
	}
}

// TestDescribedParamColumn: a column that is a bare parameter is
// described before its value is known, as text; bound to a binary int4 it
// is sent as the text it was described as, whether the rows stream
// (Execute with no limit) or are fetched in parts. It failed with a cast
// to UNKNOWN before.
func TestDescribedParamColumn(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	fe := c.PgConn().Frontend()
	fe.SendParse(&pgproto3.Parse{Name: "p1", Query: "SELECT $1", ParameterOIDs: []uint32{oidInt4}})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'S', Name: "p1"})
	fe.SendSync(&pgproto3.Sync{})
	send(t, fe)
	for _, limit := range []uint32{0, 5} {
		fe.SendBind(&pgproto3.Bind{PreparedStatement: "p1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 42}}})
		fe.SendExecute(&pgproto3.Execute{MaxRows: limit})
		fe.SendSync(&pgproto3.Sync{})
		got, rows := send(t, fe)
		if len(rows) != 1 || rows[0] != "42" || got[len(got)-1] != "SELECT 1" {
			t.Fatalf("limit %d: %v %v", limit, got, rows)
		}
	}
}

// TestCopyToStreams: COPY … TO STDOUT of many chunks arrives whole with
// its header and count; a statement that returns its rows whole (SHOW)
// still copies; a query failing part way sends the lines made before its
// error.
func TestCopyToStreams(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	pc := c.PgConn()
	ctx := context.Background()
	var out bytes.Buffer
	tag, err := pc.CopyTo(ctx, &out, "COPY (SELECT x, 'v' || x FROM generate_series(1, 20000) AS g(x)) TO STDOUT WITH (FORMAT csv, HEADER true)")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if tag.String() != "COPY 20000" || len(lines) != 20001 || lines[1] != "1,v1" || lines[20000] != "20000,v20000" {
		t.Fatalf("%s: %d lines, %q … %q", tag, len(lines), lines[:2], lines[len(lines)-1])
	}
	out.Reset()
	if tag, err = pc.CopyTo(ctx, &out, "COPY (SHOW TimeZone) TO STDOUT"); err != nil || tag.String() != "COPY 1" || out.Len() == 0 {
		t.Fatalf("SHOW: %s %q %v", tag, out.String(), err)
	}
	out.Reset()
	_, err = pc.CopyTo(ctx, &out, "COPY (SELECT 1 / (3000 - x) FROM generate_series(1, 5000) AS g(x)) TO STDOUT")
	if err == nil || !strings.Contains(err.Error(), "22012") || out.Len() == 0 {
		t.Fatalf("failing COPY: %d bytes, %v", out.Len(), err)
	}
}
