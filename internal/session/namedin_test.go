package session

import (
	"regexp"
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
		// "v" is not a name of "column v2": the caret goes to v2.
		{"CREATE TABLE q (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) VALID BY (v2)", "table q names column v2", "v2"},
		{"ALTER TABLE p ADD COLUMN w INT64", "nothing named here", ""},
		// a name that is also a word of the message is no candidate
		{"ALTER TABLE p RENAME COLUMN nope TO exist", "column nope of table p does not exist", "nope"},
		// a name repeated points at its first occurrence
		{"CREATE TABLE p (p INT64 NOT NULL, PRIMARY KEY (p))", "table p already exists", "p"},
		{"CREATE INDEX k ON p (k)", "index k already exists", "k"},
		{"CREATE POLICY x FOR RETENTION (foo = 1)", "unknown setting foo for retention policy x; its settings are history, rows, by", "foo"},
		{"ALTER TABLE p SET POLICY nopol", "policy nopol does not exist (bound to table p)", "nopol"},
	} {
		stmt, err := parser.Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		pos, tok, ok := namedIn(stmt, tc.msg)
		if tok != tc.tok || ok != (tc.tok != "") {
			t.Fatalf("%s / %s: token %q (ok %v), want %q", tc.sql, tc.msg, tok, ok, tc.tok)
		}
		// Every case's caret belongs at the first occurrence of its name.
		if ok {
			if first := regexp.MustCompile(`\b` + regexp.QuoteMeta(tok) + `\b`).FindStringIndex(tc.sql); first == nil || pos != first[0] {
				t.Fatalf("%s: position %d, want the first %q at %v", tc.sql, pos, tok, first)
			}
		}
	}
}
