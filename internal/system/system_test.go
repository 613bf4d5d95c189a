package system

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// fakeSource is a snapshot with a catalog, one shard and two commits.
type fakeSource struct {
	cat     *catalog.Catalog
	commits []storage.CommitInfo
}

func (f fakeSource) Commit() uint64            { return 2 }
func (f fakeSource) Catalog() *catalog.Catalog { return f.cat }
func (f fakeSource) Shards(t catalog.TableID) []storage.ShardInfo {
	return []storage.ShardInfo{{Table: t, Shard: 0, Rows: 5, Bytes: 100, Parts: 1, Location: "local"}}
}
func (f fakeSource) Parts(t catalog.TableID) []storage.PartInfo {
	return []storage.PartInfo{{Table: t, Part: 9, Level: 1, Rows: 5, Bytes: 100, MinCommit: 2, MaxCommit: 2}}
}
func (f fakeSource) Commits() []storage.CommitInfo { return f.commits }
func (f fakeSource) ColumnBytes(catalog.TableID) map[catalog.ColumnID][2]uint64 {
	return map[catalog.ColumnID][2]uint64{1: {10, 40}}
}

func newFake(t *testing.T) fakeSource {
	c := catalog.New()
	_, _, err := c.CreateTable(catalog.TableSpec{Name: "kv", Columns: []catalog.ColumnSpec{
		{Name: "k", Type: types.Of(types.String), NotNull: true},
		{Name: "v", Type: types.Of(types.Int64), Default: &catalog.Default{SQL: "7", Value: "7"}},
	}, PrimaryKey: []string{"k"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	return fakeSource{cat: c, commits: []storage.CommitInfo{
		{Commit: 1, At: at, Kind: storage.KindDDL, Tables: []string{"kv"}},
		{Commit: 2, At: at.Add(time.Second), Kind: storage.KindWrite, Tables: []string{"kv"}, Rows: 5},
	}}
}

func text(b *types.Batch) []string {
	var out []string
	for i := 0; i < b.Rows; i++ {
		var parts []string
		for _, v := range b.Row(nil, i) {
			if v.IsNull() {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(types.AppendText(nil, v)))
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

func TestEveryTableMatchesItsColumns(t *testing.T) {
	src := newFake(t)
	var names []string
	for _, tab := range Tables() {
		names = append(names, tab.Name)
		b, err := tab.Rows(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Cols) != len(tab.Columns) {
			t.Errorf("system.%s: %d vectors, %d columns", tab.Name, len(b.Cols), len(tab.Columns))
		}
		for i, c := range tab.Columns {
			if b.Cols[i].Type() != c.Type {
				t.Errorf("system.%s.%s: vector of %s, column of %s", tab.Name, c.Name, b.Cols[i].Type(), c.Type)
			}
		}
		if got, ok := Lookup(tab.Name); !ok || got != tab {
			t.Errorf("Lookup(%q) does not find it", tab.Name)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("Tables() not sorted: %v", names)
	}
	for _, want := range []string{"tables", "columns", "attribute_groups", "commits", "policies", "table_storage_plans",
		"table_column_codecs", "indexes", "shards", "parts", "transformations"} {
		if _, ok := Lookup(want); !ok {
			t.Errorf("no system.%s (R13.4)", want)
		}
	}
	if _, ok := Lookup("nosuch"); ok {
		t.Errorf("Lookup of an unknown name succeeded")
	}
}

func TestRows(t *testing.T) {
	src := newFake(t)
	rows := func(name string) []string {
		tab, _ := Lookup(name)
		b, err := tab.Rows(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		return text(b)
	}
	check := func(name string, want ...string) {
		t.Helper()
		if got := rows(name); !slices.Equal(got, want) {
			t.Errorf("system.%s:\n got %q\nwant %q", name, got, want)
		}
	}
	check("commits", "1|2026-10-01 12:00:00.000000|ddl|kv|0", "2|2026-10-01 12:00:01.000000|write|kv|5")
	check("columns", "kv|k|1|STRING|false|NULL|NULL|1|true|ZSTD(1)", "kv|v|2|INT64|true|7|default|1|false|DELTA, ZSTD(1)")
	check("tables", "kv|upsert|1|k|1|k|false|k|1|1")
	check("shards", "kv|0|5|100|1|local")
	check("parts", "kv|0|9|1|5|100|2|2|NULL")
	check("table_column_codecs", "kv|k|STRING|ZSTD(1)|10|40", "kv|v|INT64|DELTA, ZSTD(1)|0|0")
	check("table_storage_plans", "kv|placement|default|NULL|1 shard in the data directory|NULL",
		"kv|storage|default|NULL|local 100 bytes, object store 0 bytes|NULL", "kv|retention|default|NULL|horizon commit 1|1",
		"kv|compaction|default|NULL|1 parts, 5 rows|NULL")
	// a source without statistics has no commits to show, and no error
	tab, _ := Lookup("commits")
	if b, err := tab.Rows(context.Background(), noStats{src}); err != nil || b.Rows != 0 {
		t.Errorf("commits without Stats: %v rows, %v", b.Rows, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tab.Rows(ctx, src); err == nil {
		t.Errorf("a cancelled context was ignored")
	}
}

// noStats hides the Stats methods of a source.
type noStats struct{ f fakeSource }

func (n noStats) Commit() uint64                               { return n.f.Commit() }
func (n noStats) Catalog() *catalog.Catalog                    { return n.f.Catalog() }
func (n noStats) Shards(t catalog.TableID) []storage.ShardInfo { return n.f.Shards(t) }
func (n noStats) Parts(t catalog.TableID) []storage.PartInfo   { return n.f.Parts(t) }
