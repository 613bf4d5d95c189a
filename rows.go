package strata

import (
	"context"
	"runtime"
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/types"
)

// Rows is the result of Query, read row by row while the query runs: the
// session holds one batch of rows at a time (about a thousand), never the
// whole result. Its methods must not be called concurrently, and it must
// be closed (Close, or Next until it returns false): until then the
// statement holds the snapshot it reads. Another statement run on the
// session while the rows are open first reads the rest of them into
// memory (Next then goes on from there), as a result gathered whole would
// have been; should the query fail in that read, its error comes from Err
// after those rows, and inside a transaction the transaction has failed
// from that moment (the other statement fails with 25P02).
//
//	rows, err := s.Query(ctx, "SELECT address, amount FROM balances WHERE token = $1", token)
//	if err != nil { … }
//	defer rows.Close()
//	for rows.Next() {
//		row := rows.Row()
//		…
//	}
//	if err := rows.Err(); err != nil { … }
type Rows struct {
	s   *Session
	sql string
	q   *pull
	p   *session.Puller
	// b is the batch being read and i its next row. cells holds the
	// values of b's rows Row was asked for, one array per batch, made at
	// the first, so that a row handed out stays valid after Next; a row
	// Next passes without Row is never built.
	b     *types.Batch
	i     int
	cells []types.Value
	// whole holds rows in memory, read from whole[wi]: those of a
	// statement that returned them at once (SHOW, a write's RETURNING),
	// or the rest of a streamed one drained for another statement.
	whole [][]types.Value
	wi    int
	row   []Value
	built bool // row is the current row's values
	// drained is set when whole holds the rest of a streamed statement
	// (drain).
	drained bool
	read    int // rows Next has returned
	done    bool
	err     error
	res     *Result
}

// pull is what the query's side of Rows leaves for the reading side: the
// columns once known, and the statement's result or error at its end.
type pull struct {
	cols []session.Column
	res  *session.Result
	err  error
}

// pullFor returns the session's Puller, made (or made again, should the
// last one have ended) on first use.
func (s *Session) pullFor() *session.Puller {
	if s.pull == nil {
		s.pull = session.NewPuller()
		// A session dropped with its rows open leaves its statement
		// suspended: the cleanup stops it (releasing its snapshot) and
		// ends the coroutine. Nothing the coroutine holds refers to s.
		runtime.AddCleanup(s, (*session.Puller).Close, s.pull)
	}
	return s.pull
}

// Query runs exactly one SQL statement, like Run, and returns its rows to
// be read one by one as the query produces them, for results too large to
// hold or read only once. An error in parsing, planning or parameters
// comes back here; one met while the rows are read comes back from
// Rows.Err. Statements that return no rows, or return them at once (SHOW,
// RETURNING), may be run through Query too.
func (s *Session) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	stmt, err := s.parse(sql)
	if err != nil {
		return nil, toError(err, sql)
	}
	params, err := s.ready(args)
	if err != nil {
		return nil, err
	}
	p, q, is := s.pullFor(), &pull{}, s.s
	r := &Rows{s: s, sql: sql, q: q, p: p}
	s.open = r
	streaming, _ := p.Start(func(sink session.RowSink) {
		q.res, q.err = is.ExecuteTo(ctx, stmt, sql, params, sink)
	})
	if streaming {
		q.cols = p.Columns()
	} else {
		// The statement ended without streaming: an error, or rows (or
		// none) returned whole.
		r.finish()
		if r.err != nil {
			return nil, r.err
		}
		if q.res != nil {
			r.whole, r.wi = q.res.Rows, 0
		}
	}
	return r, nil
}

// Columns returns the result's columns; nil for a statement that returns
// no rows.
func (r *Rows) Columns() []Column {
	if r.q.cols != nil {
		return publicColumns(r.q.cols)
	}
	if r.q.res != nil {
		return publicColumns(r.q.res.Columns)
	}
	return nil
}

// Next advances to the next row, reporting false at the end of the rows or
// on an error (Err tells which). The query runs as Next asks for rows.
func (r *Rows) Next() bool {
	r.row, r.built = nil, false
	if r.whole != nil {
		if r.wi >= len(r.whole) {
			r.whole = nil
			return false
		}
		r.row, r.built = publicRow(r.whole[r.wi]), true
		r.wi++
		r.read++
		return true
	}
	for !r.done {
		if r.b != nil && r.i < r.b.Rows {
			r.i++
			r.read++
			return true
		}
		r.b = nil
		if r.s.db.closed() {
			r.stop()
			r.err, r.res = errClosed(), nil
			break
		}
		b, more := r.p.Next()
		if !more {
			r.finish()
			break
		}
		r.b, r.i, r.cells = b, 0, nil
	}
	r.b = nil
	return false
}

// Row returns the current row. It stays valid after Next: each row has its
// own values.
func (r *Rows) Row() []Value {
	if r.built || r.b == nil || r.i == 0 {
		return r.row
	}
	w, i := len(r.b.Cols), r.i-1
	if r.cells == nil {
		r.cells = make([]types.Value, r.b.Rows*w)
	}
	cells := r.cells[i*w : (i+1)*w : (i+1)*w]
	for j, c := range r.b.Cols {
		cells[j] = c.Get(i)
	}
	r.row, r.built = publicRow(cells), true
	return r.row
}

// Err returns the error that ended the rows, nil if they ran to the end
// (or were closed early).
func (r *Rows) Err() error { return r.err }

// Result returns the statement's tag, rows affected and commit once the
// statement has ended: when Query returns for one that returned its rows
// at once or none, else once Next returned false or the rows were closed;
// nil before. Its Rows are nil: they are read through Next. Rows closed
// early report, in the tag and RowsAffected, the rows Next returned.
func (r *Rows) Result() *Result { return r.res }

// Close stops the query if rows are left unread and frees the session for
// its next statement. Closing early is not an error: the statement
// succeeds with the rows read so far. It returns Err.
func (r *Rows) Close() error {
	if early := r.drained && r.wi < len(r.whole); !r.done || early {
		if !r.done {
			r.stop()
		}
		if res := r.res; res != nil && strings.HasPrefix(res.Tag, "SELECT ") {
			res.Tag, res.RowsAffected = "SELECT "+strconv.Itoa(r.read), int64(r.read)
		}
	}
	r.whole, r.b, r.row, r.cells = nil, nil, nil, nil
	return r.err
}

// stop ends the statement where it is suspended (at its columns or at a
// batch: it stops there and unwinds) and records its outcome.
func (r *Rows) stop() {
	r.p.Stop()
	r.finish()
}

// drain reads what is left of the statement into memory and ends it, so
// that the session can run another statement; Next goes on from memory.
// The current row stays valid.
func (r *Rows) drain() {
	if r.done {
		return
	}
	r.Row()
	var rest [][]types.Value
	for {
		if r.b != nil {
			rest = r.b.AppendRows(rest, r.i)
		}
		b, more := r.p.Next()
		if !more {
			break
		}
		r.b, r.i = b, 0
	}
	r.b, r.cells = nil, nil
	r.whole, r.wi, r.drained = rest, 0, true
	r.finish()
}

// finish records the outcome of the statement, which has ended: its last
// batch was read, or it was stopped.
func (r *Rows) finish() {
	r.done = true
	if r.s.open == r {
		r.s.open = nil
	}
	if r.q.err != nil {
		r.err = toError(r.q.err, r.sql)
		return
	}
	if r.q.res == nil {
		// The coroutine ended without running the statement to its end
		// (a bug): report it, and start a new one for the next.
		r.err = &Error{Code: "XX000", Message: "strata: the query's coroutine ended without a result"}
		r.s.pull = nil
		return
	}
	res := r.q.res
	r.res = &Result{Tag: res.Tag, RowsAffected: res.RowsAffected, Commit: res.Commit, Columns: publicColumns(res.Columns)}
}

// Close closes the session's open rows, if any, ends the coroutine Query
// runs its statements in, rather than leaving that to the collector, and
// rolls back an open transaction, as a PostgreSQL client's disconnect
// does (one left open that ran an UPDATE keeps every commit recording its
// keys, docs/conformance.md "Concurrent writers"). The session stays
// usable: a later Query starts another.
func (s *Session) Close() error {
	var err error
	if s.open != nil {
		err = s.open.Close()
	}
	if s.pull != nil {
		s.pull.Close()
		s.pull = nil
	}
	s.s.End()
	return err
}

// publicColumns is cols as the API's columns; nil for nil.
func publicColumns(cols []session.Column) []Column {
	if cols == nil {
		return nil
	}
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Type: c.Type.String()}
	}
	return out
}
