package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// maxMessage bounds one protocol message, so a client cannot make the
// server allocate without limit.
const maxMessage = 256 << 20

// maxAuthMessage bounds a message before authentication (SASL messages are
// short): the codec reserves a frame's whole announced length from its
// header, so an unauthenticated client must not announce maxMessage.
const maxAuthMessage = 64 << 10

// conn is one client connection: its socket, protocol codec, session and
// the prepared statements and portals of the extended protocol.
type conn struct {
	srv *Server
	nc  net.Conn
	raw net.Conn // the accepted socket, under any TLS layer
	// blocking says raw is in blocking mode (Server.startBlocking):
	// closing it from another goroutine must shut it down first.
	blocking atomic.Bool
	// sock is what the codec reads and writes; file, once set, is the
	// detached socket it reads (Server.startBlocking), raw being closed.
	sock   *socketIO
	file   atomic.Pointer[fdSocket]
	w      io.Writer // nc, or its TLS layer
	be     *pgproto3.Backend
	sess   *session.Session
	pid    uint32
	secret uint32
	user   string

	rows []byte // encoded DataRows not yet written (stream.go)
	// stream is the sink of the running query's rows, reused from one
	// statement to the next with its row buffer (newRowStream).
	stream rowStream
	// done is the CommandComplete message complete sends, reused.
	done pgproto3.CommandComplete
	// pull runs cursors' statements (cursor.go), made at the first;
	// suspended is the portal whose statement is suspended in it.
	pull      *session.Puller
	suspended *portal
	// reported holds the ParameterStatus values the client was last sent.
	reported map[string]string

	stmts   map[string]*prepared
	portals map[string]*portal
	// skipping is set after an error in extended mode: messages are
	// discarded until Sync.
	skipping bool

	// mu guards what CancelRequest and Shutdown touch from other
	// goroutines.
	mu      sync.Mutex
	busy    bool
	cancel  context.CancelFunc // of the running statement
	closing bool
	// stmtCtx is the context statements run under, kept from one to the
	// next until a CancelRequest or Shutdown cancels it; stmtCancel
	// cancels it, endStatement is statementContext's done. Only the
	// connection's goroutine touches them.
	stmtCtx      context.Context
	stmtCancel   context.CancelFunc
	endStatement func()
	wmu          sync.Mutex // serializes Flush with Shutdown's FATAL
}

// prepared is a statement made by Parse.
type prepared struct {
	sql       string
	stmt      ast.Stmt // nil for an empty query
	paramOIDs []uint32 // one per parameter; 0 where the type is inferred
	// described is the result a Describe of the statement announced; a
	// client decodes every execution's rows by it.
	described []session.Column
	// desc is how described was obtained, to check it before each run.
	desc description
	// portalCols is what the last Describe of one of its portals
	// announced (portalDescribed set), with how (portalDesc): a client
	// that describes every portal instead of the statement (libpq's
	// PQexecPrepared sends Bind, Describe, Execute each time) gets it
	// again while the parameters' types and the catalog are unchanged,
	// rather than a plan built per execution only to name the columns.
	portalCols      []session.Column
	portalDesc      description
	portalDescribed bool
}

// portal is a statement bound to parameter values by Bind.
type portal struct {
	ps      *prepared
	params  []types.Value
	formats []int16 // as Bind gave them: none, one for all, or one per column
	res     *session.Result
	next    int // next row to send
	ran     bool
	// cursor is set while the portal's statement is suspended in the
	// connection's Puller (cursor.go), b its batch being sent from row
	// bi; out receives the statement's outcome.
	cursor bool
	b      *types.Batch
	bi     int
	out    *cursorOut
	// err is the error a drained cursor's statement ended with, sent
	// after its rows.
	err error
	// done is set once the portal has sent its completion: executed
	// again it completes with no rows.
	done bool
	// described is what a Describe of the portal itself announced, when
	// its statement had not been described (then ps.described rules).
	described []session.Column
	desc      description
}

func (s *Server) handle(nc net.Conn) {
	c := &conn{srv: s, nc: nc, raw: nc, stmts: map[string]*prepared{}, portals: map[string]*portal{}}
	defer nc.Close()
	defer func() {
		if c.stmtCancel != nil {
			c.stmtCancel() // leaves the server context's children
		}
	}()
	defer func() {
		s.mu.Lock()
		delete(s.starting, nc)
		s.mu.Unlock()
	}()
	nc.SetDeadline(time.Now().Add(startupTimeout))
	// A bug reached by one client's input ends that connection, with an
	// internal error it can report, never the server.
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("pgwire: panic serving a connection", "pid", c.pid, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			c.wmu.Lock()
			c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "XX000",
				Message: fmt.Sprintf("internal error: %v", r)})
			c.be.Flush()
			c.wmu.Unlock()
		}
	}()
	c.sock = &socketIO{rw: nc}
	c.be, c.w = pgproto3.NewBackend(c.sock, c.sock), c.sock
	c.be.SetMaxBodyLen(maxAuthMessage)
	ok, err := c.startup()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			s.log.Debug("pgwire: startup", "remote", nc.RemoteAddr().String(), "err", err)
		}
		return
	}
	if !ok {
		return
	}
	defer s.unregister(c)
	// A client gone mid-transaction: its transaction ends with it.
	defer c.sess.End()
	defer func() {
		if c.pull != nil {
			c.pull.Close() // a cursor's statement left suspended ends
		}
	}()
	nc.SetDeadline(time.Time{})
	// From here the connection has no deadline, so its socket may block.
	defer s.startBlocking(c)()
	s.log.Debug("pgwire: connected", "remote", nc.RemoteAddr().String(), "user", c.user, "pid", c.pid)
	if err := c.loop(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		s.log.Debug("pgwire: connection ended", "pid", c.pid, "err", err)
	}
}

// startup runs the startup phase: SSL and GSS negotiation, a cancel
// request, or the startup message, authentication and the parameters. It
// reports whether the connection goes on to the query loop.
func (c *conn) startup() (bool, error) {
	tlsDone := false
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			return false, err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if c.srv.cfg.TLS == nil || tlsDone {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return false, err
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return false, err
			}
			tc := tls.Server(c.nc, c.srv.cfg.TLS)
			if err := tc.Handshake(); err != nil {
				return false, fmt.Errorf("tls handshake: %w", err)
			}
			c.nc, c.sock.rw = tc, tc
			c.be = pgproto3.NewBackend(c.sock, c.sock)
			c.be.SetMaxBodyLen(maxAuthMessage)
			tlsDone = true
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false, err
			}
		case *pgproto3.CancelRequest:
			c.srv.cancelRequest(m.ProcessID, m.SecretKey)
			return false, nil
		case *pgproto3.StartupMessage:
			return c.begin(m)
		default:
			return false, fmt.Errorf("unexpected startup message %T", msg)
		}
	}
}

// fatal sends a FATAL error and flushes.
func (c *conn) fatal(code, format string, args ...any) error {
	c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: fmt.Sprintf(format, args...)})
	return c.flush()
}

func (c *conn) flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.be.Flush()
}

// begin checks the startup message, authenticates and sends the session's
// parameters, key data and the first ReadyForQuery.
func (c *conn) begin(m *pgproto3.StartupMessage) (bool, error) {
	if m.ProtocolVersion>>16 != 3 {
		return false, c.fatal("0A000", "unsupported frontend protocol %d.%d: server supports 3.0", m.ProtocolVersion>>16, m.ProtocolVersion&0xffff)
	}
	if m.ProtocolVersion != pgproto3.ProtocolVersion30 {
		var unknown []string
		for k := range m.Parameters {
			if strings.HasPrefix(k, "_pq_.") {
				unknown = append(unknown, k)
			}
		}
		c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
	}
	c.user = m.Parameters["user"]
	if c.user == "" {
		return false, c.fatal("28000", "no PostgreSQL user name specified in startup packet")
	}
	switch db := m.Parameters["database"]; db {
	case "", "strata", "postgres":
	default:
		return false, c.fatal("3D000", "database %q does not exist", db)
	}
	if ok, err := c.authenticate(); !ok || err != nil {
		return false, err
	}
	if !c.srv.register(c) {
		return false, c.fatal("57P03", "the database system is shutting down")
	}
	c.be.SetMaxBodyLen(maxMessage)
	c.sess = session.New(c.srv.eng, session.Options{User: c.user, BackendPID: int32(c.pid)})
	// Other startup parameters are settings, as in PostgreSQL (lib/pq sends
	// extra_float_digits and DateStyle, JDBC TimeZone); one the session
	// does not know is ignored rather than refused.
	for k, v := range m.Parameters {
		switch k {
		case "user", "database", "options", "replication":
			continue
		}
		if validSettingName(k) {
			c.runQuiet("SET " + k + " = '" + strings.ReplaceAll(v, "'", "''") + "'")
		}
	}
	params := [][2]string{
		{"server_version", "15.0 (Strata " + c.srv.cfg.Version + ")"},
		{"server_encoding", "UTF8"},
		{"integer_datetimes", "on"},
		{"is_superuser", "on"},
		{"session_authorization", c.user},
	}
	c.reported = map[string]string{}
	for _, p := range params {
		c.be.Send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	// The changeable ones as the session has them, startup parameters
	// applied.
	c.reportSettings()
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: []byte{byte(c.secret >> 24), byte(c.secret >> 16), byte(c.secret >> 8), byte(c.secret)}})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	return true, c.flush()
}

// validSettingName reports whether name can be written unquoted in SET.
func validSettingName(name string) bool {
	if name == "" || strings.HasPrefix(name, "_pq_.") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// runQuiet runs a statement of the server's own (a startup setting),
// ignoring its result.
func (c *conn) runQuiet(sql string) {
	stmt, err := parser.Parse(sql)
	if err == nil {
		c.sess.Execute(c.srv.ctx, stmt, sql, nil)
	}
}

// yieldEvery is how long a connection's goroutine runs and waits in
// read(2) without passing through the Go scheduler before it yields once
// (runtime.Gosched, a few hundred nanoseconds), checked as each message
// arrives. The runtime's monitor thread takes a processor whose scheduling
// tick has not moved for 10 ms for a goroutine hogging it: it preempts the
// goroutine with a signal or, while the goroutine waits in a blocking read
// (docs/pgwire.md, "Blocking reads"), takes the processor away, to be
// fetched back when the read returns, and after taking one goes back to
// waking every 20 µs. A connection in blocking reads answering a client's
// lookups back to back never passes through the scheduler otherwise (one
// on the poller parks between requests, and the yield costs it nothing
// more), so without the yield every lookup running at a 10 ms mark paid
// for one of these, and the monitor's wake-ups (~1 600 a second, ~11 µs
// of CPU each on this kind of virtual machine) took a core from the
// client and the server in turn (docs/benchmarks.md, 2026-12-07 second
// session).
const yieldEvery = 2 * time.Millisecond

// yield is runtime.Gosched; a test counts the calls.
var yield = runtime.Gosched

// loop reads and answers messages until the client terminates.
func (c *conn) loop() error {
	yielded := time.Now()
	for {
		if c.isClosing() {
			return c.fatal("57P01", "terminating connection due to administrator command")
		}
		if now := time.Now(); now.Sub(yielded) >= yieldEvery {
			yield()
			yielded = now
		}
		msg, err := c.be.Receive()
		if err != nil {
			if c.isClosing() {
				return nil
			}
			return err
		}
		c.setBusy(true)
		err = c.dispatch(msg)
		c.setBusy(false)
		if err != nil {
			if errors.Is(err, errTerminate) {
				return nil
			}
			return err
		}
	}
}

var errTerminate = errors.New("terminate")

func (c *conn) dispatch(msg pgproto3.FrontendMessage) error {
	if c.skipping {
		switch msg.(type) {
		case *pgproto3.Sync:
			c.skipping = false
		case *pgproto3.Terminate:
			return errTerminate
		default:
			return nil
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Describe:
		// Describing plans on the session, which a suspended cursor's
		// statement holds: it ends first (cursor.go), unless it is the
		// cursor being described.
		if p := c.suspended; p != nil && (m.ObjectType != 'P' || c.portals[m.Name] != p) {
			c.drainCursor()
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		c.simpleQuery(m.String)
		c.ready()
		return c.flush()
	case *pgproto3.Parse:
		return c.extended(c.failTx(c.parse(m)))
	case *pgproto3.Bind:
		return c.extended(c.failTx(c.bind(m)))
	case *pgproto3.Describe:
		return c.extended(c.failTx(c.describe(m)))
	case *pgproto3.Execute:
		return c.extended(c.execute(m))
	case *pgproto3.Close:
		if m.ObjectType == 'S' {
			delete(c.stmts, m.Name)
		} else {
			if p := c.portals[m.Name]; p != nil && p == c.suspended {
				c.stopCursor()
			}
			delete(c.portals, m.Name)
		}
		c.be.Send(&pgproto3.CloseComplete{})
		return nil
	case *pgproto3.Sync:
		if !c.sess.InTransaction() {
			// The implicit transaction ends: so do its portals.
			c.stopCursor()
			clear(c.portals)
		}
		c.ready()
		return c.flush()
	case *pgproto3.Flush:
		return c.flush()
	case *pgproto3.Terminate:
		return errTerminate
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Left over from a COPY that already failed: PostgreSQL ignores them.
		return nil
	}
	c.be.Send(errorResponse(sqlerr.New("08P01", "unexpected message %T", msg)))
	c.ready()
	return c.flush()
}

// extended sends the error of one extended-protocol message, if any, and
// skips the rest until Sync.
func (c *conn) extended(sql string, err error) error {
	if err != nil {
		c.sendError(err, sql, sql, 0)
		c.skipping = true
	}
	return nil
}

// failTx passes on a handler's result; an error found before Execute (a
// statement that does not parse or bind) fails an open transaction, as
// every error inside one does in PostgreSQL. Execute's errors are the
// session's, which decides itself.
func (c *conn) failTx(sql string, err error) (string, error) {
	if err != nil {
		c.sess.FailTransaction()
	}
	return sql, err
}

func (c *conn) ready() {
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.sess.TxStatus()})
}

func (c *conn) setBusy(b bool) {
	c.mu.Lock()
	c.busy = b
	c.mu.Unlock()
}

func (c *conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// statementContext returns the context of one statement, cancelled by a
// CancelRequest or Shutdown.
//
// The context is made once and kept for the statements that follow while
// nothing cancels it: a context per statement was allocations, and a
// child registered in and removed from the server's context under its
// lock, on every point SELECT. A cancel reaches only the running
// statement (c.cancel is set only while one runs); the next one then
// gets a new context.
func (c *conn) statementContext() (context.Context, context.CancelFunc) {
	if c.stmtCtx == nil || c.stmtCtx.Err() != nil {
		c.stmtCtx, c.stmtCancel = context.WithCancel(c.srv.ctx)
	}
	if c.endStatement == nil {
		c.endStatement = func() {
			c.mu.Lock()
			c.cancel = nil
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	c.cancel = c.stmtCancel
	c.mu.Unlock()
	return c.stmtCtx, c.endStatement
}

// closeSocket closes the connection from another goroutine than its
// own. A blocking socket is shut down first: the connection's goroutine
// may be waiting inside read(2), which neither close(2) nor Go's Close
// would end.
func (c *conn) closeSocket() {
	if f := c.file.Load(); f != nil {
		f.shutdown() // the connection's goroutine ends and closes it
		return
	}
	if c.blocking.Load() {
		shutdownSocket(c.raw)
	}
	c.nc.Close()
}

// socketIO is the connection's socket as the codec sees it: the accepted
// net.Conn, its TLS layer, or the detached file (Server.startBlocking),
// swapped between messages without losing what the codec has buffered.
type socketIO struct{ rw io.ReadWriter }

func (s *socketIO) Read(p []byte) (int, error)  { return s.rw.Read(p) }
func (s *socketIO) Write(p []byte) (int, error) { return s.rw.Write(p) }

func (c *conn) cancelRunning() {
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
}

// terminate is Shutdown's: an idle connection gets FATAL 57P01 and is
// closed now; a busy one when its statement (already cancelled) ends.
func (c *conn) terminate() {
	c.mu.Lock()
	c.closing = true
	busy := c.busy
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	if !busy {
		c.wmu.Lock()
		c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P01",
			Message: "terminating connection due to administrator command"})
		c.be.Flush()
		c.wmu.Unlock()
		c.closeSocket()
	}
}

// errorResponse converts a user's error into an ErrorResponse, without
// Position (sendError adds it).
func errorResponse(e *sqlerr.Error) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: e.Code,
		Message: e.Message, Detail: e.Detail, Hint: e.Hint}
}

// toSQLErr converts any error of the session into the user's error, with
// the statement text attached where it has none.
func toSQLErr(err error, sql string) *sqlerr.Error {
	e, ok := sqlerr.As(err)
	if !ok {
		switch {
		case errors.Is(err, context.Canceled):
			e = sqlerr.New("57014", "canceling statement due to user request")
		default:
			e = sqlerr.Internal(err)
		}
	}
	if _, has := e.SQL(); !has && sql != "" {
		e = e.WithSQL(sql)
	}
	return e
}

// position is the ErrorResponse Position of e: 1-based characters into
// full, where e's statement text starts at byte offset.
func position(e *sqlerr.Error, sql, full string, offset int) int32 {
	text, has := e.SQL()
	if !has || text != sql {
		return 0
	}
	p := e.CharPos()
	if p == 0 {
		return 0
	}
	return int32(p + utf8.RuneCountInString(full[:offset]))
}

// sendError sends e for a statement of full starting at offset.
func (c *conn) sendError(err error, sql, full string, offset int) {
	e := toSQLErr(err, sql)
	r := errorResponse(e)
	r.Position = position(e, sql, full, offset)
	c.be.Send(r)
}

// simpleQuery runs every statement of a Query message; the first error
// stops the rest.
func (c *conn) simpleQuery(full string) {
	ranges := parser.Split(full)
	if len(ranges) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	for _, r := range ranges {
		sql := full[r.Start:r.End]
		if cs, isCopy, err := parseCopy(sql); isCopy {
			c.drainCursor()
			if err == nil {
				err = c.runCopy(cs)
			}
			if err != nil {
				c.sendError(err, sql, full, r.Start)
				return
			}
			continue
		}
		stmt, err := parser.Parse(sql)
		if err != nil {
			c.sess.FailTransaction()
			c.sendError(err, sql, full, r.Start)
			return
		}
		c.settleCursor(stmt)
		stream := c.newRowStream(nil, true, nil)
		res, err := c.runTo(stmt, sql, nil, stream)
		if err == nil {
			err = c.sendResult(res, stream)
		}
		if err != nil {
			c.finishRows()
			c.sendError(err, sql, full, r.Start)
			return
		}
	}
}

// run executes one statement under a cancellable context, sending its
// warnings (session.Result.Notices: COMMIT outside a transaction, SET TIME
// ZONE) before its tag.
func (c *conn) run(stmt ast.Stmt, sql string, params []types.Value) (*session.Result, error) {
	return c.runTo(stmt, sql, params, nil)
}

// runTo is run with a query's rows handed to sink as they are produced
// (session.ExecuteTo); nil gathers them into the result.
func (c *conn) runTo(stmt ast.Stmt, sql string, params []types.Value, sink session.RowSink) (*session.Result, error) {
	ctx, done := c.statementContext()
	defer done()
	start := time.Now()
	res, err := c.sess.ExecuteTo(ctx, stmt, sql, params, sink)
	if f := c.srv.onStatement; f != nil {
		f(time.Since(start))
	}
	if res != nil {
		for _, n := range res.Notices {
			c.be.Send(&pgproto3.NoticeResponse{Severity: n.Severity, SeverityUnlocalized: n.Severity, Code: n.Code,
				Message: n.Message, Hint: n.Hint})
		}
	}
	switch stmt.(type) {
	case *ast.SetStmt, *ast.ResetStmt, *ast.TransactionStmt:
		c.reportSettings()
	}
	if t, ok := stmt.(*ast.TransactionStmt); ok && (t.Kind == ast.TxCommit || t.Kind == ast.TxRollback) && c.sess.TxStatus() == 'I' {
		// The transaction's end closes its portals, as PostgreSQL's
		// (they are not WITH HOLD): an Execute of one now answers 34000.
		c.stopCursor()
		clear(c.portals)
	}
	return res, err
}

// reportedSettings are the settings PostgreSQL reports with ParameterStatus
// whenever they change (GUC_REPORT); drivers read client_encoding and
// DateStyle from them.
var reportedSettings = []string{"application_name", "client_encoding", "DateStyle", "IntervalStyle", "TimeZone", "standard_conforming_strings"}

// reportSettings sends ParameterStatus for each reported setting whose
// value changed (a SET, a RESET, the end of a transaction's SET LOCAL).
func (c *conn) reportSettings() {
	for _, name := range reportedSettings {
		v, ok := c.sess.Setting(name)
		if prev, sent := c.reported[name]; !ok || sent && prev == v {
			continue
		}
		c.reported[name] = v
		c.be.Send(&pgproto3.ParameterStatus{Name: name, Value: v})
	}
}

// rowDescription describes cols with the formats Bind asked for.
func rowDescription(cols []session.Column, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		ti := wireType(col.Type)
		fields[i] = pgproto3.FieldDescription{Name: []byte(col.Name), DataTypeOID: ti.oid,
			DataTypeSize: ti.size, TypeModifier: ti.typmod, Format: formatOf(formats, i)}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// formatOf is column i's format under Bind's result format codes: none
// means all text, one applies to every column.
func formatOf(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

// writeRows writes encoded rows to the socket after what the codec holds,
// without copying them into its buffer.
func (c *conn) writeRows(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.be.Flush(); err != nil {
		return err
	}
	_, err := c.w.Write(b)
	return err
}

// rowChunk is how many bytes of encoded rows are written at a time.
const rowChunk = 64 << 10

// rawMessages is backend messages already encoded; Send copies them into
// the codec's buffer in order with the others.
// It is sent by pointer (a slice in an interface would be boxed on every
// Send); Send encodes at once, so the bytes may change after it.
type rawMessages []byte

func (*rawMessages) Backend() {}

func (m *rawMessages) Encode(dst []byte) ([]byte, error) { return append(dst, *m...), nil }

func (*rawMessages) Decode([]byte) error { return errors.New("pgwire: raw messages are not decoded") }
