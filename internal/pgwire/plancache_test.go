package pgwire

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPlanCacheExtended: point SELECTs prepared once and executed many
// times with new values (the session's plan cache serves them) answer as
// the simple protocol does, which parses and plans every statement anew;
// between them, writes, deletes and ALTER TABLE (no SELECT *: a client
// that caches a statement keeps its described columns).
func TestPlanCacheExtended(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE p (a INT32 NOT NULL, b INT64 NOT NULL, s STRING NOT NULL, y BYTES NOT NULL, u UINT16 NOT NULL, v INT64 NULL, PRIMARY KEY (a, b, s, y, u)) MODE VERSIONED`)
	answer := func(mode pgx.QueryExecMode, q string, args ...any) string {
		rows, err := c.Query(ctx, q, append([]any{mode}, args...)...)
		if err != nil {
			return "error: " + err.Error()
		}
		vals, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprint(vals)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	queries := []string{
		`SELECT a, b, s, y, u, v FROM p WHERE a = $1 AND b = $2 AND s = $3 AND y = $4 AND u = $5`,
		`SELECT v, _commit FROM p WHERE u = $5 AND y = $4 AND s = $3 AND b = $2 AND a = $1`,
		`SELECT v FROM p WHERE a = $1::INT32 AND b = $2::INT64 AND s = $3 AND y = $4 AND u = $5::UINT16`,
	}
	for i := 0; i < 400; i++ {
		a, b, s, y, u := rng.IntN(2), rng.IntN(2), fmt.Sprint(rng.IntN(2)), []byte{byte(rng.IntN(2))}, rng.IntN(2)
		switch rng.IntN(8) {
		case 0, 1:
			exec(`UPSERT INTO p VALUES ($1, $2, $3, $4, $5, $6)`, a, b, s, y, u, i)
		case 2:
			exec(`DELETE FROM p WHERE a = $1 AND b = $2`, a, b)
		case 3:
			if i%50 == 3 {
				exec(fmt.Sprintf(`ALTER TABLE p ADD COLUMN z%d INT64 DEFAULT %d`, i, i))
			}
		default:
			q := queries[rng.IntN(len(queries))]
			var args []any
			switch rng.IntN(3) {
			case 0:
				args = []any{int32(a), int64(b), s, y, uint16(u)}
			case 1:
				args = []any{a, b, s, y, u}
			default:
				args = []any{fmt.Sprint(a), fmt.Sprint(b), s, y, fmt.Sprint(u)}
			}
			for j := 0; j < 2; j++ {
				got := answer(pgx.QueryExecModeCacheStatement, q, args...)
				want := answer(pgx.QueryExecModeSimpleProtocol, q, args...)
				if got != want {
					t.Fatalf("%s %v:\nprepared: %s\nsimple:   %s", q, args, got, want)
				}
			}
		}
	}
}
