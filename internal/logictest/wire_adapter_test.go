package logictest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/strata-db/strata/internal/pgwire"
	"github.com/strata-db/strata/internal/storage"
)

// The wire engine: each script's directory is served by an in-process
// pgwire.Server on a random loopback port, and the script runs through one
// pgx connection, every statement over the extended protocol with text
// results (Parse, Bind, Describe, Execute, Sync), as a driver sends it.
// Values come back in PostgreSQL's text form and are mapped to the
// conformance README's canonical text where the two differ (bool t/f,
// timestamptz's UTC offset). A restart record shuts the server down,
// closes the engine and serves the same directory again.

type wireDB struct {
	eng  *storage.Engine
	srv  *pgwire.Server
	conn *pgx.Conn
	done chan error
}

func openWire(dir string) (DB, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := storage.Open(dir, storage.Options{Logger: quiet})
	if err != nil {
		return nil, err
	}
	srv, err := pgwire.New(eng, pgwire.Config{Listen: "127.0.0.1:0", Logger: quiet})
	if err != nil {
		eng.Close()
		return nil, err
	}
	d := &wireDB{eng: eng, srv: srv, done: make(chan error, 1)}
	go func() { d.done <- srv.Serve(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d.conn, err = pgx.Connect(ctx, "postgres://logictest@"+srv.Addr().String()+"/strata?sslmode=disable")
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// wireError is a server's error as the runner matches it: the message,
// then the SQLSTATE.
type wireError struct{ pe *pgconn.PgError }

func (e wireError) Error() string { return fmt.Sprintf("%s (SQLSTATE %s)", e.pe.Message, e.pe.Code) }

func (d *wireDB) Exec(ctx context.Context, sql string) (*Result, error) {
	rr := d.conn.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil)
	fields := rr.FieldDescriptions()
	var rows [][]Value
	for rr.NextRow() {
		vals := rr.Values()
		row := make([]Value, len(vals))
		for j, v := range vals {
			if v == nil {
				row[j] = Null
				continue
			}
			row[j] = Text(canonical(fields[j].DataTypeOID, string(v)))
		}
		rows = append(rows, row)
	}
	_, err := rr.Close()
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return nil, wireError{pe}
		}
		return nil, err
	}
	if len(fields) == 0 {
		return nil, nil
	}
	res := &Result{Columns: make([]string, len(fields)), Rows: rows}
	for i, f := range fields {
		res.Columns[i] = f.Name
	}
	return res, nil
}

// canonical maps PostgreSQL's text output of a type back to the canonical
// text the scripts expect.
func canonical(oid uint32, s string) string {
	switch oid {
	case 16: // bool
		switch s {
		case "t":
			return "true"
		case "f":
			return "false"
		}
	case 1184: // timestamptz: drop the UTC offset the server appends
		if i := strings.LastIndexAny(s, "+-"); i >= 19 {
			return s[:i]
		}
	}
	return s
}

func (d *wireDB) Close() error {
	var errs []error
	if d.conn != nil {
		errs = append(errs, d.conn.Close(context.Background()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs = append(errs, d.srv.Shutdown(ctx))
	if err := <-d.done; err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, d.eng.Close())
	return errors.Join(errs...)
}
