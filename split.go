package strata

import "github.com/strata-db/strata/internal/sql/parser"

// Statement is one statement of a script.
type Statement struct {
	// SQL is the statement's text, without the terminating semicolon.
	SQL string
	// Offset is the byte offset of SQL in the script.
	Offset int
}

// SplitStatements cuts a script into statements at the semicolons that end
// them, without parsing: semicolons inside strings, quoted names and
// comments do not count, and pieces holding no statement (";;", a trailing
// comment) are left out. A shell runs the pieces one by one, so that a
// syntax error in one does not stop the ones before it.
func SplitStatements(sql string) []Statement {
	ranges := parser.Split(sql)
	out := make([]Statement, len(ranges))
	for i, r := range ranges {
		out[i] = Statement{SQL: sql[r.Start:r.End], Offset: r.Start}
	}
	return out
}
