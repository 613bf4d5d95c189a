package catalog

import (
	"errors"
	"fmt"
)

// Error is a definition error a user caused: a SQLSTATE-like code and a
// message that names the offending table, column, group or policy. The
// binder converts it into the user-visible error type (internal/sqlerr);
// catalog keeps its own type so that it needs nothing but types.
type Error struct {
	// Code is a five-character SQLSTATE, e.g. "42P16".
	Code string
	// Msg is the complete sentence shown to the user, without a package
	// prefix: people read it, programs switch on Code.
	Msg string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// The SQLSTATE codes catalog returns, with PostgreSQL's meaning of each so
// that drivers and tools which switch on codes behave as they expect.
const (
	CodeDuplicateTable      = "42P07" // a table of that name exists
	CodeUndefinedTable      = "42P01" // no table of that name
	CodeDuplicateColumn     = "42701" // a column of that name exists
	CodeUndefinedColumn     = "42703" // no column of that name
	CodeDuplicateObject     = "42710" // a group, policy, index, transformation or user of that name exists
	CodeUndefinedObject     = "42704" // no group, policy, index, transformation or user of that name
	CodeInvalidTableDef     = "42P16" // a table definition breaks a rule (modes, keys, groups, layout)
	CodeInvalidColumnDef    = "42611" // a column definition breaks a rule (nullability, codec, type)
	CodeDatatypeMismatch    = "42804" // a type that cannot serve (ordering column, narrowing)
	CodeInvalidParameter    = "22023" // a policy setting or layout number out of its domain
	CodeDependentObjects    = "2BP01" // something still uses the object
	CodeNotNullViolation    = "23502" // a NOT NULL column without a value for existing rows
	CodeReservedName        = "42939" // a name Strata keeps for itself
	CodeFeatureNotSupported = "0A000" // a combination Strata does not offer
	CodeInvalidName         = "42602" // an empty or otherwise unusable name
	CodeInvalidObjectDef    = "42P17" // a transformation definition breaks a rule
	CodeObjectInUse         = "55006" // an attribute group another transformation maintains
	CodeWrongObjectType     = "42809" // a view named where a table is meant, or the reverse
)

// errorf builds an *Error with a formatted message.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// IsCode reports whether err is, or wraps, a catalog *Error with the given
// code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
