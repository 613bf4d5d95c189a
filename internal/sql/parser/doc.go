// Package parser turns SQL text into syntax trees (package ast).
//
// It is a hand-written recursive-descent parser in the style of go/parser:
// one method per production, expect for required tokens, errors that say
// "expected X, found Y". A syntax error panics with a bailout value that
// only Parse and ParseAll recover, so the productions read straight-line;
// nothing else in the package recovers panics, and no user input can make
// a panic escape (FuzzParse checks this).
//
// Invariants:
//  1. The parser looks at most three tokens ahead and never backtracks, so
//     it runs in time linear in the input (a 100 000-row VALUES list parses
//     in well under a second; BenchmarkValues measures it).
//  2. Nesting (parentheses, subqueries, prefix operators) deeper than
//     maxDepth is an error, not a stack overflow.
//  3. Every error is an *sqlerr.Error with SQLSTATE 42601 (or 54001 for
//     nesting too deep), a byte position and the SQL text attached, so
//     err.Error() names the line and column.
//  4. AS OF (SPEC R6.2) is read in two places: right after a relation (a
//     table or table function, before or after its alias), and once per
//     query block after ORDER BY and before LIMIT/OFFSET. A query block
//     whose own relations carry AS OF cannot also carry the trailing form,
//     and a block cannot carry it twice: both are syntax errors saying AS OF
//     may appear once per query block. After AS, the word OF followed by
//     COMMIT or TIMESTAMP always starts AS OF; otherwise "of" is an alias.
package parser
