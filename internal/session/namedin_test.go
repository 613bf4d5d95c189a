package session

import (
	"regexp"
	"strings"
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
		{"ALTER TABLE p ADD COLUMN _commit INT64", "column _commit of table p cannot be so named: the name is reserved for a hidden column", "_commit"},
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

// TestNamedInClause checks that a message about a CREATE TABLE clause
// (ORDER BY, SHARD BY, VALID BY, REVISION BY) points at the name where
// it stands in that clause, the repeat of a name given twice, not at the
// column's definition.
func TestNamedInClause(t *testing.T) {
	for _, tc := range []struct{ sql, msg, at string }{
		{"CREATE TABLE a (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) SHARD BY (v) SHARDS 2",
			"SHARD BY column v of table a is not a primary key column", "(v) SHARDS"},
		{"CREATE TABLE a (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) SHARD BY (k, k) SHARDS 2",
			"SHARD BY of table a names column k twice", "k) SHARDS"},
		{"CREATE TABLE a (a INT64 NOT NULL, b INT64 NOT NULL, v INT64, PRIMARY KEY (a, b)) ORDER BY (b, v, a)",
			"ORDER BY of table a puts column v, which is not a primary key column, before the key's last column", "v, a)"},
		{"CREATE TABLE a (k INT64 NOT NULL, x INT64, PRIMARY KEY (k), ATTRIBUTE GROUP g (x) VALID BY (k))",
			"VALID BY column k of table a is a primary key column", "k))"},
	} {
		stmt, err := parser.Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		pos, _, ok := namedIn(stmt, tc.msg)
		want := strings.LastIndex(tc.sql, tc.at)
		if tc.at[0] == '(' {
			want++
		}
		if !ok || pos != want {
			t.Fatalf("%s / %s: position %d (ok %v), want %d", tc.sql, tc.msg, pos, ok, want)
		}
	}
}
