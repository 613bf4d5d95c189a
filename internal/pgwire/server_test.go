package pgwire

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/strata-db/strata/internal/storage"
)

// startServer serves a fresh database on a random loopback port and
// returns a connection string for it.
func startServer(t testing.TB) (*Server, string) {
	t.Helper()
	eng, err := storage.Open(t.TempDir(), storage.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(eng, Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		eng.Close()
	})
	return srv, "postgres://anyone@" + srv.Addr().String() + "/strata?sslmode=disable"
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// execAll runs each statement on c, failing the test at the first error.
func execAll(t *testing.T, c *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestSimpleAndExtended(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id UINT64 NOT NULL, amount UINT256, ts DATETIME64(3, 'UTC'), name STRING, ok BOOL, PRIMARY KEY (id)) MODE VERSIONED"); err != nil {
		t.Fatal(err)
	}
	max := "115792089237316195423570985008687907853269984665640564039457584007913129639935"
	tag, err := c.Exec(ctx, "INSERT INTO t VALUES ($1, $2, $3, $4, $5)", 1, max, time.Date(2024, 1, 1, 0, 0, 0, 123e6, time.UTC), "a", true)
	if err != nil {
		t.Fatal(err)
	}
	if tag.String() != "INSERT 0 1" {
		t.Fatalf("tag %q", tag)
	}
	// Extended protocol, binary results (pgx asks binary for numeric and timestamptz).
	var amount pgtype.Numeric
	var ts time.Time
	var name string
	var ok bool
	var id uint64
	if err := c.QueryRow(ctx, "SELECT id, amount, ts, name, ok FROM t WHERE id = $1", 1).Scan(&id, &amount, &ts, &name, &ok); err != nil {
		t.Fatal(err)
	}
	if numericString(amount) != max || !ts.Equal(time.Date(2024, 1, 1, 0, 0, 0, 123e6, time.UTC)) || name != "a" || !ok || id != 1 {
		t.Fatalf("got %v %v %v %v %v", id, numericString(amount), ts, name, ok)
	}
	// Simple protocol: text results.
	rows, err := c.Query(ctx, "SELECT amount::STRING, ts FROM t", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		vals := rows.RawValues()
		got = append(got, string(vals[0]), string(vals[1]))
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(got) != 2 || got[0] != max || got[1] != "2024-01-01 00:00:00.123+00" {
		t.Fatalf("simple protocol text %q", got)
	}
}

// numericString is the integer a pgtype.Numeric holds, in decimal.
func numericString(n pgtype.Numeric) string {
	v := new(big.Int).Set(n.Int)
	v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.Exp)), nil))
	return v.String()
}

func TestErrorPosition(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	_, err := c.Exec(context.Background(), "SELECT 1; SELECT nosuch FROM nowhere", pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("err %v", err)
	}
	if pe.Code != "42P01" || pe.Position != 30 {
		t.Fatalf("code %s position %d: %s", pe.Code, pe.Position, pe.Message)
	}
}

// TestEveryTypeBothFormats reads one value of every Strata type through
// pgx in binary (pgx's choice for the types it knows) and in text (the
// simple protocol), and checks both against the canonical text.
func TestEveryTypeBothFormats(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	cases := []struct{ typ, lit, text string }{
		{"BOOL", "true", "t"},
		{"INT8", "-128", "-128"},
		{"INT16", "-32768", "-32768"},
		{"INT32", "-2147483648", "-2147483648"},
		{"INT64", "-9223372036854775808", "-9223372036854775808"},
		{"INT128", "-170141183460469231731687303715884105728", "-170141183460469231731687303715884105728"},
		{"INT256", "-57896044618658097711785492504343953926634992332820282019728792003956564819968", "-57896044618658097711785492504343953926634992332820282019728792003956564819968"},
		{"UINT8", "255", "255"},
		{"UINT16", "65535", "65535"},
		{"UINT32", "4294967295", "4294967295"},
		{"UINT64", "18446744073709551615", "18446744073709551615"},
		{"UINT128", "340282366920938463463374607431768211455", "340282366920938463463374607431768211455"},
		{"UINT256", "115792089237316195423570985008687907853269984665640564039457584007913129639935", "115792089237316195423570985008687907853269984665640564039457584007913129639935"},
		{"DECIMAL(20,4)", "-1234567890123456.0500", "-1234567890123456.0500"},
		{"FLOAT32", "0.1", "0.1"},
		{"FLOAT64", "-1.5e300", "-1.5e+300"},
		{"STRING", "'héllo'", "héllo"},
		{"BYTES", "'\\x00ff'", `\x00ff`},
		{"DATE", "'1999-12-31'", "1999-12-31"},
		{"DATETIME64(6)", "'1970-01-01 00:00:00.000001'", "1970-01-01 00:00:00.000001+00"},
		{"UUID", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	}
	for i, tc := range cases {
		name := fmt.Sprintf("t%d", i)
		if _, err := c.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (k INT64 NOT NULL, v %s, PRIMARY KEY (k))", name, tc.typ)); err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if _, err := c.Exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, CAST(%s AS %s)), (2, NULL)", name, tc.lit, tc.typ)); err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		q := fmt.Sprintf("SELECT v FROM %s ORDER BY k", name)
		// Text, through the simple protocol.
		rows, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for rows.Next() {
			if v := rows.RawValues()[0]; v == nil {
				texts = append(texts, "NULL")
			} else {
				texts = append(texts, string(v))
			}
		}
		if rows.Err() != nil || len(texts) != 2 || texts[0] != tc.text || texts[1] != "NULL" {
			t.Errorf("%s text: %q %v", tc.typ, texts, rows.Err())
		}
		// Binary where pgx asks for it; decoded by pgx, printed back.
		rows, err = c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var vals []any
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				t.Fatalf("%s binary decode: %v", tc.typ, err)
			}
			vals = append(vals, v[0])
		}
		if rows.Err() != nil || len(vals) != 2 || vals[1] != nil {
			t.Fatalf("%s binary: %v %v", tc.typ, vals, rows.Err())
		}
		if got := goText(vals[0]); got != tc.text {
			t.Errorf("%s binary: %s, want %s", tc.typ, got, tc.text)
		}
	}
}

// goText prints what pgx decoded the way the server's text format does.
func goText(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "t"
		}
		return "f"
	case pgtype.Numeric:
		s := x.Int.String()
		if x.Exp >= 0 {
			return s + strings.Repeat("0", int(x.Exp))
		}
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		for len(s) <= int(-x.Exp) {
			s = "0" + s
		}
		s = s[:len(s)+int(x.Exp)] + "." + s[len(s)+int(x.Exp):]
		if neg {
			s = "-" + s
		}
		return s
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strings.Replace(strconv.FormatFloat(x, 'g', -1, 64), "e+", "e+", 1)
	case []byte:
		return `\x` + hex.EncodeToString(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 && x.Location() == time.UTC && x.Year() == 1999 {
			return x.Format("2006-01-02")
		}
		return x.UTC().Format("2006-01-02 15:04:05.000000") + "+00"
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	}
	return fmt.Sprint(v)
}
