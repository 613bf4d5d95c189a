package pgwire

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// A portal executed with a row limit (a driver's fetch size: PgJDBC's
// setFetchSize inside a transaction) is a cursor: its statement runs in
// the connection's Puller, suspended between Executes, and each Execute
// encodes the next rows straight from its batches. The server holds one
// batch of the result, never the whole of it.
//
// The session runs one statement at a time, so a cursor's statement must
// end before another runs: any statement (of a Query, or an Execute of
// another portal) or Describe of another object first reads the rest of
// the suspended cursor into memory (drainCursor), and the cursor goes on
// from there; COMMIT and ROLLBACK instead stop it and close its portal,
// as a transaction's end closes PostgreSQL's. A cursor whose portal is
// closed (Close, the Sync ending an implicit transaction, a Bind replacing
// the unnamed portal, the connection's end) is stopped without failing
// its statement.

// cursorOut is the outcome of a cursor's statement, set when it ends.
type cursorOut struct {
	res *session.Result
	err error
}

// puller returns the connection's Puller, made at the first cursor.
func (c *conn) puller() *session.Puller {
	if c.pull == nil {
		c.pull = session.NewPuller()
	}
	return c.pull
}

// errCursorLost is the error of a cursor whose coroutine ended under it
// (a bug).
var errCursorLost = sqlerr.Internal(errors.New("pgwire: the cursor's coroutine ended"))

// openCursor runs portal p's statement in the Puller and sends its first
// max rows. A statement that returns no rows or returns them whole (SHOW,
// RETURNING) ends at once and is sent as gathered rows are.
func (c *conn) openCursor(p *portal, max uint32) (string, error) {
	pl, out := c.puller(), &cursorOut{}
	p.out = out
	stmt, sql, params := p.ps.stmt, p.ps.sql, p.params
	streaming, ok := pl.Start(func(sink session.RowSink) {
		out.res, out.err = c.runTo(stmt, sql, params, sink)
	})
	if !ok {
		c.pull = nil
		return sql, errCursorLost
	}
	if !streaming {
		p.out = nil
		if out.err != nil {
			return sql, out.err
		}
		if err := conform(out.res, p.ps.described); err != nil {
			return sql, err
		}
		p.res, p.ran = out.res, true
		return c.sendPart(p, max)
	}
	stream := c.newRowStream(p.formats, false, p.ps.described)
	if err := stream.Start(pl.Columns()); err != nil {
		return sql, err
	}
	p.cursor, p.ran, c.suspended = true, true, p
	return c.fetch(p, max)
}

// fetch sends the next max rows (0: all) of cursor p, then PortalSuspended
// if it sent max rows, else its completion.
func (c *conn) fetch(p *portal, max uint32) (string, error) {
	// A CancelRequest reaches the statement while an Execute runs it, not
	// while it waits for the client's next (PostgreSQL ignores a cancel
	// of an idle connection).
	c.mu.Lock()
	c.cancel = c.stmtCancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
	}()
	stream := &c.stream
	sent := 0
	for max == 0 || sent < int(max) {
		if p.b != nil && p.bi < p.b.Rows {
			n := p.b.Rows - p.bi
			if max > 0 {
				n = min(n, int(max)-sent)
			}
			if err := stream.rows(p.b, p.bi, p.bi+n); err != nil {
				// As a statement failing: its transaction fails too.
				c.stopCursor()
				c.sess.FailTransaction()
				c.endFailed(p)
				return p.ps.sql, err
			}
			p.bi += n
			sent += n
			continue
		}
		if !c.nextBatch(p) {
			return c.endCursor(p, sent)
		}
	}
	// The limit is reached: suspended, whether rows are left or not, as
	// PostgreSQL's; an Execute after the last row completes with none.
	c.finishRows()
	c.be.Send(&pgproto3.PortalSuspended{})
	return "", nil
}

// nextBatch moves cursor p to its statement's next batch; false once the
// statement has ended.
func (c *conn) nextBatch(p *portal) bool {
	b, more := c.pull.Next()
	p.b, p.bi = b, 0
	return more
}

// endCursor completes cursor p, whose statement has ended after sent rows
// of this Execute, or reports its error after them.
func (c *conn) endCursor(p *portal, sent int) (string, error) {
	out := p.out
	p.cursor, p.out, p.b = false, nil, nil
	c.suspended = nil
	c.finishRows()
	if out.err != nil || out.res == nil {
		c.endFailed(p)
		if out.err == nil {
			c.pull = nil
			return p.ps.sql, errCursorLost
		}
		return p.ps.sql, out.err
	}
	res := out.res
	conformColumns(res.Columns, c.stream.casts, p.ps.described)
	res.Tag = partTag(res.Tag, sent)
	p.res, p.next, p.done = res, 0, true
	c.complete(res.Tag)
	return "", nil
}

// endFailed leaves cursor p, whose statement failed, a portal with its
// columns and no more rows.
func (c *conn) endFailed(p *portal) {
	p.res, p.next, p.done = &session.Result{Tag: "SELECT 0", Columns: c.cursorColumns(p)}, 0, true
}

// cursorColumns returns the columns cursor p announces: its statement's,
// with the types its Describe gave where they differ (conform).
func (c *conn) cursorColumns(p *portal) []session.Column {
	cols := slices.Clone(c.stream.cols)
	conformColumns(cols, c.stream.casts, p.ps.described)
	return cols
}

// settleCursor readies the session for stmt while a cursor is suspended:
// COMMIT and ROLLBACK end its transaction, which closes the cursor's
// portal (its statement stopped, not failed); any other statement first
// reads the rest of the cursor into memory.
func (c *conn) settleCursor(stmt ast.Stmt) {
	p := c.suspended
	if p == nil {
		return
	}
	if t, ok := stmt.(*ast.TransactionStmt); ok && (t.Kind == ast.TxCommit || t.Kind == ast.TxRollback) {
		c.stopCursor()
		for name, q := range c.portals {
			if q == p {
				delete(c.portals, name)
			}
		}
		return
	}
	c.drainCursor()
}

// partTag is the tag of a portal's last part of sent rows: a SELECT's
// counts that part's rows, as PostgreSQL's does.
func partTag(tag string, sent int) string {
	if strings.HasPrefix(tag, "SELECT ") {
		return "SELECT " + strconv.Itoa(sent)
	}
	return tag
}

// drainCursor reads what is left of the suspended cursor into memory, so
// that another statement can run; its next Executes send from there (and
// its statement's error, if it failed, after those rows).
func (c *conn) drainCursor() {
	p := c.suspended
	if p == nil {
		return
	}
	var rows [][]types.Value
	for {
		if p.b != nil {
			rows = p.b.AppendRows(rows, p.bi)
		}
		if !c.nextBatch(p) {
			break
		}
	}
	out := p.out
	p.cursor, p.out, p.b = false, nil, nil
	c.suspended = nil
	p.res, p.next = &session.Result{Tag: "SELECT 0", Columns: slices.Clone(c.stream.cols), Rows: rows}, 0
	p.err = out.err
	if out.err == nil && out.res == nil {
		c.pull, p.err = nil, errCursorLost
	}
	if p.err == nil {
		p.res.Tag, p.res.RowsAffected = partTag(out.res.Tag, len(rows)), int64(len(rows))
		p.res.Commit = out.res.Commit
	}
	if casts := c.stream.casts; casts != nil {
		for i, row := range rows {
			if err := conformRow(row, p.res.Columns, p.ps.described, casts); err != nil {
				// The rows before it go out, then the error.
				p.res.Rows, p.err = rows[:i], err
				break
			}
		}
		p.res.Columns = c.cursorColumns(p)
	}
}

// stopCursor stops the suspended cursor's statement without failing it
// (its portal is going away).
func (c *conn) stopCursor() {
	p := c.suspended
	if p == nil {
		return
	}
	c.pull.Stop()
	p.cursor, p.out, p.b = false, nil, nil
	c.suspended = nil
	c.finishRows()
}
