package session

import (
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
)

// TestNamedIn: a catalog error points at the name it is about (R13.5),
// the statement's last name its message names as a word.
func TestNamedIn(t *testing.T) {
	for _, tc := range []struct{ sql, msg, tok string }{
		{"ALTER TABLE p DROP COLUMN ww", "column ww of table p does not exist", "ww"},
		{"ALTER TABLE p RENAME COLUMN nosuch TO z", "column nosuch of table p does not exist", "nosuch"},
		{"CREATE INDEX i4 ON p (_commit)", "index i4 of table p names column _commit, which does not exist", "_commit"},
		{"CREATE TABLE q (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) VALID BY (v2)", "VALID BY of the default group in table q names column v2, which does not exist", "v2"},
		{"DROP TABLE zz", "table zz does not exist", "zz"},
		{"CREATE TABLE p (k INT64 NOT NULL, PRIMARY KEY (k))", "table p already exists", "p"},
		// "v" is not a word of "v2": the caret goes to the table.
		{"CREATE TABLE q (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) VALID BY (v2)", "table q: v2 is wrong", "v2"},
		{"ALTER TABLE p ADD COLUMN w INT64", "nothing named here", ""},
	} {
		stmt, err := parser.Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		pos, tok, ok := namedIn(stmt, tc.msg)
		if tok != tc.tok || ok != (tc.tok != "") {
			t.Fatalf("%s / %s: token %q (ok %v), want %q", tc.sql, tc.msg, tok, ok, tc.tok)
		}
		if ok && tc.sql[pos:pos+len(tok)] != tok {
			t.Fatalf("%s: position %d is not at %q", tc.sql, pos, tok)
		}
	}
}
