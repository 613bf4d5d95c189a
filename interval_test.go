package strata_test

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-db/strata"
)

// TestIntervalResult checks the Go API's representation of an INTERVAL
// result (PostgreSQL's text, as a string; column type INTERVAL) and that
// no table can have an INTERVAL column.
func TestIntervalResult(t *testing.T) {
	ctx := context.Background()
	_, s := openDB(t)
	res, err := s.Run(ctx, "SELECT TIMESTAMP '2026-03-01 12:00:00' - TIMESTAMP '2026-02-27 09:30:00' AS d, INTERVAL '1 mon' AS m")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Columns[0].Type; got != "INTERVAL" {
		t.Errorf("column type %q, want INTERVAL", got)
	}
	if got, ok := res.Rows[0][0].Any().(string); !ok || got != "2 days 02:30:00" {
		t.Errorf("Any() = %#v, want the string \"2 days 02:30:00\"", res.Rows[0][0].Any())
	}
	if got := res.Rows[0][1].String(); got != "1 mon" {
		t.Errorf("String() = %q", got)
	}
	_, err = s.Run(ctx, "CREATE TABLE t (k INT64 NOT NULL, i INTERVAL, PRIMARY KEY (k))")
	var e *strata.Error
	if !errors.As(err, &e) || e.Code != "0A000" {
		t.Errorf("INTERVAL column: %v, want 0A000", err)
	}
}
