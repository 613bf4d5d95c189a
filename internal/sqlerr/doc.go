// Package sqlerr defines Error, the one error type a Strata user sees.
//
// Every failure a user can cause (a syntax error, an unknown column, a value
// out of range, a feature the engine does not have) travels as an *Error
// carrying a SQLSTATE code, so the PostgreSQL wire server can put the code
// into its ErrorResponse and clients such as psql, pgx or JDBC react to it as
// they would to PostgreSQL. Internal failures (I/O, corruption) are ordinary
// Go errors wrapped with %w; the layer that talks to the user turns them into
// an *Error with code XX000 at the edge.
//
// Positions are byte offsets into the SQL text, because that is what the
// scanner produces cheaply. Line and column (1-based, the column counting
// characters, not bytes, as psql and the wire protocol's Position field do)
// are computed only when an error is shown: LineCol walks the text once.
//
// Invariants:
//  1. Pos is -1 or a byte offset in [0, len(sql)] of the statement text the
//     error was raised for; an offset equal to len(sql) means end of input.
//  2. An *Error is never mutated after it is returned to a caller: the With…
//     methods return a modified copy, so an error value may be shared.
//  3. Error() is one line. Detail and Hint are shown by Format, not Error.
package sqlerr
