package catalog

import (
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// TestTransformations follows transform.slt: the target group becomes
// owned, keeps its owner across ALTERs, and is freed on drop (R12).
func TestTransformations(t *testing.T) {
	c := New()
	mustCreate(t, c, transfersSpec(), 1)
	mustCreate(t, c, seedSpec(), 2)
	sel := "SELECT chain_id, address, token, count(*) AS transfer_count FROM transfers GROUP BY chain_id, address, token"
	x, err := c.CreateTransformation(TransformationSpec{Name: "activity_from_transfers", Target: "balances", Group: "activity",
		Select: sel, Sources: []string{"transfers", "transfers"}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Table("balances")
	tr, _ := c.Table("transfers")
	act, _ := b.Group("activity")
	if x.Target != b.ID || x.Group != act.ID || x.Select != sel || len(x.Sources) != 1 || x.Sources[0] != tr.ID || x.CreatedCommit != 4 {
		t.Fatalf("transformation %+v", x)
	}
	if act.Owner != "activity_from_transfers" || b.Generation != 1 {
		t.Fatalf("owner %q, generation %d", act.Owner, b.Generation)
	}
	if got, ok := c.Transformation("activity_from_transfers"); !ok || got != x || len(c.Transformations()) != 1 {
		t.Fatal("lookup")
	}
	// It keeps running across ALTER TABLE on its target and source.
	noErrT(t)(c.AddGroup(AddGroupSpec{Table: "balances", Name: "labels", Columns: []ColumnSpec{col("label_text", types.String)}}, 5))
	noErrT(t)(c.AddColumn(AddColumnSpec{Table: "transfers", Column: col("memo", types.String)}, 6))
	b, _ = c.Table("balances")
	if g, _ := b.Group("activity"); g.Owner != "activity_from_transfers" {
		t.Fatal("ALTER lost the owner")
	}
	// A keyed target without a group clause writes the group default; an
	// append target has no groups.
	mustCreate(t, c, kvSpec("kv"), 7)
	mustCreate(t, c, TableSpec{Name: "sink", Mode: ModeAppend, Columns: []ColumnSpec{col("n", types.Int64)}}, 7)
	d, err := c.CreateTransformation(TransformationSpec{Name: "to_kv", Target: "kv", Select: "SELECT 1", Sources: []string{"transfers"}}, 8)
	if err != nil || d.Group != DefaultGroup {
		t.Fatalf("to_kv: %+v %v", d, err)
	}
	a, err := c.CreateTransformation(TransformationSpec{Name: "to_sink", Target: "sink", Select: "SELECT 1", Sources: []string{"transfers"}}, 8)
	if err != nil || a.Group != NoGroup {
		t.Fatalf("to_sink: %+v %v", a, err)
	}
	cases := []struct {
		name          string
		spec          TransformationSpec
		code, pattern string
	}{
		{"duplicate", TransformationSpec{Name: "to_kv", Target: "kv", Select: "s", Sources: []string{"transfers"}}, CodeDuplicateObject, `transformation to_kv already exists`},
		{"owned group", TransformationSpec{Name: "x", Target: "balances", Group: "activity", Select: "s", Sources: []string{"transfers"}}, CodeObjectInUse,
			`attribute group activity of table balances is already maintained by transformation activity_from_transfers`},
		{"no target", TransformationSpec{Name: "x", Target: "nosuch", Select: "s", Sources: []string{"transfers"}}, CodeUndefinedTable, `target table nosuch of transformation x`},
		{"no group", TransformationSpec{Name: "x", Target: "balances", Group: "nosuch", Select: "s", Sources: []string{"transfers"}}, CodeUndefinedObject,
			`table balances has no attribute group nosuch \(target of transformation x\)`},
		{"append group", TransformationSpec{Name: "x", Target: "sink", Group: "g", Select: "s", Sources: []string{"transfers"}}, CodeInvalidTableDef,
			`MODE APPEND tables have no attribute groups: transformation x cannot write group g`},
		{"no source", TransformationSpec{Name: "x", Target: "balances", Group: "labels", Select: "s", Sources: []string{"nosuch"}}, CodeUndefinedTable,
			`source table nosuch of transformation x does not exist`},
		{"keyed source", TransformationSpec{Name: "x", Target: "balances", Group: "labels", Select: "s", Sources: []string{"kv"}}, CodeInvalidObjectDef,
			`transformation x reads table kv, which is MODE UPSERT; a transformation reads append tables only`},
		{"self", TransformationSpec{Name: "x", Target: "sink", Select: "s", Sources: []string{"sink"}}, CodeInvalidObjectDef, `transformation x reads and writes table sink`},
		{"no sources", TransformationSpec{Name: "x", Target: "sink", Select: "s"}, CodeInvalidObjectDef, `transformation x reads no table`},
		{"no query", TransformationSpec{Name: "x", Target: "sink", Sources: []string{"transfers"}}, CodeInvalidObjectDef, `transformation x has no query`},
		{"reads a non-source", TransformationSpec{Name: "x", Target: "balances", Group: "labels", Select: "s", Sources: []string{"transfers"},
			Reads: []ColumnRef{{Table: "sink", Column: "n"}}}, CodeInvalidObjectDef, `transformation x reads column n of table sink, which is not one of its sources`},
		{"reads a missing column", TransformationSpec{Name: "x", Target: "balances", Group: "labels", Select: "s", Sources: []string{"transfers"},
			Reads: []ColumnRef{{Table: "transfers", Column: "zz"}}}, CodeUndefinedColumn, `transformation x reads column zz of table transfers, which does not exist`},
	}
	for _, tc := range cases {
		_, err := c.CreateTransformation(tc.spec, 9)
		wantErr(t, err, tc.code, tc.pattern)
	}
	// Every column of an append target is written by name.
	_, err = c.RenameColumn(RenameColumnSpec{Table: "sink", Old: "n", New: "m"}, 9)
	wantErr(t, err, CodeDependentObjects, `column n of table sink: it is written by transformation to_sink`)
	if dropped, err := c.DropTransformation("activity_from_transfers", false, 10); !dropped || err != nil {
		t.Fatalf("drop: %v %v", dropped, err)
	}
	b, _ = c.Table("balances")
	if g, _ := b.Group("activity"); g.Owner != "" {
		t.Fatal("DROP TRANSFORMATION left the owner")
	}
	_, err = c.DropTransformation("activity_from_transfers", false, 10)
	wantErr(t, err, CodeUndefinedObject, `transformation activity_from_transfers does not exist`)
	if dropped, err := c.DropTransformation("activity_from_transfers", true, 10); dropped || err != nil {
		t.Fatalf("IF EXISTS: %v %v", dropped, err)
	}
	// The group is free again.
	if _, err := c.CreateTransformation(TransformationSpec{Name: "again", Target: "balances", Group: "activity", Select: "s", Sources: []string{"transfers"}}, 11); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}
