package logictest

import "context"

// DB is the engine under test, as the runner sees it: one session that runs
// one statement at a time. The same interface is implemented in-process (over
// the Go API) and over the PostgreSQL wire (with a client driver), so a script
// runs unchanged against both.
type DB interface {
	// Exec runs exactly one SQL statement, as written in the script (a
	// trailing semicolon, if the script has one, is passed through). A query
	// returns its rows; any other statement may return a nil *Result. The
	// engine must stop and return ctx.Err() (or an error wrapping it) when
	// ctx is done: the runner enforces its per-record timeout through ctx.
	Exec(ctx context.Context, sql string) (*Result, error)
	// Close releases the session and the database. Everything committed
	// before Close must be there when the same directory is opened again.
	Close() error
}

// Result is what a statement returned: column names and rows of values.
type Result struct {
	// Columns are the result's column names. The runner checks only their
	// number, and only when it is not zero.
	Columns []string
	// Rows hold one Value per column, in the order the engine produced them.
	Rows [][]Value
}

// Value is one result value in canonical text: the engine formats it (an
// integer as decimal digits, a float in its shortest round-trip form, a bool
// as true/false, a DATETIME64 as the conformance README says), and the runner
// renders that text by the record's type letter. Keeping the formatting in the
// engine keeps the runner ignorant of Strata's types and lets the wire path
// hand over exactly the text a client receives.
type Value struct {
	// Text is the canonical text; it is ignored when Null is set.
	Text string
	// Null marks SQL NULL, which renders as NULL under every type letter.
	Null bool
}

// Text returns a non-null Value holding s; a shorthand for adapters and fakes.
func Text(s string) Value { return Value{Text: s} }

// Null is the SQL NULL value.
var Null = Value{Null: true}

// Opener opens (or creates) a database in dir and returns a session on it.
// The runner gives each script a fresh, empty, existing directory; a restart
// record closes the DB and calls the Opener again with the same directory.
type Opener func(dir string) (DB, error)

// DefaultOpener is the engine the package's own tests (TestConformance,
// TestSQL, TestCorpus) run against. It is nil until the engine exists; the
// engine registers itself from a test file in this directory, e.g.
//
//	// engine_test.go
//	func init() { logictest.DefaultOpener = strata.OpenForLogictest }
//
// so that no production package depends on the runner. While it is nil those
// tests skip with a message instead of pretending to run.
var DefaultOpener Opener
