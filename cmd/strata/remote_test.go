package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/pgwire"
	"github.com/strata-db/strata/internal/storage"
)

// TestSQLOverURL: `strata sql --url` against a server prints exactly what
// the embedded shell prints for the same script, in every format (R13.2).
func TestSQLOverURL(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	script := `CREATE TABLE t (id UINT64 NOT NULL, amount UINT256, ok BOOL, at DATETIME64(3, 'UTC'), name STRING, PRIMARY KEY (id)) MODE VERSIONED;
INSERT INTO t VALUES (1, 115792089237316195423570985008687907853269984665640564039457584007913129639935, true, '2024-01-01 00:00:00.123', 'a b'), (2, NULL, false, NULL, '');
SELECT id, amount, ok, at, name FROM t ORDER BY id;
SELECT nosuch
  FROM t;
SELECT count(*) AS n FROM t;
`
	for _, f := range []string{"table", "csv", "tsv", "json", "jsonl"} {
		var embedded, embeddedErr bytes.Buffer
		errE := runSQL(context.Background(), sqlFlags{data: t.TempDir(), commands: []string{script}, format: f}, nil, &embedded, &embeddedErr)

		eng, err := storage.Open(t.TempDir(), storage.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := pgwire.New(eng, pgwire.Config{Listen: "127.0.0.1:0", Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(context.Background())
		var wire, wireErr bytes.Buffer
		url := "postgres://u@" + srv.Addr().String() + "/strata?sslmode=disable"
		errW := runSQL(context.Background(), sqlFlags{url: url, commands: []string{script}, format: f}, nil, &wire, &wireErr)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(ctx)
		cancel()
		eng.Close()

		if (errE == nil) != (errW == nil) {
			t.Errorf("%s: exit differs: embedded %v, wire %v", f, errE, errW)
		}
		got, want := wire.String(), embedded.String()
		if f == "jsonl" {
			// The wire carries PostgreSQL types, whose nearest Strata names
			// are all a client can know: UINT64 reads as DECIMAL.
			got, want = typesField.ReplaceAllString(got, ""), typesField.ReplaceAllString(want, "")
		}
		if got != want {
			t.Errorf("%s: output differs\n--- wire:\n%s\n--- embedded:\n%s", f, got, want)
		}
		if got, want := wireErr.String(), embeddedErr.String(); got != want {
			t.Errorf("%s: errors differ\n--- wire:\n%s\n--- embedded:\n%s", f, got, want)
		}
	}
}

var typesField = regexp.MustCompile(`"types":\[[^]]*\]`)
