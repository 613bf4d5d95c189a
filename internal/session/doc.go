// Package session executes parsed SQL statements against the storage engine:
// it is where a statement becomes a commit, a result or an error a user can
// read. The root package strata and the wire server sit on top of it; plan and
// exec (queries), catalog (definitions) and storage (commits, snapshots) sit
// below.
//
// # One statement, one snapshot, one commit
//
// Execute takes one statement. A query takes ONE snapshot when it starts and
// plans and runs against it (R6.6), so a concurrent commit never shows half.
// A write statement is planned against that snapshot's catalog, evaluated row
// by row into columnar batches (key columns first, then the group's columns,
// each value already cast to its column's type), split by attribute group
// (R4.3, R4.4), and handed to the engine as ONE storage.Txn: all its rows
// become visible at one commit or none do (R5.1). Every check that can fail —
// casts, NOT NULL, key columns, ordering values (R3.2), group membership —
// runs before the Txn exists, so a failed statement writes nothing and takes
// no commit number. If a DDL commits between planning and committing, the
// engine answers ErrSchemaChanged and the statement is planned again.
//
// DDL statements become the plain spec structs of package catalog (names
// folded by the parser, types resolved with types.FromName, DEFAULTs evaluated
// once and stored as canonical text) and run inside the commit pipeline as the
// Txn's DDL function, so definition rules are checked against the newest
// catalog under the ordering lock.
//
// # Transactions
//
// BEGIN … COMMIT buffers the Writes of each statement and commits them as ONE
// Txn at COMMIT, planned against the catalog seen at BEGIN (a DDL committed
// meanwhile fails the COMMIT with 40001 and nothing is written). Once the
// transaction has written, every statement reads its own snapshot with the
// buffered writes pending on it (storage.Snapshot.WithPending, read as the
// next commit): SELECT, INSERT … SELECT and the WHERE of UPDATE and DELETE
// see the transaction's own writes under the version rules, other sessions
// see none of them before COMMIT, current_commit() stays the last committed
// commit and AS OF reads the committed past only (AS OF current_commit()
// included). Until COMMIT numbers them, pending rows read with _commit
// current_commit() (placed after all of its rows), in versions() too, whose
// _reason may then call a tie with a row of that commit "later position";
// system tables read the same view (system.shards counts
// the pending rows of the memtables it copies). A DDL committed by another
// session after the first write fails the next read too with 40001. The view
// is kept for the next statement while nothing was committed or written
// since. DDL inside a
// transaction is refused (the DDL would commit on its own, breaking the
// transaction's atomicity). As in PostgreSQL, a statement that fails inside a
// transaction aborts it: later statements fail until ROLLBACK, and COMMIT of
// an aborted transaction rolls back.
//
// # Choices the SPEC leaves open
//
//   - A write's touched groups get complete versions: columns of a touched
//     group that the write does not list take their DEFAULT (else NULL), as
//     R4.3 says for ATTRIBUTE GROUP writes. A key-only write is a version of
//     group default, so that group's columns take their DEFAULTs too, as an
//     INSERT of only the key does in PostgreSQL; the other groups stay empty.
//   - A positional INSERT with fewer values than columns lists the first
//     ones, as in PostgreSQL; more values than columns is an error.
//   - An UPDATE or DELETE that matches no row still takes its commit (R5.1:
//     every successful write statement gets one), with 0 rows.
//   - DELETE is refused on a table with a group a transformation maintains:
//     it would end that group's versions too (R12.3).
//   - IF [NOT] EXISTS that finds nothing to do takes no commit.
//   - A transformation (transform.go, transform_run.go) maintains its
//     target from each commit's new source rows: a query it could not keep
//     up to date that way (a JOIN, DISTINCT, HAVING, a subquery, an
//     aggregate below the outermost query or inside an expression) is
//     refused at CREATE TRANSFORMATION with 0A000. Its output rows are
//     written as an UPSERT … ATTRIBUTE GROUP g of the output columns would
//     be (by name); an aggregate's group is keyed by its non-aggregate
//     output columns. SYNC TRANSFORMATIONS waits for the commits before it
//     and fails with a transformation's error if one fails there.
//   - Session settings are those PostgreSQL clients send (client_encoding,
//     DateStyle, TimeZone, search_path, application_name,
//     extra_float_digits, statement_timeout, …) plus any dotted custom name;
//     only statement_timeout changes behaviour. Values print in their
//     column's own zone whatever TimeZone says (R2.4).
//
// # Invariants
//
//  1. A statement that returns an error has taken no commit number and
//     changed nothing (R5.1); a write statement that succeeds outside a
//     transaction has taken exactly one.
//  2. Every error returned by Execute for something the user caused is an
//     *sqlerr.Error with the statement text attached; other errors (I/O,
//     a closed engine) are wrapped with %w and become XX000 at the edge.
//  3. Values handed to storage are of their column's current type, non-null
//     where the column, the key or the group's ordering requires it: storage
//     stores what it is given (storage.Write).
//  4. lastCommit only grows, and only with commits this session made (R5.5).
package session
