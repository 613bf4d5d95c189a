package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// Options configure a Session. The zero value is the defaults.
type Options struct {
	// MemLimit bounds the memory of one query's buffering operators in
	// bytes; 0 means the planner's default (1 GiB).
	MemLimit int64
	// Clock gives now() for each statement; time.Now if nil.
	Clock func() time.Time
	// Querier plans and runs queries; nil means package plan and exec.
	Querier Querier
	// User is the user the session runs as: current_user and
	// session_authorization; "" means the bootstrap role, strata.
	User string
	// BackendPID is the process id a wire client was given
	// (pg_backend_pid()); 0 when there is none.
	BackendPID int32
}

// Column is one output column of a Result.
type Column struct {
	Name string
	Type types.Type
}

// Result is what one statement returned.
type Result struct {
	// Tag is the command tag, as PostgreSQL sends it in CommandComplete:
	// "INSERT 0 3", "UPSERT 3", "UPDATE 1", "DELETE 2", "SELECT 5",
	// "CREATE TABLE", ...
	Tag string
	// Columns and Rows are set for statements that return rows.
	Columns []Column
	Rows    [][]types.Value
	// RowsAffected is the number of rows written (accepted, R3.6) or
	// returned.
	RowsAffected int64
	// Commit is the commit the statement took; 0 when it took none (a
	// query, a statement inside a transaction, a no-op IF EXISTS).
	Commit uint64
	// Notices are warnings the statement raises beside its result, as
	// PostgreSQL's NoticeResponse: the wire sends them before the command
	// tag, the shell prints them.
	Notices []Notice
}

// Notice is one warning of a statement that succeeded.
type Notice struct {
	// Severity is WARNING or NOTICE; Code the SQLSTATE (01000: warning).
	Severity, Code string
	Message, Hint  string
}

// noTransaction is PostgreSQL's warning (25P01) for a transaction command
// that has no transaction to act on, which it runs as a no-op.
func noTransaction(msg string) Notice {
	return Notice{Severity: "WARNING", Code: "25P01", Message: msg}
}

// Session runs statements one at a time for one client. It is not safe for
// concurrent use; open one Session per connection. Sessions on one engine
// run concurrently.
type Session struct {
	eng        *storage.Engine
	opts       Options
	settings   settings
	lastCommit uint64
	tx         *txn
	// plans caches the plans of point SELECTs run again (plancache.go).
	plans PlanCache
	// held is the open transaction's Watch, for ReleaseOnDrop.
	held *heldWatch
	// setFn is setConfig as a func value, made once: QueryEnv.Set of every
	// query (a method value made per query is an allocation).
	setFn func(name, value string, local bool) error
}

// txn is the state of an open BEGIN … COMMIT.
type txn struct {
	// catalog is the catalog commit the buffered writes were planned
	// against.
	catalog uint64
	writes  []storage.Write
	tables  []string
	rows    uint64
	// aborted is set once a statement inside the transaction failed.
	aborted bool
	// local holds the values SET LOCAL replaced, restored at the end.
	local map[string]string
	// watch is the Watch the snapshots of the transaction's read-modify-
	// write statements were taken under (openWatch), nil before the first.
	watch *storage.Watch
	// checks are the keys SELECT … FOR UPDATE / FOR SHARE read, checked
	// at COMMIT (storage.Txn.Checks, locking.go).
	checks []storage.Write
	// ran is set once a statement other than SET, SHOW or RESET ran inside
	// the transaction: its isolation level is fixed from then (txmodes.go).
	ran bool
	// view is the last snapshot read with the writes pending on it
	// (storage.WithPending), built on the snapshot at commit viewCommit
	// with the first viewWrites writes. A later statement reuses it while
	// nothing was committed or written since, which saves copying the
	// touched memtables again for every query of a transaction that has
	// stopped writing. It is released when replaced and at the end.
	view       *storage.Snapshot
	viewCommit uint64
	viewWrites int
	// savepoints are the transaction's SAVEPOINTs, oldest first.
	savepoints []savepoint
}

// savepoint is what a SAVEPOINT marks: how much the transaction had
// buffered then, which ROLLBACK TO returns to.
type savepoint struct {
	name   string
	writes int
	checks int
	tables int
	rows   uint64
	// settings and local are the session's settings and the values SET
	// LOCAL replaced, as they were: ROLLBACK TO restores them, as
	// PostgreSQL undoes SET and SET LOCAL since the savepoint.
	settings, local map[string]string
}

// dropView releases the transaction's pending view.
func (tx *txn) dropView() {
	if tx.view != nil {
		tx.view.Release()
		tx.view = nil
	}
}

// New returns a session on eng.
func New(eng *storage.Engine, opts Options) *Session {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	st := newSettings()
	if opts.User != "" {
		st.values["session_authorization"] = opts.User
	}
	st.values["strata.backend_pid"] = strconv.Itoa(int(opts.BackendPID))
	s := &Session{eng: eng, opts: opts, settings: st, held: &heldWatch{}}
	s.setFn = s.setConfig
	// Transformations run while the engine has sessions (transform_run.go).
	runnerFor(eng)
	return s
}

// LastCommit returns the commit of the session's last write (last_commit(),
// R5.5); 0 before the first.
func (s *Session) LastCommit() uint64 { return s.lastCommit }

// InTransaction reports whether a BEGIN is open.
func (s *Session) InTransaction() bool { return s.tx != nil }

// Setting returns the current value of a session setting.
func (s *Session) Setting(name string) (string, bool) { return s.settings.get(name) }

// Execute runs one parsed statement. sql is the statement's text, which
// positions in stmt and in errors refer to; params are the values of $1, $2,
// … already typed by the caller.
//
// A panic in the statement (a bug) is recovered here and returned as an
// internal error (XX000), which fails the statement like any other error:
// its writes are not committed (they reach storage only through
// statement.commit, the statement's last step, or a transaction's
// COMMIT), and inside a transaction it aborts the transaction, so none
// of them ever are (R13.5: no input crashes the process).
func (s *Session) Execute(ctx context.Context, stmt ast.Stmt, sql string, params []types.Value) (res *Result, err error) {
	return s.ExecuteTo(ctx, stmt, sql, params, nil)
}

// RowSink receives the rows of a query as they are produced
// (Session.ExecuteTo), so that a caller writing them out (the wire
// server) holds one batch at a time rather than the whole result.
type RowSink interface {
	// Start is called once, with the output columns, before any batch.
	Start(cols []Column) error
	// Batch receives the next rows. The batch is the executor's and is
	// reused once Batch returns: the sink must not keep it.
	Batch(b *types.Batch) error
}

// ErrStop, returned (or wrapped) by a RowSink, stops the query without
// failing it: the caller wants no more rows (a client that closed its
// cursor early). The statement then succeeds with the rows given so far.
var ErrStop = errors.New("session: no more rows wanted")

// ExecuteTo is Execute with the rows of a query (SELECT, VALUES, a set
// operation, EXPLAIN) handed to sink as they are produced instead of
// gathered into the Result, which then carries the tag and columns but no
// Rows. A statement that is not a query, or returns its rows some other
// way (SHOW, RETURNING), never calls sink and returns its rows in the
// Result as Execute does. A nil sink is Execute. Should the query fail
// after Start, the rows already given to sink stay given: the caller
// reports the error after them, as PostgreSQL does.
func (s *Session) ExecuteTo(ctx context.Context, stmt ast.Stmt, sql string, params []types.Value, sink RowSink) (res *Result, err error) {
	if d := s.settings.timeout(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, panicError(r, sql)
			s.failTx(stmt)
		}
	}()
	res, err = s.execute(ctx, stmt, sql, params, sink)
	if err != nil {
		s.failTx(stmt)
		return nil, userError(err, stmt, sql)
	}
	return res, nil
}

// failTx aborts the open transaction, if any, after stmt failed; a
// failed COMMIT or ROLLBACK has ended it already.
func (s *Session) failTx(stmt ast.Stmt) {
	if s.tx != nil {
		// A failed COMMIT or ROLLBACK has ended it; a failed savepoint
		// statement (an unknown name) aborts it, as in PostgreSQL.
		if t, isTx := stmt.(*ast.TransactionStmt); !isTx || t.Kind == ast.TxSavepoint || t.Kind == ast.TxRelease || t.Kind == ast.TxRollbackTo {
			s.tx.aborted = true
		}
	}
}

// panicError is the internal error (XX000) a statement that panicked
// returns: the panic's value, and in the detail where it was raised, for
// a bug report.
func panicError(r any, sql string) error {
	e := sqlerr.Internal(fmt.Errorf("panic: %v", r))
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		// The first frame outside the runtime is where the panic was
		// raised (or the runtime error happened).
		if !strings.HasPrefix(f.Function, "runtime.") {
			e.Detail = fmt.Sprintf("panic in %s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
			break
		}
		if !more {
			break
		}
	}
	return e.WithSQL(sql)
}

func (s *Session) execute(ctx context.Context, stmt ast.Stmt, sql string, params []types.Value, sink RowSink) (*Result, error) {
	if s.tx != nil && s.tx.aborted {
		if t, ok := stmt.(*ast.TransactionStmt); !ok || t.Kind == ast.TxBegin || t.Kind == ast.TxSavepoint || t.Kind == ast.TxRelease {
			return nil, sqlerr.New("25P02", "current transaction is aborted, commands ignored until end of transaction block").WithPos(stmt.Pos())
		}
	}
	if err := s.checkWritable(stmt, sql); err != nil {
		return nil, err
	}
	if s.tx != nil {
		switch stmt.(type) {
		case *ast.TransactionStmt, *ast.SetTransactionStmt, *ast.SetStmt, *ast.ShowStmt, *ast.ResetStmt, *ast.CheckpointStmt:
			// As in PostgreSQL, settings statements and CHECKPOINT take no
			// snapshot, so the modes may still change after them.
		default:
			s.tx.ran = true
		}
	}
	st := &statement{s: s, ctx: ctx, sql: sql, params: params, now: s.opts.Clock(), sink: sink}
	// Every path releases the statement's snapshot, this one last, so the
	// snapshot can be a scoped one (storage.Engine.ScopedSnapshot).
	defer st.release()
	if w := writingWith(stmt); w != nil {
		return st.withWrites(stmt, w)
	}
	if err := explainWrites(stmt); err != nil {
		return nil, err
	}
	if writeOf(stmt) != nil {
		return st.explainWrite(stmt.(*ast.ExplainStmt))
	}
	switch n := stmt.(type) {
	case *ast.SelectStmt:
		if n.Locking != nil {
			return st.lockingQuery(n)
		}
		return st.query(stmt)
	case *ast.ExplainStmt:
		return st.query(stmt)
	case *ast.InsertStmt:
		st.with = n.With
		return st.insert(n)
	case *ast.UpdateStmt:
		st.with = n.With
		return st.update(n)
	case *ast.DeleteStmt:
		st.with = n.With
		return st.delete(n)
	case *ast.TransactionStmt:
		return s.transaction(ctx, n)
	case *ast.SetStmt:
		return s.set(n)
	case *ast.SetTransactionStmt:
		return s.setTransaction(n)
	case *ast.ShowStmt:
		return s.show(n)
	case *ast.ResetStmt:
		return s.reset(n)
	case *ast.ShowTablesStmt:
		return st.showTables()
	case *ast.DescribeStmt:
		return st.describe(n)
	case *ast.ShowCreateTableStmt:
		return st.showCreate(n)
	case *ast.CheckpointStmt:
		return s.checkpoint(ctx)
	case *ast.SyncTransformationsStmt:
		if err := runnerFor(s.eng).sync(ctx, s.eng.LastCommit()); err != nil {
			return nil, err
		}
		return &Result{Tag: "SYNC TRANSFORMATIONS"}, nil
	}
	if s.tx != nil && (len(s.tx.writes) > 0 || s.tx.catalog != 0) {
		return nil, sqlerr.NotSupported(stmt.Pos(), "DDL after a write inside a transaction is not supported: COMMIT the writes first, or run the DDL before them")
	}
	// DDL inside a transaction that has not written yet commits at once, as
	// its own commit (R5.1), like MySQL's implicit commit rather than
	// PostgreSQL's transactional DDL: drivers such as psycopg2 open a
	// transaction before every statement, so refusing it would break them,
	// and a transaction's writes plus schema changes in one commit is not
	// something storage offers. ROLLBACK does not undo it
	// (docs/pg-catalog.md, Transactions).
	return st.ddl(stmt)
}

// statement is the state of one Execute call.
type statement struct {
	s      *Session
	ctx    context.Context
	sql    string
	params []types.Value
	now    time.Time
	snap   *storage.Snapshot
	// view is what the statement reads inside a transaction that has
	// written: snap with the writes pending (readSnapshot); owned by the
	// transaction.
	view *storage.Snapshot
	// with is the WITH of a write statement (WITH … INSERT): every query
	// the statement plans sees its definitions.
	with *ast.With
	// written holds the RETURNING rows of the data-modifying WITH
	// definitions run so far (plan.Env.Written).
	written map[*ast.CTE]plan.Virtual
	// deferred, when set, collects the writes of a statement with a
	// data-modifying WITH, which commit together at its end (commit).
	deferred *storage.Txn
	// watchReads is set for a statement that writes what it read (UPDATE,
	// DELETE, INSERT … ON CONFLICT, a data-modifying WITH): its snapshot
	// is taken under a Watch, watch when not inside a transaction.
	watchReads bool
	watch      *storage.Watch
	// exclusive, once a statement lost the race for its keys
	// exclusiveAfter times, makes its next runs hold storage's Exclusive
	// from taking the snapshot until releasing it (unexclusive ends it),
	// so that no other commit comes between its snapshot and its commit.
	exclusive   bool
	unexclusive func()
	// sink, when set, receives the rows of the statement's query
	// (ExecuteTo); the queries a write is built on never go to it.
	sink RowSink
}

// snapshot returns the statement's one snapshot, taken on first use (R6.6).
// A statement that writes what it read (watchReads) first opens a Watch,
// its own or its transaction's, so that its writes can be checked against
// the commits after the snapshot (storage/conflict.go).
func (st *statement) snapshot() *storage.Snapshot {
	if st.snap == nil {
		if st.exclusive && st.unexclusive == nil && st.s.tx == nil {
			// Cancelled while waiting, the statement runs unguarded and
			// its commit fails on the same ctx.
			st.unexclusive, _ = st.s.eng.Exclusive(st.ctx)
		}
		if st.watchReads {
			st.openWatch()
		}
		st.snap = st.s.eng.ScopedSnapshot()
	}
	return st.snap
}

// openWatch opens the Watch the statement's snapshot is taken under: the
// statement's own, or inside a transaction the transaction's, which its
// first such statement opens and COMMIT or ROLLBACK releases. A Watch
// that cannot be opened (the engine is closed, so nothing will commit)
// leaves the writes unchecked.
func (st *statement) openWatch() {
	if tx := st.s.tx; tx != nil {
		if tx.watch == nil {
			tx.watch, _ = st.s.eng.Watch()
			st.s.held.set(tx.watch)
		}
		return
	}
	if st.watch == nil {
		st.watch, _ = st.s.eng.Watch()
	}
}

// watched reports whether the statement's snapshot is taken under a
// Watch (openWatch succeeded): only then can its reads be checked.
func (st *statement) watched() bool {
	if !st.watchReads {
		return false
	}
	if tx := st.s.tx; tx != nil {
		return tx.watch != nil
	}
	return st.watch != nil
}

// markReads sets ReadAt on txn's writes, computed from the statement's
// snapshot, when that snapshot was taken under a Watch: Commit then
// refuses them if a later commit wrote one of their keys (ErrConflict),
// in their group or, with wholeKey (ON CONFLICT, which asked whether the
// key exists at all), in any.
func (st *statement) markReads(txn *storage.Txn, wholeKey bool) {
	if st.snap == nil || !st.watched() {
		return
	}
	at := st.snap.Commit()
	for i := range txn.Writes {
		if txn.Writes[i].ReadAt == 0 {
			txn.Writes[i].ReadAt, txn.Writes[i].WholeKey = at, wholeKey
		}
	}
}

// readSnapshot returns the snapshot the statement's reads use. Inside a
// transaction that has written, that is the statement's snapshot with the
// transaction's writes pending on it (storage.WithPending): every query,
// INSERT … SELECT and the WHERE of UPDATE and DELETE see the transaction's
// own earlier writes, as in PostgreSQL, while other sessions see nothing
// before COMMIT (R5.1). current_commit() stays the last committed commit
// and AS OF reads the committed past only.
func (st *statement) readSnapshot() (*storage.Snapshot, error) {
	tx := st.s.tx
	if tx == nil || len(tx.writes) == 0 {
		return st.snapshot(), nil
	}
	if st.view != nil {
		return st.view, nil
	}
	base := st.snapshot()
	if storage.SchemaChanged(base.Catalog(), tx.writes, tx.catalog) {
		// The writes were planned against a table a DDL has changed
		// since; reading them over the new one could misread them.
		return nil, sqlerr.New("40001", "the schema changed during the transaction; roll back and retry it")
	}
	if v := tx.view; v != nil && tx.viewCommit == base.Commit() && tx.viewWrites == len(tx.writes) {
		st.view = v
		return v, nil
	}
	v, err := base.WithPending(tx.writes)
	if err != nil {
		return nil, err
	}
	tx.dropView()
	tx.view, tx.viewCommit, tx.viewWrites = v, base.Commit(), len(tx.writes)
	st.view = v
	return v, nil
}

func (st *statement) release() {
	st.view = nil
	if st.snap != nil {
		st.snap.Release()
		st.snap = nil
	}
	if st.watch != nil {
		st.watch.Release()
		st.watch = nil
	}
	if st.unexclusive != nil {
		st.unexclusive()
		st.unexclusive = nil
	}
}

// commit makes txn one commit, or buffers its writes inside a transaction.
// It reports the commit taken (0 inside a transaction).
func (st *statement) commit(txn *storage.Txn) (uint64, error) {
	if d := st.deferred; d != nil {
		if d.CatalogVersion != txn.CatalogVersion {
			return 0, sqlerr.New("40001", "the schema changed while the statement ran; nothing was written, retry it")
		}
		d.Writes = append(d.Writes, txn.Writes...)
		for _, t := range txn.Tables {
			d.Tables = appendUnique(d.Tables, t)
		}
		d.Rows += txn.Rows
		return 0, nil
	}
	s := st.s
	if s.tx != nil && txn.DDL == nil {
		switch {
		case s.tx.catalog == 0:
			s.tx.catalog = txn.CatalogVersion
		case txn.CatalogVersion != s.tx.catalog:
			// A DDL committed between the transaction's statements: the
			// writes buffered so far stand if it changed none of their
			// tables, and the transaction goes on as planned at the newer
			// catalog.
			if storage.SchemaChanged(st.snapshot().Catalog(), s.tx.writes, s.tx.catalog) {
				return 0, sqlerr.New("40001", "the schema changed during the transaction; roll back and retry it")
			}
			s.tx.catalog = max(s.tx.catalog, txn.CatalogVersion)
		}
		s.tx.writes = append(s.tx.writes, txn.Writes...)
		for _, t := range txn.Tables {
			s.tx.tables = appendUnique(s.tx.tables, t)
		}
		s.tx.rows += txn.Rows
		return 0, nil
	}
	txn.Exclusive = st.unexclusive != nil
	seq, err := s.eng.Commit(st.ctx, txn)
	if err != nil {
		return 0, err
	}
	if txn.DDL == nil {
		s.lastCommit = seq
	}
	return seq, nil
}

func (s *Session) transaction(ctx context.Context, n *ast.TransactionStmt) (*Result, error) {
	switch n.Kind {
	case ast.TxBegin:
		if s.tx != nil {
			return nil, sqlerr.New("25001", "there is already a transaction in progress").WithPos(n.Pos())
		}
		s.tx = &txn{}
		s.beginModes(n.Modes)
		return &Result{Tag: "BEGIN"}, nil
	case ast.TxRollback:
		res := &Result{Tag: "ROLLBACK"}
		if s.tx == nil {
			res.Notices = []Notice{noTransaction("there is no transaction in progress")}
		}
		s.endTx()
		return res, nil
	case ast.TxSavepoint, ast.TxRelease, ast.TxRollbackTo:
		return s.savepoint(n)
	}
	if s.tx == nil {
		// PostgreSQL warns and succeeds; so do we.
		return &Result{Tag: "COMMIT", Notices: []Notice{noTransaction("there is no transaction in progress")}}, nil
	}
	tx := s.tx
	// The Watch the transaction's checked writes were read under stays
	// open until their commit is decided.
	if w := tx.watch; w != nil {
		tx.watch = nil
		defer w.Release()
	}
	s.endTx()
	if tx.aborted {
		return &Result{Tag: "ROLLBACK"}, nil
	}
	if len(tx.writes) == 0 {
		return &Result{Tag: "COMMIT"}, nil
	}
	seq, err := s.eng.Commit(ctx, &storage.Txn{Kind: storage.KindWrite, CatalogVersion: tx.catalog,
		Writes: tx.writes, Checks: tx.checks, Tables: tx.tables, Rows: tx.rows})
	if err != nil {
		if errors.Is(err, storage.ErrSchemaChanged) {
			return nil, sqlerr.New("40001", "the schema changed during the transaction; nothing was written, retry it").WithPos(n.Pos())
		}
		if errors.Is(err, storage.ErrConflict) {
			// As PostgreSQL's REPEATABLE READ: the transaction's statements
			// ran on snapshots a concurrent commit of the same key has
			// outdated, and cannot be run again here.
			return nil, sqlerr.New("40001", "could not serialize access due to concurrent update: a key the transaction updated, deleted or inserted ON CONFLICT was written by another commit since it was read; nothing was written, retry the transaction").WithPos(n.Pos())
		}
		return nil, err
	}
	s.lastCommit = seq
	return &Result{Tag: "COMMIT", Commit: seq}, nil
}

// savepoint runs SAVEPOINT, RELEASE and ROLLBACK TO, as PostgreSQL's:
// ROLLBACK TO drops what the transaction buffered since the savepoint
// (and the savepoints after it, keeping it) and ends the failed state of
// a transaction a statement aborted; RELEASE forgets the savepoint and
// those after it; a name used twice means its newest. ROLLBACK TO also
// restores the settings (SET, SET LOCAL) as they were at the savepoint.
// DDL, which commits at once, is not undone, as ROLLBACK does not undo
// it.
func (s *Session) savepoint(n *ast.TransactionStmt) (*Result, error) {
	verb := [...]string{ast.TxSavepoint: "SAVEPOINT", ast.TxRelease: "RELEASE SAVEPOINT", ast.TxRollbackTo: "ROLLBACK TO SAVEPOINT"}[n.Kind]
	tx := s.tx
	if tx == nil {
		return nil, sqlerr.New("25P01", "%s can only be used in transaction blocks", verb).WithPos(n.Pos())
	}
	name := n.Name.Name
	if n.Kind == ast.TxSavepoint {
		tx.savepoints = append(tx.savepoints, savepoint{name: name, writes: len(tx.writes), checks: len(tx.checks), tables: len(tx.tables), rows: tx.rows,
			settings: maps.Clone(s.settings.values), local: maps.Clone(tx.local)})
		return &Result{Tag: "SAVEPOINT"}, nil
	}
	at := -1
	for i := len(tx.savepoints) - 1; i >= 0; i-- {
		if tx.savepoints[i].name == name {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, sqlerr.New("3B001", "savepoint %q does not exist", name).WithPos(n.Name.Pos()).WithToken(name)
	}
	if n.Kind == ast.TxRelease {
		tx.savepoints = tx.savepoints[:at]
		return &Result{Tag: "RELEASE"}, nil
	}
	sp := tx.savepoints[at]
	tx.savepoints = tx.savepoints[:at+1]
	clear(tx.writes[sp.writes:]) // the batches they hold are garbage now
	tx.writes, tx.tables, tx.rows = tx.writes[:sp.writes], tx.tables[:sp.tables], sp.rows
	tx.checks = tx.checks[:sp.checks]
	s.settings.values, tx.local = maps.Clone(sp.settings), maps.Clone(sp.local)
	if len(tx.writes) == 0 {
		tx.catalog = 0
	}
	// The pending view may hold writes rolled back: its count alone would
	// not tell once as many new ones are buffered.
	tx.dropView()
	tx.aborted = false
	return &Result{Tag: "ROLLBACK"}, nil
}

// heldWatch is a session's transaction Watch where a cleanup can reach
// it without reaching the session.
type heldWatch struct {
	mu sync.Mutex
	w  *storage.Watch
}

func (h *heldWatch) set(w *storage.Watch) {
	h.mu.Lock()
	h.w = w
	h.mu.Unlock()
}

// ReleaseOnDrop returns a func that releases the Watch of the session's
// open transaction, if any, without touching the session: for a cleanup
// that runs once the session is unreachable (a transaction that can no
// longer commit must not keep every commit recording its keys). It holds
// no reference to the session.
func (s *Session) ReleaseOnDrop() func() {
	h := s.held
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.w != nil {
			h.w.Release()
			h.w = nil
		}
	}
}

// End ends the session's open transaction, if any, writing nothing, as
// PostgreSQL rolls back the transaction of a client that disconnects. A
// server calls it when the connection ends: an open transaction that ran
// an UPDATE holds a storage.Watch, which makes every commit record its
// keys until released.
func (s *Session) End() { s.endTx() }

func (s *Session) endTx() {
	if s.tx == nil {
		return
	}
	s.tx.dropView()
	if s.tx.watch != nil {
		s.tx.watch.Release()
		s.held.set(nil)
	}
	for k, v := range s.tx.local {
		s.settings.values[k] = v
	}
	s.tx = nil
	s.endModes()
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// namedIn finds where a catalog error points (R13.5). Catalog checks see
// names, not positions, and their messages name objects by kind: "column
// ww of table p", "index i4 … names column _commit", "policy x". The
// names so introduced are the candidates; of the statement's identifiers
// and object names that spell one, the caret goes to the last in source
// order (the name a message is about comes after the names that lead to
// it, ALTER TABLE p DROP COLUMN ww), each name at its first occurrence
// (CREATE TABLE p (p …): the table, not the column).
func namedIn(stmt ast.Stmt, msg string) (pos int, tok string, ok bool) {
	named := map[string]bool{}
	for _, m := range kindName.FindAllStringSubmatch(msg, -1) {
		named[m[1]] = true
	}
	if ct, isCreate := stmt.(*ast.CreateTableStmt); isCreate {
		cols := map[string]bool{}
		for _, m := range columnName.FindAllStringSubmatch(msg, -1) {
			cols[m[1]] = true
		}
		if id := clauseName(ct, msg, cols); id != nil {
			return id.Pos(), id.Name, true
		}
	}
	seen := map[string]bool{}
	ast.Inspect(stmt, func(n ast.Node) bool {
		var name string
		var at int
		switch x := n.(type) {
		case *ast.Ident:
			if x == nil {
				return false
			}
			name, at = x.Name, x.Pos()
		case *ast.ObjectName:
			if x == nil {
				return false
			}
			name, at = x.Name, x.Pos()
		default:
			return true
		}
		if name == "" || seen[name] {
			return true
		}
		seen[name] = true
		if named[name] && at >= pos {
			pos, tok, ok = at, name, true
		}
		return true
	})
	return pos, tok, ok
}

// columnName matches a column name a catalog message introduces.
var columnName = regexp.MustCompile(`\bcolumn "?([^\s",:;()]+)"?`)

// clauseName finds, for a message about a clause of CREATE TABLE (one
// that begins "ORDER BY …" or "SHARD BY column …"), the last of the
// clause's names among the columns the message introduces (named): the column the message is about
// where it stands in that clause, not its definition (for "names column a
// twice", the repeat).
func clauseName(ct *ast.CreateTableStmt, msg string, named map[string]bool) *ast.Ident {
	clauses := []struct {
		name string
		ids  []*ast.Ident
	}{{"ORDER BY", ct.OrderBy}, {"SHARD BY", ct.ShardBy}, {"VALID BY", ct.ValidBy}, {"REVISION BY", ct.RevisionBy}}
	for _, g := range ct.Groups {
		clauses = append(clauses, struct {
			name string
			ids  []*ast.Ident
		}{"VALID BY", g.ValidBy}, struct {
			name string
			ids  []*ast.Ident
		}{"REVISION BY", g.RevisionBy})
	}
	var found *ast.Ident
	for _, c := range clauses {
		if !strings.HasPrefix(msg, c.name+" ") {
			continue
		}
		for _, id := range c.ids {
			if named[id.Name] {
				found = id
			}
		}
	}
	return found
}

// kindName matches a name a catalog message introduces by its kind.
var kindName = regexp.MustCompile(`\b(?:table|column|index|policy|view|transformation|group|setting|relation|user|role) "?([^\s",:;()]+)"?`)

// userError turns err into what the user sees (invariant 2): an
// *sqlerr.Error with the statement text attached.
func userError(err error, stmt ast.Stmt, sql string) error {
	pos := stmt.Pos()
	var e *sqlerr.Error
	var ce *catalog.Error
	var re *types.RangeError
	var pe *types.ParseError
	var cast *types.CastError
	var oe *types.OpError
	switch {
	case errors.As(err, &e):
	case errors.As(err, &ce):
		e = sqlerr.New(ce.Code, "%s", ce.Msg).WithPos(pos)
		if p, tok, ok := namedIn(stmt, ce.Msg); ok {
			e = e.WithPos(p).WithToken(tok)
		}
	case errors.As(err, &re):
		e = sqlerr.New(plan.RangeCode(re), "%s", re.Error()).WithPos(pos)
	case errors.As(err, &pe):
		code := sqlerr.CodeInvalidText
		if k := pe.Type.Kind; k == types.Date || k == types.DateTime64 || k == types.Interval {
			code = sqlerr.CodeInvalidDatetime
		}
		e = sqlerr.New(code, "%s", pe.Error()).WithPos(pos)
	case errors.As(err, &cast):
		e = sqlerr.New("42846", "%s", cast.Error()).WithPos(pos)
	case errors.As(err, &oe):
		e = sqlerr.New("42883", "%s", oe.Error()).WithPos(pos)
	case errors.Is(err, types.ErrDivisionByZero):
		e = sqlerr.New(sqlerr.CodeDivisionByZero, "division by zero").WithPos(pos)
	case errors.Is(err, context.Canceled):
		e = sqlerr.New("57014", "canceling statement due to user request")
	case errors.Is(err, context.DeadlineExceeded):
		e = sqlerr.New("57014", "canceling statement due to statement timeout")
	case errors.Is(err, storage.ErrClosed):
		e = sqlerr.New("57P01", "the database is closed")
	default:
		e = sqlerr.Internal(fmt.Errorf("session: %w", err))
	}
	if _, has := e.SQL(); !has {
		e = e.WithSQL(sql)
	}
	return e
}
