package catalog

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/types"
	"pgregory.net/rapid"
)

// TestRandomDDL applies random DDL sequences, most of them invalid, and
// checks after each step: a failed DDL leaves the encoding byte-identical
// (invariant 3); a successful one leaves a catalog that passes Check,
// survives Encode/Decode unchanged, and never reuses an id (invariant 1).
func TestRandomDDL(t *testing.T) {
	tables := []string{"a", "b", "c"}
	columns := []string{"k", "v", "w", "x", "at"}
	kinds := []types.Type{types.Of(types.Int32), types.Of(types.Int64), types.Of(types.String), dt3, types.Of(types.Float32), types.Of(types.Uint8)}
	policies := []string{"p1", "p2", "p3"}
	groups := []string{"g", "h", "default"}

	rapid.Check(t, func(rt *rapid.T) {
		c := New()
		commit := uint64(0)
		maxTable := TableID(0)
		maxColumn := map[TableID]ColumnID{}
		pick := func(label string, from []string) string { return rapid.SampledFrom(from).Draw(rt, label) }
		colSpec := func(label string) ColumnSpec {
			cs := ColumnSpec{Name: pick(label+"name", columns), Type: rapid.SampledFrom(kinds).Draw(rt, label+"type")}
			cs.NotNull = rapid.IntRange(0, 3).Draw(rt, label+"notnull") == 0
			if rapid.Bool().Draw(rt, label+"hasdefault") {
				cs.Default = &Default{SQL: "1", Value: "1"}
			}
			cs.Codec = rapid.SampledFrom([]string{"", "", "", "", "ZSTD(3)", "DELTA", "LZ4", "NONE"}).Draw(rt, label+"codec")
			return cs
		}
		ops := []func() (string, error){
			func() (string, error) {
				mode := rapid.SampledFrom([]Mode{ModeUnset, ModeUpsert, ModeVersioned, ModeVersioned, ModeAppend}).Draw(rt, "mode")
				spec := TableSpec{Name: pick("table", tables), Mode: mode, Columns: []ColumnSpec{{Name: "k", Type: types.Of(types.Int64), NotNull: true}}}
				names := rapid.SliceOfNDistinct(rapid.SampledFrom(columns[1:]), 0, 4, rapid.ID[string]).Draw(rt, "cols")
				for i, n := range names {
					cs := colSpec(fmt.Sprint("c", i))
					cs.Name = n
					spec.Columns = append(spec.Columns, cs)
				}
				if rapid.IntRange(0, 9).Draw(rt, "haskey") < 8 {
					spec.PrimaryKey = []string{"k"}
				}
				if len(names) > 0 && rapid.Bool().Draw(rt, "hasgroup") {
					spec.Groups = []GroupSpec{{Name: pick("group", groups), Columns: []string{names[0]}}}
					if rapid.Bool().Draw(rt, "gvalid") {
						spec.Groups[0].ValidBy = []string{pick("gvb", columns)}
					}
				}
				if rapid.IntRange(0, 9).Draw(rt, "hasorder") == 0 {
					spec.OrderBy = []string{pick("order", columns)}
				}
				if rapid.IntRange(0, 4).Draw(rt, "haspolicy") == 0 {
					spec.Policies = []string{pick("policy", policies)}
				}
				_, _, err := c.CreateTable(spec, commit)
				return "create table", err
			},
			func() (string, error) {
				spec := AddColumnSpec{Table: pick("table", tables), Column: colSpec("add"), KnownEmpty: rapid.Bool().Draw(rt, "empty")}
				if rapid.Bool().Draw(rt, "togroup") {
					spec.Group = pick("group", groups)
				}
				_, err := c.AddColumn(spec, commit)
				return "add column", err
			},
			func() (string, error) {
				_, err := c.DropColumn(DropColumnSpec{Table: pick("table", tables), Column: pick("col", columns)}, commit)
				return "drop column", err
			},
			func() (string, error) {
				_, err := c.RenameColumn(RenameColumnSpec{Table: pick("table", tables), Old: pick("old", columns), New: pick("new", columns)}, commit)
				return "rename column", err
			},
			func() (string, error) {
				spec := AddGroupSpec{Table: pick("table", tables), Name: pick("group", groups), Columns: []ColumnSpec{colSpec("g")}}
				if rapid.Bool().Draw(rt, "ordered") {
					spec.ValidBy = []string{pick("vb", columns)}
				}
				_, err := c.AddGroup(spec, commit)
				return "add group", err
			},
			func() (string, error) {
				_, err := c.AlterColumnType(AlterColumnTypeSpec{Table: pick("table", tables), Column: pick("col", columns), Type: rapid.SampledFrom(kinds).Draw(rt, "to")}, commit)
				return "alter type", err
			},
			func() (string, error) {
				_, err := c.SetDefault(SetDefaultSpec{Table: pick("table", tables), Column: pick("col", columns), Default: Default{Null: rapid.Bool().Draw(rt, "null")}}, commit)
				return "set default", err
			},
			func() (string, error) {
				_, err := c.RenameTable(RenameTableSpec{Table: pick("table", tables), New: pick("new", tables)}, commit)
				return "rename table", err
			},
			func() (string, error) {
				_, err := c.DropTable(pick("table", tables), rapid.Bool().Draw(rt, "ifexists"), commit)
				return "drop table", err
			},
			func() (string, error) {
				spec := policy(pick("policy", policies), "retention", "rows", interval("1 day"), "by", ident(pick("by", columns)))
				if rapid.Bool().Draw(rt, "history") {
					spec = policy(spec.Name, "compaction", "max_parts_per_shard", integer(rapid.Int64Range(-1, 3).Draw(rt, "n")))
				}
				_, _, err := c.CreatePolicy(spec, commit)
				return "create policy", err
			},
			func() (string, error) {
				_, err := c.DropPolicy(pick("policy", policies), false, commit)
				return "drop policy", err
			},
			func() (string, error) {
				_, err := c.SetPolicy(SetPolicySpec{Table: pick("table", tables), Policies: []string{pick("policy", policies)}}, commit)
				return "set policy", err
			},
			func() (string, error) {
				_, _, err := c.CreateIndex(IndexSpec{Name: pick("index", []string{"i1", "i2"}), Table: pick("table", tables),
					Columns: []string{pick("col", columns)}, Scope: pick("scope", []string{"", "history", "both"})}, commit)
				return "create index", err
			},
			func() (string, error) {
				_, err := c.DropIndex(pick("index", []string{"i1", "i2"}), false, commit)
				return "drop index", err
			},
			func() (string, error) {
				spec := TransformationSpec{Name: pick("x", []string{"x1", "x2"}), Target: pick("target", tables), Select: "SELECT",
					Sources: []string{pick("source", tables)}}
				if rapid.Bool().Draw(rt, "reads") {
					spec.Reads = []ColumnRef{{Table: spec.Sources[0], Column: pick("rc", columns)}}
				}
				if rapid.Bool().Draw(rt, "group") {
					spec.Group = pick("group", groups)
				}
				_, err := c.CreateTransformation(spec, commit)
				return "create transformation", err
			},
			func() (string, error) {
				_, err := c.DropTransformation(pick("x", []string{"x1", "x2"}), false, commit)
				return "drop transformation", err
			},
		}
		for range rapid.IntRange(1, 80).Draw(rt, "steps") {
			commit += uint64(rapid.IntRange(0, 1).Draw(rt, "advance"))
			if commit == 0 {
				commit = 1
			}
			before, err := c.Encode()
			if err != nil {
				rt.Fatal(err)
			}
			// Creating tables is drawn more often so that later steps find some.
			op := ops[0]
			if i := rapid.IntRange(-3, len(ops)-1).Draw(rt, "op"); i > 0 {
				op = ops[i]
			}
			name, err := op()
			after, encErr := c.Encode()
			if encErr != nil {
				rt.Fatal(encErr)
			}
			if err != nil {
				if _, ok := err.(*Error); !ok {
					rt.Fatalf("%s: a user error of the wrong type: %v", name, err)
				}
				if !bytes.Equal(before, after) {
					rt.Fatalf("%s failed (%v) but changed the catalog", name, err)
				}
				continue
			}
			if err := c.Check(); err != nil {
				rt.Fatalf("after %s: %v", name, err)
			}
			d, err := Decode(after)
			if err != nil {
				rt.Fatalf("after %s: decode: %v", name, err)
			}
			if again, _ := d.Encode(); !bytes.Equal(again, after) {
				rt.Fatalf("after %s: the encoding does not round-trip", name)
			}
			for _, tab := range c.Tables() {
				if _, seen := maxColumn[tab.ID]; !seen {
					if tab.ID <= maxTable {
						rt.Fatalf("table id %d reused", tab.ID)
					}
					maxTable = tab.ID
				}
				prev := maxColumn[tab.ID]
				for _, col := range append(append([]*Column{}, tab.Columns...), tab.Dropped...) {
					if col.ID > prev {
						if col.AddedCommit != commit {
							rt.Fatalf("column %s of %s: id %d is new but was added at %d, not %d", col.Name, tab.Name, col.ID, col.AddedCommit, commit)
						}
						maxColumn[tab.ID] = max(maxColumn[tab.ID], col.ID)
					}
				}
			}
		}
	})
}
