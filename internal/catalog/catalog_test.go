package catalog

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// Helpers that build specs by hand, the way the binder will.

func col(name string, k types.Kind, opts ...func(*ColumnSpec)) ColumnSpec {
	cs := ColumnSpec{Name: name, Type: types.Of(k)}
	for _, o := range opts {
		o(&cs)
	}
	return cs
}

func typed(name string, t types.Type, opts ...func(*ColumnSpec)) ColumnSpec {
	cs := ColumnSpec{Name: name, Type: t}
	for _, o := range opts {
		o(&cs)
	}
	return cs
}

func notNull(cs *ColumnSpec)  { cs.NotNull = true }
func explNull(cs *ColumnSpec) { cs.ExplicitNull = true }
func inlinePK(cs *ColumnSpec) { cs.PrimaryKey = true }

func def(value string) func(*ColumnSpec) {
	return func(cs *ColumnSpec) { cs.Default = &Default{SQL: value, Value: value} }
}

func codec(text string) func(*ColumnSpec) {
	return func(cs *ColumnSpec) { cs.Codec = text }
}

var dt3 = types.Type{Kind: types.DateTime64, Precision: 3, TZ: "UTC"}

// seedSpec is the seed's balances table (SPEC §14).
func seedSpec() TableSpec {
	return TableSpec{
		Name: "balances", Mode: ModeVersioned,
		Columns: []ColumnSpec{
			col("chain_id", types.Uint16, notNull), col("address", types.String, notNull), col("token", types.String, notNull),
			col("amount", types.Uint256, explNull), typed("updated_at", dt3, explNull),
			col("balance_index", types.Uint128, explNull), col("balance_version", types.Uint64, explNull),
			col("transfer_count", types.Uint64, explNull), typed("last_transfer_at", dt3, explNull),
			col("activity_index", types.Uint128, explNull),
		},
		PrimaryKey: []string{"chain_id", "address", "token"},
		Groups: []GroupSpec{
			{Name: "holding", Columns: []string{"amount", "updated_at", "balance_index", "balance_version"},
				ValidBy: []string{"balance_index"}, RevisionBy: []string{"balance_version"}},
			{Name: "activity", Columns: []string{"transfer_count", "last_transfer_at", "activity_index"},
				ValidBy: []string{"activity_index"}},
		},
		ShardBy: []string{"address"}, ShardsAuto: true,
		OrderBy: []string{"chain_id", "address", "token"},
	}
}

// transfersSpec is transform.slt's append source.
func transfersSpec() TableSpec {
	return TableSpec{Name: "transfers", Mode: ModeAppend, Columns: []ColumnSpec{
		col("chain_id", types.Uint16, notNull), col("from_address", types.String, notNull),
		col("to_address", types.String, notNull), col("token", types.String, notNull),
		col("amount", types.Uint256, notNull), typed("block_time", dt3, notNull),
		col("transfer_index", types.Uint128, notNull),
	}}
}

func kvSpec(name string) TableSpec {
	return TableSpec{Name: name, Columns: []ColumnSpec{col("k", types.Int64, notNull), col("v", types.Int64)}, PrimaryKey: []string{"k"}}
}

func mustCreate(t *testing.T, c *Catalog, spec TableSpec, commit uint64) *Table {
	t.Helper()
	tab, created, err := c.CreateTable(spec, commit)
	if err != nil || !created {
		t.Fatalf("CreateTable(%s): created %v, %v", spec.Name, created, err)
	}
	return tab
}

// noErr fails the test on err; e2 and e3 drop the other results of a
// call so that it can be passed straight in.
func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func e2[A any](_ A, err error) error         { return err }
func e3[A, B any](_ A, _ B, err error) error { return err }

// wantErr checks that err is a catalog *Error with the code and a message
// matching the pattern (case-insensitive, like the conformance runner).
func wantErr(t *testing.T, err error, code, pattern string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a catalog error %s matching %q, got %v", code, pattern, err)
	}
	if code != "" && e.Code != code {
		t.Errorf("code %s, want %s (message %q)", e.Code, code, e.Msg)
	}
	if !regexp.MustCompile("(?i)" + pattern).MatchString(e.Msg) {
		t.Errorf("message %q does not match %q", e.Msg, pattern)
	}
}

func encode(t *testing.T, c *Catalog) []byte {
	t.Helper()
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture builds a catalog with one of everything, at commit 10.
func fixture(t *testing.T) *Catalog {
	t.Helper()
	c := New()
	noErr(t, e3(c.CreatePolicy(PolicySpec{Name: "keep_1h", Role: "retention", Settings: []SettingSpec{
		{Key: "history", Value: Value{Kind: ValueInterval, Text: "1 hour"}}}}, 1)))
	noErr(t, e3(c.CreatePolicy(PolicySpec{Name: "ev30", Role: "RETENTION", Settings: []SettingSpec{
		{Key: "rows", Value: Value{Kind: ValueInterval, Text: "30 days"}}, {Key: "by", Value: Value{Kind: ValueIdent, Text: "block_time"}}}}, 2)))
	mustCreate(t, c, transfersSpec(), 3)
	s := seedSpec()
	s.Policies = []string{"keep_1h"}
	mustCreate(t, c, s, 4)
	mustCreate(t, c, kvSpec("kv"), 5)
	noErr(t, e3(c.CreateIndex(IndexSpec{Name: "b_amount", Table: "balances", Columns: []string{"amount"}, Scope: "history"}, 6)))
	noErr(t, e2(c.CreateTransformation(TransformationSpec{Name: "act", Target: "balances", Group: "activity",
		Select: "SELECT ...", Sources: []string{"transfers"},
		Reads: []ColumnRef{{Table: "transfers", Column: "from_address"}, {Table: "transfers", Column: "token"}}}, 7)))
	noErr(t, e2(c.CreateUser(UserSpec{Name: "alice", Verifier: "SCRAM-SHA-256$x"}, 8)))
	noErr(t, e2(c.SetPolicy(SetPolicySpec{Table: "transfers", Policies: []string{"ev30"}}, 9)))
	noErr(t, e2(c.AddColumn(AddColumnSpec{Table: "kv", Column: col("w", types.String, def("'x'"))}, 10)))
	return c
}

func TestFixtureIsConsistent(t *testing.T) {
	c := fixture(t)
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if c.Commit() != 10 {
		t.Errorf("commit %d, want 10", c.Commit())
	}
	names := []string{}
	for _, tab := range c.Tables() {
		names = append(names, tab.Name)
	}
	if got := names; len(got) != 3 || got[0] != "balances" || got[1] != "kv" || got[2] != "transfers" {
		t.Errorf("Tables() = %v, want sorted", got)
	}
	b, _ := c.Table("balances")
	if got, ok := c.TableByID(b.ID); !ok || got != b {
		t.Error("TableByID does not find balances")
	}
	if g, _ := b.Group("activity"); g.Owner != "act" {
		t.Errorf("owner %q, want act", g.Owner)
	}
}

// TestFailedDDLChangesNothing: every DDL is atomic (invariant 3). Each
// failing operation must leave Encode() byte-identical.
func TestFailedDDLChangesNothing(t *testing.T) {
	c := fixture(t)
	before := encode(t, c)
	ops := map[string]func() error{
		"create dup": func() error { _, _, err := c.CreateTable(kvSpec("kv"), 11); return err },
		"create late error": func() error {
			s := kvSpec("new")
			s.OrderBy = []string{"v"}
			_, _, err := c.CreateTable(s, 11)
			return err
		},
		"create bad policy": func() error {
			s := kvSpec("new")
			s.Policies = []string{"ev30"}
			_, _, err := c.CreateTable(s, 11)
			return err
		},
		"add dup column": func() error {
			_, err := c.AddColumn(AddColumnSpec{Table: "kv", Column: col("v", types.Int8)}, 11)
			return err
		},
		"add column codec": func() error {
			_, err := c.AddColumn(AddColumnSpec{Table: "kv", Column: col("z", types.String, codec("DELTA"))}, 11)
			return err
		},
		"add column group": func() error {
			_, err := c.AddColumn(AddColumnSpec{Table: "kv", Column: col("z", types.String), Group: "nosuch"}, 11)
			return err
		},
		"add group late err": func() error { return addGroupErr(c) },
		"rename column": func() error {
			_, err := c.RenameColumn(RenameColumnSpec{Table: "kv", Old: "v", New: "w"}, 11)
			return err
		},
		"drop key":      func() error { _, err := c.DropColumn(DropColumnSpec{Table: "kv", Column: "k"}, 11); return err },
		"rename table":  func() error { _, err := c.RenameTable(RenameTableSpec{Table: "kv", New: "balances"}, 11); return err },
		"rename source": func() error { _, err := c.RenameTable(RenameTableSpec{Table: "transfers", New: "t2"}, 11); return err },
		"narrow": func() error {
			_, err := c.AlterColumnType(AlterColumnTypeSpec{Table: "kv", Column: "v", Type: types.Of(types.Int8)}, 11)
			return err
		},
		"set null default": func() error {
			_, err := c.SetDefault(SetDefaultSpec{Table: "kv", Column: "k", Default: Default{Null: true}}, 11)
			return err
		},
		"set policy twice": func() error {
			_, err := c.SetPolicy(SetPolicySpec{Table: "kv", Policies: []string{"keep_1h", "ev30"}}, 11)
			return err
		},
		"drop table used":   func() error { _, err := c.DropTable("transfers", false, 11); return err },
		"drop bound policy": func() error { _, err := c.DropPolicy("keep_1h", false, 11); return err },
		"policy bad key": func() error {
			err := e3(c.CreatePolicy(PolicySpec{Name: "x", Role: "storage", Settings: []SettingSpec{{Key: "nosuch"}}}, 11))
			return err
		},
		"index bad scope": func() error {
			err := e3(c.CreateIndex(IndexSpec{Name: "x", Table: "kv", Columns: []string{"v"}, Scope: "sideways"}, 11))
			return err
		},
		"transform owned": func() error {
			_, err := c.CreateTransformation(TransformationSpec{Name: "x", Target: "balances", Group: "activity", Select: "s", Sources: []string{"transfers"}}, 11)
			return err
		},
		"drop transform":     func() error { _, err := c.DropTransformation("nosuch", false, 11); return err },
		"dup user":           func() error { _, err := c.CreateUser(UserSpec{Name: "alice"}, 11); return err },
		"alter unknown user": func() error { return c.AlterUser("bob", "v", 11) },
		"old commit":         func() error { _, err := c.DropUser("alice", false, 9); return err },
	}
	for name, op := range ops {
		if err := op(); err == nil {
			t.Errorf("%s: succeeded, want an error", name)
		}
		if after := encode(t, c); !bytes.Equal(before, after) {
			t.Fatalf("%s: a failed DDL changed the catalog", name)
		}
	}
}

// addGroupErr fails on the ordering clause, after columns were appended
// to the private copy.
func addGroupErr(c *Catalog) error {
	_, err := c.AddGroup(AddGroupSpec{Table: "kv", Name: "g", Columns: []ColumnSpec{col("x", types.String)}, ValidBy: []string{"x"}}, 11)
	return err
}

func TestCloneIsIndependent(t *testing.T) {
	c := fixture(t)
	before := encode(t, c)
	kv, _ := c.Table("kv")
	d := c.Clone()
	if !bytes.Equal(encode(t, d), before) {
		t.Fatal("a clone encodes differently")
	}
	noErr(t, e2(d.AddColumn(AddColumnSpec{Table: "kv", Column: col("n", types.Int64)}, 11)))
	noErr(t, e2(d.RenameTable(RenameTableSpec{Table: "kv", New: "kv2"}, 12)))
	noErr(t, e2(d.DropTransformation("act", false, 13)))
	noErr(t, e2(d.DropIndex("b_amount", false, 13)))
	noErr(t, e2(d.DropUser("alice", false, 14)))
	if !bytes.Equal(encode(t, c), before) {
		t.Fatal("DDL on a clone changed the original")
	}
	if got, _ := c.Table("kv"); got != kv || len(kv.Columns) != 3 || kv.Generation != 2 {
		t.Fatalf("the original's table changed: %+v", got)
	}
	// And the other way round: DDL on the original leaves the clone alone.
	e := c.Clone()
	snap := encode(t, e)
	noErr(t, e2(c.DropTable("kv", false, 11)))
	if !bytes.Equal(encode(t, e), snap) {
		t.Fatal("DDL on the original changed its clone")
	}
	// A pointer a reader holds never changes under it (invariant 3).
	if len(kv.Columns) != 3 || kv.Name != "kv" {
		t.Fatal("a published table was modified")
	}
}

func TestCommitMustNotGoBack(t *testing.T) {
	c := New()
	mustCreate(t, c, kvSpec("a"), 5)
	if _, _, err := c.CreateTable(kvSpec("b"), 4); err == nil {
		t.Fatal("a DDL at an older commit was accepted")
	}
	if _, _, err := c.CreateTable(kvSpec("b"), 0); err == nil {
		t.Fatal("commit 0 was accepted")
	}
	// A transaction's statements share one commit (R5.1).
	mustCreate(t, c, kvSpec("b"), 5)
	noErr(t, e2(c.AddColumn(AddColumnSpec{Table: "b", Column: col("c", types.Int64)}, 5)))
}

func matches(s, pattern string) bool { return regexp.MustCompile("(?i)" + pattern).MatchString(s) }
