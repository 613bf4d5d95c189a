// Package part writes and reads parts: the immutable, sorted, columnar
// files that hold the stored version rows of one shard of one table
// (ARCHITECTURE.md "Storage, concretely"). A part is a Parquet file, so
// DuckDB, Spark or pyarrow can read one as it is; this package adds a
// fixed set of columns, its own metadata, and checksums over every byte.
//
// # Content
//
// Each row is one stored version (or delete marker, or appended row). Rows
// are sorted by (Sort, Group, Commit, Seq). Besides the table's columns,
// stored under their catalog.ColumnID as "c<id>" and all OPTIONAL (a column
// a row's group does not hold is NULL there), every part has these REQUIRED
// columns:
//
//	_sort            BYTE_ARRAY   memcmp key of the ORDER BY columns   DELTA_BYTE_ARRAY
//	_group           INT32 u16    attribute group                      DELTA_BINARY_PACKED
//	_commit          INT64 u64    commit                               DELTA_BINARY_PACKED
//	_seq             INT32 u32    position in the commit               DELTA_BINARY_PACKED
//	_tomb            BOOLEAN      delete marker (R5.4)                 PLAIN (bit-packed)
//	_won_at          INT64 u64    version.Resolved.WonAt               DELTA_BINARY_PACKED
//	_ended_at        INT64 u64    version.Resolved.EndedAt             DELTA_BINARY_PACKED
//	_superseded_by   INT64 u64    version.Resolved.SupersededBy        DELTA_BINARY_PACKED
//	_state           INT32 u8     version.Resolved.State               DELTA_BINARY_PACKED
//	_order           BYTE_ARRAY   the group's encoded ordering values  DELTA_BYTE_ARRAY
//
// all compressed with ZSTD(1), except in history parts, which only merges
// write and which hold most of a settled table: ZSTD(3) there
// (historyFixedCodec, which also says why these stay delta-encoded).
// A history or delta part whose every row's _order is the encoding of its
// group's VALID BY / REVISION BY columns stores _order empty, and readers
// rebuild it from those columns (format 2, order.go). History parts also store
// _commit, _seq, _won_at, _ended_at and _superseded_by as residuals: what
// is left once the part of each that follows from the row's _group,
// _state and neighbours in its page is subtracted, 0 in most rows (format
// 3, resid.go). Readers undo them, so every reader of this package gets
// the values written; a foreign Parquet reader sees the stored forms.
// The resolution columns are written in every part; in delta and append
// parts they are constant zero and cost a few bytes per block. Table
// columns map onto Parquet types as physicalOf lists; a column's codec (R11.3) becomes its Parquet encoding (DELTA →
// DELTA_BINARY_PACKED on INT32/INT64 columns; 128- and 256-bit integers
// and DECIMALs, which Parquet cannot delta-encode, are big-endian two's
// complement stored BYTE_STREAM_SPLIT whenever the codec compresses, so
// their zero high bytes become runs; see encodingOf) and its page
// compression (ZSTD(level) → ZSTD, LZ4 → LZ4_RAW, NONE → UNCOMPRESSED).
// klauspost's zstd has four encoder speeds, so ZSTD levels map onto the
// nearest: levels 1–2, 3–5, 6–9 and 10–22 each share one.
//
// A part is divided into blocks (Parquet row groups, DefaultBlockRows rows
// each). Part and blocks record min/max of the sort key and of the commit,
// so a read AS OF n skips parts and blocks whose MinCommit is above n, and
// a key range skips those it cannot overlap (Meta.Overlaps,
// BlockInfo.Overlaps).
//
// A delta, current or history part also carries a key filter of its
// distinct sort keys (keyfilter.go, footer entry "strata.keyfilter"), so a
// point lookup passes over a part that cannot hold its key without
// decoding a page of it (Reader.MayContain). It is in the footer, so the
// seal covers it; Check verifies that it holds every row's key. Parts
// written before it existed have none and may hold any key.
//
// # Layout and checksums
//
//	offset 0        "PAR1"
//	                block 0: column chunk 0, column chunk 1, …   ┐ the data region,
//	                block 1: …                                    │ CRC-32C per 8 KiB
//	dataEnd         ─────────────────────────────────────────────┘ stripe
//	                offset indexes (page locations)               ┐
//	                footer (Thrift FileMetaData), whose key/value  │ the tail, one CRC-32C
//	                metadata holds "strata.part" (JSON) and        │ (the seal)
//	                "strata.seal"                                  │
//	size-8          footer length (4 bytes LE), "PAR1"             ┘
//
// Write lays the pages out itself, with parquet-go's encoders and
// compressors (pagewrite.go): DATA_PAGE_V2 pages of exactly PageRows rows,
// no column index and no minimum or maximum statistics, a NULL count per
// chunk. Parquet's own page CRC (Write writes it, parquet-go checks it)
// covers a page's body but not its header, and nothing covers the footer.
// So Write adds two layers that together cover every byte of the file:
//
//   - Stripes: the data region is cut into stripes of stripeSize (8 KiB;
//     parts written before 2026-12-04 have 32 KiB, and readers take the
//     size from the metadata) and the CRC-32C of each is kept in the part
//     metadata. Reading a column chunk reads the whole stripes around it,
//     checks them, and only then lets parquet-go decode pages, from that
//     verified memory.
//   - The seal: "strata.seal" is "STRATA-SEAL:", then dataEnd in 16 hex
//     digits, then the CRC-32C of the tail in 8, computed with those 8
//     digits written as "00000000". Write buffers the tail, computes the
//     CRC and patches it in; Open reads the trailer, finds the seal as the
//     last occurrence of its magic in the footer, and verifies the tail
//     before parquet-go parses a byte of it.
//
// Consequently no byte is uncovered: a flipped bit anywhere makes Open,
// ReadBlock or Check fail with an error wrapping ErrCorrupt (or a seal
// that cannot be found, or a length that points outside the file, which
// are reported the same way), and corrupt bytes are never decoded. The one
// exception is that ReadBlock verifies only the stripes of the chunks it
// reads: a flip in a column nobody asks for is found by Check, not by
// reads that skip it.
//
// Pages of table columns compressed LZ4_RAW, and the BYTE_STREAM_SPLIT
// pages of wide integer columns, are decoded by this package rather than
// by parquet-go (splitpages.go): parquet-go up to v0.32.1 loses LZ4 pages'
// values when its decoder outgrows the buffer it was given
// (parquet-go/parquet-go#608), and its generic stream-split decoding was
// most of the cost of a wide column's page.
//
// Checksums prove bytes are what a writer wrote, not that it wrote sense.
// Before parquet-go reads a page, checkPages (pagecheck.go) checks its
// header against its chunk, the block and PageRows, and that its bytes
// decode to the sizes and counts parquet-go will allocate for: a part
// from a buggy writer or a fuzzer that recomputes every checksum is
// reported as corruption naming the file, block, column and page, never
// an out-of-memory.
//
// # Invariants
//
//  1. Write returns only after the file and its directory entry are
//     durable (manifest invariant 1); a failed Write leaves no file.
//  2. Rows are sorted by (Sort, Group, Commit, Seq), within and across
//     blocks; Write refuses unsorted input and Check verifies the order.
//  3. No byte reaches parquet-go's decoders before its checksum has been
//     verified: the footer through the seal at Open, data through stripes
//     at ReadBlock (windowReader refuses reads outside verified bytes).
//  4. Every error about a part's bytes wraps ErrCorrupt and names the
//     file; I/O errors are passed through unwrapped by it.
//  5. ReadBlock reads only the fixed columns and the table columns asked
//     for (plus the stripe-aligned bytes around them), and allocates
//     nothing per row: into a reused Data, only per chunk and per page
//     (parquet-go's page headers and readers), about 8 per page of at most
//     Meta.PageRows rows. A chunk the reader's cache holds is copied out of
//     it, not read; ReadBlockView hands out the cached chunks themselves,
//     read-only, and keeps what it decodes from a block's second view on
//     (chunkcache.go), so it allocates per chunk it keeps.
//  7. Blocks end at sort-key boundaries (Meta.KeyBlocks) and pages at
//     multiples of Meta.PageRows rows; BlockInfo.Keys holds the sort key at
//     each such multiple, so a point lookup (FindKey, ReadRows) decodes one
//     page per column it reads, found through Parquet's offset index.
//  6. A part records each table column's type at write time; readers get
//     vectors of that type and cast (R8.1), and a column id the part does
//     not hold reads as a nil vector (R6.5).
package part
