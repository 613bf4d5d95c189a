package pgwire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestSCRAM: once a user exists every connection runs SCRAM-SHA-256; a wrong
// password, an unknown user and the right password of a dropped user all
// fail with the same 28P01 and message (R13.1).
func TestSCRAM(t *testing.T) {
	srv, url := startServer(t)
	admin := connect(t, url)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE USER alice PASSWORD 'secret one'"); err != nil {
		t.Fatal(err)
	}
	base := "postgres://%s@" + srv.Addr().String() + "/strata?sslmode=disable"
	try := func(userinfo string) error {
		c, err := pgx.Connect(ctx, strings.Replace(base, "%s", userinfo, 1))
		if err == nil {
			defer c.Close(ctx)
			var one int
			err = c.QueryRow(ctx, "SELECT 1").Scan(&one)
		}
		return err
	}
	if err := try("alice:secret%20one"); err != nil {
		t.Fatalf("right password: %v", err)
	}
	for _, who := range []string{"alice:wrong", "alice", "bob:secret%20one"} {
		err := try(who)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28P01" || pe.Message != `password authentication failed for user "`+strings.Split(who, ":")[0]+`"` {
			t.Errorf("%s: %v", who, err)
		}
	}
	// The connection from before the user existed goes on; a new one with
	// no password is refused.
	if _, err := admin.Exec(ctx, "ALTER USER alice PASSWORD 'two'"); err != nil {
		t.Fatal(err)
	}
	if err := try("alice:secret%20one"); err == nil {
		t.Error("old password accepted after ALTER USER")
	}
	if err := try("alice:two"); err != nil {
		t.Errorf("new password: %v", err)
	}
}

func TestParseVerifier(t *testing.T) {
	for _, v := range []string{"", "md5abc", "SCRAM-SHA-256$4096:c2FsdA==$AAAA:BBBB", "SCRAM-SHA-256$x:c2FsdA==$$"} {
		if _, ok := parseVerifier(v); ok {
			t.Errorf("%q accepted", v)
		}
	}
}
