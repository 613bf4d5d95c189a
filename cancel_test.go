package strata_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-db/strata"
)

// TestCancelJoin: a statement whose context ends stops inside a join that
// would otherwise build and filter 100 M candidate pairs (a cancelled
// client, a server shutting down) with PostgreSQL's 57014.
func TestCancelJoin(t *testing.T) {
	_, s := openDB(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE big (id INT64 NOT NULL, PRIMARY KEY (id)) MODE UPSERT`,
		`INSERT INTO big SELECT * FROM generate_series(1, 10000)`,
	} {
		if _, err := s.Run(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		`SELECT count(*) FROM big AS a CROSS JOIN big AS b WHERE a.id + b.id < 0`,
		`SELECT count(*) FROM big AS a JOIN big AS b ON a.id % 2 = b.id % 2 WHERE a.id < b.id - 100000`,
	} {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err := s.Run(cctx, q)
		cancel()
		var se *strata.Error
		if !errors.As(err, &se) || se.Code != "57014" {
			t.Errorf("%s: %v, want 57014 (canceling statement)", q, err)
		}
	}
	// The session is usable after a cancelled statement.
	if r, err := s.Run(ctx, `SELECT count(*) FROM big`); err != nil || r.Rows[0][0].String() != "10000" {
		t.Fatalf("after cancel: %v %v", r, err)
	}
}
