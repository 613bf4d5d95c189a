package parser

import (
	"github.com/strata-db/strata/internal/sql/scanner"
	"github.com/strata-db/strata/internal/sql/token"
)

// Range is a statement's byte range [Start, End) in a script.
type Range struct {
	Start, End int
}

// Split cuts a script into statements at the semicolons that end them,
// without parsing: semicolons inside strings, quoted names and comments do
// not count. Pieces holding no token (";;", a trailing comment) are left
// out; each range starts at the statement's first token and ends after its
// last one. A shell uses it to run a script statement by statement, so
// that a syntax error in one statement does not stop the ones before it.
// A malformed token (an unterminated string) ends the scan: everything
// from the start of its statement is the last range, and parsing that
// range reports the error.
func Split(sql string) []Range {
	var sc scanner.Scanner
	sc.Init(sql)
	var out []Range
	start, end := -1, -1
	for {
		tok, pos, e, _ := sc.Scan()
		switch tok {
		case token.EOF:
			if start >= 0 {
				out = append(out, Range{start, end})
			}
			return out
		case token.ILLEGAL:
			if start < 0 {
				start = pos
			}
			return append(out, Range{start, len(sql)})
		case token.SEMICOLON:
			if start >= 0 {
				out = append(out, Range{start, end})
			}
			start = -1
		default:
			if start < 0 {
				start = pos
			}
			end = e
		}
	}
}
