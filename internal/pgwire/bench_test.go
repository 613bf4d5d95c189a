package pgwire

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// BenchmarkSelectWire reads 10 000 rows (an INT64, a UINT256, a DATETIME64
// and a STRING) through pgx: text over the simple protocol and binary over
// the extended one. It measures the server's encoding and the protocol
// together, so compare runs on one machine only.
func BenchmarkSelectWire(b *testing.B) {
	ctx := context.Background()
	c := benchConn(b, "CREATE TABLE t (k INT64 NOT NULL, amount UINT256, at DATETIME64(3), name STRING, PRIMARY KEY (k))")
	for chunk := 0; chunk < 10; chunk++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t VALUES ")
		for i := 0; i < 1000; i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			k := chunk*1000 + i
			fmt.Fprintf(&sb, "(%d, %d000000000000000000000, '2024-01-01 00:00:%02d.%03d', 'name %d')", k, k, k%60, k%1000, k)
		}
		if _, err := c.Exec(ctx, sb.String()); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []struct {
		name string
		mode pgx.QueryExecMode
	}{{"text", pgx.QueryExecModeSimpleProtocol}, {"binary", pgx.QueryExecModeCacheStatement}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rows, err := c.Query(ctx, "SELECT k, amount, at, name FROM t", mode.mode)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
				}
				if rows.Err() != nil || n != 10000 {
					b.Fatal(n, rows.Err())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/row")
		})
	}
}

// BenchmarkEncodeRows is the server's side alone: encoding 10 000 rows into
// DataRow messages, in text and in binary.
func BenchmarkEncodeRows(b *testing.B) {
	res := benchResult(b, 10000)
	for _, f := range []struct {
		name    string
		formats []int16
	}{{"text", nil}, {"binary", []int16{1}}} {
		b.Run(f.name, func(b *testing.B) {
			c := discardConn()
			b.ReportAllocs()
			for b.Loop() {
				if err := c.sendRows(res, 0, len(res.Rows), f.formats); err != nil {
					b.Fatal(err)
				}
				c.be.Flush()
			}
		})
	}
}

// BenchmarkCopyFrom loads 10 000 rows per op with COPY … FROM STDIN (text):
// parsing, checking every value, and the one INSERT that writes them.
func BenchmarkCopyFrom(b *testing.B) {
	ctx := context.Background()
	c := benchConn(b, "CREATE TABLE t (k INT64 NOT NULL, amount UINT256, name STRING, PRIMARY KEY (k))")
	var data strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&data, "%d\t%d000000000000\tname %d\n", i, i, i)
	}
	b.SetBytes(int64(data.Len()))
	for b.Loop() {
		tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data.String()), "COPY t FROM STDIN")
		if err != nil || tag.RowsAffected() != 10000 {
			b.Fatal(tag, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/row")
}

// BenchmarkPointWire is bench/'s R1 over the wire at the server's end: a
// point SELECT by the full key of a balances-like table, prepared once and
// run with the key as parameters (pgx's statement cache, binary results),
// client and server in this process over loopback TCP. The amount is read
// as text (amount::STRING), as bench/ reads it since 2026-12-07: figures
// from before then read the numeric in binary.
func BenchmarkPointWire(b *testing.B) {
	ctx := context.Background()
	c := benchConn(b, "CREATE TABLE bal (chain UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL, amount UINT256, PRIMARY KEY (chain, address, token)) MODE VERSIONED")
	const keys = 10_000
	var sb strings.Builder
	sb.WriteString("INSERT INTO bal VALUES ")
	for k := 0; k < keys; k++ {
		if k > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, '0x%040x', 'T%d', %d000000000000)", k%4, k*7919, k%20, k)
	}
	if _, err := c.Exec(ctx, sb.String()); err != nil {
		b.Fatal(err)
	}
	const q = "SELECT amount::STRING FROM bal WHERE chain = $1::UINT16 AND address = $2 AND token = $3"
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		k = (k + 7) % keys
		var amount string
		if err := c.QueryRow(ctx, q, k%4, fmt.Sprintf("0x%040x", k*7919), fmt.Sprintf("T%d", k%20)).Scan(&amount); err != nil {
			b.Fatal(err)
		}
	}
}

// benchConn starts a server, connects to it with pgx (closed when b ends)
// and runs ddl.
func benchConn(b *testing.B, ddl string) *pgx.Conn {
	b.Helper()
	_, url := startServer(b)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(ctx) })
	if _, err := c.Exec(ctx, ddl); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkCursorWire reads 100 000 rows (an INT64 and a STRING) through a
// portal fetched 1 000 rows at a time, as a driver with a fetch size does:
// the bytes allocated per read show what the server holds.
func BenchmarkCursorWire(b *testing.B) {
	c := benchConn(b, "SELECT 1")
	fe := c.PgConn().Frontend()
	fe.SendParse(&pgproto3.Parse{Name: "s", Query: "SELECT x, 'name ' || x FROM generate_series(1, 100000) AS g(x)"})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		b.Fatal(err)
	}
	drain := func() (rows int, done bool) {
		for {
			msg, err := fe.Receive()
			if err != nil {
				b.Fatal(err)
			}
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				rows++
			case *pgproto3.CommandComplete:
				done = true
			case *pgproto3.ErrorResponse:
				b.Fatal(m.Message)
			case *pgproto3.ReadyForQuery:
				return rows, done
			}
		}
	}
	drain()
	b.ReportAllocs()
	for b.Loop() {
		fe.SendQuery(&pgproto3.Query{String: "BEGIN"})
		fe.Flush()
		drain()
		fe.SendBind(&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "c"})
		total := 0
		for {
			fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 1000})
			fe.SendSync(&pgproto3.Sync{})
			if err := fe.Flush(); err != nil {
				b.Fatal(err)
			}
			n, done := drain()
			total += n
			if done {
				break
			}
		}
		fe.SendQuery(&pgproto3.Query{String: "COMMIT"})
		fe.Flush()
		drain()
		if total != 100000 {
			b.Fatalf("%d rows", total)
		}
	}
}
