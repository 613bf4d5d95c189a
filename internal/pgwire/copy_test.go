package pgwire

import (
	"bytes"
	"context"
	"errors"
	"github.com/jackc/pgx/v5/pgproto3"
	"io"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

func TestCopy(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	pc := c.PgConn()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id INT64 NOT NULL, name STRING, amount UINT256, PRIMARY KEY (id))"); err != nil {
		t.Fatal(err)
	}
	// Text format; CopyData messages split records anywhere.
	in := "1\talice\t10\n2\t\\N\t115792089237316195423570985008687907853269984665640564039457584007913129639935\n3\ttab\\there\t\\N\n"
	tag, err := pc.CopyFrom(ctx, &chunky{data: []byte(in), n: 5}, "COPY t FROM STDIN")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("copy from: %v %v", tag, err)
	}
	// CSV with a header, a quoted delimiter and a quoted newline.
	csv := "id,name\n4,\"a,b\"\n5,\"two\nlines\"\n6,\n7,\"\"\n"
	if tag, err := pc.CopyFrom(ctx, strings.NewReader(csv), "COPY t (id, name) FROM STDIN WITH (FORMAT csv, HEADER)"); err != nil || tag.String() != "COPY 4" {
		t.Fatalf("csv copy from: %v %v", tag, err)
	}
	var out bytes.Buffer
	if _, err := pc.CopyTo(ctx, &out, "COPY (SELECT id, name, amount FROM t ORDER BY id) TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	want := "1\talice\t10\n2\t\\N\t115792089237316195423570985008687907853269984665640564039457584007913129639935\n3\ttab\\there\t\\N\n" +
		"4\ta,b\t\\N\n5\ttwo\\nlines\t\\N\n6\t\\N\t\\N\n7\t\t\\N\n"
	if out.String() != want {
		t.Fatalf("copy to:\n%q\nwant\n%q", out.String(), want)
	}
	out.Reset()
	if _, err := pc.CopyTo(ctx, &out, "COPY t (id, name) TO STDOUT WITH CSV HEADER"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "id,name\n") || !strings.Contains(out.String(), "4,\"a,b\"\n") || !strings.Contains(out.String(), "7,\"\"\n") {
		t.Fatalf("csv copy to:\n%s", out.String())
	}

	// A bad value on line 3 fails the whole COPY, naming the line; nothing
	// is written.
	bad := "10\tx\t1\n11\ty\t2\n12\tz\tnot a number\n13\tw\t4\n"
	_, err = pc.CopyFrom(ctx, strings.NewReader(bad), "COPY t FROM STDIN")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "line 3") || !strings.Contains(pe.Message, "column amount") {
		t.Fatalf("bad row: %v", err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 7 {
		t.Fatalf("rows after the failed COPY: %d %v", n, err)
	}
	for _, sql := range []string{
		"COPY t TO STDOUT WITH (FORMAT binary)",
		"COPY nosuch FROM STDIN",
		"COPY t (nosuch) FROM STDIN",
		"COPY t FROM '/etc/passwd'",
	} {
		if _, err := pc.CopyFrom(ctx, strings.NewReader(""), sql); err == nil {
			t.Errorf("%s: accepted", sql)
		}
	}
	// Too few fields.
	if _, err := pc.CopyFrom(ctx, strings.NewReader("20\tx\n"), "COPY t FROM STDIN"); err == nil || !strings.Contains(err.Error(), "missing data for column \"amount\"") {
		t.Errorf("short row: %v", err)
	}
}

// chunky is a reader that returns at most n bytes per Read, so pgconn
// sends the data in many CopyData messages.
type chunky struct {
	data []byte
	n    int
}

func (c *chunky) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

// TestCopyBinary: pgx's CopyFrom (binary COPY, values encoded by the
// column types the server describes) loads every common type exactly, and
// a value out of its column's range fails the whole COPY.
func TestCopyBinary(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE b (id UINT16 NOT NULL, amount UINT256, at DATETIME64(3, 'Europe/Paris'), ok BOOL, f FLOAT64, raw BYTES, name STRING, d DATE, PRIMARY KEY (id))"); err != nil {
		t.Fatal(err)
	}
	max, _ := new(big.Int).SetString("115792089237316195423570985008687907853269984665640564039457584007913129639935", 10)
	at := time.Date(2024, 7, 1, 12, 0, 0, 123e6, time.UTC)
	rows := [][]any{
		{1, pgtype.Numeric{Int: max, Valid: true}, at, true, 0.5, []byte{0, 1, 255}, "héllo", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{2, nil, nil, nil, nil, nil, nil, nil},
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"b"}, []string{"id", "amount", "at", "ok", "f", "raw", "name", "d"}, pgx.CopyFromRows(rows))
	if err != nil || n != 2 {
		t.Fatalf("copy from: %d %v", n, err)
	}
	var out bytes.Buffer
	if _, err := c.PgConn().CopyTo(ctx, &out, "COPY (SELECT * FROM b ORDER BY id) TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	want := "1\t" + max.String() + "\t2024-07-01 14:00:00.123+02\tt\t0.5\t\\\\x0001ff\théllo\t2024-02-29\n" +
		"2\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n"
	if out.String() != want {
		t.Fatalf("read back:\n%q\nwant\n%q", out.String(), want)
	}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"b"}, []string{"id"}, pgx.CopyFromRows([][]any{{3}, {70000}}))
	if err == nil || !strings.Contains(err.Error(), "row 2") {
		t.Fatalf("out of range: %v", err)
	}
	var count int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM b").Scan(&count); err != nil || count != 2 {
		t.Fatalf("rows after the failed COPY: %d %v", count, err)
	}
}

// TestCopyInFailedTransaction checks that COPY FROM STDIN in a failed
// transaction is refused with 25P02 before any CopyInResponse, as
// PostgreSQL refuses it: the client is never asked for data.
func TestCopyInFailedTransaction(t *testing.T) {
	srv, _ := startServerWith(t, Config{})
	fe := rawFrontend(t, srv)
	// until sends q and returns the messages up to ReadyForQuery.
	until := func(q string) []pgproto3.BackendMessage {
		fe.Send(&pgproto3.Query{String: q})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var got []pgproto3.BackendMessage
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := msg.(*pgproto3.CopyInResponse); ok {
				t.Fatalf("%s: the server asked for COPY data", q)
			}
			got = append(got, msg)
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				return got
			}
		}
	}
	until("CREATE TABLE t (id INT64 NOT NULL, PRIMARY KEY (id))")
	until("BEGIN")
	until("SELECT 1/0")
	got := until("COPY t FROM STDIN")
	if e, ok := got[0].(*pgproto3.ErrorResponse); !ok || e.Code != "25P02" {
		t.Fatalf("COPY in a failed transaction: %#v, want ErrorResponse 25P02", got[0])
	}
}
