package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// evolved is the fixture plus every kind of ALTER, so the encoding covers
// dropped columns, renamed objects, DDL-changed defaults and owners.
func evolved(t *testing.T) *Catalog {
	c := fixture(t)
	noErrT(t)(c.AddGroup(AddGroupSpec{Table: "balances", Name: "labels", Columns: []ColumnSpec{
		col("label_text", types.String, explNull, codec("LZ4")), typed("labelled_at", dt3)}, ValidBy: []string{"labelled_at"}}, 11))
	noErrT(t)(c.DropColumn(DropColumnSpec{Table: "kv", Column: "v"}, 12))
	noErrT(t)(c.RenameColumn(RenameColumnSpec{Table: "kv", Old: "w", New: "v"}, 13))
	noErrT(t)(c.SetDefault(SetDefaultSpec{Table: "kv", Column: "v", Default: Default{SQL: "'y'", Value: "y"}}, 14))
	noErrT(t)(c.AlterColumnType(AlterColumnTypeSpec{Table: "balances", Column: "balance_version", Type: types.Of(types.Uint128)}, 15))
	noErrT(t)(c.RenameTable(RenameTableSpec{Table: "kv", New: "kv2"}, 16))
	noErr(t, e3(c.CreatePolicy(policy("two", "placement", "volumes", list(str("/a"), str("/b"))), 17)))
	noErrT(t)(c.SetPolicy(SetPolicySpec{Table: "kv2", Policies: []string{"two"}}, 17))
	dec := types.Type{Kind: types.Decimal, Precision: 20, Scale: 4}
	mustCreate(t, c, TableSpec{Name: "wide", Columns: []ColumnSpec{col("k", types.UUID, inlinePK), typed("d", dec), typed("s", types.Type{Kind: types.String, Len: 12})}}, 18)
	return c
}

func TestEncodeRoundTrip(t *testing.T) {
	c := evolved(t)
	data := encode(t, c)
	d, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if again := encode(t, d); !bytes.Equal(again, data) {
		t.Fatalf("decode+encode differs:\n%s\n---\n%s", data, again)
	}
	if !reflect.DeepEqual(c, d) {
		t.Fatal("the decoded catalog differs from the original")
	}
	// Encoding is deterministic.
	if !bytes.Equal(encode(t, c.Clone()), data) {
		t.Fatal("a clone encodes differently")
	}
	// The decoded catalog keeps handing out fresh ids (invariant 1).
	tab := noErrT(t)(d.AddColumn(AddColumnSpec{Table: "kv2", Column: col("n", types.Int64)}, 19))
	if n, _ := tab.Column("n"); n.ID != 4 {
		t.Errorf("new column id %d after decode, want 4 (ids 1..3 were used)", n.ID)
	}
	x, _, err := d.CreateTable(kvSpec("fresh"), 19)
	if err != nil || x.ID != 5 {
		t.Errorf("new table id %v after decode, want 5: %v", x, err)
	}
	if !strings.Contains(string(data), `"format": 1`) || !strings.Contains(string(data), `"kind": "DECIMAL"`) {
		t.Errorf("the encoding does not carry its format or type names:\n%.400s", data)
	}
}

func TestEncodeEmpty(t *testing.T) {
	d, err := Decode(encode(t, New()))
	if err != nil || len(d.Tables()) != 0 || d.Commit() != 0 {
		t.Fatalf("empty round trip: %v", err)
	}
	if !reflect.DeepEqual(d, New()) {
		t.Fatal("an empty catalog does not round-trip")
	}
}

// edit decodes the encoding as generic JSON, lets f change it, and encodes
// it again.
func edit(t *testing.T, data []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func table0(m map[string]any) map[string]any { return m["tables"].([]any)[0].(map[string]any) }

func TestDecodeCompatibility(t *testing.T) {
	data := encode(t, evolved(t))
	// Unknown fields, as a newer minor version writes them, are ignored.
	newer := edit(t, data, func(m map[string]any) {
		m["minor"] = 7
		m["future_objects"] = []any{"x"}
		table0(m)["future_setting"] = map[string]any{"a": 1}
	})
	d, err := Decode(newer)
	if err != nil {
		t.Fatalf("a newer minor format: %v", err)
	}
	if !bytes.Equal(encode(t, d), data) {
		t.Fatal("a newer minor format decoded to something else")
	}
	major := edit(t, data, func(m map[string]any) { m["format"] = 2 })
	if _, err := Decode(major); !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "format 2") {
		t.Fatalf("a newer major format: %v", err)
	}
	corrupt := map[string][]byte{
		"not json":    []byte("{"),
		"no format":   edit(t, data, func(m map[string]any) { delete(m, "format") }),
		"format zero": edit(t, data, func(m map[string]any) { m["format"] = 0 }),
		"bad mode":    edit(t, data, func(m map[string]any) { table0(m)["mode"] = "sideways" }),
		"bad kind": edit(t, data, func(m map[string]any) {
			table0(m)["columns"].([]any)[0].(map[string]any)["type"] = map[string]any{"kind": "INT7"}
		}),
		"bad role":     edit(t, data, func(m map[string]any) { m["policies"].([]any)[0].(map[string]any)["role"] = "x" }),
		"bad scope":    edit(t, data, func(m map[string]any) { m["indexes"].([]any)[0].(map[string]any)["scope"] = "x" }),
		"dup table":    edit(t, data, func(m map[string]any) { m["tables"] = append(m["tables"].([]any), m["tables"].([]any)[0]) }),
		"dup policy":   edit(t, data, func(m map[string]any) { m["policies"] = append(m["policies"].([]any), m["policies"].([]any)[0]) }),
		"unbound":      edit(t, data, func(m map[string]any) { table0(m)["policies"].(map[string]any)["retention"] = "gone" }),
		"id reuse":     edit(t, data, func(m map[string]any) { table0(m)["next_column"] = 2 }),
		"lost owner":   edit(t, data, func(m map[string]any) { m["transformations"] = []any{} }),
		"bad position": edit(t, data, func(m map[string]any) { table0(m)["columns"].([]any)[0].(map[string]any)["position"] = 9 }),
		"bad value": edit(t, data, func(m map[string]any) {
			m["policies"].([]any)[0].(map[string]any)["settings"].([]any)[0].(map[string]any)["value"] = map[string]any{"kind": "?"}
		}),
	}
	for name, b := range corrupt {
		if _, err := Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// TestCheckCatchesBrokenInvariants damages a private copy's structures
// directly and expects Check to notice each.
func TestCheckCatchesBrokenInvariants(t *testing.T) {
	damage := map[string]func(c *Catalog){
		"column in two groups": func(c *Catalog) {
			b := c.tables[c.tableNames["balances"]]
			b.Groups[2].Columns = append(b.Groups[2].Columns, b.Groups[1].Columns[0])
		},
		"nullable key": func(c *Catalog) { c.tables[c.tableNames["kv"]].Columns[0].Nullable = true },
		"string ordering": func(c *Catalog) {
			b := c.tables[c.tableNames["balances"]]
			b.Groups[1].Columns = append(b.Groups[1].Columns, 2)
			b.Columns[1].Group = 1
			b.Groups[1].ValidBy = []ColumnID{2}
		},
		"duplicate id":      func(c *Catalog) { c.tables[c.tableNames["kv"]].Columns[1].ID = 1 },
		"generation zero":   func(c *Catalog) { c.tables[c.tableNames["kv"]].Generation = 0 },
		"shards and auto":   func(c *Catalog) { c.tables[c.tableNames["kv"]].ShardsAuto = true },
		"misfiled name":     func(c *Catalog) { c.tables[c.tableNames["kv"]].Name = "other" },
		"index on dropped":  func(c *Catalog) { c.indexes["b_amount"].Columns = []ColumnID{99} },
		"source gone":       func(c *Catalog) { c.transforms["act"].Sources = []TableID{99} },
		"owner without one": func(c *Catalog) { c.tables[c.tableNames["kv"]].Groups[0].Owner = "ghost" },
		"append with key":   func(c *Catalog) { c.tables[c.tableNames["transfers"]].Key = []ColumnID{1} },
		"order not key":     func(c *Catalog) { c.tables[c.tableNames["kv"]].OrderBy = nil },
	}
	for name, f := range damage {
		c := fixture(t).Clone()
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		f(c)
		if err := c.Check(); err == nil {
			t.Errorf("%s: Check passed", name)
		}
	}
}
