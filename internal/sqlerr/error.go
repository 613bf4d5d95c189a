package sqlerr

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SQLSTATE codes Strata raises. The names follow PostgreSQL's
// errcodes-appendix so that clients which switch on them behave the same.
const (
	CodeSyntax               = "42601" // syntax_error
	CodeUndefinedTable       = "42P01" // undefined_table
	CodeUndefinedColumn      = "42703" // undefined_column
	CodeUndefinedObject      = "42704" // undefined_object
	CodeUndefinedFunction    = "42883" // undefined_function
	CodeDuplicateTable       = "42P07" // duplicate_table
	CodeDuplicateColumn      = "42701" // duplicate_column
	CodeDuplicateObject      = "42710" // duplicate_object
	CodeAmbiguousColumn      = "42702" // ambiguous_column
	CodeDatatypeMismatch     = "42804" // datatype_mismatch
	CodeInvalidDefinition    = "42P16" // invalid_table_definition
	CodeGrouping             = "42803" // grouping_error
	CodeNumericOutOfRange    = "22003" // numeric_value_out_of_range
	CodeInvalidText          = "22P02" // invalid_text_representation
	CodeInvalidDatetime      = "22007" // invalid_datetime_format
	CodeDatetimeOverflow     = "22008" // datetime_field_overflow
	CodeDivisionByZero       = "22012" // division_by_zero
	CodeIntervalOverflow     = "22015" // interval_field_overflow
	CodeInvalidParameter     = "22023" // invalid_parameter_value
	CodeUntranslatable       = "22021" // character_not_in_repertoire (invalid byte sequence)
	CodeNotNull              = "23502" // not_null_violation
	CodeFeatureNotSupported  = "0A000" // feature_not_supported
	CodeProgramLimitExceeded = "54001" // statement_too_complex
	CodeInternal             = "XX000" // internal_error
)

// Error is a user-visible SQL error. Construct it with New or one of the
// named constructors; refine it with the With… methods, which copy.
type Error struct {
	// Code is the five-character SQLSTATE, e.g. CodeSyntax.
	Code string
	// Message is the primary, one-line message, without position.
	Message string
	// Pos is the byte offset into the SQL text the error points at, or -1.
	Pos int
	// Token is the source text of the token at Pos ("" at end of input or
	// when the error is not about a token).
	Token string
	// Detail is an optional secondary message (psql's DETAIL line), such as
	// `expected ")", found ","`.
	Detail string
	// Hint is an optional suggestion (psql's HINT line).
	Hint string

	// sql is the statement text, attached by WithSQL, so that Error can say
	// where the error is in lines and columns.
	sql    string
	hasSQL bool
}

// New returns an error with the given code and a message formatted with
// fmt.Sprintf semantics, at no position.
func New(code, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Code: code, Message: msg, Pos: -1}
}

// Syntax returns a 42601 error at pos. msg is the message's head ("" means
// "syntax error"); the token is appended PostgreSQL-style: `syntax error at
// or near "SELEC"`, or `syntax error at end of input` when token is "".
func Syntax(pos int, token, msg string) *Error {
	if msg == "" {
		msg = "syntax error"
	}
	if token == "" {
		msg += " at end of input"
	} else {
		msg += " at or near " + quote(token)
	}
	return &Error{Code: CodeSyntax, Message: msg, Pos: pos, Token: token}
}

// UndefinedColumn reports a column reference that names no column in scope.
func UndefinedColumn(pos int, name string) *Error {
	return &Error{Code: CodeUndefinedColumn, Message: fmt.Sprintf("column %s does not exist", quote(name)), Pos: pos, Token: name}
}

// UndefinedTable reports a relation name that names no table.
func UndefinedTable(pos int, name string) *Error {
	return &Error{Code: CodeUndefinedTable, Message: fmt.Sprintf("relation %s does not exist", quote(name)), Pos: pos, Token: name}
}

// DuplicateTable reports a CREATE TABLE of a name that is taken.
func DuplicateTable(pos int, name string) *Error {
	return &Error{Code: CodeDuplicateTable, Message: fmt.Sprintf("relation %s already exists", quote(name)), Pos: pos, Token: name}
}

// NotNull reports a NULL written to a NOT NULL column.
func NotNull(pos int, column string) *Error {
	return &Error{Code: CodeNotNull, Message: fmt.Sprintf("null value in column %s violates not-null constraint", quote(column)), Pos: pos}
}

// OutOfRange reports a numeric value that does not fit its type.
func OutOfRange(pos int, format string, args ...any) *Error {
	return New(CodeNumericOutOfRange, format, args...).WithPos(pos)
}

// InvalidText reports text that cannot be read as a value of a type.
func InvalidText(pos int, format string, args ...any) *Error {
	return New(CodeInvalidText, format, args...).WithPos(pos)
}

// NotSupported reports a feature Strata does not implement.
func NotSupported(pos int, format string, args ...any) *Error {
	return New(CodeFeatureNotSupported, format, args...).WithPos(pos)
}

// Internal wraps an internal failure for the user; err's text becomes the
// message. Use it only at the edge, never to carry errors between layers.
func Internal(err error) *Error {
	return &Error{Code: CodeInternal, Message: "internal error: " + err.Error(), Pos: -1}
}

// As reports whether err is or wraps an *Error and returns it.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// CodeOf returns the SQLSTATE of err: its code if err is or wraps an
// *Error, CodeInternal for any other error, "" for nil. Tests and the wire
// server use it to classify errors without type switches.
func CodeOf(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := As(err); ok {
		return e.Code
	}
	return CodeInternal
}

// WithPos returns a copy of e pointing at byte offset pos.
func (e *Error) WithPos(pos int) *Error {
	c := *e
	c.Pos = pos
	return &c
}

// WithToken returns a copy of e naming token as the offending text.
func (e *Error) WithToken(token string) *Error {
	c := *e
	c.Token = token
	return &c
}

// WithDetail returns a copy of e with a DETAIL message.
func (e *Error) WithDetail(format string, args ...any) *Error {
	c := *e
	c.Detail = format
	if len(args) > 0 {
		c.Detail = fmt.Sprintf(format, args...)
	}
	return &c
}

// WithHint returns a copy of e with a HINT message.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Hint = format
	if len(args) > 0 {
		c.Hint = fmt.Sprintf(format, args...)
	}
	return &c
}

// WithSQL returns a copy of e that remembers the statement text, so that
// Error() and LineCol can name the line and column of Pos.
func (e *Error) WithSQL(sql string) *Error {
	c := *e
	c.sql, c.hasSQL = sql, true
	return &c
}

// SQL returns the statement text attached with WithSQL, if any.
func (e *Error) SQL() (string, bool) { return e.sql, e.hasSQL }

// LineCol returns the 1-based line and character column of e.Pos in the
// attached SQL; ok is false when there is no position or no SQL.
func (e *Error) LineCol() (line, col int, ok bool) {
	if e.Pos < 0 || !e.hasSQL {
		return 0, 0, false
	}
	line, col = LineCol(e.sql, e.Pos)
	return line, col, true
}

// CharPos returns the 1-based character position of e.Pos in the attached
// SQL, the value of the wire protocol's ErrorResponse Position field, or 0.
func (e *Error) CharPos() int {
	if e.Pos < 0 || !e.hasSQL {
		return 0
	}
	p := min(e.Pos, len(e.sql))
	return utf8.RuneCountInString(e.sql[:p]) + 1
}

// Error returns the message, followed by "(line L, column C)" when the SQL
// text is attached and the error has a position.
func (e *Error) Error() string {
	if line, col, ok := e.LineCol(); ok {
		return fmt.Sprintf("%s (line %d, column %d)", e.Message, line, col)
	}
	return e.Message
}

// LineCol converts byte offset pos in sql into a 1-based line and a 1-based
// column counted in characters. A pos past the end is clamped to the end;
// a pos inside a multi-byte character counts that character.
func LineCol(sql string, pos int) (line, col int) {
	pos = max(0, min(pos, len(sql)))
	start := strings.LastIndexByte(sql[:pos], '\n') + 1
	line = strings.Count(sql[:start], "\n") + 1
	col = utf8.RuneCountInString(sql[start:pos]) + 1
	return line, col
}

// maxShown is how many characters of a source line Format shows; longer
// lines are cut around the position, as psql does.
const maxShown = 76

// Format renders e for a terminal the way psql does:
//
//	ERROR: syntax error at or near "SELEC" (line 1, column 1)
//	LINE 1: SELEC 1;
//	        ^
//	DETAIL: ...
//	HINT: ...
//
// sql is the statement text; when it is "" the text attached with WithSQL
// is used. Without text or position only the ERROR (and DETAIL/HINT) lines
// are printed.
func (e *Error) Format(sql string) string {
	if sql == "" {
		sql = e.sql
	}
	var b strings.Builder
	b.WriteString("ERROR: ")
	b.WriteString(e.Message)
	if e.Pos >= 0 && sql != "" {
		line, col := LineCol(sql, e.Pos)
		fmt.Fprintf(&b, " (line %d, column %d)\n", line, col)
		writeCaret(&b, sql, e.Pos, line)
	} else {
		b.WriteByte('\n')
	}
	if e.Detail != "" {
		b.WriteString("DETAIL: " + e.Detail + "\n")
	}
	if e.Hint != "" {
		b.WriteString("HINT: " + e.Hint + "\n")
	}
	return b.String()
}

// writeCaret writes the "LINE n: text" line holding pos and a caret line
// under pos's character. Tabs are shown as single spaces so the caret lines
// up; a line longer than maxShown characters is cut to a window around pos.
func writeCaret(b *strings.Builder, sql string, pos, line int) {
	pos = max(0, min(pos, len(sql)))
	start := strings.LastIndexByte(sql[:pos], '\n') + 1
	end := strings.IndexByte(sql[pos:], '\n')
	if end < 0 {
		end = len(sql)
	} else {
		end += pos
	}
	text := []rune(strings.ReplaceAll(strings.TrimRight(sql[start:end], "\r"), "\t", " "))
	col := utf8.RuneCountInString(sql[start:pos])
	prefix := fmt.Sprintf("LINE %d: ", line)
	lead, trail := "", ""
	if len(text) > maxShown {
		from := max(0, col-maxShown/2)
		to := min(len(text), from+maxShown)
		from = max(0, to-maxShown)
		if from > 0 {
			lead = "..."
		}
		if to < len(text) {
			trail = "..."
		}
		text = text[from:to]
		col -= from
	}
	b.WriteString(prefix + lead + string(text) + trail + "\n")
	b.WriteString(strings.Repeat(" ", len(prefix)+len(lead)+col) + "^\n")
}

// quote wraps s in double quotes, PostgreSQL-style (no escaping: the text
// is shown to a human, not parsed back). Only the first line of s, and at
// most 60 characters of it, are shown, so that a runaway token such as an
// unterminated string keeps the message on one line (invariant 3).
func quote(s string) string {
	const limit = 60
	cut := false
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s, cut = s[:i], true
	}
	if utf8.RuneCountInString(s) > limit {
		s, cut = string([]rune(s)[:limit]), true
	}
	if cut {
		s += "..."
	}
	return `"` + s + `"`
}
