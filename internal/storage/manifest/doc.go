// Package manifest is Strata's transactional metadata store: the one place
// beside the data files that says what the database is. It holds the
// encoded catalog (opaque bytes made by internal/catalog), the shard layout
// of every table, the live parts of every shard, how far each shard's
// memtable has been flushed, the database-wide WAL checkpoint,
// transformation checkpoints, and the summary of every commit that
// system.commits lists (R5.5) and AS OF TIMESTAMP resolves against (R6.7).
//
// # Shape
//
// Store is the interface the engine uses; Bolt implements it on one bbolt
// file (go.etcd.io/bbolt), and a cluster can implement it on etcd. Every
// change is one Edit passed to Apply: a flush adds its part, advances the
// shard's flushed commit and records commits in one edit; a merge removes
// its inputs and adds its outputs in one edit. Apply first builds the next
// in-memory Snapshot from the current one, which validates the whole edit
// without touching the disk, then writes the edit in one bbolt read-write
// transaction, and only after that commit publishes the new snapshot.
// Readers call Snapshot and never touch bbolt or take a lock.
//
// Each record is stored as a format byte followed by protobuf-style
// tagged fields (codec.go): unknown fields are skipped, so a newer build
// can add fields that an older one ignores.
//
// # Invariants
//
// Code comments cite these by number.
//
//  1. A part is added to the manifest only after its file (and the
//     directory entry) is fsynced. The manifest cannot check this; the
//     engine must. A crash can then leave a file no manifest names, never
//     a manifest naming a missing file.
//  2. A removed part's file is deleted only after the Apply removing it
//     returned nil and no snapshot in use still lists the part. At start
//     the engine deletes every data file that LiveFiles does not name.
//  3. Part ids come from NextPartID and are never reused, even across a
//     crash: the persisted counter is ahead of every id handed out (ids
//     are reserved in blocks, so a crash skips ids and never repeats
//     them). A part lives in exactly one shard, and no two live parts
//     name the same file.
//  4. Apply is atomic and durable: one bbolt transaction, fsynced before
//     Apply returns (NoSync stays false). An edit that fails validation
//     changes nothing, on disk or in memory. If the bbolt commit itself
//     fails, the outcome on disk is unknown, so the store refuses every
//     later edit (ErrFailed) until it is reopened and reads the truth.
//  5. Commit sequences run 1, 2, 3, ... without gaps and commit times
//     never decrease, so CommitAtOrBefore is a binary search. The engine
//     clamps a wall clock that went back. The flushed commit of a shard,
//     the catalog's commit, the WAL checkpoint and each transformation's
//     processed commit never move back and never pass the last commit.
//  6. A published Snapshot never changes. Apply copies what an edit
//     touches (the table map, the touched tables' shard lists, the touched
//     shards' part lists) and shares the rest; the slices a Snapshot
//     returns are shared and must not be modified by callers.
//  7. The active shards of a table own disjoint ranges of the 64-bit hash
//     space; a split retires the old shard and adds shards for the halves.
//
// Check verifies 3, 5 and 7 on what the file holds, runs bbolt's own page
// check, and compares the file with the in-memory snapshot.
package manifest
