package catalog

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// TestSchemaEvolution replays schema.slt's DDL and checks ids, introduced
// defaults, positions and generations (R6.5, R8.1, R8.2).
func TestSchemaEvolution(t *testing.T) {
	c := New()
	s := mustCreate(t, c, TableSpec{Name: "s", Mode: ModeVersioned,
		Columns: []ColumnSpec{col("k", types.Int64, notNull), col("a", types.Int64)}, PrimaryKey: []string{"k"}}, 1)
	tab := noErrT(t)(c.AddColumn(AddColumnSpec{Table: "s", Column: col("b", types.Int64, def("7"))}, 3))
	b, _ := tab.Column("b")
	if b.ID != 3 || b.AddedCommit != 3 || b.Introduced == nil || b.Introduced.Value != "7" || b.Group != DefaultGroup || b.Position != 3 {
		t.Fatalf("added b: %+v", b)
	}
	if !slices.Contains(tab.Groups[0].Columns, b.ID) {
		t.Fatal("b is not in the group default")
	}
	tab = noErrT(t)(c.SetDefault(SetDefaultSpec{Table: "s", Column: "b", Default: Default{SQL: "8", Value: "8"}}, 5))
	b, _ = tab.Column("b")
	if b.Default.Value != "8" || b.Introduced.Value != "7" {
		t.Fatalf("SET DEFAULT: default %v introduced %v", b.Default, b.Introduced)
	}
	tab = noErrT(t)(c.RenameColumn(RenameColumnSpec{Table: "s", Old: "a", New: "amount"}, 7))
	if _, ok := tab.Column("a"); ok {
		t.Fatal("old name a still resolves")
	}
	if amount, _ := tab.Column("amount"); amount.ID != 2 {
		t.Fatalf("renamed column changed id to %d", amount.ID)
	}
	tab = noErrT(t)(c.DropColumn(DropColumnSpec{Table: "s", Column: "b"}, 8))
	if _, ok := tab.Column("b"); ok || len(tab.Dropped) != 1 || tab.Dropped[0].ID != 3 || tab.Dropped[0].DroppedCommit != 8 {
		t.Fatalf("after DROP b: dropped %+v", tab.Dropped)
	}
	if old, ok := tab.AnyColumn(3); !ok || old.Introduced.Value != "7" || old.Position != 0 {
		t.Fatalf("the dropped column lost its introduced default: %+v", old)
	}
	if slices.Contains(tab.Groups[0].Columns, 3) {
		t.Fatal("the dropped column is still in its group")
	}
	tab = noErrT(t)(c.AddColumn(AddColumnSpec{Table: "s", Column: col("b", types.String)}, 9))
	nb, _ := tab.Column("b")
	if nb.ID != 4 || nb.Introduced != nil || nb.Type.Kind != types.String {
		t.Fatalf("a new column with an old name must be new: %+v", nb)
	}
	_, err := c.DropColumn(DropColumnSpec{Table: "s", Column: "k"}, 10)
	wantErr(t, err, CodeDependentObjects, `cannot drop column k of table s: it is a primary key column`)
	_, err = c.AddGroup(AddGroupSpec{Table: "s", Name: "g2", Columns: []ColumnSpec{col("x", types.Int64, notNull)}}, 10)
	wantErr(t, err, CodeInvalidColumnDef, `column x of new attribute group g2 in table s is NOT NULL.*must be nullable`)
	tab = noErrT(t)(c.AddGroup(AddGroupSpec{Table: "s", Name: "g2",
		Columns: []ColumnSpec{col("x", types.Int64, explNull), col("xi", types.Int64, explNull)}, ValidBy: []string{"xi"}}, 10))
	g2, _ := tab.Group("g2")
	if g2.ID != 1 || !slices.Equal(tab.Names(g2.Columns), []string{"x", "xi"}) || !slices.Equal(tab.Names(g2.ValidBy), []string{"xi"}) || g2.AddedCommit != 10 {
		t.Fatalf("group g2 %+v", g2)
	}
	tab = noErrT(t)(c.AlterColumnType(AlterColumnTypeSpec{Table: "s", Column: "amount", Type: types.Of(types.Int128)}, 13))
	if amount, _ := tab.Column("amount"); amount.Type.Kind != types.Int128 || amount.Codec != "DELTA, ZSTD(1)" {
		t.Fatalf("widened amount: %+v", amount)
	}
	_, err = c.AlterColumnType(AlterColumnTypeSpec{Table: "s", Column: "amount", Type: types.Of(types.Int8)}, 13)
	wantErr(t, err, CodeDatatypeMismatch, `cannot change column amount of table s from INT128 to INT8: it would narrow`)
	tab = noErrT(t)(c.RenameTable(RenameTableSpec{Table: "s", New: "s2"}, 14))
	names := []string{}
	for _, cl := range tab.Columns {
		names = append(names, cl.Name)
	}
	if !slices.Equal(names, []string{"k", "amount", "b", "x", "xi"}) {
		t.Fatalf("columns by position: %v", names)
	}
	for i, cl := range tab.Columns {
		if cl.Position != i+1 {
			t.Errorf("column %s at position %d, want %d", cl.Name, cl.Position, i+1)
		}
	}
	// Eight successful ALTERs, one generation each; failed ones count nothing.
	if tab.Generation != 9 || tab.ID != s.ID || tab.CreatedCommit != 1 || tab.AlteredCommit != 14 {
		t.Fatalf("generation %d id %d created %d altered %d", tab.Generation, tab.ID, tab.CreatedCommit, tab.AlteredCommit)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestAddColumn(t *testing.T) {
	c := fixture(t)
	tab := noErrT(t)(c.AddColumn(AddColumnSpec{Table: "balances", Column: col("memo", types.String), Group: "holding"}, 11))
	memo, _ := tab.Column("memo")
	h, _ := tab.Group("holding")
	if memo.Group != h.ID || h.Columns[len(h.Columns)-1] != memo.ID || !memo.Nullable {
		t.Fatalf("memo %+v in holding %v", memo, h.Columns)
	}
	noErrT(t)(c.AddColumn(AddColumnSpec{Table: "balances", Column: col("memo2", types.String), Group: "default"}, 11))
	// NOT NULL is fine with a DEFAULT, or on a table known to be empty.
	noErrT(t)(c.AddColumn(AddColumnSpec{Table: "kv", Column: col("n", types.Int64, notNull, def("0"))}, 11))
	noErrT(t)(c.AddColumn(AddColumnSpec{Table: "kv", Column: col("m", types.Int64, notNull), KnownEmpty: true}, 11))
	// An append table's new column is in no group.
	tr := noErrT(t)(c.AddColumn(AddColumnSpec{Table: "transfers", Column: col("memo", types.String)}, 11))
	if m, _ := tr.Column("memo"); m.Group != NoGroup || m.Position != 8 {
		t.Fatalf("append column %+v", m)
	}
	cases := []struct {
		name          string
		spec          AddColumnSpec
		code, pattern string
	}{
		{"unknown table", AddColumnSpec{Table: "nosuch", Column: col("x", types.Int8)}, CodeUndefinedTable, `table nosuch does not exist`},
		{"duplicate", AddColumnSpec{Table: "kv", Column: col("v", types.Int8)}, CodeDuplicateColumn, `column v of table kv already exists`},
		{"not null without default", AddColumnSpec{Table: "kv", Column: col("x", types.Int8, notNull)}, CodeNotNullViolation,
			`cannot add NOT NULL column x to table kv without a DEFAULT`},
		{"primary key", AddColumnSpec{Table: "kv", Column: col("x", types.Int8, inlinePK)}, CodeInvalidTableDef, `cannot add primary key column x to table kv`},
		{"unknown group", AddColumnSpec{Table: "balances", Column: col("x", types.Int8), Group: "nosuch"}, CodeUndefinedObject, `table balances has no attribute group nosuch`},
		{"append group", AddColumnSpec{Table: "transfers", Column: col("x", types.Int8), Group: "g"}, CodeInvalidTableDef, `MODE APPEND tables have no attribute groups`},
		{"reserved", AddColumnSpec{Table: "kv", Column: col("_group", types.Int8)}, CodeReservedName, `_group`},
		{"bad codec", AddColumnSpec{Table: "kv", Column: col("x", types.Float64, codec("ZSTD(23)"))}, CodeInvalidColumnDef, `column x of table kv: codec ZSTD\(23\)`},
	}
	for _, tc := range cases {
		_, err := c.AddColumn(tc.spec, 12)
		wantErr(t, err, tc.code, tc.pattern)
	}
}

func TestRenameColumnErrors(t *testing.T) {
	c := fixture(t)
	cases := []struct {
		spec          RenameColumnSpec
		code, pattern string
	}{
		{RenameColumnSpec{Table: "kv", Old: "nosuch", New: "x"}, CodeUndefinedColumn, `column nosuch of table kv does not exist`},
		{RenameColumnSpec{Table: "kv", Old: "v", New: "k"}, CodeDuplicateColumn, `cannot rename column v of table kv to k: column k already exists`},
		{RenameColumnSpec{Table: "kv", Old: "v", New: "_commit"}, CodeReservedName, `_commit`},
		{RenameColumnSpec{Table: "kv", Old: "v", New: ""}, CodeInvalidName, `column name cannot be empty`},
		{RenameColumnSpec{Table: "transfers", Old: "block_time", New: "bt"}, CodeDependentObjects, "block_time of table transfers: it is the `by` column of retention policy ev30"},
		{RenameColumnSpec{Table: "balances", Old: "transfer_count", New: "n"}, CodeDependentObjects, `written by transformation act \(attribute group activity\)`},
		{RenameColumnSpec{Table: "balances", Old: "address", New: "a"}, CodeDependentObjects, `address of table balances: it is written by transformation act, whose output names it`},
		{RenameColumnSpec{Table: "transfers", Old: "from_address", New: "f"}, CodeDependentObjects, `from_address of table transfers: it is read by transformation act`},
	}
	for _, tc := range cases {
		_, err := c.RenameColumn(tc.spec, 11)
		wantErr(t, err, tc.code, tc.pattern)
	}
	// Renaming a key column keeps its roles: they refer to the id.
	sh := seedSpec()
	sh.Name = "sharded"
	mustCreate(t, c, sh, 11)
	tab := noErrT(t)(c.RenameColumn(RenameColumnSpec{Table: "sharded", Old: "address", New: "addr"}, 11))
	if got := tab.Names(tab.ShardBy); !slices.Equal(got, []string{"addr"}) {
		t.Errorf("SHARD BY after rename: %v", got)
	}
	if got := tab.Names(tab.OrderBy); got[1] != "addr" {
		t.Errorf("ORDER BY after rename: %v", got)
	}
	// A source column the transformation does not read may be renamed.
	noErrT(t)(c.RenameColumn(RenameColumnSpec{Table: "transfers", Old: "to_address", New: "dest"}, 12))
	x, _ := c.Transformation("act")
	if got := c.SourceNames(x); !slices.Equal(got, []string{"transfers"}) {
		t.Errorf("SourceNames = %v", got)
	}
}

func TestDropColumnRoles(t *testing.T) {
	c := fixture(t)
	mustCreate(t, c, TableSpec{Name: "ev", Mode: ModeAppend, Columns: []ColumnSpec{typed("ts", dt3), col("kind", types.String), col("n", types.Int64)},
		ShardBy: []string{"kind"}, OrderBy: []string{"ts"}}, 11)
	mustCreate(t, c, TableSpec{Name: "one", Mode: ModeAppend, Columns: []ColumnSpec{col("only", types.String)}}, 11)
	noErr(t, e3(c.CreateIndex(IndexSpec{Name: "ev_n", Table: "ev", Columns: []string{"n"}}, 11)))
	cases := []struct {
		table, column, pattern string
		code                   string
	}{
		{"kv", "k", `cannot drop column k of table kv: it is a primary key column`, CodeDependentObjects},
		{"ev", "kind", `cannot drop column kind of table ev: it is a SHARD BY column`, CodeDependentObjects},
		{"ev", "ts", `cannot drop column ts of table ev: it is an ORDER BY column`, CodeDependentObjects},
		{"balances", "balance_index", `it is the VALID BY column of attribute group holding`, CodeDependentObjects},
		{"balances", "balance_version", `it is the REVISION BY column of attribute group holding`, CodeDependentObjects},
		{"balances", "last_transfer_at", `written by transformation act`, CodeDependentObjects},
		{"transfers", "block_time", "the `by` column of retention policy ev30", CodeDependentObjects},
		{"transfers", "token", "cannot drop column token of table transfers: it is read by transformation act", CodeDependentObjects},
		{"one", "only", `cannot drop column only: it is the last column of table one`, CodeInvalidTableDef},
		{"kv", "nosuch", `column nosuch of table kv does not exist`, CodeUndefinedColumn},
	}
	for _, tc := range cases {
		_, err := c.DropColumn(DropColumnSpec{Table: tc.table, Column: tc.column}, 12)
		wantErr(t, err, tc.code, tc.pattern)
	}
	// An index on a dropped column is dropped with it, as in PostgreSQL.
	noErrT(t)(c.DropColumn(DropColumnSpec{Table: "ev", Column: "n"}, 12))
	if _, ok := c.Index("ev_n"); ok {
		t.Error("index ev_n outlived its column")
	}
	tab := noErrT(t)(c.DropColumn(DropColumnSpec{Table: "balances", Column: "updated_at"}, 12))
	if h, _ := tab.Group("holding"); len(h.Columns) != 3 {
		t.Errorf("holding still lists %d columns", len(h.Columns))
	}
}

func TestDefaults(t *testing.T) {
	c := fixture(t)
	_, err := c.SetDefault(SetDefaultSpec{Table: "kv", Column: "k", Default: Default{SQL: "NULL", Null: true}}, 11)
	wantErr(t, err, CodeInvalidColumnDef, `column k of table kv is NOT NULL and cannot default to NULL`)
	_, err = c.SetDefault(SetDefaultSpec{Table: "kv", Column: "nosuch", Default: Default{SQL: "1", Value: "1"}}, 11)
	wantErr(t, err, CodeUndefinedColumn, `column nosuch of table kv`)
	_, err = c.DropDefault(DropDefaultSpec{Table: "kv", Column: "nosuch"}, 11)
	wantErr(t, err, CodeUndefinedColumn, `column nosuch of table kv`)
	tab := noErrT(t)(c.DropDefault(DropDefaultSpec{Table: "kv", Column: "w"}, 11))
	w, _ := tab.Column("w")
	if w.Default != nil || w.Introduced == nil || w.Introduced.SQL != "'x'" {
		t.Fatalf("DROP DEFAULT: default %v introduced %v", w.Default, w.Introduced)
	}
	tab = noErrT(t)(c.SetDefault(SetDefaultSpec{Table: "kv", Column: "w", Default: Default{SQL: "NULL", Null: true}}, 12))
	if w, _ := tab.Column("w"); !w.Default.Null || w.Introduced.SQL != "'x'" {
		t.Fatalf("SET DEFAULT NULL: %v %v", w.Default, w.Introduced)
	}
}

func TestAlterColumnType(t *testing.T) {
	c := New()
	mustCreate(t, c, TableSpec{Name: "t", Columns: []ColumnSpec{
		col("k", types.Int32, notNull), col("u", types.Uint64), col("f", types.Float32), col("s", types.String),
		col("d", types.Int32, codec("delta")), col("i", types.Int64), col("b", types.Int16, codec("DELTA, LZ4")),
	}, PrimaryKey: []string{"k"}, ValidBy: []string{"i"}}, 1)
	widen := []struct {
		column string
		to     types.Type
		codec  string
	}{
		{"u", types.Of(types.Uint128), "DELTA, ZSTD(1)"},
		{"f", types.Of(types.Float64), "ZSTD(1)"},
		{"d", types.Of(types.Int64), "DELTA"},
		{"i", types.Of(types.Int256), "DELTA, ZSTD(1)"}, // an ordering column stays orderable
		{"b", types.Of(types.Int16), "DELTA, LZ4"},      // the same type: allowed, a no-op
		{"k", types.Of(types.Int64), "DELTA, ZSTD(1)"},  // a key column: its encoding does not depend on width
	}
	for _, w := range widen {
		tab := noErrT(t)(c.AlterColumnType(AlterColumnTypeSpec{Table: "t", Column: w.column, Type: w.to}, 2))
		got, _ := tab.Column(w.column)
		if got.Type != w.to || got.Codec != w.codec {
			t.Errorf("%s: type %s codec %s, want %s %s", w.column, got.Type, got.Codec, w.to, w.codec)
		}
	}
	bad := []struct {
		column        string
		to            types.Type
		code, pattern string
	}{
		{"u", types.Of(types.Uint8), CodeDatatypeMismatch, `from UINT128 to UINT8: it would narrow`},
		{"u", types.Of(types.Int128), CodeDatatypeMismatch, `from UINT128 to INT128: that is not a widening`},
		{"i", types.Of(types.String), CodeDatatypeMismatch, `from INT256 to STRING: that is not a widening`},
		{"s", types.Type{Kind: types.String, Len: 10}, CodeDatatypeMismatch, `from STRING to VARCHAR\(10\): it would narrow`},
		{"f", types.Of(types.Float32), CodeDatatypeMismatch, `from FLOAT64 to FLOAT32: it would narrow`},
		{"k", types.Of(types.Float64), CodeDatatypeMismatch, `from INT64 to FLOAT64: that is not a widening`},
		// every value fits, but the kind changes: the message says so
		{"k", types.Type{Kind: types.Decimal, Precision: 30}, CodeDatatypeMismatch, `from INT64 to DECIMAL\(30,0\): ALTER COLUMN … TYPE changes a type only within its kind`},
		{"k", types.Type{Kind: types.Decimal, Precision: 10}, CodeDatatypeMismatch, `from INT64 to DECIMAL\(10,0\): that is not a widening`},
		{"nosuch", types.Of(types.Int64), CodeUndefinedColumn, `column nosuch of table t does not exist`},
		{"u", types.Type{}, CodeInvalidColumnDef, `not a valid type`},
	}
	for _, b := range bad {
		_, err := c.AlterColumnType(AlterColumnTypeSpec{Table: "t", Column: b.column, Type: b.to}, 3)
		wantErr(t, err, b.code, b.pattern)
	}
	// A DECIMAL key widens its precision (the unscaled integer, and so the
	// stored encoding, stays); a new scale would change the encoding.
	dec := func(p, s uint8) types.Type { return types.Type{Kind: types.Decimal, Precision: p, Scale: s} }
	mustCreate(t, c, TableSpec{Name: "dk", Columns: []ColumnSpec{typed("d", dec(10, 2), notNull), col("v", types.Int64)}, PrimaryKey: []string{"d"}}, 4)
	noErrT(t)(c.AlterColumnType(AlterColumnTypeSpec{Table: "dk", Column: "d", Type: dec(12, 2)}, 5))
	_, err := c.AlterColumnType(AlterColumnTypeSpec{Table: "dk", Column: "d", Type: dec(14, 4)}, 6)
	wantErr(t, err, CodeFeatureNotSupported, `cannot change column d of table dk from DECIMAL\(12, ?2\) to DECIMAL\(14, ?4\): it is a key, SHARD BY or ordering column`)
}

func TestParseCodec(t *testing.T) {
	i64, str, b := types.Of(types.Int64), types.Of(types.String), types.Of(types.Bool)
	good := []struct {
		text string
		t    types.Type
		want string
	}{
		{"ZSTD(3)", str, "ZSTD(3)"},
		{"zstd", str, "ZSTD(1)"},
		{"ZSTD( 22 )", str, "ZSTD(22)"},
		{"LZ4", str, "LZ4"},
		{"NONE", b, "NONE"},
		{"DELTA, ZSTD", i64, "DELTA, ZSTD(1)"},
		{"delta,lz4", types.Of(types.Date), "DELTA, LZ4"},
		{"DELTA", dt3, "DELTA"},
	}
	for _, g := range good {
		c, err := ParseCodec(g.text, g.t)
		if err != nil || c.String() != g.want {
			t.Errorf("ParseCodec(%q) = %s, %v; want %s", g.text, c, err, g.want)
			continue
		}
		// The canonical text reads back as itself.
		if again, err := ParseCodec(c.String(), g.t); err != nil || again != c {
			t.Errorf("canonical %q does not read back: %v %v", c, again, err)
		}
	}
	bad := []struct {
		text    string
		t       types.Type
		pattern string
	}{
		{"ZSTD(0)", str, `level must be an integer from 1 to 22`},
		{"ZSTD(23)", str, `level must be an integer from 1 to 22`},
		{"ZSTD(x)", str, `level`},
		{"LZ4(2)", str, `LZ4 takes no level`},
		{"NONE, ZSTD", str, `NONE stands alone`},
		{"ZSTD, DELTA", i64, `DELTA must come first`},
		{"DELTA, DELTA", i64, `DELTA must come first`},
		{"ZSTD, LZ4", str, `only one compressor`},
		{"DELTA", types.Of(types.Float64), `DELTA applies to integers, DATE and DATETIME64, not FLOAT64`},
		{"GORILLA", types.Of(types.Float64), `unknown codec GORILLA`},
		{"ZSTD,", str, `empty entry`},
		{"ZSTD(1", str, `malformed`},
		{"ZS TD", str, `malformed`},
	}
	for _, b := range bad {
		if _, err := ParseCodec(b.text, b.t); err == nil || !matches(err.Error(), b.pattern) {
			t.Errorf("ParseCodec(%q): %v, want /%s/", b.text, err, b.pattern)
		}
	}
	defaults := map[types.Kind]string{
		types.Int8: "DELTA, ZSTD(1)", types.Uint256: "DELTA, ZSTD(1)", types.Date: "DELTA, ZSTD(1)", types.DateTime64: "DELTA, ZSTD(1)",
		types.String: "ZSTD(1)", types.Bytes: "ZSTD(1)", types.Float32: "ZSTD(1)", types.Decimal: "ZSTD(1)", types.UUID: "ZSTD(1)",
		types.Bool: "NONE",
	}
	for k, want := range defaults {
		if got := DefaultCodec(types.Of(k)).String(); got != want {
			t.Errorf("DefaultCodec(%s) = %s, want %s", k, got, want)
		}
	}
}
