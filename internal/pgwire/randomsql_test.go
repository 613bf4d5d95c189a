package pgwire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/strata-db/strata/internal/sqlgen"
)

// TestRandomSQLWire runs generated statements over pgx, alternately through
// the extended protocol (binary results for the types pgx decodes so) and
// the simple one, so every type's wire encoding meets odd values: no
// internal error, every error a PgError with a SQLSTATE, the connection
// usable after each (R13.5). STRATA_SQLGEN_N runs it longer.
func TestRandomSQLWire(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	n := 300
	if testing.Short() {
		n = 80
	}
	if v, err := strconv.Atoi(os.Getenv("STRATA_SQLGEN_N")); err == nil {
		n = v
	}
	seed := uint64(42)
	if v, err := strconv.ParseUint(os.Getenv("STRATA_SQLGEN_BASE"), 10, 64); err == nil {
		seed = v
	}
	g := sqlgen.New(seed)
	var history []string
	for i := 0; i < n; i++ {
		sql := g.Next()
		history = append(history, sql)
		mode := pgx.QueryExecModeCacheDescribe
		if i%2 == 1 {
			mode = pgx.QueryExecModeSimpleProtocol
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		rows, err := c.Query(ctx, sql, mode)
		if err == nil {
			for rows.Next() {
				if _, verr := rows.Values(); verr != nil {
					err = verr
					break
				}
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		cancel()
		g.Result(err)
		if err == nil {
			continue
		}
		var pe *pgconn.PgError
		start := max(0, len(history)-10)
		where := fmt.Sprintf("seed %d, statement %d: %s\nlast statements:\n  %s", seed, i, sql, strings.Join(history[start:], ";\n  "))
		switch {
		case !errors.As(err, &pe):
			if c.IsClosed() {
				t.Fatalf("connection lost: %v\n%s", err, where)
			}
			// A client-side decoding failure: the server sent a value
			// that its announced type cannot hold.
			t.Fatalf("not a server error (%T): %v\n%s", err, err, where)
		case pe.Code == "XX000":
			t.Fatalf("internal error: %v\n%s", pe, where)
		case len(pe.Code) != 5 || pe.Message == "":
			t.Fatalf("malformed error %+v\n%s", pe, where)
		}
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("connection after %d statements: %v", n, err)
	}
}
