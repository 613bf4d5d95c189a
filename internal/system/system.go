// Package system computes the system tables of SPEC R13.4 (system.tables,
// system.columns, system.commits, …) from a snapshot's catalog and storage
// statistics. Each is a small relation built whole when a query scans it:
// the planner sees it through plan.Virtual (the session layer adapts a Table
// to that interface), filters and joins it like any other relation, and the
// snapshot it is given is the statement's own, so a system table agrees with
// every other relation the statement reads (R6.6).
//
// Every column the SPEC names is here, in the SPEC's order, followed by a few
// more where they help (system.columns.key, system.tables.shard_by, …).
// Lists (columns of an index, tables of a commit) are comma-separated text;
// "nothing" is NULL, never the empty string.
//
// The package also computes PostgreSQL's view of the same catalog, the
// pg_catalog and information_schema relations (pgcatalog.go, infoschema.go,
// pgrels.go), and implements expr.PGEnv, what the PostgreSQL functions
// (pg_get_indexdef, regclass, …) look up: docs/pg-catalog.md.
package system

import (
	"context"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// Source is what the system tables read: a snapshot. *storage.Snapshot
// implements it; Commits and ColumnBytes are used when the source has them
// (see Stats).
type Source interface {
	Commit() uint64
	Catalog() *catalog.Catalog
	Shards(t catalog.TableID) []storage.ShardInfo
	Parts(t catalog.TableID) []storage.PartInfo
}

// Retainer is the part of a snapshot that says what each table's
// retention policy expires (system.table_storage_plans).
type Retainer interface {
	Retention(t catalog.TableID) storage.Retention
}

// Stats is the part of a snapshot only system tables need.
type Stats interface {
	Commits() []storage.CommitInfo
	ColumnBytes(t catalog.TableID) map[catalog.ColumnID][2]uint64
}

// Column is one column of a system table.
type Column struct {
	Name string
	Type types.Type
}

// Table is one system table.
type Table struct {
	// Name is the name after "system.".
	Name    string
	Columns []Column
	fill    func(src Source, add func(...types.Value))
	// fillS is the fill of a relation that also reads the session's
	// settings (pg_settings); nil for the others.
	fillS func(src Source, settings map[string]string, add func(...types.Value))
}

// Rows computes the table at src. ctx is checked once: the tables are as
// small as the catalog.
func (t *Table) Rows(ctx context.Context, src Source) (*types.Batch, error) {
	return t.RowsWith(ctx, src, nil)
}

// RowsWith is Rows for a session whose settings are settings (read, not
// kept).
func (t *Table) RowsWith(ctx context.Context, src Source, settings map[string]string) (*types.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	typs := make([]types.Type, len(t.Columns))
	for i, c := range t.Columns {
		typs[i] = c.Type
	}
	b := types.NewBatch(typs, 16)
	add := func(vals ...types.Value) { b.AppendRow(vals) }
	if t.fillS != nil {
		t.fillS(src, settings, add)
	} else {
		t.fill(src, add)
	}
	return b, nil
}

// Lookup returns the system table of that name (without "system.").
func Lookup(name string) (*Table, bool) {
	for _, t := range tables {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Tables returns every system table, sorted by name.
func Tables() []*Table { return tables }

var (
	tString = types.Of(types.String)
	tUint   = types.Of(types.Uint64)
	tInt    = types.Of(types.Int64)
	tBool   = types.Of(types.Bool)
	tTime   = types.Type{Kind: types.DateTime64, Precision: 6, TZ: "UTC"}
)

func str(s string) types.Value { return types.NewString(s) }

// strOrNull is s, or NULL when s is empty.
func strOrNull(s string) types.Value {
	if s == "" {
		return types.Null(tString)
	}
	return types.NewString(s)
}

func u64(x uint64) types.Value { return types.NewUint64(x) }

func i64(x int64) types.Value { return types.NewInt64(x) }

func columnNames(t *catalog.Table, ids []catalog.ColumnID) types.Value {
	return strOrNull(strings.Join(t.Names(ids), ", "))
}

func tableName(c *catalog.Catalog, id catalog.TableID) string {
	if t, ok := c.TableByID(id); ok {
		return t.Name
	}
	return ""
}

func cols(pairs ...any) []Column {
	out := make([]Column, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Column{Name: pairs[i].(string), Type: pairs[i+1].(types.Type)})
	}
	return out
}

var tables = []*Table{
	{Name: "attribute_groups", Columns: cols("table_name", tString, "name", tString, "valid_by", tString,
		"revision_by", tString, "owner", tString, "columns", tString, "added_commit", tUint), fill: fillGroups},
	{Name: "columns", Columns: cols("table_name", tString, "name", tString, "position", tInt, "type", tString,
		"nullable", tBool, "default", tString, "attribute_group", tString, "added_commit", tUint, "key", tBool,
		"codec", tString), fill: fillColumns},
	{Name: "commits", Columns: cols("commit", tUint, "committed_at", tTime, "kind", tString, "tables", tString,
		"rows", tUint), fill: fillCommits},
	{Name: "indexes", Columns: cols("name", tString, "table_name", tString, "columns", tString, "scope", tString,
		"policy", tString, "created_commit", tUint), fill: fillIndexes},
	{Name: "parts", Columns: cols("table_name", tString, "shard", tUint, "part", tUint, "level", tUint, "rows", tUint,
		"bytes", tUint, "min_commit", tUint, "max_commit", tUint, "location", tString), fill: fillParts},
	{Name: "policies", Columns: cols("name", tString, "role", tString, "settings", tString, "created_commit", tUint,
		"builtin", tBool), fill: fillPolicies},
	{Name: "shards", Columns: cols("table_name", tString, "shard", tUint, "rows", tUint, "bytes", tUint, "parts", tInt,
		"location", tString), fill: fillShards},
	{Name: "table_column_codecs", Columns: cols("table_name", tString, "column_name", tString, "type", tString,
		"codec", tString, "compressed_bytes", tUint, "uncompressed_bytes", tUint), fill: fillCodecs},
	{Name: "table_storage_plans", Columns: cols("table_name", tString, "role", tString, "policy", tString,
		"settings", tString, "state", tString, "horizon_commit", tUint), fill: fillPlans},
	{Name: "tables", Columns: cols("name", tString, "mode", tString, "shards", tInt, "order_by", tString,
		"created_commit", tUint, "shard_by", tString, "shards_auto", tBool, "key", tString, "altered_commit", tUint,
		"generation", tUint), fill: fillTables},
	{Name: "transformations", Columns: cols("name", tString, "source_table", tString, "target_table", tString,
		"target_group", tString, "processed_commit", tUint, "lag", tUint, "status", tString, "last_error", tString,
		"created_commit", tUint), fill: fillTransformations},
	{Name: "users", Columns: cols("name", tString, "has_password", tBool, "created_commit", tUint,
		"altered_commit", tUint), fill: fillUsers},
	{Name: "views", Columns: cols("name", tString, "definition", tString, "columns", tString, "tables", tString,
		"created_commit", tUint), fill: fillViews},
}
