// Package driver registers Strata with database/sql under the name
// "strata". The data source name is the data directory:
//
//	import _ "github.com/strata-db/strata/driver"
//
//	db, err := sql.Open("strata", "/var/lib/strata")
//	_, err = db.ExecContext(ctx, "INSERT INTO kv VALUES ($1, $2)", "a", 1)
//
// Every connection is a strata.Session on one strata.DB per directory,
// shared by all connections of the process (a directory can be open only
// once); the DB is closed when its last connection closes. Arguments are
// bound to $1, $2, …; BeginTx runs BEGIN, and Commit and Rollback end it.
//
// Result values scan as database/sql expects: integers up to 64 bits as
// int64 (an unsigned value above 2^63-1 as its decimal text), 128- and
// 256-bit integers and DECIMAL as decimal text, floats as float64, BOOL as
// bool, DATE and DATETIME64 as time.Time, UUID as its text, BYTES as []byte.
package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"path/filepath"
	"sync"

	"github.com/strata-db/strata"
)

func init() {
	sql.Register("strata", &Driver{})
}

// Driver is the database/sql driver. Its zero value is ready; sql.Open
// uses the one registered as "strata".
type Driver struct{}

// Open opens a connection on the data directory dsn.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector returns a connector for the data directory dsn.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	if dsn == "" {
		return nil, errors.New("strata driver: the data source name must be a data directory")
	}
	dir, err := filepath.Abs(dsn)
	if err != nil {
		return nil, fmt.Errorf("strata driver: %w", err)
	}
	return &connector{dir: dir, drv: d}, nil
}

// shared is the one DB of a directory and how many connections use it.
type shared struct {
	db   *strata.DB
	refs int
}

var (
	mu  sync.Mutex
	dbs = map[string]*shared{}
)

func acquire(dir string) (*strata.DB, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := dbs[dir]; ok {
		s.refs++
		return s.db, nil
	}
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		return nil, err
	}
	dbs[dir] = &shared{db: db, refs: 1}
	return db, nil
}

func release(dir string) error {
	mu.Lock()
	defer mu.Unlock()
	s, ok := dbs[dir]
	if !ok {
		return nil
	}
	if s.refs--; s.refs > 0 {
		return nil
	}
	delete(dbs, dir)
	return s.db.Close()
}

type connector struct {
	dir string
	drv *Driver
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	db, err := acquire(c.dir)
	if err != nil {
		return nil, err
	}
	return &conn{dir: c.dir, s: db.NewSession()}, nil
}

func (c *connector) Driver() driver.Driver { return c.drv }

// conn is one session.
type conn struct {
	dir    string
	s      *strata.Session
	closed bool
}

var (
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
)

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext keeps the text: a statement is planned when it runs, on
// that moment's snapshot and schema.
func (c *conn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	return &stmt{c: c, query: query}, nil
}

func (c *conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	if c.s.InTransaction() {
		_, _ = c.s.Run(context.Background(), "ROLLBACK")
	}
	_ = c.s.Close()
	return release(c.dir)
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction. Strata's transactions buffer writes and
// commit them as one commit; read-only and isolation options are accepted
// as they cost nothing to honour (reads see each statement's snapshot).
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if _, err := c.s.Run(ctx, "BEGIN"); err != nil {
		return nil, err
	}
	return &tx{c: c}, nil
}

// ResetSession rolls back a transaction a caller left open before the
// connection is reused.
func (c *conn) ResetSession(ctx context.Context) error {
	if c.s.InTransaction() {
		if _, err := c.s.Run(ctx, "ROLLBACK"); err != nil {
			return driver.ErrBadConn
		}
	}
	return nil
}

// CheckNamedValue accepts every Go type strata.Session.Run takes, so
// uint64, *big.Int and [16]byte reach the engine unconverted.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch nv.Value.(type) {
	case nil, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64,
		bool, string, []byte, [16]byte, *big.Int:
		return nil
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return err
	}
	nv.Value = v
	return nil
}

func args(named []driver.NamedValue) ([]any, error) {
	out := make([]any, len(named))
	for _, nv := range named {
		if nv.Name != "" {
			return nil, fmt.Errorf("strata driver: named parameter %s: use $1, $2, …", nv.Name)
		}
		if nv.Ordinal < 1 || nv.Ordinal > len(out) {
			return nil, fmt.Errorf("strata driver: parameter ordinal %d out of range", nv.Ordinal)
		}
		out[nv.Ordinal-1] = nv.Value
	}
	return out, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, named []driver.NamedValue) (driver.Result, error) {
	a, err := args(named)
	if err != nil {
		return nil, err
	}
	var res *strata.Result
	if len(a) == 0 {
		// Without parameters a script of several statements is allowed,
		// as with lib/pq's simple query protocol.
		all, err := c.s.Exec(ctx, query)
		if err != nil {
			return nil, err
		}
		if len(all) > 0 {
			res = all[len(all)-1]
		}
	} else if res, err = c.s.Run(ctx, query, a...); err != nil {
		return nil, err
	}
	if res == nil {
		return driver.RowsAffected(0), nil
	}
	return driver.RowsAffected(res.RowsAffected), nil
}

func (c *conn) QueryContext(ctx context.Context, query string, named []driver.NamedValue) (driver.Rows, error) {
	a, err := args(named)
	if err != nil {
		return nil, err
	}
	r, err := c.s.Query(ctx, query, a...)
	if err != nil {
		return nil, err
	}
	return &rows{r: r}, nil
}

type stmt struct {
	c     *conn
	query string
}

func (s *stmt) Close() error { return nil }

// NumInput is -1: the engine checks the parameters when it runs.
func (s *stmt) NumInput() int { return -1 }

func (s *stmt) Exec(a []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(a))
}

func (s *stmt) Query(a []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(a))
}

func (s *stmt) ExecContext(ctx context.Context, a []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.query, a)
}

func (s *stmt) QueryContext(ctx context.Context, a []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.query, a)
}

func named(a []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(a))
	for i, v := range a {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

type tx struct{ c *conn }

// ErrCommitRollback is what Tx.Commit returns when the transaction had
// failed (a statement in it returned an error): PostgreSQL answers such a
// COMMIT with ROLLBACK, so nothing of it was written. pgx and lib/pq
// report it as an error too.
var ErrCommitRollback = errors.New("strata: commit unexpectedly resulted in rollback: a statement of the transaction failed, so nothing of it was written")

func (t *tx) Commit() error {
	res, err := t.c.s.Run(context.Background(), "COMMIT")
	if err != nil {
		return err
	}
	if res != nil && res.Tag == "ROLLBACK" {
		return ErrCommitRollback
	}
	return nil
}

func (t *tx) Rollback() error {
	_, err := t.c.s.Run(context.Background(), "ROLLBACK")
	return err
}

// rows reads a query's rows as the engine produces them (strata.Rows):
// the connection holds one batch at a time, not the whole result. A
// statement run on the connection while they are open (tx.Exec inside a
// tx.Query loop) first reads the rest of them into memory.
type rows struct {
	r    *strata.Rows
	cols []strata.Column
}

func (r *rows) columns() []strata.Column {
	if r.cols == nil {
		r.cols = r.r.Columns()
	}
	return r.cols
}

func (r *rows) Columns() []string {
	cols := r.columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// ColumnTypeDatabaseTypeName returns the column's SQL type.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string { return r.columns()[i].Type }

// Close stops what is left of the query. The error that ended the rows,
// if any, was Next's already.
func (r *rows) Close() error {
	_ = r.r.Close()
	return nil
}

func (r *rows) Next(dest []driver.Value) error {
	if !r.r.Next() {
		if err := r.r.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	for j, v := range r.r.Row() {
		dest[j] = driverValue(v)
	}
	return nil
}

// driverValue maps a result value onto the types database/sql handles.
func driverValue(v strata.Value) driver.Value {
	switch x := v.Any().(type) {
	case nil, int64, float64, bool, string, []byte:
		return x
	case uint64:
		if x > math.MaxInt64 {
			return v.String()
		}
		return int64(x)
	case *big.Int:
		return x.String()
	case [16]byte:
		return v.String()
	default:
		if t, ok := v.Time(); ok {
			return t
		}
		return v.String()
	}
}
