package strata_test

import (
	"context"
	"strings"
	"testing"
)

// TestParamKeyLookup: a Go int parameter compared with a narrower integer
// key column still reads the one key (EXPLAIN: Lookup), and a parameter
// outside the column's range matches nothing instead of failing.
func TestParamKeyLookup(t *testing.T) {
	_, s := openDB(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE b (c UINT16 NOT NULL, a STRING NOT NULL, v INT64 NULL, PRIMARY KEY (c, a)) MODE UPSERT`,
		`INSERT INTO b VALUES (1, 'x', 10), (2, 'x', 20)`,
	} {
		if _, err := s.Run(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Run(ctx, `EXPLAIN SELECT v FROM b WHERE c = $1 AND a = $2`, 2, "x")
	if err != nil {
		t.Fatal(err)
	}
	if plan := r.Rows[1][0].String(); !strings.HasPrefix(strings.TrimLeft(plan, "└─ "), "Lookup b") {
		t.Errorf("plan %q, want a Lookup", plan)
	}
	for _, tc := range []struct {
		c    any
		want string
	}{{2, "20"}, {int64(1), "10"}, {70000, ""}, {-1, ""}} {
		r, err := s.Run(ctx, `SELECT v FROM b WHERE c = $1 AND a = $2`, tc.c, "x")
		if err != nil {
			t.Fatalf("c = %v: %v", tc.c, err)
		}
		got := ""
		if len(r.Rows) > 0 {
			got = r.Rows[0][0].String()
		}
		if got != tc.want || len(r.Rows) > 1 {
			t.Errorf("c = %v: %v, want %q", tc.c, r.Rows, tc.want)
		}
	}
}
