package pgwire

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/strata-db/strata/internal/storage"
)

// startServer serves a fresh database on a random loopback port and
// returns a connection string for it.
func startServer(t *testing.T) (*Server, string) {
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
