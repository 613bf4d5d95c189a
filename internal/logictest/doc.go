// Package logictest runs sqllogictest scripts against a Strata engine: the
// conformance scripts of ../shared/conformance, the project's own scripts in
// test/sql, and SQLite's classic corpus (../shared/extern/sqllogictest).
//
// The runner knows nothing of Strata. It talks to the engine through DB, a
// session that executes one statement and returns rows of canonical text, and
// Opener, which opens a data directory; the same scripts therefore run
// in-process and over the PostgreSQL wire, with a different Opener. Run
// executes one file and returns a Report (counts, seconds, failures);
// RunFile does the same inside a Go test, one t.Errorf per failure;
// Complete runs a file and returns it with the engine's results written in
// as the expected output (upstream's completion mode), for filling in a new
// script from a trusted engine.
//
// # The two dialects
//
// Both share one record grammar. Records are separated by blank lines;
// `statement ok` and `statement error [regex]` are followed by SQL; `query
// <types> [nosort|rowsort|valuesort] [label]` by SQL, a `----` line and the
// expected output; `restart`, `halt` and `hash-threshold N` stand alone;
// `skipif <engine>` / `onlyif <engine>` lines may precede any record. SQL runs
// up to the blank line or `----`, its lines joined by "\n", and is sent as
// written (a trailing semicolon included: the engine accepts one). The error
// regex is matched case-insensitively against err.Error(); a bare `statement
// error` accepts any error.
//
// The conformance dialect (.slt) writes one row per expected line, its values
// joined by a single space (values may themselves contain spaces: "write 1").
// The classic dialect (.test, SQLite's) writes one value per line, or, for a
// result of more values than the file's hash-threshold, the single line
// `N values hashing to <md5>`. The classic runner also accepts one row per
// line when the number of expected lines equals the number of rows and not
// the number of values. The dialect follows the file name unless
// Options.Dialect says otherwise.
//
// skipif/onlyif are matched, case-insensitively, against Options.Engine,
// "postgresql" by default: Strata follows PostgreSQL's dialect, so the corpus'
// PostgreSQL variants are the ones to run. A record is skipped when any
// skipif names the engine or any onlyif names another (upstream's rule).
//
// # Rendering
//
// The engine formats every value as canonical text (Value); the runner only
// renders that text by the record's type letter (Render):
//
//   - NULL renders as "NULL" under every letter, an empty value as "(empty)".
//   - I keeps integer text digit for digit (UINT256 included); a non-integer
//     number is truncated toward zero, as upstream's integer conversion of a
//     real does; true/false become 1/0. Non-numeric text is left as it is,
//     so that a mismatch shows the real value rather than upstream's 0.
//   - R prints three decimals. A number with at most three decimals is
//     padded exactly (integers of any width stay exact); one with more goes
//     through float64 and %.3f, which is how upstream made the corpus'
//     expected values; one too wide for float64 is rounded in big.Float.
//     SQLite's own printf stops after 16 significant digits and pads with
//     zeros (-9223372036854776000.000); Go prints every digit of the double
//     (-9223372036854775808.000). Only values of 1e16 and more differ, and
//     in the corpus only in records that run for SQLite alone.
//   - B maps true/t/1 and false/f/0 (any case) to true and false.
//   - T is the text itself. In the classic dialect every byte outside
//     printable ASCII (below ' ' or above '~') becomes '@', byte by byte,
//     exactly as upstream's C runner does (so "ï" becomes "@@"); the
//     conformance dialect keeps UTF-8 as it is ("naïve ☃" must survive).
//
// # Comparison
//
// rowsort and valuesort sort the rendered values as upstream does: rows
// column by column with byte-wise comparison (strcmp: "10" before "9"), or
// every value on its own. A hash is MD5 over every rendered value followed by
// "\n", in result order after sorting, printed in lower-case hex.
//
// Whether a result is compared by hash follows the expected output, not the
// hash-threshold: a record whose expected output is a hash line is compared
// by count and hash, any other by its lines. The threshold only decides how a
// result is written, which matters to Complete alone (upstream's default, 8,
// holds in the classic dialect until a hash-threshold record changes it).
//
// In the classic dialect expected lines are compared as written, in
// upstream's sort order. In the conformance dialect a rowsort compares rows as
// whole lines: both the expected and the actual lines are sorted as text
// before comparing, so a script may list its rows in any order; a valuesort
// cuts the sorted values into rows of the query's width.
//
// A query label (`query I nosort label-7`) ties results together: every
// result with the same label in a file must have the same hash. A skipped
// labelled query still takes part through the hash of its expected text, as
// upstream does.
//
// # The compatibility rewrite
//
// In the classic dialect, and only there, each statement passes through
// Rewrite before it is sent. It makes two changes: a CREATE TABLE that
// declares no PRIMARY KEY and no MODE gets " MODE APPEND", because Strata
// refuses a key-less table without a mode (SPEC R1.5) and the corpus creates
// one in nearly every file; and CREATE UNIQUE INDEX loses its UNIQUE, because
// Strata enforces no uniqueness beyond the key and refuses a UNIQUE index
// rather than pretend (the corpus' indexed data is unique anyway, and an
// index never changes a result, R10.2). INTEGER PRIMARY KEY, FLOAT and DESC
// in CREATE INDEX pass as written; the parser accepts them. An append table
// then rejects the corpus' few UPDATE and DELETE statements, as SPEC R1.2
// says it must; those records fail honestly. Expected results are never
// edited.
//
// # Checking the runner against the engines the scripts came from
//
// The tests can run scripts on two peer engines, through test-only adapters
// in peer_test.go: SQLite (Python's sqlite3, testdata/sqlite_peer.py), the
// engine the classic corpus was written with, and PostgreSQL (through psql),
// whose results test/sql promises:
//
//	go test ./internal/logictest -run 'TestCorpus$' -corpus all -corpus-peer sqlite
//	STRATA_PG_PEER='host=127.0.0.1 port=55432 user=postgres' go test ./internal/logictest -run SQLOnPostgres
//
// On SQLite 3.40 the whole corpus subset passes (125,137 of the 125,146
// records run as engine sqlite) except 9 records of
// evidence/slt_lang_aggfunc.test: four where text under I is kept rather than
// read as 0 (the choice above), one two-statement record, and four 64-bit
// overflow cases whose expected values come from SQLite's C API and printf.
// On PostgreSQL 15, as engine postgresql, select1 to select5 pass in full
// (10,706 records). A peer takes the corpus as written (Options.Rewrite
// returns its input).
//
// # Registration
//
// DefaultOpener is nil until the engine exists. TestConformance (over
// ../shared/conformance, located as the directory beside the repository root
// that holds go.mod), TestSQL (over test/sql) and TestCorpus (over the files
// named by -corpus, each bounded by -corpus-timeout) skip with a message
// while it is nil. The first two keep a pending list of files expected to
// fail and fail when a pending file passes, so the list only shrinks.
//
// # Invariants
//
//  1. Lines follow upstream: a trailing "\r" is dropped, a line of only
//     white space is blank, and a line whose first byte is '#' is a comment,
//     dropped wherever it appears (inside SQL and expected output too).
//     Line numbers in reports are the file's own.
//  2. Every file runs on its own new, empty data directory; `restart` is
//     Close followed by the Opener on the same directory.
//  3. Expected output is never rewritten; only classic SQL passes through
//     Rewrite, and a failure shows the SQL as written and as sent.
//  4. Every counted record (statement, query, restart) ends in exactly one
//     of passed, failed, skipped or not run:
//     Records == Passed + Failed + Skipped + NotRun.
//  5. A timeout is never the error a `statement error` expects: an error
//     that arrives after the record's context ended is a failure.
//  6. Once an engine fails to return within cancelGrace of its context
//     ending, the runner stops the file and never touches that DB again
//     (not even Close), so a hung engine cannot hang the whole run.
//  7. A failure in one record never stops the records after it; only a
//     failed restart, a hung engine or the run's context does.
package logictest
