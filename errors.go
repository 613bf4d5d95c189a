package strata

import (
	"errors"
	"fmt"

	"github.com/strata-db/strata/internal/sqlerr"
)

// Error is an error a user caused: bad SQL, a value that does not fit its
// column, a definition rule broken, an unknown table. Programs switch on
// Code, a PostgreSQL SQLSTATE ("42P01" undefined table, "22003" out of range,
// "0A000" not supported, …); people read Message, Detail and Hint.
type Error struct {
	Code    string
	Message string
	Detail  string
	Hint    string
	// Line and Column (1-based, Column counting characters) locate the
	// offending token in the statement text; 0 when the error has no
	// position.
	Line, Column int
	// Position is the same place as a 1-based character offset, the
	// PostgreSQL wire protocol's Position field; 0 when unknown.
	Position int
	// Statement and Offset say, for Session.Exec, which statement of the
	// script failed (0-based) and its byte offset in the script.
	Statement, Offset int

	sql string
}

// Error returns the message with its position.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d, column %d)", e.Message, e.Line, e.Column)
	}
	return e.Message
}

// Format renders the error the way psql does, with the statement line and
// a caret under the position, then DETAIL and HINT lines.
func (e *Error) Format() string {
	se := sqlerr.New(e.Code, "%s", e.Message)
	if e.Detail != "" {
		se = se.WithDetail("%s", e.Detail)
	}
	if e.Hint != "" {
		se = se.WithHint("%s", e.Hint)
	}
	if e.Position > 0 {
		se = se.WithPos(byteOffset(e.sql, e.Position-1))
	}
	return se.Format(e.sql)
}

func byteOffset(s string, chars int) int {
	n := 0
	for i := range s {
		if n == chars {
			return i
		}
		n++
	}
	return len(s)
}

// toError converts any error of the engine into an *Error.
func toError(err error, sql string) error {
	var out *Error
	if errors.As(err, &out) {
		return out
	}
	se, ok := sqlerr.As(err)
	if !ok {
		se = sqlerr.Internal(err)
	}
	e := &Error{Code: se.Code, Message: se.Message, Detail: se.Detail, Hint: se.Hint, sql: sql}
	if text, has := se.SQL(); has {
		e.sql = text
	}
	if line, col, ok := se.LineCol(); ok {
		e.Line, e.Column, e.Position = line, col, se.CharPos()
	} else if se.Pos >= 0 && sql != "" {
		e.Line, e.Column = sqlerr.LineCol(sql, se.Pos)
		e.Position = se.WithSQL(sql).CharPos()
	}
	return e
}
