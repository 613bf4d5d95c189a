package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestTxStatus: ReadyForQuery reports I, T and E as PostgreSQL does.
func TestTxStatus(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	pc := c.PgConn()
	status := func() byte { return pc.TxStatus() }
	if _, err := c.Exec(ctx, "CREATE TABLE kv (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	if status() != 'I' {
		t.Fatalf("idle: %c", status())
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if status() != 'T' {
		t.Fatalf("in transaction: %c", status())
	}
	if _, err := c.Exec(ctx, "SELECT nosuch FROM kv"); err == nil {
		t.Fatal("bad column accepted")
	}
	if status() != 'E' {
		t.Fatalf("failed transaction: %c", status())
	}
	_, err := c.Exec(ctx, "SELECT 1")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25P02" {
		t.Fatalf("statement in failed transaction: %v", err)
	}
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if status() != 'I' {
		t.Fatalf("after rollback: %c", status())
	}
}

// TestPortalSuspended runs a portal with a row limit: PortalSuspended after
// each full batch, CommandComplete after the last.
func TestPortalSuspended(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE kv (k INT64 NOT NULL, PRIMARY KEY (k)); INSERT INTO kv VALUES (1), (2), (3), (4), (5)", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	pc := c.PgConn()
	if _, err := pc.Prepare(ctx, "q", "SELECT k FROM kv ORDER BY k", nil); err != nil {
		t.Fatal(err)
	}
	// pgconn has no Execute with a limit; speak the protocol through its
	// frontend.
	fe := pc.Frontend()
	fe.SendBind(&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "q"})
	fe.SendExecute(&pgproto3.Execute{Portal: "p", MaxRows: 2})
	fe.SendExecute(&pgproto3.Execute{Portal: "p", MaxRows: 2})
	fe.SendExecute(&pgproto3.Execute{Portal: "p", MaxRows: 2})
	fe.SendSync(&pgproto3.Sync{})
	got, rows := send(t, fe)
	if g := compact(got); g != "D×2 S D×2 S D×1 SELECT 1" || strings.Join(rows, " ") != "1 2 3 4 5" {
		t.Fatalf("got %s, rows %v", g, rows)
	}
}

// TestCancel: a CancelRequest carrying the BackendKeyData the client got
// cancels the context of the statement its connection runs; one with a
// wrong key does nothing. (Whether the statement then stops at once is the
// executor's business: it sees the context.)
func TestCancel(t *testing.T) {
	srv, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	srv.mu.Lock()
	var sc *conn
	for _, x := range srv.conns {
		sc = x
	}
	srv.mu.Unlock()
	if sc == nil || sc.pid != c.PgConn().PID() {
		t.Fatalf("server conn %v, client pid %d", sc, c.PgConn().PID())
	}
	// Stand in for a running statement.
	stmtCtx, done := sc.statementContext()
	defer done()
	srv.cancelRequest(sc.pid, []byte{1, 2, 3, 4})
	if sc.secret == 0x01020304 {
		t.Skip("the random key happened to be the wrong one")
	}
	select {
	case <-stmtCtx.Done():
		t.Fatal("a wrong key cancelled the statement")
	case <-time.After(50 * time.Millisecond):
	}
	if err := c.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stmtCtx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("CancelRequest did not cancel the statement")
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

// TestSimpleQueryScript: one Query message with several statements answers
// each; the first error stops the rest and its Position counts from the
// start of the message; an empty query gets EmptyQueryResponse; COMMIT
// outside a transaction warns as PostgreSQL does.
func TestSimpleQueryScript(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	pc := c.PgConn()
	var notices []string
	results, err := pc.Exec(ctx, "CREATE TABLE kv (k INT64 NOT NULL, PRIMARY KEY (k)); INSERT INTO kv VALUES (1); SELECT k FROM kv").ReadAll()
	if err != nil || len(results) != 3 || results[1].CommandTag.String() != "INSERT 0 1" || string(results[2].Rows[0][0]) != "1" {
		t.Fatalf("%v %v", results, err)
	}
	_, err = pc.Exec(ctx, "INSERT INTO kv VALUES (2); SELECT 'é', nosuch FROM kv; INSERT INTO kv VALUES (3)").ReadAll()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("bad script: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM kv").Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows: %d %v (statements after the error ran?)", n, err)
	}
	if pe.Position != 40 {
		t.Errorf("position %d, want 40 (nosuch, counting é as one character)", pe.Position)
	}
	res, err := pc.Exec(ctx, " ; -- nothing").ReadAll()
	if err != nil || len(res) != 1 || res[0].CommandTag.String() != "" {
		t.Fatalf("empty query: %v %v", res, err)
	}
	cfg := c.Config().Config
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Code+" "+n.Message) }
	pc2, err := pgconn.ConnectConfig(ctx, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pc2.Close(ctx)
	if _, err := pc2.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || notices[0] != "25P01 there is no transaction in progress" {
		t.Errorf("notices %q", notices)
	}
	// A statement's own warnings (session.Result.Notices) arrive too.
	notices = nil
	if _, err := pc2.Exec(ctx, "SET TIME ZONE 'Europe/Berlin'").ReadAll(); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.HasPrefix(notices[0], "01000 TimeZone is set to Europe/Berlin") {
		t.Errorf("SET TIME ZONE notices %q", notices)
	}
}

// TestParameterStatusOnSet: SET of a reported setting sends its new value.
func TestParameterStatusOnSet(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if got := c.PgConn().ParameterStatus("server_version"); !strings.HasPrefix(got, "15.0 (Strata ") {
		t.Fatalf("server_version %q", got)
	}
	if _, err := c.Exec(ctx, "SET application_name = 'reporter'"); err != nil {
		t.Fatal(err)
	}
	if got := c.PgConn().ParameterStatus("application_name"); got != "reporter" {
		t.Fatalf("application_name %q after SET", got)
	}
}

// TestParameterTypes: ParameterDescription gives each parameter the type
// its context implies (0, unspecified, where none does), and binary
// parameters of those types arrive intact.
func TestParameterTypes(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (id UINT16 NOT NULL, amount UINT256, at DATETIME64(3), name STRING, PRIMARY KEY (id))"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql  string
		oids []uint32
	}{
		{"INSERT INTO t VALUES ($1, $2, $3, $4)", []uint32{oidInt4, oidNumeric, oidTimestamptz, oidText}},
		{"INSERT INTO t (name, id) VALUES ($1, $2)", []uint32{oidText, oidInt4}},
		{"UPDATE t SET amount = $1 WHERE id = $2", []uint32{oidNumeric, oidInt4}},
		{"SELECT name FROM t WHERE amount > $1 AND id IN ($2, $3) LIMIT $4", []uint32{oidNumeric, oidInt4, oidInt4, oidInt8}},
		{"SELECT $1::INT64, $2", []uint32{oidInt8, 0}},
		{"DELETE FROM t WHERE at BETWEEN $1 AND $2", []uint32{oidTimestamptz, oidTimestamptz}},
	} {
		sd, err := c.PgConn().Prepare(ctx, "", tc.sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if fmt.Sprint(sd.ParamOIDs) != fmt.Sprint(tc.oids) {
			t.Errorf("%s: parameter OIDs %v, want %v", tc.sql, sd.ParamOIDs, tc.oids)
		}
	}
	at := time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)
	if _, err := c.Exec(ctx, "INSERT INTO t VALUES ($1, $2, $3, $4)", 65535, "115792089237316195423570985008687907853269984665640564039457584007913129639935", at, "x"); err != nil {
		t.Fatal(err)
	}
	var got time.Time
	var amount string
	if err := c.QueryRow(ctx, "SELECT at, amount::STRING FROM t WHERE id = $1", 65535).Scan(&got, &amount); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(at) || amount != "115792089237316195423570985008687907853269984665640564039457584007913129639935" {
		t.Fatalf("read back %v %s", got, amount)
	}
	if _, err := c.Exec(ctx, "INSERT INTO t VALUES ($1, NULL, NULL, NULL)", 70000); err == nil {
		t.Fatal("70000 accepted for a UINT16")
	}
}

// TestStartupSettings: parameters of the startup message are settings, as
// in PostgreSQL, reported back with ParameterStatus.
func TestStartupSettings(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url+"&application_name=starter&statement_timeout=1234")
	ctx := context.Background()
	if got := c.PgConn().ParameterStatus("application_name"); got != "starter" {
		t.Errorf("application_name %q", got)
	}
	for name, want := range map[string]string{"client_encoding": "UTF8", "DateStyle": "ISO, MDY", "TimeZone": "UTC", "standard_conforming_strings": "on"} {
		if got := c.PgConn().ParameterStatus(name); got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}
	var v string
	if err := c.QueryRow(ctx, "SHOW statement_timeout").Scan(&v); err != nil || v != "1234" {
		t.Errorf("statement_timeout %q %v", v, err)
	}
}

// TestErrorBeforeExecuteAborts: a statement that fails to parse or bind
// inside a transaction fails it, as in PostgreSQL, whichever protocol
// carried it.
func TestErrorBeforeExecuteAborts(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	for _, bad := range []string{"SELEC 1", "SELECT nosuch"} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			if _, err := c.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, bad, mode); err == nil {
				t.Fatalf("%s accepted", bad)
			}
			_, err := c.Exec(ctx, "SELECT 1")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "25P02" || c.PgConn().TxStatus() != 'E' {
				t.Errorf("%s (mode %v): then %v, status %c", bad, mode, err, c.PgConn().TxStatus())
			}
			if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		}
	}
}
