package catalog

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

func TestCreateSeedTable(t *testing.T) {
	c := New()
	tab := mustCreate(t, c, seedSpec(), 1)
	if tab.Mode != ModeVersioned || tab.ID != 1 || tab.Generation != 1 || tab.CreatedCommit != 1 {
		t.Errorf("table header %+v", tab)
	}
	if got := tab.Names(tab.Key); !slices.Equal(got, []string{"chain_id", "address", "token"}) {
		t.Errorf("key %v", got)
	}
	if !tab.ShardsAuto || tab.Shards != 0 || !slices.Equal(tab.Names(tab.ShardBy), []string{"address"}) {
		t.Errorf("sharding %v %d %v", tab.ShardsAuto, tab.Shards, tab.Names(tab.ShardBy))
	}
	if len(tab.Groups) != 3 || tab.Groups[0].Name != "default" || tab.Groups[0].ID != DefaultGroup || len(tab.Groups[0].Columns) != 0 {
		t.Fatalf("groups %+v", tab.Groups)
	}
	h, _ := tab.Group("holding")
	if !slices.Equal(tab.Names(h.ValidBy), []string{"balance_index"}) || !slices.Equal(tab.Names(h.RevisionBy), []string{"balance_version"}) {
		t.Errorf("holding ordering %v %v", tab.Names(h.ValidBy), tab.Names(h.RevisionBy))
	}
	for i, cl := range tab.Columns {
		if cl.Position != i+1 || cl.ID != ColumnID(i+1) || cl.AddedCommit != 1 {
			t.Errorf("column %s: position %d id %d", cl.Name, cl.Position, cl.ID)
		}
		key := tab.IsKey(cl.ID)
		if key != !cl.Nullable || key != (cl.Group == NoGroup) {
			t.Errorf("column %s: key %v nullable %v group %d", cl.Name, key, cl.Nullable, cl.Group)
		}
	}
	amount, _ := tab.Column("amount")
	if g, _ := tab.GroupByID(amount.Group); g.Name != "holding" {
		t.Errorf("amount is in %s", g.Name)
	}
	if tab.Policies != defaultBindings() {
		t.Errorf("policies %+v", tab.Policies)
	}
}

func TestCreateDefaults(t *testing.T) {
	c := New()
	// R1.1: no MODE is upsert; ORDER BY defaults to the key; one shard.
	kv := mustCreate(t, c, kvSpec("kv"), 1)
	if kv.Mode != ModeUpsert || kv.Shards != 1 || kv.ShardsAuto || !slices.Equal(kv.OrderBy, kv.Key) {
		t.Errorf("kv: %s shards %d auto %v order %v", kv.Mode, kv.Shards, kv.ShardsAuto, kv.OrderBy)
	}
	if !slices.Equal(kv.ShardColumns(), kv.Key) {
		t.Errorf("a keyed table without SHARD BY shards by key, got %v", kv.ShardColumns())
	}
	// Ungrouped non-key columns form the group default, with table-level ordering.
	vt := mustCreate(t, c, TableSpec{Name: "vt", Mode: ModeVersioned,
		Columns:    []ColumnSpec{col("k", types.Int64, notNull), col("v", types.Int64), col("idx", types.Int64)},
		PrimaryKey: []string{"k"}, ValidBy: []string{"idx"}, Shards: 8}, 2)
	if d := vt.Groups[0]; !slices.Equal(vt.Names(d.Columns), []string{"v", "idx"}) || !slices.Equal(vt.Names(d.ValidBy), []string{"idx"}) {
		t.Errorf("default group %v valid by %v", vt.Names(d.Columns), vt.Names(d.ValidBy))
	}
	if vt.Shards != 8 {
		t.Errorf("shards %d", vt.Shards)
	}
	// An inline PRIMARY KEY is NOT NULL without saying so.
	in := mustCreate(t, c, TableSpec{Name: "in", Columns: []ColumnSpec{col("id", types.UUID, inlinePK), col("x", types.String)}}, 3)
	if id, _ := in.Column("id"); id.Nullable || !in.IsKey(id.ID) {
		t.Errorf("inline key column: nullable %v key %v", id.Nullable, in.IsKey(id.ID))
	}
	// Append: no key, no groups, no order unless given, any column may shard or order.
	ev := mustCreate(t, c, TableSpec{Name: "ev", Mode: ModeAppend,
		Columns: []ColumnSpec{typed("ts", dt3, notNull), col("kind", types.String)},
		ShardBy: []string{"kind"}, Shards: 4, OrderBy: []string{"ts"}}, 4)
	if len(ev.Key) != 0 || len(ev.Groups) != 0 || ev.Names(ev.OrderBy)[0] != "ts" || ev.Shards != 4 {
		t.Errorf("append table %+v", ev)
	}
	for _, cl := range ev.Columns {
		if cl.Group != NoGroup {
			t.Errorf("append column %s has group %d", cl.Name, cl.Group)
		}
	}
	if ts, _ := ev.Column("ts"); ts.Nullable {
		t.Error("NOT NULL column of an append table is nullable")
	}
	log := mustCreate(t, c, TableSpec{Name: "log", Mode: ModeAppend, Columns: []ColumnSpec{col("msg", types.String)}}, 5)
	if len(log.OrderBy) != 0 || len(log.ShardColumns()) != 0 || log.Shards != 1 {
		t.Errorf("plain append table: order %v shard %v shards %d", log.OrderBy, log.ShardColumns(), log.Shards)
	}
	// The key order may be permuted in ORDER BY.
	p := kvSpec("perm")
	p.Columns = append(p.Columns, col("k2", types.Int64, notNull))
	p.PrimaryKey = []string{"k", "k2"}
	p.OrderBy = []string{"k2", "k"}
	if got := mustCreate(t, c, p, 6); !slices.Equal(got.Names(got.OrderBy), []string{"k2", "k"}) {
		t.Errorf("order %v", got.Names(got.OrderBy))
	}
}

func TestCreateIfNotExists(t *testing.T) {
	c := New()
	first := mustCreate(t, c, kvSpec("kv"), 1)
	before := encode(t, c)
	s := kvSpec("kv")
	s.IfNotExists = true
	s.Columns = append(s.Columns, col("other", types.Bool))
	got, created, err := c.CreateTable(s, 2)
	if err != nil || created || got != first {
		t.Fatalf("IF NOT EXISTS: %v %v %v", got, created, err)
	}
	if string(encode(t, c)) != string(before) {
		t.Fatal("IF NOT EXISTS on an existing table changed the catalog")
	}
}

// TestCreateTableErrors covers every definition rule of CREATE TABLE:
// each case names the error code and what the message must name.
func TestCreateTableErrors(t *testing.T) {
	k := func() ColumnSpec { return col("k", types.Int64, notNull) }
	v := func() ColumnSpec { return col("v", types.Int64) }
	cases := []struct {
		name    string
		spec    TableSpec
		code    string
		pattern string
	}{
		{"no columns", TableSpec{Name: "t", PrimaryKey: []string{"k"}}, CodeInvalidTableDef, `table t has no columns`},
		{"empty name", TableSpec{Name: " ", Columns: []ColumnSpec{k()}}, CodeInvalidName, `table name cannot be empty`},
		{"duplicate column", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v(), col("v", types.String)}, PrimaryKey: []string{"k"}},
			CodeDuplicateColumn, `column v of table t is declared twice`},
		{"reserved column", TableSpec{Name: "t", Columns: []ColumnSpec{k(), col("_commit", types.Int64)}, PrimaryKey: []string{"k"}},
			CodeReservedName, `_commit .*reserved`},
		{"invalid type", TableSpec{Name: "t", Columns: []ColumnSpec{k(), {Name: "x"}}, PrimaryKey: []string{"k"}},
			CodeInvalidColumnDef, `column x of table t has no valid type`},
		{"null and not null", TableSpec{Name: "t", Columns: []ColumnSpec{k(), col("x", types.Int64, notNull, explNull)}, PrimaryKey: []string{"k"}},
			CodeInvalidColumnDef, `x of table t is declared both NULL and NOT NULL`},
		{"not null default null", TableSpec{Name: "t", Columns: []ColumnSpec{k(), {Name: "x", Type: types.Of(types.Int8), NotNull: true, Default: &Default{SQL: "NULL", Null: true}}}, PrimaryKey: []string{"k"}},
			CodeInvalidColumnDef, `x of table t is NOT NULL but defaults to NULL`},
		{"bad codec", TableSpec{Name: "t", Columns: []ColumnSpec{k(), col("s", types.String, codec("DELTA"))}, PrimaryKey: []string{"k"}},
			CodeInvalidColumnDef, `column s of table t: codec DELTA applies to integers`},
		{"unknown codec", TableSpec{Name: "t", Columns: []ColumnSpec{k(), col("s", types.String, codec("BROTLI"))}, PrimaryKey: []string{"k"}},
			CodeInvalidColumnDef, `column s of table t: unknown codec BROTLI`},
		// R1.2
		{"append with key", TableSpec{Name: "t", Mode: ModeAppend, Columns: []ColumnSpec{k()}, PrimaryKey: []string{"k"}},
			CodeInvalidTableDef, `MODE APPEND tables have no primary key: table t`},
		{"append with inline key", TableSpec{Name: "t", Mode: ModeAppend, Columns: []ColumnSpec{col("k", types.Int64, inlinePK)}},
			CodeInvalidTableDef, `MODE APPEND tables have no primary key`},
		{"append with group", TableSpec{Name: "t", Mode: ModeAppend, Columns: []ColumnSpec{v()}, Groups: []GroupSpec{{Name: "g", Columns: []string{"v"}}}},
			CodeInvalidTableDef, `MODE APPEND tables have no attribute groups \(ATTRIBUTE GROUP g\)`},
		{"append with valid by", TableSpec{Name: "t", Mode: ModeAppend, Columns: []ColumnSpec{v()}, ValidBy: []string{"v"}},
			CodeInvalidTableDef, `MODE APPEND tables have no VALID BY`},
		{"append with revision by", TableSpec{Name: "t", Mode: ModeAppend, Columns: []ColumnSpec{v()}, RevisionBy: []string{"v"}},
			CodeInvalidTableDef, `MODE APPEND tables have no REVISION BY`},
		// R1.5
		{"no key no mode", TableSpec{Name: "t", Columns: []ColumnSpec{v()}},
			CodeInvalidTableDef, `table t has no primary key.*PRIMARY KEY \(\.\.\.\).*MODE APPEND`},
		{"no key versioned", TableSpec{Name: "t", Mode: ModeVersioned, Columns: []ColumnSpec{v()}},
			CodeInvalidTableDef, `MODE VERSIONED table needs PRIMARY KEY.*MODE APPEND`},
		{"key twice", TableSpec{Name: "t", Columns: []ColumnSpec{col("k", types.Int64, inlinePK), v()}, PrimaryKey: []string{"k"}},
			CodeInvalidTableDef, `table t gives its primary key twice: inline on column k and as PRIMARY KEY \(k\)`},
		{"two inline keys", TableSpec{Name: "t", Columns: []ColumnSpec{col("a", types.Int64, inlinePK), col("b", types.Int64, inlinePK)}},
			CodeInvalidTableDef, `more than one column PRIMARY KEY \(a, b\)`},
		{"unknown key column", TableSpec{Name: "t", Columns: []ColumnSpec{k()}, PrimaryKey: []string{"nosuch"}},
			CodeUndefinedColumn, `primary key of table t names column nosuch`},
		{"key column repeated", TableSpec{Name: "t", Columns: []ColumnSpec{k()}, PrimaryKey: []string{"k", "k"}},
			CodeDuplicateColumn, `primary key of table t names column k twice`},
		{"explicit null key", TableSpec{Name: "t", Columns: []ColumnSpec{col("k", types.Int64, explNull)}, PrimaryKey: []string{"k"}},
			CodeInvalidColumnDef, `column k of table t is declared NULL but is a primary key column`},
		{"null default key", TableSpec{Name: "t", Columns: []ColumnSpec{{Name: "k", Type: types.Of(types.Int64), Default: &Default{Null: true}}}, PrimaryKey: []string{"k"}},
			CodeInvalidColumnDef, `primary key column k of table t cannot default to NULL`},
		// R3.2 at table level
		{"table valid by key column", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, ValidBy: []string{"k"}},
			CodeInvalidTableDef, `VALID BY column k of table t is a primary key column, not in the default group`},
		{"table valid by grouped column", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v(), col("i", types.Int64)}, PrimaryKey: []string{"k"},
			Groups: []GroupSpec{{Name: "g", Columns: []string{"v", "i"}}}, RevisionBy: []string{"i"}},
			CodeInvalidTableDef, `REVISION BY column i of table t is in attribute group g, not in the default group.*inside that ATTRIBUTE GROUP`},
		{"table valid by unknown", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, ValidBy: []string{"zz"}},
			CodeUndefinedColumn, `VALID BY of the default group in table t names column zz`},
		{"table valid by string", TableSpec{Name: "t", Columns: []ColumnSpec{k(), col("s", types.String)}, PrimaryKey: []string{"k"}, ValidBy: []string{"s"}},
			CodeDatatypeMismatch, `VALID BY column s of the default group in table t has type STRING`},
		{"valid by float", TableSpec{Name: "t", Columns: []ColumnSpec{k(), col("f", types.Float64)}, PrimaryKey: []string{"k"}, ValidBy: []string{"f"}},
			CodeDatatypeMismatch, `f .*FLOAT64.*integer type, DATE or DATETIME64`},
		{"valid by repeated", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, ValidBy: []string{"v", "v"}},
			CodeDuplicateColumn, `names column v twice`},
		{"valid and revision by same", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, ValidBy: []string{"v"}, RevisionBy: []string{"v"}},
			CodeInvalidTableDef, `column v of table t is both VALID BY and REVISION BY of the default group`},
		// R11.1
		{"shard by non-key", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, ShardBy: []string{"v"}},
			CodeInvalidTableDef, `SHARD BY column v of table t is not a primary key column`},
		{"shard by unknown", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, ShardBy: []string{"nosuch"}},
			CodeUndefinedColumn, `SHARD BY of table t names column nosuch`},
		{"shard by repeated", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, ShardBy: []string{"k", "k"}},
			CodeDuplicateColumn, `SHARD BY of table t names column k twice`},
		{"shards zero..", TableSpec{Name: "t", Columns: []ColumnSpec{k()}, PrimaryKey: []string{"k"}, Shards: 4097},
			CodeInvalidParameter, `SHARDS 4097 of table t is out of range.*1 to 4096`},
		{"shards negative", TableSpec{Name: "t", Columns: []ColumnSpec{k()}, PrimaryKey: []string{"k"}, Shards: -1},
			CodeInvalidParameter, `SHARDS -1`},
		{"shards and auto", TableSpec{Name: "t", Columns: []ColumnSpec{k()}, PrimaryKey: []string{"k"}, Shards: 2, ShardsAuto: true},
			CodeInvalidTableDef, `both SHARDS 2 and SHARDS AUTO`},
		// R11.2
		{"order by misses key", TableSpec{Name: "t", Columns: []ColumnSpec{k(), col("k2", types.Int64, notNull)}, PrimaryKey: []string{"k", "k2"}, OrderBy: []string{"k"}},
			CodeInvalidTableDef, `ORDER BY of table t must contain every primary key column; column k2 is missing`},
		{"order by non-key before the key", TableSpec{Name: "t", Columns: []ColumnSpec{k(), v()}, PrimaryKey: []string{"k"}, OrderBy: []string{"v", "k"}},
			CodeInvalidTableDef, `ORDER BY of table t puts column v, which is not a primary key column, before the key's last column`},
		{"order by unknown", TableSpec{Name: "t", Mode: ModeAppend, Columns: []ColumnSpec{v()}, OrderBy: []string{"w"}},
			CodeUndefinedColumn, `ORDER BY of table t names column w`},
		// policies
		{"unknown policy", TableSpec{Name: "t", Columns: []ColumnSpec{k()}, PrimaryKey: []string{"k"}, Policies: []string{"nosuch"}},
			CodeUndefinedObject, `policy nosuch does not exist`},
		{"default policy by name", TableSpec{Name: "t", Columns: []ColumnSpec{k()}, PrimaryKey: []string{"k"}, Policies: []string{"default"}},
			CodeInvalidParameter, `policy default`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New()
			_, _, err := c.CreateTable(tc.spec, 1)
			wantErr(t, err, tc.code, tc.pattern)
			if len(c.Tables()) != 0 || c.Commit() != 0 {
				t.Error("a failed CREATE TABLE left a table behind")
			}
		})
	}
}

func TestDuplicateTable(t *testing.T) {
	c := New()
	mustCreate(t, c, kvSpec("kv"), 1)
	_, _, err := c.CreateTable(kvSpec("kv"), 2)
	wantErr(t, err, CodeDuplicateTable, `table kv already exists`)
}

func TestDropTable(t *testing.T) {
	c := fixture(t)
	kv, _ := c.Table("kv")
	noErr(t, e3(c.CreateIndex(IndexSpec{Name: "kv_v", Table: "kv", Columns: []string{"v"}}, 11)))
	if dropped, err := c.DropTable("kv", false, 12); err != nil || !dropped {
		t.Fatalf("drop: %v %v", dropped, err)
	}
	if _, ok := c.Table("kv"); ok {
		t.Fatal("kv still there")
	}
	if _, ok := c.Index("kv_v"); ok {
		t.Fatal("the index of a dropped table survived")
	}
	if dropped, err := c.DropTable("kv", true, 13); err != nil || dropped {
		t.Fatalf("drop if exists: %v %v", dropped, err)
	}
	_, err := c.DropTable("kv", false, 13)
	wantErr(t, err, CodeUndefinedTable, `table kv does not exist`)
	// Table ids are never reused (invariant 1).
	again := mustCreate(t, c, kvSpec("kv"), 14)
	if again.ID <= kv.ID {
		t.Fatalf("new kv got id %d, old had %d", again.ID, kv.ID)
	}
	_, err = c.DropTable("balances", false, 15)
	wantErr(t, err, CodeDependentObjects, `table balances is used by transformation act`)
	_, err = c.DropTable("transfers", false, 15)
	wantErr(t, err, CodeDependentObjects, `table transfers is used by transformation act`)
}

func TestRenameTable(t *testing.T) {
	c := fixture(t)
	kv, _ := c.Table("kv")
	got := noErrT(t)(c.RenameTable(RenameTableSpec{Table: "kv", New: "kv2"}, 11))
	if got.ID != kv.ID || got.Generation != kv.Generation+1 || got.AlteredCommit != 11 {
		t.Errorf("renamed: id %d gen %d altered %d", got.ID, got.Generation, got.AlteredCommit)
	}
	if _, ok := c.Table("kv"); ok {
		t.Error("the old name still resolves")
	}
	if x, _ := c.Table("kv2"); x != got {
		t.Error("the new name does not resolve")
	}
	// The index follows the table.
	noErrT(t)(c.RenameTable(RenameTableSpec{Table: "balances", New: "bal"}, 12))
	if ix := c.Indexes("bal"); len(ix) != 1 || ix[0].Name != "b_amount" {
		t.Errorf("indexes of the renamed table: %v", ix)
	}
	_, err := c.RenameTable(RenameTableSpec{Table: "kv2", New: "bal"}, 13)
	wantErr(t, err, CodeDuplicateTable, `cannot rename table kv2 to bal: table bal already exists`)
	_, err = c.RenameTable(RenameTableSpec{Table: "nosuch", New: "x"}, 13)
	wantErr(t, err, CodeUndefinedTable, `table nosuch does not exist`)
	_, err = c.RenameTable(RenameTableSpec{Table: "transfers", New: "x"}, 13)
	wantErr(t, err, CodeDependentObjects, `cannot rename table transfers: transformation act reads it`)
}

// noErrT returns a function that fails on err and returns the table.
func noErrT(t *testing.T) func(*Table, error) *Table {
	return func(tab *Table, err error) *Table {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
}
