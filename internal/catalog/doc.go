// Package catalog is what Strata knows about its schema objects — tables,
// their columns, attribute groups, layout and policy bindings, policies,
// indexes, transformations and users — and the one place where every
// definition rule of the SPEC is enforced (§1, §3.2, §4, §8–§12).
//
// # Where it sits
//
// The parser produces an AST; the binder turns a DDL statement into one of
// the plain Spec structs here (TableSpec, AddColumnSpec, PolicySpec, ...)
// with names already case-folded and DEFAULT values already evaluated to
// canonical text. The engine applies the spec to a Clone of the published
// catalog with the commit number the DDL gets, and publishes the clone
// when that commit is durable. Readers keep the catalog they started with,
// so a statement plans and runs against one schema even while DDL runs.
// catalog does no I/O: persistence is Encode and Decode, which the engine
// stores with its other metadata.
//
// # Identity and generations
//
// Storage never names a column by its name. Every column gets a ColumnID
// when it comes to exist, and that id is never given to another column of
// the table, not even after DROP COLUMN: a new column that reuses an old
// name is a new column, and must not read the old one's data (R8.2,
// schema.slt). RENAME changes only the name. Dropped columns stay in
// Table.Dropped with their ids and introduced defaults because parts
// written under older generations still hold their data. Each column also
// records Introduced, its DEFAULT at the moment it was added: rows written
// before read that value (R6.5), which is why SET DEFAULT and DROP DEFAULT
// never touch it. Every ALTER TABLE bumps Table.Generation, so caches keyed
// by (table id, generation) are never stale.
//
// # Groups
//
// A keyed table's non-key columns are partitioned into attribute groups.
// The group default (id 0) always exists and holds the non-key columns no
// named group claims, ordered by the table-level VALID BY / REVISION BY.
// Key columns belong to no group (they are in every version), and append
// tables have no groups at all: Column.Group is NoGroup for both.
//
// # Invariants
//
//  1. Column, group, table, index and transformation ids are never reused;
//     the next id of each kind is part of the encoding.
//  2. Every current column of a keyed table is either a key column (NOT
//     NULL, NoGroup) or listed in exactly the one group its Group names;
//     every VALID BY / REVISION BY column is an orderable column of its
//     own group.
//  3. A *Table (and every object reachable from a Catalog) is never
//     modified once published: a DDL changes a private copy and swaps it
//     in only when every check passed. That makes each DDL atomic — a
//     failed one leaves the catalog, and its encoding, unchanged — and
//     lets readers hold pointers without locks.
//  4. Every table is bound to exactly one policy per role; each binding
//     names an existing policy of that role or the built-in default, and a
//     policy something is bound to cannot be dropped.
//  5. Encode is deterministic and versioned; Decode refuses a newer major
//     format and any encoding that fails Check, which verifies 1–4.
//  6. A group's Owner is set exactly while a transformation writing that
//     group exists.
//
// # Choices the SPEC leaves open
//
//   - ORDER BY of a keyed table may only permute the key columns: all
//     versions of a key are stored together in key order.
//   - SHARD BY without SHARDS means SHARDS AUTO; neither means one shard.
//   - A column that places rows in shards keeps its type: a row's shard is
//     a hash of the stored value, and widening would move it.
//   - A column referred to by name elsewhere — a bound retention policy's
//     `by`, a source column a transformation's SELECT reads
//     (TransformationSpec.Reads), a column a transformation writes (its
//     owned group, the target's key, every column of an append target) —
//     cannot be renamed or dropped while that reference exists. A table a
//     transformation reads cannot be renamed, and no table one uses can be
//     dropped.
//   - ADD COLUMN ... NOT NULL without DEFAULT is accepted only when the
//     caller vouches that the table never held rows (AddColumnSpec.KnownEmpty).
//   - SCOPE HISTORY and SCOPE BOTH need a MODE VERSIONED table; a transformation
//     reads append tables only.
//   - Unnamed codecs: integers, DATE and DATETIME64 get "DELTA, ZSTD(1)",
//     BOOL "NONE", everything else "ZSTD(1)" (see DefaultCodec).
//   - Sizes use PostgreSQL's units (MB = 1024 kB); an interval month is 30
//     days and a year 365.
package catalog
