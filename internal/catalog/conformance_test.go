package catalog

import (
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// TestConformanceDefinitionErrors replays every definition error the
// shared conformance scripts expect, with the scripts' own regular
// expressions (matched case-insensitively, as the runner does). The specs
// are what the binder will build from each statement.
func TestConformanceDefinitionErrors(t *testing.T) {
	c := New()
	// The state the statements run against, built the way the scripts build it.
	mustCreate(t, c, TableSpec{Name: "s", Mode: ModeVersioned, Columns: []ColumnSpec{col("k", types.Int64, notNull), col("a", types.Int64)}, PrimaryKey: []string{"k"}}, 1)
	noErrT(t)(c.AlterColumnType(AlterColumnTypeSpec{Table: "s", Column: "a", Type: types.Of(types.Int128)}, 2))
	noErr(t, e3(c.CreatePolicy(policy("keep_1h", "retention", "history", interval("1 hour")), 3)))
	mustCreate(t, c, TableSpec{Name: "p", Mode: ModeVersioned, Columns: []ColumnSpec{
		col("k", types.Int64, notNull), col("v", types.Int64, codec("ZSTD(3)")), col("w", types.String)},
		PrimaryKey: []string{"k"}, Policies: []string{"keep_1h"}}, 4)
	noErr(t, e3(c.CreatePolicy(policy("ev30", "retention", "rows", interval("30 days"), "by", ident("event_time")), 5)))

	cases := []struct {
		script, statement, regex string
		run                      func() error
	}{
		{"groups.slt", "CREATE TABLE twice ... ATTRIBUTE GROUP a (bal), ATTRIBUTE GROUP b (bal)", `bal`, func() error {
			return e3(c.CreateTable(TableSpec{Name: "twice", Columns: []ColumnSpec{col("id", types.Int64, notNull), col("bal", types.Int64)},
				PrimaryKey: []string{"id"}, Groups: []GroupSpec{{Name: "a", Columns: []string{"bal"}}, {Name: "b", Columns: []string{"bal"}}}}, 10))
		}},
		{"groups.slt", "CREATE TABLE outside ... ATTRIBUTE GROUP a (v) VALID BY (idx)", `idx`, func() error {
			return e3(c.CreateTable(TableSpec{Name: "outside", Columns: []ColumnSpec{col("id", types.Int64, notNull), col("v", types.Int64), col("idx", types.Int64)},
				PrimaryKey: []string{"id"}, Groups: []GroupSpec{{Name: "a", Columns: []string{"v"}, ValidBy: []string{"idx"}}}}, 10))
		}},
		{"groups.slt", "CREATE TABLE badorder ... ATTRIBUTE GROUP a (v, s) VALID BY (s)", `(STRING|integer|timestamp|type)`, func() error {
			return e3(c.CreateTable(TableSpec{Name: "badorder", Columns: []ColumnSpec{col("id", types.Int64, notNull), col("v", types.Int64), col("s", types.String)},
				PrimaryKey: []string{"id"}, Groups: []GroupSpec{{Name: "a", Columns: []string{"v", "s"}, ValidBy: []string{"s"}}}}, 10))
		}},
		{"modes.slt", "CREATE TABLE bad1 (a INT64 NOT NULL, PRIMARY KEY (a)) MODE APPEND", `(key|append)`, func() error {
			return e3(c.CreateTable(TableSpec{Name: "bad1", Mode: ModeAppend, Columns: []ColumnSpec{col("a", types.Int64, notNull)}, PrimaryKey: []string{"a"}}, 10))
		}},
		{"modes.slt", "CREATE TABLE bad2 (a INT64)", `(PRIMARY KEY|MODE APPEND)`, func() error {
			return e3(c.CreateTable(TableSpec{Name: "bad2", Columns: []ColumnSpec{col("a", types.Int64)}}, 10))
		}},
		{"schema.slt", "ALTER TABLE s DROP COLUMN k", `(key|k)`, func() error {
			return e2(c.DropColumn(DropColumnSpec{Table: "s", Column: "k"}, 10))
		}},
		{"schema.slt", "ALTER TABLE s ADD ATTRIBUTE GROUP g2 (x INT64 NOT NULL)", `(NULL|nullable)`, func() error {
			return e2(c.AddGroup(AddGroupSpec{Table: "s", Name: "g2", Columns: []ColumnSpec{col("x", types.Int64, notNull)}}, 10))
		}},
		{"schema.slt", "ALTER TABLE s ALTER COLUMN amount TYPE INT8", `(narrow|widen|INT8|type)`, func() error {
			return e2(c.AlterColumnType(AlterColumnTypeSpec{Table: "s", Column: "a", Type: types.Of(types.Int8)}, 10))
		}},
		{"policies.slt", "CREATE POLICY bad1 FOR RETENTION (nosuch = 1)", `nosuch`, func() error {
			return e3(c.CreatePolicy(policy("bad1", "RETENTION", "nosuch", integer(1)), 10))
		}},
		{"policies.slt", "CREATE POLICY bad2 FOR NOSUCHROLE (history = INTERVAL '1 hour')", `(nosuchrole|role)`, func() error {
			return e3(c.CreatePolicy(policy("bad2", "NOSUCHROLE", "history", interval("1 hour")), 10))
		}},
		{"policies.slt", "CREATE POLICY keep_1h FOR RETENTION (history = INTERVAL '2 hours')", `(keep_1h|exists)`, func() error {
			return e3(c.CreatePolicy(policy("keep_1h", "RETENTION", "history", interval("2 hours")), 10))
		}},
		{"policies.slt", "CREATE TABLE q (k INT64 NOT NULL, PRIMARY KEY (k)) POLICY ev30", `event_time`, func() error {
			return e3(c.CreateTable(TableSpec{Name: "q", Columns: []ColumnSpec{col("k", types.Int64, notNull)}, PrimaryKey: []string{"k"}, Policies: []string{"ev30"}}, 10))
		}},
		{"policies.slt", "DROP POLICY keep_1h", `(in use|bound|keep_1h)`, func() error {
			return e2(c.DropPolicy("keep_1h", false, 10))
		}},
		{"policies.slt", "CREATE INDEX p_bad ON p (w) SCOPE SIDEWAYS", `(scope|SIDEWAYS)`, func() error {
			return e3(c.CreateIndex(IndexSpec{Name: "p_bad", Table: "p", Columns: []string{"w"}, Scope: "sideways"}, 10))
		}},
	}
	for _, tc := range cases {
		before := encode(t, c)
		err := tc.run()
		if err == nil {
			t.Errorf("%s: %s succeeded", tc.script, tc.statement)
			continue
		}
		if !matches(err.Error(), tc.regex) {
			t.Errorf("%s: %s: %q does not match %s", tc.script, tc.statement, err, tc.regex)
		}
		if string(encode(t, c)) != string(before) {
			t.Errorf("%s: %s changed the catalog", tc.script, tc.statement)
		}
	}
	// And what the scripts expect to succeed beside them.
	mustCreate(t, c, TableSpec{Name: "events", Mode: ModeAppend, Columns: []ColumnSpec{typed("event_time", dt3, notNull), col("what", types.String)}, Policies: []string{"ev30"}}, 11)
	p, _ := c.Table("p")
	for _, cl := range p.Columns {
		if cl.Codec == "" {
			t.Errorf("column %s has no codec (policies.slt expects one per column)", cl.Name)
		}
	}
	if v, _ := p.Column("v"); v.Codec != "ZSTD(3)" || !v.CodecNamed {
		t.Errorf("codec of p.v = %q", v.Codec)
	}
}
