// Package storage is Strata's engine core: the commit pipeline, the
// memtables, snapshots and reads. Its subpackages hold the write-ahead log
// (wal), the metadata store (manifest) and the immutable part files (part);
// api.go is the whole contract with the query engine.
//
// # A commit, start to finish
//
// The executor hands Commit a Txn whose writes are already validated, cast
// and split by attribute group. Commit encodes the writes into a WAL
// payload without any lock (that is the bulk of the work), and a commit
// without DDL also reads its time and compresses the record there, then
// takes the ordering lock, the one place that decides commit order. Under it: the
// Txn's DDL runs on a clone of the newest catalog with the number the
// commit will get; CatalogVersion is checked; writes read at a snapshot
// (Write.ReadAt: UPDATE, DELETE, ON CONFLICT) are checked against the keys
// later commits wrote, recorded while a Watch is open (conflict.go); the
// sequence is assigned; the
// trailer (wall-clock time, clamped never to go back, kind, tables, rows,
// and the whole new catalog of a DDL) is appended, unless the record built
// before the lock still holds (no DDL, no clamp), and the ONE record is
// submitted to the WAL. Nothing before Submit takes a number, so a failed
// DDL or a stale plan leaves no gap (R5.1). The lock is released before the
// fsync: the WAL's flusher writes whatever records have gathered with one
// write and one fsync, so concurrent commits share fsyncs (group commit)
// while each is acknowledged only after its own record is durable (R5.6).
// While it waits, the committer prepares its writes (prepare.go): the rows'
// shards, their sort keys, the probes for their memtable entries and the
// encodings of their values. That is reads only, so nothing of a commit
// whose fsync fails is visible or left; the apply uses what still holds
// (the same memtable; a key missing only if no key was inserted since).
// A durable commit then queues for application: whoever holds the apply
// lock applies every queued commit whose predecessors are applied, in
// sequence order, and publishes the state after each.
//
// # Memtables
//
// Every table has shards (SHARDS n fixed, AUTO starting with one), each
// owning a range of a 64-bit hash of the SHARD BY columns' key encodings.
// A keyed shard's memtable is a skip list from sort key (types.AppendKey of
// the ORDER BY columns, which for a keyed table are the key) to the key's
// entry, with a hash index beside it so that a write to a key already there
// needs no search (its keys alias the arena bytes, invariant 5); a write's
// new keys go into the hash index at once and into the skip list's order
// only when something walks it (keyedMem.ordered, called first by every
// walk: flushes, scans, Check, a transaction's merge), sorted and linked
// together, each search resuming where the last ended. An entry holds,
// per attribute group, the retained versions in commit order, and per version what the rules of package version decided
// about it (a version.Resolved: state, the interval in which it won, who
// ended it), plus the key's deletes. Writes are blind: no read of older data happens
// before a write; the group's version.Register (versioned) or version.Decide
// against the memtable's winner (upsert) decides each new version, and the
// Resolved records of the version it beat or of the winner a delete ended
// are updated in place. An append shard's memtable is the list of its
// writes' rows as columnar chunks, in commit order.
//
// # Reads
//
// A Snapshot is a published state: a commit, its catalog and the table
// data. A read at commit n asks version.WinnerAt / StateAt of each group's
// Resolved list — a range check per version (version rule 6), no replay —
// and builds the row from the winners' payloads: columns by id, a column
// missing from a version's payload reads its Introduced default (R6.5), a
// value stored under a narrower type is cast (R8.1). Readers hold a
// shard's read lock for one batch at a time, so a scan never holds a
// commit up for more than that.
//
// # Flush
//
// When a shard's memtable passes Options.MemtableBytes, or the WAL has grown
// by MemtableBytes/4 since the last flush (flush.go, walFlushBytes: the log
// is shared by every shard, so this bounds what it keeps on disk and what
// a restart replays), or on Flush, the commit that did it freezes every non-empty memtable at the published
// commit F: each becomes its shard's frozen memtable, a fresh one takes
// its place, and the state is published (nothing is copied, so reads see
// the same versions, now from two memtables). The commit then returns; a
// flush worker writes each frozen memtable to a part (package part, a
// delta part of version rows and delete markers, or an append part),
// fsyncing each before anything names it, without any lock; then, under
// the apply lock, ONE manifest edit adds the parts, records the commits up
// to F and moves every shard's flushed commit and the WAL checkpoint to F,
// and the state is published with the parts in place of the frozen
// memtables; then the WAL drops the segments behind the checkpoint (flush.go).
// One flush is in progress at a time: a commit that finds a memtable full
// while the previous one is still being written waits for that flush
// (back-pressure), so a shard holds at most two memtables. A failed
// attempt changes nothing and is retried after a growing pause (Flush
// makes one attempt itself and returns its error); a failed manifest fails
// the engine. Close finishes the flush in progress, and a crash before the
// edit leaves part files no manifest names, which Open deletes: the frozen
// commits are still in the WAL after the old checkpoint.
//
// Laying a keyed memtable out as part rows (keyedPartData) walks its
// versions once, in key order. A memtable filled by unsorted writes holds
// them in arrival order, so that walk is a cache miss per key, version,
// ordering value and payload, and is most of a flush's cost: nothing else
// walks them. The part's columns come from the sizes counted as versions
// arrived, each key's rows are merged from its groups' versions and
// deletes, which are kept in position order, rather than sorted, and
// payloads are decoded straight into the typed columns.
//
// A part row stores a version's columns as table columns; its payload (the
// group's columns that existed at its commit, in column id order, which is
// also the order the memtable encodes them in) is rebuilt from them, so a
// repeat of a flushed version is still recognised (R3.4). Each version
// carries its payload's layout (version.Version.Layout: its columns and
// the types they were written under); two payloads of different layouts,
// a widening or an ADD COLUMN apart, are compared by value (sameValues,
// repeats.go), not byte for byte. A read of a shard
// with parts or a frozen memtable gathers, per key, the inputs of every
// part and of the memtables with commit ≤ n, and resolves them afresh through the same
// Register / Decide code (version rule 7: runs of contiguous commits merge
// by resolving their retained versions with every delete); the memtable's
// own records, made without sight of the parts, are not used there. That
// keeps writes blind and every read exact, at the price of resolving every
// key of a flushed shard on each read until merges write current and
// history runs with their resolutions stored.
//
// # Recovery
//
// Open loads the manifest (catalog, commits, shards, flushed marks) and
// replays the WAL after the database-wide checkpoint through the same
// applyRecord the live path uses; writes at or below a shard's flushed
// commit and writes to tables dropped since are skipped; a replayed DDL's
// catalog replaces the manifest's only when newer. Then it records in the
// manifest what the WAL alone knew (commits, catalog, shards) and removes
// part files no manifest names.
//
// # Failure
//
// A failed WAL write or fsync fails the commit that waited on it and puts
// the engine in the failed state: every later Commit returns ErrFailed,
// reads keep serving what was acknowledged. The WAL cannot be trusted after
// a failed fsync (wal invariant 7), so the only way forward is Close and
// Open, whose replay is the truth: a commit reported failed may reappear
// whole there if its bytes did reach the disk (it is never half there).
//
// A full disk is such a failure: the commit's error wraps both ErrFailed
// and vfs.ErrNoSpace (ENOSPC), so the session can say the disk is full.
// Writes resume after space returns and the engine is reopened; a short
// WAL write leaves a torn tail that only replay may judge. A flush on a
// full disk is different: it fails with ENOSPC and changes nothing (the
// part is never named by the manifest), so the frozen memtable keeps its
// rows and a retry may succeed without a reopen; meanwhile commits go on
// until the next memtable fills, then wait for the retry. Part bytes that fail
// their checksums are reported, by Check and by the read that meets them,
// as part.ErrCorrupt naming the file, never returned as rows.
//
// # Invariants
//
//  1. One lock (Engine.pipe) orders commits: sequence assignment, the DDL
//     on the newest catalog and WAL submission happen together under it,
//     so WAL order is sequence order and sequences have no gaps.
//  2. A commit is one WAL record; it is applied only after that record is
//     durable, and acknowledged only after it is applied.
//  3. Commits are applied and published strictly in sequence order: the
//     state published at n contains every commit ≤ n and nothing later.
//     Published states are immutable; the memtables they share only grow
//     (a frozen memtable no longer changes), and every read filters by
//     commit, so an older snapshot reads exactly what it read when it was
//     taken. A state holds a shard's versions exactly once: in its parts,
//     its frozen memtable (commits after every part's) or its memtable
//     (commits after the frozen one's); a freeze and a flush's
//     installation each replace one holder by the next in one publication.
//  4. For every retained version, its Resolved record is what
//     version.Resolve would say about it given every version and delete of
//     its key and group applied so far (tests check this against Resolve).
//     A repeat (R3.4) is never retained; an upsert table retains only
//     versions that won when they arrived.
//  5. Memtable keys, ordering values and payloads live in an arena and are
//     never modified once written; entries are never removed from a
//     memtable, so a reader can resume a walk from any entry it holds.
//  6. Every DDL commit records its catalog, and every commit up to it, in
//     the manifest before it is acknowledged.
//  7. A part is named by the manifest only after its file and directory
//     entry are durable; a shard's flushed commit, and the WAL checkpoint,
//     move only in the edit that adds the parts holding those commits, and
//     WAL segments are removed only after that edit.
//  8. A flush never changes a result: reads at every commit, versions and
//     lookups are the same before, during and after it
//     (TestFlushNeverChangesResults, which also holds flushes mid-way,
//     and TestFlushInBackground).
//
// # Choices
//
//   - A group without a version at the commit read returns NULL for its
//     columns, except columns added after CREATE TABLE, which return their
//     Introduced default as any row written before them does (R4.2, R6.5).
//   - Scan returns keyed rows shard after shard, in sort order within each
//     shard (and so in global sort order for a one-shard table).
//   - Append rows without SHARD BY go to the shards round-robin per write.
//   - A flush runs in the background, started by the commit that crossed
//     MemtableBytes (or the WAL bound above), and flushes every shard at once (one manifest edit,
//     one WAL checkpoint). Commits go on meanwhile; only one that fills a
//     memtable again before the flush is installed waits for it, so at most
//     one flush is in progress and a shard holds at most two memtables.
//     Reads of a shard with a frozen memtable take the merged path, as for
//     a shard with parts, until the flush installs its part.
//   - A key, SHARD BY or ordering column widens only where its stored memcmp
//     encoding stays the same (types.KeyStable: integers of any width,
//     FLOAT32 → FLOAT64, strings; not a DECIMAL scale), checkEncodedTypes.
//     A part records its columns' types; reads cast old widths up.
package storage
