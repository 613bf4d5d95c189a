package strata

import (
	"log/slog"
	"time"
)

// Options configure a DB. The zero value is the defaults.
type Options struct {
	// Logger receives background events (flushes, recovery); slog.Default()
	// when nil.
	Logger *slog.Logger
	// MemtableBytes is the size at which a shard's in-memory buffer is
	// flushed to a part file, in the background; 64 MiB when zero. While
	// a flush runs a shard holds up to two buffers of about this size; a
	// commit that fills the second waits for the flush.
	MemtableBytes int64
	// QueryMemLimit bounds the memory of one query's buffering operators
	// (sorts, hash tables), in bytes; 1 GiB when zero. A query over it fails
	// with SQLSTATE 53200 instead of taking the process down.
	QueryMemLimit int64
	// AsOfIndex writes an AS OF index of epochs beside each merged run of a
	// versioned table, in the background once merges settle: the first read
	// AS OF a past commit then reads about one current table's worth of
	// rows instead of the whole history. Off by default, because building it
	// costs about 1.5× a full merge's CPU and, on keys that compress poorly,
	// several times the history's bytes on disk (docs/storage-merges.md).
	// Results are the same either way.
	AsOfIndex bool
	// Clock gives commit times and now(); time.Now when nil. Tests pin it.
	Clock func() time.Time
	// PageCacheBytes bounds the memory of decoded part pages that point
	// lookups and repeated scans share, in bytes: 256 MiB when zero, no
	// cache when negative. Like PostgreSQL's shared_buffers, it decides
	// how much of a table lookups find decoded: a lookup that misses
	// decompresses and decodes its pages (~25 µs each). Pages of history
	// (read AS OF past commits) and of current data each keep at least
	// half of it when both are read, so neither kind of read evicts the
	// other's working set.
	PageCacheBytes int64
	// WarmWrites makes flushes and merges put the pages point lookups read
	// of the parts they write into the page cache, so that a lookup right
	// after a write decodes nothing. Off by default: on two cores it cost
	// about 20 % of ingest throughput in bench/, for a p99 of lookups
	// right after ingest of ~80 µs instead of ~750 µs (docs/benchmarks.md).
	// Once writes pause for a second, the fold that follows warms what it
	// writes either way.
	WarmWrites bool
	// HugePageBytes is how much of the Go heap the first Open in the
	// process readies for transparent huge pages: 4 GiB when zero (at most
	// a quarter of the machine's memory), none when negative. Where the
	// kernel's THP mode is "madvise" (Debian's and Ubuntu's default) the
	// heap otherwise gets 4 KiB pages, and ingest pays for it in TLB misses
	// and page faults: about a quarter more CPU in bench/
	// (docs/benchmarks.md). It costs one garbage collection at that Open
	// and address space, not memory. The mark covers the whole process's
	// heap, the embedding program's included. The risk, and why the Go
	// runtime itself no longer asks: on a machine whose free memory is
	// fragmented, a first touch of marked memory may wait while the kernel
	// compacts memory for a 2 MiB page, and the resident size may run
	// higher; set -1 where latency matters more than ingest CPU.
	HugePageBytes int64
}
