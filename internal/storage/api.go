package storage

// This file is the contract between storage and the query engine: the
// executor builds Txns and ScanSpecs and reads batches back; nothing else of
// storage is visible to it. The engine (engine.go and the files beside it)
// implements these methods.

import (
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// CommitKind is what a commit did, as system.commits shows it (R13.4).
type CommitKind uint8

// The kinds of commit.
const (
	KindWrite          CommitKind = iota + 1 // INSERT/UPSERT/UPDATE/DELETE and transactions
	KindDDL                                  // schema, policy, index and user statements
	KindTransformation                       // a transformation's output (R12.4)
)

// String returns the kind as system.commits prints it.
func (k CommitKind) String() string {
	switch k {
	case KindWrite:
		return "write"
	case KindDDL:
		return "ddl"
	case KindTransformation:
		return "transformation"
	}
	return "unknown"
}

// WriteKind says what a Write does.
type WriteKind uint8

// The kinds of write.
const (
	// WriteVersion adds one version of one attribute group per row of a
	// keyed table: Batch holds the key columns then the group's columns.
	WriteVersion WriteKind = iota + 1
	// WriteDelete removes each key of Batch (the key columns only) at the
	// commit (R5.4).
	WriteDelete
	// WriteAppend adds each row of Batch to an append table: Batch holds
	// every current column of the table.
	WriteAppend
)

// Write is one columnar piece of a commit: rows of one kind for one table
// (and one group). Rows get their position in the commit (seq) in the order
// of the Txn's Writes and of the rows inside each, so a later row of the same
// statement wins a tie (R3.1).
type Write struct {
	Kind  WriteKind
	Table catalog.TableID
	// Group is the attribute group a WriteVersion writes.
	Group catalog.GroupID
	// Cols names the columns of Batch, in Batch order. Values are already
	// validated and cast to the columns' current types, NOT NULL and
	// ordering columns checked (R2.3, R3.2), defaults filled in: storage
	// stores what it is given.
	Cols  []catalog.ColumnID
	Batch *types.Batch
	// ReadAt, when non-zero, is the commit of the snapshot the write was
	// computed from (UPDATE, DELETE, INSERT … ON CONFLICT): Commit fails
	// with ErrConflict if a later commit wrote one of its keys in its
	// attribute group (in any, for a delete or WholeKey). The snapshot
	// must have been taken under an open Watch (conflict.go).
	ReadAt uint64
	// WholeKey makes the write's keys stand for every attribute group of
	// the table, in the check and in the record: a write that depends on
	// whether the key exists at all (INSERT … ON CONFLICT), which a write
	// of any group changes.
	WholeKey bool
}

// Txn is everything one commit does. It is built before the commit pipeline
// sees it; the pipeline only assigns the sequence, logs it and applies it
// (ARCHITECTURE.md "Storage, concretely").
type Txn struct {
	Kind CommitKind
	// DDL, when set, is run inside the pipeline on a clone of the newest
	// catalog with the commit number this Txn will get; if it returns an
	// error the commit is abandoned and takes no number (R5.1). The
	// resulting catalog is logged whole and published with the commit.
	DDL func(c *catalog.Catalog, commit uint64) error
	// CatalogVersion, when non-zero, is the catalog commit the Writes were
	// planned against; if a DDL has committed since that changed a table
	// they write (SchemaChanged), or any DDL for a Txn with Checkpoints (a
	// transformation's step), Commit fails with ErrSchemaChanged and the
	// caller plans again.
	CatalogVersion uint64
	Writes         []Write
	// Checks are keys read for update (SELECT … FOR UPDATE inside a
	// transaction): each a Write of key columns with ReadAt set, checked
	// as a write with ReadAt is (ErrConflict) but neither logged nor
	// applied nor recorded.
	Checks []Write
	// Exclusive says the caller holds Engine.Exclusive, so the commit
	// does not wait for it.
	Exclusive bool
	// Tables and Rows are what system.commits records: the names of the
	// tables touched and the number of rows accepted (R3.6).
	Tables []string
	Rows   uint64
	// Checkpoints are transformation checkpoints committed with the
	// writes (R12.2): logged in the same WAL record, so the output and
	// the progress it stands for are durable together or not at all.
	Checkpoints []Checkpoint
}

// Checkpoint is how far a transformation has processed its source: every
// source row committed at or before Processed is in its output.
type Checkpoint struct {
	Name      string
	Processed uint64
}

// CommitInfo is one row of system.commits (R5.5).
type CommitInfo struct {
	Commit uint64
	At     time.Time
	Kind   CommitKind
	Tables []string
	Rows   uint64
}

// KeyRange bounds a scan by the memcmp encoding (types.AppendKey, column
// after column) of a prefix of the table's ORDER BY columns: Lo inclusive,
// Hi exclusive; nil means unbounded. Parts and blocks whose ORDER BY
// min/max cannot overlap are skipped; rows outside are never returned.
type KeyRange struct {
	Lo, Hi []byte
}

// ScanSpec asks a snapshot for rows of one table.
type ScanSpec struct {
	Table catalog.TableID
	// AsOf is the commit to read at (R6.1); 0 means the snapshot's commit.
	// The caller has already checked it (positive, ≤ newest, table mode).
	AsOf uint64
	// Cols are the columns to produce, by id, in this order: current or
	// dropped columns alike. A column that did not exist when a row was
	// written reads as its Introduced default (R6.5); a row stored under an
	// older, narrower type is cast to the column's current type (R8.1).
	Cols []catalog.ColumnID
	// Commit adds the hidden _commit column (R7.2) as a UINT64 vector after
	// Cols: for keyed tables the newest commit among the versions that make
	// up the visible row, for append tables the commit that added the row.
	Commit bool
	// After, for append tables, keeps only rows committed after it
	// (transformations read their source incrementally, R12.2).
	After uint64
	// Ranges, when non-empty, keeps only rows whose ORDER BY prefix falls
	// in one of them.
	Ranges []KeyRange
	// BatchRows caps the rows per batch handed to the callback (0 = 1024).
	BatchRows int
	// ReadOnly says the callback never modifies a batch it is handed (it
	// may keep it): the scan may then hand out batches shared with the
	// resolved-scan cache instead of copies.
	ReadOnly bool
	// Index, when not nil and Ranges is empty, asks the read to use an
	// index (R10.2, index.go): a keyed read (Scan or Versions) reads
	// only the keys with a stored version whose column equals a probe
	// value, an append read skips the part granules and memtable rows
	// that hold none. Either way it returns a superset of the rows whose
	// column equals a value, never fewer: the caller filters. When the
	// index cannot serve the read it scans as without it
	// (ScanStats.Index says which happened).
	Index *IndexProbe
	// Trace, when not nil, is filled in by Lookup with what the lookup
	// read (EXPLAIN ANALYZE, benchmarks); other reads ignore it.
	Trace *LookupTrace
}

// VersionsCols are the columns a versions scan (R7.1) adds after
// ScanSpec.Cols, in this order: _group STRING, _commit UINT64, _state
// STRING, _superseded_by UINT64 (NULL while current), _reason STRING.
// Columns of groups other than the row's read NULL.
var VersionsCols = []string{"_group", "_commit", "_state", "_superseded_by", "_reason"}

// ShardInfo is one row of system.shards.
type ShardInfo struct {
	Table catalog.TableID
	Shard uint32
	Rows  uint64
	// Bytes counts memtables and parts wherever they are; ObjectBytes
	// the parts' bytes in object stores (R9.4).
	Bytes, ObjectBytes uint64
	Parts              int
	// Location is "local", then each placement volume (volume:path) and
	// the URL of each object store holding some of the shard's parts,
	// comma-separated.
	Location string
	// Home is where the shard's new parts go: "local" (the data
	// directory) or its placement volume, volume:path (R9.6).
	Home string
	// Misplaced counts the parts on a local disk other than Home, which
	// the background merger is to move there.
	Misplaced int
}

// PartInfo is one row of system.parts.
type PartInfo struct {
	Table                catalog.TableID
	Shard                uint32
	Part                 uint64
	Level                uint8
	Rows                 uint64
	Bytes                uint64
	MinCommit, MaxCommit uint64
	Location             string
}

// ScanStats counts what a scan touched, for EXPLAIN ANALYZE (R10.2).
type ScanStats struct {
	Shards, Parts, PartsSkipped, Blocks, BlocksSkipped int
	RowsRead, RowsReturned                             uint64
	// CachedShards counts the shards whose rows came from the
	// resolved-scan cache (scancache.go) instead of their sources.
	CachedShards int
	// Index is what the read's index probe touched (ScanSpec.Index),
	// nil when it was not asked to use one.
	Index *IndexStats
}

// addCounts adds u's part, block and row counts to s (a read made of
// several reads, such as versions() through an index, key by key).
func (s *ScanStats) addCounts(u *ScanStats) {
	s.Parts += u.Parts
	s.PartsSkipped += u.PartsSkipped
	s.Blocks += u.Blocks
	s.BlocksSkipped += u.BlocksSkipped
	s.RowsRead += u.RowsRead
	s.RowsReturned += u.RowsReturned
}
