package logictest

import "testing"

func TestRewrite(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"key-less table gets MODE APPEND",
			"CREATE TABLE t1(a INTEGER, b INTEGER)",
			"CREATE TABLE t1(a INTEGER, b INTEGER) MODE APPEND"},
		{"lower case, spaces inside the parentheses",
			"create table t1( x INTEGER, y VARCHAR(8) )",
			"create table t1( x INTEGER, y VARCHAR(8) ) MODE APPEND"},
		{"multi-line, key-less",
			"CREATE TABLE t1(\n  a INTEGER,\n  b INTEGER\n)",
			"CREATE TABLE t1(\n  a INTEGER,\n  b INTEGER\n) MODE APPEND"},
		{"before a trailing semicolon and space",
			"CREATE TABLE t(a INTEGER);  \n",
			"CREATE TABLE t(a INTEGER) MODE APPEND;  \n"},
		{"UNIQUE is no key: still append, UNIQUE as written",
			"CREATE TABLE t1(a INTEGER UNIQUE)",
			"CREATE TABLE t1(a INTEGER UNIQUE) MODE APPEND"},
		{"FLOAT and TEXT pass as written",
			"CREATE TABLE tab0(col0 INTEGER, col1 FLOAT, col2 TEXT)",
			"CREATE TABLE tab0(col0 INTEGER, col1 FLOAT, col2 TEXT) MODE APPEND"},
		{"a column named mode is not a MODE clause",
			"CREATE TABLE t(mode INTEGER)",
			"CREATE TABLE t(mode INTEGER) MODE APPEND"},
		{"a quoted 'primary key' is not a key",
			"CREATE TABLE t(a TEXT DEFAULT 'primary key')",
			"CREATE TABLE t(a TEXT DEFAULT 'primary key') MODE APPEND"},
		{"temporary table",
			"CREATE TEMP TABLE t(a INTEGER)",
			"CREATE TEMP TABLE t(a INTEGER) MODE APPEND"},
		{"INTEGER PRIMARY KEY passes as written",
			"CREATE TABLE tab0(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT)",
			"CREATE TABLE tab0(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT)"},
		{"table-level key passes as written",
			"CREATE TABLE t(a INTEGER, b INTEGER, primary  key (a))",
			"CREATE TABLE t(a INTEGER, b INTEGER, primary  key (a))"},
		{"multi-line key",
			"CREATE TABLE t1(\n  a1 INTEGER PRIMARY KEY,\n  b1 INTEGER\n)",
			"CREATE TABLE t1(\n  a1 INTEGER PRIMARY KEY,\n  b1 INTEGER\n)"},
		{"an explicit mode is kept",
			"CREATE TABLE t(a INTEGER) MODE APPEND",
			"CREATE TABLE t(a INTEGER) MODE APPEND"},
		{"CREATE TABLE AS is left alone",
			"CREATE TABLE t2 AS SELECT * FROM t1",
			"CREATE TABLE t2 AS SELECT * FROM t1"},
		{"UNIQUE leaves CREATE INDEX, DESC passes as written",
			"CREATE UNIQUE INDEX idx_tab0_0 ON tab0 (col0 DESC)",
			"CREATE INDEX idx_tab0_0 ON tab0 (col0 DESC)"},
		{"lower case UNIQUE index",
			"create unique index i1 on t1 (a)",
			"create index i1 on t1 (a)"},
		{"a plain index is left alone",
			"CREATE INDEX i1 ON t1 (a DESC)",
			"CREATE INDEX i1 ON t1 (a DESC)"},
		{"a view is left alone",
			"CREATE VIEW view1 AS SELECT x FROM t1 WHERE x>0",
			"CREATE VIEW view1 AS SELECT x FROM t1 WHERE x>0"},
		{"other statements are left alone",
			"INSERT INTO t1(e,c,b,d,a) VALUES(103,102,100,101,104)",
			"INSERT INTO t1(e,c,b,d,a) VALUES(103,102,100,101,104)"},
		{"a comment does not hide the statement",
			"-- CREATE\nSELECT 1",
			"-- CREATE\nSELECT 1"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Rewrite(c.in); got != c.want {
				t.Errorf("Rewrite(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if again := Rewrite(c.want); again != c.want {
				t.Errorf("not idempotent: Rewrite(%q) = %q", c.want, again)
			}
		})
	}
}
