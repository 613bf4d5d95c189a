// Package strata is Strata's Go API: it opens a data directory in-process
// and runs SQL on it through sessions (SPEC R13.3).
//
//	db, err := strata.Open("/var/lib/strata", strata.Options{})
//	defer db.Close()
//	s := db.NewSession()
//	res, err := s.Run(ctx, "SELECT amount FROM balances WHERE chain_id = $1", 1)
//
// Run returns a statement's whole result; Query reads a large one row by
// row while it runs (Rows), holding one batch of it at a time.
//
// A DB is safe for concurrent use; a Session is one client's conversation
// (its settings, its open transaction, its last_commit()) and is used by one
// goroutine at a time. Every error a user can cause comes back as an *Error
// carrying a SQLSTATE code and a position. The database/sql driver in package
// driver is built on this API.
package strata

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// ErrClosed is returned by sessions of a DB after Close.
var ErrClosed = errors.New("strata: database is closed")

// DB is an open data directory.
type DB struct {
	eng  *storage.Engine
	opts Options
	mu   sync.Mutex
	done bool
}

// Open opens the database in dir, creating it when dir is empty or does
// not exist. Only one process may have a directory open at a time.
func Open(dir string, opts Options) (*DB, error) {
	eng, err := storage.Open(dir, storage.Options{Logger: opts.Logger, MemtableBytes: opts.MemtableBytes, AsOfIndex: opts.AsOfIndex, Clock: opts.Clock,
		PageCacheBytes: opts.PageCacheBytes, WarmWrites: opts.WarmWrites, HugePageBytes: opts.HugePageBytes})
	if err != nil {
		return nil, fmt.Errorf("strata: open %s: %w", dir, err)
	}
	return &DB{eng: eng, opts: opts}, nil
}

// Close waits for commits in flight and closes the directory. Everything
// committed is durable and there when it is opened again (R5.6).
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.done {
		return nil
	}
	db.done = true
	return db.eng.Close()
}

// MergeNow flushes every in-memory buffer and runs the merge policy until
// no merge is due, returning when they are done (R5.1: merges take no
// commit). Background merges do the same work on their own; this is for
// callers that must measure or ship a settled directory, such as bench/.
func (db *DB) MergeNow(ctx context.Context) error { return db.eng.MergeNow(ctx) }

// closed reports whether Close was called.
func (db *DB) closed() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.done
}

// errClosed is the error of a statement on a closed DB.
func errClosed() error { return &Error{Code: "57P01", Message: ErrClosed.Error()} }

// Dir returns the data directory.
func (db *DB) Dir() string { return db.eng.Dir() }

// NewSession starts a session: its own settings, transaction and
// last_commit().
func (db *DB) NewSession() *Session {
	s := &Session{db: db, s: session.New(db.eng, session.Options{MemLimit: db.opts.QueryMemLimit, Clock: db.opts.Clock})}
	// A session dropped inside a transaction that ran an UPDATE would
	// otherwise keep every commit recording its keys (Close ends it).
	runtime.AddCleanup(s, func(release func()) { release() }, s.s.ReleaseOnDrop())
	return s
}

// Session runs SQL for one client. It is not safe for concurrent use.
type Session struct {
	db *DB
	s  *session.Session
	// parsed keeps the syntax trees of the queries Run has parsed, by
	// text, so that a statement repeated with new parameters is not parsed
	// again. Parsing reads nothing but the text (no catalog, no setting),
	// so an entry never goes stale; binding and planning, which do depend
	// on the catalog, the snapshot and the parameters' values, still run
	// for every statement. Only queries are kept: nothing downstream
	// modifies their trees (the binder builds plan nodes of its own).
	parsed map[string]ast.Stmt
	// open is the Rows of a Query not yet closed, its statement suspended
	// mid-way: the next statement drains it first (ready).
	open *Rows
	// pull runs Query's statements (rows.go), made at the first.
	pull *session.Puller
}

// maxParsed bounds Session.parsed: a client that sends ever new texts
// (values spliced into SQL) would otherwise grow it without end.
const maxParsed = 256

// parse returns the syntax tree of sql, from the session's cache when it
// is a query Run has parsed before.
func (s *Session) parse(sql string) (ast.Stmt, error) {
	if stmt, ok := s.parsed[sql]; ok {
		return stmt, nil
	}
	stmt, err := parser.Parse(sql)
	if err != nil {
		return nil, err
	}
	if _, ok := stmt.(*ast.SelectStmt); ok {
		if s.parsed == nil || len(s.parsed) >= maxParsed {
			s.parsed = map[string]ast.Stmt{}
		}
		s.parsed[sql] = stmt
	}
	return stmt, nil
}

// LastCommit returns the commit of the session's last write (the SQL
// function last_commit()); 0 before the first.
func (s *Session) LastCommit() uint64 { return s.s.LastCommit() }

// InTransaction reports whether a BEGIN is open.
func (s *Session) InTransaction() bool { return s.s.InTransaction() }

// Run runs exactly one SQL statement (a trailing semicolon is allowed) with
// args as the values of $1, $2, …. See Value for the Go types args may have.
func (s *Session) Run(ctx context.Context, sql string, args ...any) (*Result, error) {
	stmt, err := s.parse(sql)
	if err != nil {
		return nil, toError(err, sql)
	}
	return s.run(ctx, stmt, sql, args)
}

// Exec runs a script of statements separated by semicolons, one after the
// other, and returns the result of each. It stops at the first error,
// returning the results before it; the error's position is relative to the
// failing statement (Error.Statement says which). args are shared by every
// statement.
func (s *Session) Exec(ctx context.Context, sql string, args ...any) ([]*Result, error) {
	var out []*Result
	for i, st := range SplitStatements(sql) {
		stmt, err := parser.Parse(st.SQL)
		if err != nil {
			return out, withStatement(toError(err, st.SQL), i, st.Offset)
		}
		res, err := s.run(ctx, stmt, st.SQL, args)
		if err != nil {
			return out, withStatement(err, i, st.Offset)
		}
		out = append(out, res)
	}
	return out, nil
}

func withStatement(err error, index, offset int) error {
	var e *Error
	if errors.As(err, &e) {
		e.Statement, e.Offset = index, offset
	}
	return err
}

func (s *Session) run(ctx context.Context, stmt ast.Stmt, sql string, args []any) (*Result, error) {
	params, err := s.ready(args)
	if err != nil {
		return nil, err
	}
	res, err := s.s.Execute(ctx, stmt, sql, params)
	if err != nil {
		return nil, toError(err, sql)
	}
	out := &Result{Tag: res.Tag, RowsAffected: res.RowsAffected, Commit: res.Commit, Columns: publicColumns(res.Columns)}
	for _, n := range res.Notices {
		out.Notices = append(out.Notices, Notice(n))
	}
	if res.Columns != nil {
		out.Rows = make([][]Value, len(res.Rows))
		for i, r := range res.Rows {
			out.Rows[i] = publicRow(r)
		}
	}
	return out, nil
}

// ready checks that the session may run a statement (its DB open), reads
// the rest of its open Rows into memory if it has any, and converts args
// into the values of $1, $2, ….
func (s *Session) ready(args []any) ([]types.Value, error) {
	if s.db.closed() {
		return nil, errClosed()
	}
	if s.open != nil {
		s.open.drain()
	}
	params := make([]types.Value, len(args))
	for i, a := range args {
		v, err := paramValue(a)
		if err != nil {
			return nil, &Error{Code: "22023", Message: fmt.Sprintf("parameter $%d: %v", i+1, err)}
		}
		params[i] = v
	}
	return params, nil
}

// publicRow is r as the API's values, without a copy: Value is a struct
// of one types.Value, so the two have the same size and layout. The
// session hands each query's rows over (fresh arrays, one per batch, each
// row's capacity ending at its last cell), so the result may own them; a
// copy cost as many bytes again as the rows themselves (~2.5 KB per row of
// versions()' 19 columns).
func publicRow(r []types.Value) []Value {
	// Both array lengths are non-negative constants only when the sizes
	// are equal: a field added to Value stops the build here.
	var _ [unsafe.Sizeof(Value{}) - unsafe.Sizeof(types.Value{})]struct{}
	var _ [unsafe.Sizeof(types.Value{}) - unsafe.Sizeof(Value{})]struct{}
	if len(r) == 0 {
		return []Value{}
	}
	return unsafe.Slice((*Value)(unsafe.Pointer(unsafe.SliceData(r))), len(r))
}

// paramValue converts a Go argument into a typed value.
func paramValue(a any) (types.Value, error) {
	switch x := a.(type) {
	case nil:
		return types.Null(types.Of(types.Unknown)), nil
	case Value:
		return x.v, nil
	case int:
		return types.NewInt64(int64(x)), nil
	case int8:
		return types.NewInt64(int64(x)), nil
	case int16:
		return types.NewInt64(int64(x)), nil
	case int32:
		return types.NewInt64(int64(x)), nil
	case int64:
		return types.NewInt64(x), nil
	case uint:
		return types.NewUint64(uint64(x)), nil
	case uint8:
		return types.NewUint64(uint64(x)), nil
	case uint16:
		return types.NewUint64(uint64(x)), nil
	case uint32:
		return types.NewUint64(uint64(x)), nil
	case uint64:
		return types.NewUint64(x), nil
	case float32:
		return types.NewFloat64(float64(x)), nil
	case float64:
		return types.NewFloat64(x), nil
	case bool:
		return types.NewBool(x), nil
	case string:
		return types.NewString(x), nil
	case []byte:
		return types.NewBytes(append([]byte(nil), x...)), nil
	case [16]byte:
		return types.NewUUID(x), nil
	case time.Time:
		return types.FromTime(types.Type{Kind: types.DateTime64, Precision: 9, TZ: "UTC"}, x.UTC())
	case *big.Int:
		if x == nil {
			return types.Null(types.Of(types.Unknown)), nil
		}
		v, err := types.ParseNumber(new(big.Int).Abs(x).String())
		if err != nil || x.Sign() >= 0 {
			return v, err
		}
		v, err = types.Neg(v)
		return types.Narrow(v), err
	}
	return types.Value{}, fmt.Errorf("unsupported Go type %T", a)
}
