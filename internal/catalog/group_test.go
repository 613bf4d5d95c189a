package catalog

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

func TestGroupErrors(t *testing.T) {
	base := func(groups ...GroupSpec) TableSpec {
		return TableSpec{Name: "t", Columns: []ColumnSpec{
			col("id", types.Int64, notNull), col("a", types.Int64), col("b", types.Int64), col("s", types.String), typed("at", dt3), col("d", types.Date),
		}, PrimaryKey: []string{"id"}, Groups: groups}
	}
	cases := []struct {
		name          string
		spec          TableSpec
		code, pattern string
	}{
		{"column in two groups", base(GroupSpec{Name: "x", Columns: []string{"a"}}, GroupSpec{Name: "y", Columns: []string{"b", "a"}}),
			CodeInvalidTableDef, `column a of table t is in two attribute groups, x and y`},
		{"key column in group", base(GroupSpec{Name: "x", Columns: []string{"id"}}),
			CodeInvalidTableDef, `column id of table t is a primary key column and cannot be in attribute group x`},
		{"group named default", base(GroupSpec{Name: "default", Columns: []string{"a"}}),
			CodeReservedName, `attribute group name default is reserved`},
		{"group twice", base(GroupSpec{Name: "x", Columns: []string{"a"}}, GroupSpec{Name: "x", Columns: []string{"b"}}),
			CodeDuplicateObject, `attribute group x of table t is declared twice`},
		{"unknown column", base(GroupSpec{Name: "x", Columns: []string{"zz"}}),
			CodeUndefinedColumn, `attribute group x of table t names column zz, which does not exist`},
		{"column twice in a group", base(GroupSpec{Name: "x", Columns: []string{"a", "a"}}),
			CodeDuplicateColumn, `attribute group x of table t names column a twice`},
		{"no columns", base(GroupSpec{Name: "x"}), CodeInvalidTableDef, `attribute group x of table t has no columns`},
		{"valid by outside the group", base(GroupSpec{Name: "x", Columns: []string{"a"}, ValidBy: []string{"b"}}),
			CodeInvalidTableDef, `VALID BY column b of table t is in the default group, not in attribute group x`},
		{"valid by in another group", base(GroupSpec{Name: "x", Columns: []string{"a"}}, GroupSpec{Name: "y", Columns: []string{"b"}, RevisionBy: []string{"a"}}),
			CodeInvalidTableDef, `REVISION BY column a of table t is in attribute group x, not in attribute group y`},
		{"valid by key", base(GroupSpec{Name: "x", Columns: []string{"a"}, ValidBy: []string{"id"}}),
			CodeInvalidTableDef, `VALID BY column id of table t is a primary key column, not in attribute group x`},
		{"valid by unknown", base(GroupSpec{Name: "x", Columns: []string{"a"}, ValidBy: []string{"zz"}}),
			CodeUndefinedColumn, `VALID BY of attribute group x in table t names column zz`},
		{"valid by string", base(GroupSpec{Name: "x", Columns: []string{"a", "s"}, ValidBy: []string{"s"}}),
			CodeDatatypeMismatch, `VALID BY column s of attribute group x in table t has type STRING`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := New().CreateTable(tc.spec, 1)
			wantErr(t, err, tc.code, tc.pattern)
		})
	}
	// Orderable types are integers of any width, DATE and DATETIME64 (R3.2).
	ok := base(GroupSpec{Name: "x", Columns: []string{"a", "at", "d"}, ValidBy: []string{"at", "d"}, RevisionBy: []string{"a"}})
	tab := mustCreate(t, New(), ok, 1)
	x, _ := tab.Group("x")
	if !slices.Equal(tab.Names(x.ValidBy), []string{"at", "d"}) || !x.Ordered() || tab.Groups[0].Ordered() {
		t.Errorf("group x %+v", x)
	}
	if !slices.Equal(tab.Names(tab.Groups[0].Columns), []string{"b", "s"}) {
		t.Errorf("the group default holds %v", tab.Names(tab.Groups[0].Columns))
	}
}

func TestAddGroup(t *testing.T) {
	c := fixture(t)
	// The seed's last statement.
	tab := noErrT(t)(c.AddGroup(AddGroupSpec{Table: "balances", Name: "labels", Columns: []ColumnSpec{
		col("label_text", types.String, explNull), typed("labelled_at", dt3, explNull)}}, 11))
	g, _ := tab.Group("labels")
	if g.ID != 3 || g.Ordered() || g.Owner != "" || !slices.Equal(tab.Names(g.Columns), []string{"label_text", "labelled_at"}) {
		t.Fatalf("labels %+v", g)
	}
	// A transformation writing another group keeps its ownership (R4.5).
	if act, _ := tab.Group("activity"); act.Owner != "act" {
		t.Fatal("ADD ATTRIBUTE GROUP lost the owner of activity")
	}
	cases := []struct {
		name          string
		spec          AddGroupSpec
		code, pattern string
	}{
		{"append", AddGroupSpec{Table: "transfers", Name: "g", Columns: []ColumnSpec{col("x", types.Int8)}},
			CodeInvalidTableDef, `MODE APPEND tables have no attribute groups: cannot add attribute group g to table transfers`},
		{"default", AddGroupSpec{Table: "kv", Name: "default", Columns: []ColumnSpec{col("x", types.Int8)}}, CodeReservedName, `default is reserved`},
		{"taken", AddGroupSpec{Table: "balances", Name: "labels", Columns: []ColumnSpec{col("x", types.Int8)}}, CodeDuplicateObject, `labels of table balances is declared twice`},
		{"existing column", AddGroupSpec{Table: "kv", Name: "g", Columns: []ColumnSpec{col("v", types.Int8)}}, CodeDuplicateColumn, `column v of table kv already exists`},
		{"repeated column", AddGroupSpec{Table: "kv", Name: "g", Columns: []ColumnSpec{col("x", types.Int8), col("x", types.Int8)}}, CodeDuplicateColumn, `column x of table kv already exists`},
		{"no columns", AddGroupSpec{Table: "kv", Name: "g"}, CodeInvalidTableDef, `attribute group g of table kv has no columns`},
		{"not null", AddGroupSpec{Table: "kv", Name: "g", Columns: []ColumnSpec{col("x", types.Int8, notNull)}}, CodeInvalidColumnDef, `column x .*NOT NULL.*nullable`},
		{"key", AddGroupSpec{Table: "kv", Name: "g", Columns: []ColumnSpec{col("x", types.Int8, inlinePK)}}, CodeInvalidTableDef, `x .*cannot be a primary key column`},
		{"order outside", AddGroupSpec{Table: "kv", Name: "g", Columns: []ColumnSpec{col("x", types.Int8)}, ValidBy: []string{"v"}},
			CodeInvalidTableDef, `VALID BY column v of table kv is in the default group, not in attribute group g`},
		{"order by string", AddGroupSpec{Table: "kv", Name: "g", Columns: []ColumnSpec{col("x", types.String)}, RevisionBy: []string{"x"}},
			CodeDatatypeMismatch, `REVISION BY column x of attribute group g in table kv has type STRING`},
		{"unknown table", AddGroupSpec{Table: "nosuch", Name: "g", Columns: []ColumnSpec{col("x", types.Int8)}}, CodeUndefinedTable, `nosuch`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.AddGroup(tc.spec, 12)
			wantErr(t, err, tc.code, tc.pattern)
		})
	}
	// Group ids are never reused: the next group after labels is 4.
	tab = noErrT(t)(c.AddGroup(AddGroupSpec{Table: "balances", Name: "more", Columns: []ColumnSpec{col("m", types.Int8)}}, 12))
	if g, _ := tab.Group("more"); g.ID != 4 {
		t.Errorf("group id %d, want 4", g.ID)
	}
}
