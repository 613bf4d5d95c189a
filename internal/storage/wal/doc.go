// Package wal is Strata's write-ahead log: the commit pipeline appends one
// record per commit and acknowledges the commit only once an fsync covering
// the record has succeeded (SPEC R5.6). After a crash, Replay hands every
// record after the last checkpoint back to the engine, which rebuilds its
// memtables from them.
//
// # Layout
//
// The log is a directory of segments, wal-000000000001.log, -2, ... with no
// gaps, plus a LOCK file. The Writer appends to the newest segment and
// starts the next one when a batch would push it past Options.SegmentSize.
// Each segment begins with a header:
//
//	0        8         12          20      24
//	+--------+---------+-----------+-------+
//	| magic  | version | segment   | crc   |
//	+--------+---------+-----------+-------+
//	"STRATAWL"  u32 LE    u64 LE      CRC32C of bytes 0..20
//
// followed by records:
//
//	0        4          12       16       20
//	+--------+----------+--------+--------+------------------+
//	| length | commit   | hcrc   | pcrc   | payload (length) |
//	+--------+----------+--------+--------+------------------+
//	 u32 LE   u64 LE     u32 LE   u32 LE
//
// length's top bit (flagS2) says the payload is stored as an S2 block
// (github.com/klauspost/compress/s2); the next bit (flagBatch, format
// version 3) marks the first record of a batch; the other bits are the
// stored length.
// The Writer compresses a payload of at least 128 bytes when that makes it
// smaller: a commit's rows repeat keys and tokens, and S2 halves them for
// about 1 % of a commit's CPU. Format version 2 added the flag; Replay
// reads version 1 segments too, and Open seals a version 1 last segment
// and starts a version 2 one, so each file has one format and an older
// build refuses the log with a clear version error rather than misreading
// it. hcrc is CRC32C (Castagnoli) of bytes 0..12, pcrc of the stored
// payload (compressed or not). A compressed payload whose checksums match
// but which does not decode is ErrCorrupt wherever it is, never a torn
// tail, and so is a compressed record in a version 1 segment, whose
// writers never compressed. The separate header checksum lets Replay tell, cheaply and at any
// offset, whether a valid record starts there, which is how it tells a
// torn tail from damage in the middle (invariant 4). The payload is opaque
// here; the engine encodes a commit's rows in it. commit is the commit
// sequence the record belongs to, so Replay can skip the records a
// checkpoint already covers and RemoveBefore can drop whole segments.
//
// # Preallocation
//
// With Options.Preallocate (the engine's setting) a goroutine writes the
// next segment full of zeros and syncs it, under a name that is not a
// segment's, once the active segment is a quarter full; rotation renames
// it into place. A batch then syncs into blocks the file already has, so
// its fsync has no size or allocation to journal: on the test machine's
// ext4 a one-record commit went from ~140 to ~105 µs
// (BenchmarkGroupCommit). A segment that was not preallocated (the first
// of a new log, the one Open resumed) is sealed as soon as a prepared one
// is ready. Sealing cuts a segment's unwritten zeros off and syncs the
// cut before the next segment exists, so only the last segment can end
// in zeros; Replay treats zeros after its last record as the end of the
// log (not damage, nothing logged) and Open cuts them before appending.
//
// A preallocated file also loses the ordering a growing one had: with no
// size update to commit, a power cut during the last batch's fsync can
// keep a later page of that batch and lose an earlier one. Format version
// 3 marks each batch's first record so Replay can tell that torn batch
// from damage (invariant 3).
//
// # Group commit
//
// Callers frame their record into a shared pending batch under a mutex and
// wake one flusher goroutine. The flusher takes the whole batch, writes it
// with one write, fsyncs once, and then releases every caller waiting on it.
// While it fsyncs, new records gather in the next batch, so under load the
// number of fsyncs per second stays near what the disk allows while records
// per fsync grows with the number of writers.
//
// A small record submitted with SubmitCompressed (the engine's commits)
// wakes no one: its Pending's Wait takes the batch and writes and syncs it
// on the committer's own goroutine when no flush is running, and wakes the
// flusher otherwise. A one-row commit then skips two goroutine hand-offs
// (one-row INSERT over pgwire 243–265 → 215–224 µs p50 on the test
// machine). The flusher writes only when woken, so it never takes a small record from under the Wait that would
// have written it (and a test can count what each wrote).
//
// A large record (a 1 000-row commit's tens of KB) is written by its
// committer too, but early: Pending.Start, called once the caller's
// ordering lock is released, takes the batch when no flush runs, writes
// it, asks the device to start writing it (vfs.StartWriteback,
// sync_file_range) and keeps the flush lock; the committer looks up its
// memtable entries meanwhile, and its Wait syncs the batch and releases
// the lock. Waking the flusher instead began the write only when the
// committer waited: with both cores busy (the committer on one, a
// background flush or merge on the other) the woken flusher found no
// processor until then, ~0.8 ms per 1 000-row commit in bench/'s ingest,
// so the fsync never overlapped the lookups it was meant to. Other
// committers' records gather in the next batch meanwhile, written by the
// flusher (which Start wakes when it finds a flush running) once the
// lock is free: batches stay one at a time and in order.
//
// # Invariants
//
//  1. A record is acknowledged (Commit, Pending.Wait or Sync return nil)
//     only after Sync of its segment has returned nil, and, for the first
//     batch of a new segment, after SyncDir of the log directory.
//  2. Records are in the log in the order callers took the Writer's lock;
//     batches are written one at a time, in order, so an acknowledged
//     record's predecessors are durable too.
//  3. Only the tail of the last segment can be torn: a crash interrupts at
//     most the batch being written, which is always at the end of the
//     newest segment. Replay and Open cut such a tail (a short header or
//     payload, a bad checksum: damage with no valid record after it, or in
//     format version 3 none that begins a batch; a bad segment header with
//     only zeros after it) and log the cut. Zero
//     bytes from a record boundary to the end of the last segment are its
//     unwritten preallocated rest, not a tail to cut.
//  4. Every other damage is ErrCorrupt naming the segment file and offset:
//     a bad record in a sealed segment, a bad checksum followed by a
//     record with matching checksums anywhere after it in the last one
//     (in version 3, a record that begins a later batch: the Writer writes
//     a batch only once the one before it is synced, so that one was
//     whole), or a compressed payload whose checksums match but which
//     does not decode. Nothing is skipped silently. What no rule can tell
//     apart is damage to the last batch after it was synced from that
//     batch torn by a crash: both are cut.
//  5. Segment numbers are consecutive; a gap is ErrCorrupt. RemoveBefore
//     removes only a prefix of sealed segments, never the active one.
//  6. One batch, one write, one fsync: one goroutine at a time writes
//     segment files while a Writer is open (the flusher, or a committer
//     leading its own batch, under the Writer's flush mutex, which also
//     keeps batches in the order they were taken), and the LOCK file
//     keeps a second Writer or a Replay out.
//  7. A failed write or fsync is sticky. Linux may drop dirty pages after
//     a failed fsync and report success on the next, so retrying would
//     acknowledge records that are not on disk; the Writer fails instead,
//     and the engine reopens it (see Writer).
//  8. Only package vfs touches files: this package's non-test sources do
//     not import os (a test checks).
package wal
