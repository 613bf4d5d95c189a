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
// A malformed token that may hide the rest of the script (an unterminated
// string or quoted name) ends the scan: everything from the start of its
// statement is the last range, and parsing that range reports the error.
// One that ends where it ends (a stray character such as '&', junk after
// a number) is part of its statement, and the scan goes on after it, so
// that the statements after that one still run.
func Split(sql string) []Range {
	var sc scanner.Scanner
	sc.Init(sql)
	base := 0 // where sc's text starts in sql, after a resumed scan
	var out []Range
	start, end := -1, -1
	for {
		tok, pos, e, _ := sc.Scan()
		pos, e = pos+base, e+base
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
			if e > pos && e < len(sql) && !quoteStart(sql[pos]) {
				end, base = e, e
				sc.Init(sql[e:])
				continue
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

// quoteStart reports whether a token starting with c may be a quoted
// string or name (E'…', U&"…", $tag$…$tag$), whose malformed form can
// swallow the rest of the script.
func quoteStart(c byte) bool {
	return c == '\'' || c == '"' || c == '$' || c == '`' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
