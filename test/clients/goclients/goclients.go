// Package goclients drives a Strata (or PostgreSQL) server with the two Go
// clients users have: pgx (extended protocol, binary formats) and
// database/sql through github.com/lib/pq (extended protocol, text formats).
// test/clients runs both against `strata serve` (issue 5, item 5); the same
// functions with Dialect PG check them first against a real PostgreSQL 15,
// so a failure against Strata is Strata's and not the program's.
//
// Each client creates its own table, writes UINT256 max and a DATETIME64(3)
// through parameters and reads them back exactly.
package goclients

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	_ "github.com/lib/pq" // registers database/sql driver "postgres"
)

// Uint256Max is 2^256-1 in decimal, the largest UINT256 (SPEC §2).
const Uint256Max = "115792089237316195423570985008687907853269984665640564039457584007913129639935"

// At is the DATETIME64(3) value every client writes and reads back; its
// milliseconds catch a server that truncates to seconds.
var At = time.Date(2026, 10, 1, 12, 5, 0, 123_000_000, time.UTC)

// Dialect picks the column types of the test tables.
type Dialect int

const (
	// Strata uses UINT256 and DATETIME64(3, 'UTC').
	Strata Dialect = iota
	// PG uses numeric and timestamptz(3), for checking against PostgreSQL.
	PG
)

func (d Dialect) createTable(name string) string {
	amount, at := "UINT256", "DATETIME64(3, 'UTC')"
	if d == PG {
		amount, at = "numeric", "timestamptz(3)"
	}
	return fmt.Sprintf("CREATE TABLE %s (id BIGINT NOT NULL, amount %s NULL, at %s NULL, note TEXT NULL, PRIMARY KEY (id))", name, amount, at)
}

func uint256Max() *big.Int {
	n, ok := new(big.Int).SetString(Uint256Max, 10)
	if !ok {
		panic("goclients: bad Uint256Max constant")
	}
	return n
}

// PGX runs the pgx client against dsn (a postgres:// URL or key=value
// string). pgx prepares each statement, so parameters go typed by the
// server's ParameterDescription and results come back in binary.
func PGX(ctx context.Context, dsn string, d Dialect) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("pgx: connect: %w", err)
	}
	defer conn.Close(ctx)

	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS pgx_t"); err != nil {
		return fmt.Errorf("pgx: drop: %w", err)
	}
	if _, err := conn.Exec(ctx, d.createTable("pgx_t")); err != nil {
		return fmt.Errorf("pgx: create: %w", err)
	}
	max := pgtype.Numeric{Int: uint256Max(), Valid: true}
	tag, err := conn.Exec(ctx, "INSERT INTO pgx_t (id, amount, at, note) VALUES ($1, $2, $3, $4)", int64(1), max, At, "max")
	if err != nil {
		return fmt.Errorf("pgx: insert: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("pgx: insert: tag %q, want 1 row", tag)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO pgx_t (id, amount, at, note) VALUES ($1, $2, $3, $4)", int64(2), nil, nil, nil); err != nil {
		return fmt.Errorf("pgx: insert nulls: %w", err)
	}

	// Binary results (pgx asks for them on a prepared statement).
	var amount pgtype.Numeric
	var at time.Time
	var note string
	if err := conn.QueryRow(ctx, "SELECT amount, at, note FROM pgx_t WHERE id = $1", int64(1)).Scan(&amount, &at, &note); err != nil {
		return fmt.Errorf("pgx: select: %w", err)
	}
	if err := checkNumeric("pgx binary", amount); err != nil {
		return err
	}
	if !at.Equal(At) {
		return fmt.Errorf("pgx binary: at = %s, want %s", at.UTC().Format(time.RFC3339Nano), At.Format(time.RFC3339Nano))
	}
	if note != "max" {
		return fmt.Errorf("pgx binary: note = %q, want max", note)
	}

	// Text results through the simple protocol: the same values.
	var amountText string
	if err := conn.QueryRow(ctx, "SELECT amount::text FROM pgx_t WHERE id = 1", pgx.QueryExecModeSimpleProtocol).Scan(&amountText); err != nil {
		return fmt.Errorf("pgx simple: %w", err)
	}
	if amountText != Uint256Max {
		return fmt.Errorf("pgx simple: amount = %s, want %s", amountText, Uint256Max)
	}

	var nullAmount pgtype.Numeric
	var nullAt *time.Time
	if err := conn.QueryRow(ctx, "SELECT amount, at FROM pgx_t WHERE id = $1", int64(2)).Scan(&nullAmount, &nullAt); err != nil {
		return fmt.Errorf("pgx: select nulls: %w", err)
	}
	if nullAmount.Valid || nullAt != nil {
		return fmt.Errorf("pgx: NULLs came back as %v, %v", nullAmount, nullAt)
	}

	// A user mistake is an error with a SQLSTATE and a position; the
	// connection lives on.
	_, err = conn.Exec(ctx, "SELECT nosuchcolumn FROM pgx_t")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42703" {
		return fmt.Errorf("pgx: missing column: got %v, want SQLSTATE 42703", err)
	}
	if pgErr.Position != 8 {
		return fmt.Errorf("pgx: missing column: position %d, want 8", pgErr.Position)
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pgx_t").Scan(&n); err != nil || n != 2 {
		return fmt.Errorf("pgx: count after error: %d, %v", n, err)
	}
	return nil
}

func checkNumeric(who string, n pgtype.Numeric) error {
	if !n.Valid || n.NaN || n.InfinityModifier != pgtype.Finite {
		return fmt.Errorf("%s: amount = %+v, want a finite number", who, n)
	}
	v := new(big.Int).Set(n.Int)
	for e := n.Exp; e > 0; e-- {
		v.Mul(v, big.NewInt(10))
	}
	if n.Exp < 0 {
		return fmt.Errorf("%s: amount has exponent %d, want an integer", who, n.Exp)
	}
	if v.Cmp(uint256Max()) != 0 {
		return fmt.Errorf("%s: amount = %s, want %s", who, v, Uint256Max)
	}
	return nil
}

// PQ runs database/sql through lib/pq against dsn. lib/pq prepares an
// unnamed statement per query, sends parameters as text and reads results
// as text.
func PQ(ctx context.Context, dsn string, d Dialect) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return fmt.Errorf("lib/pq: open: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(2)

	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS pq_t"); err != nil {
		return fmt.Errorf("lib/pq: drop: %w", err)
	}
	if _, err := db.ExecContext(ctx, d.createTable("pq_t")); err != nil {
		return fmt.Errorf("lib/pq: create: %w", err)
	}
	res, err := db.ExecContext(ctx, "INSERT INTO pq_t (id, amount, at, note) VALUES ($1, $2, $3, $4)", 1, Uint256Max, At, "max")
	if err != nil {
		return fmt.Errorf("lib/pq: insert: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("lib/pq: insert affected %d rows (%v), want 1", n, err)
	}

	var amount, note string
	var at time.Time
	if err := db.QueryRowContext(ctx, "SELECT amount, at, note FROM pq_t WHERE id = $1", 1).Scan(&amount, &at, &note); err != nil {
		return fmt.Errorf("lib/pq: select: %w", err)
	}
	if amount != Uint256Max {
		return fmt.Errorf("lib/pq: amount = %s, want %s", amount, Uint256Max)
	}
	if !at.Equal(At) {
		return fmt.Errorf("lib/pq: at = %s, want %s", at.UTC().Format(time.RFC3339Nano), At.Format(time.RFC3339Nano))
	}
	if note != "max" {
		return fmt.Errorf("lib/pq: note = %q, want max", note)
	}

	// A transaction through database/sql: BEGIN, a prepared statement
	// executed twice, COMMIT.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("lib/pq: begin: %w", err)
	}
	st, err := tx.PrepareContext(ctx, "INSERT INTO pq_t (id, amount, note) VALUES ($1, $2, $3)")
	if err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("lib/pq: prepare: %w", err)
	}
	for _, id := range []int{2, 3} {
		if _, err := st.ExecContext(ctx, id, fmt.Sprint(id*10), fmt.Sprint("row ", id)); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("lib/pq: prepared insert %d: %w", id, err)
		}
	}
	if err := st.Close(); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("lib/pq: close statement: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("lib/pq: commit: %w", err)
	}

	rows, err := db.QueryContext(ctx, "SELECT id, amount, at FROM pq_t ORDER BY id")
	if err != nil {
		return fmt.Errorf("lib/pq: select all: %w", err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id int64
		var amt sql.NullString
		var t sql.NullTime
		if err := rows.Scan(&id, &amt, &t); err != nil {
			return fmt.Errorf("lib/pq: scan: %w", err)
		}
		got = append(got, fmt.Sprintf("%d %s %v", id, amt.String, t.Valid))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("lib/pq: rows: %w", err)
	}
	want := []string{"1 " + Uint256Max + " true", "2 20 false", "3 30 false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("lib/pq: rows %q, want %q", got, want)
	}
	return nil
}
