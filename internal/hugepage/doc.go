// Package hugepage asks Linux to back the Go heap with transparent huge
// pages (THP) where the kernel leaves that to the program.
//
// Ingest touches a memtable's entries, version lists and payload bytes at
// random: on 4 KiB pages nearly every such touch misses the TLB, and every
// page of a growing heap costs a page fault. With the kernel's THP mode at
// "madvise" (Debian's and Ubuntu's default) only memory a program marks
// with madvise(MADV_HUGEPAGE) gets huge pages, and the Go runtime marks
// none of its heap (it did in Go 1.21.0 and stopped, golang/go#61718), so a
// process that wants them must ask itself, as jemalloc's opt.thp does for C
// programs and as PostgreSQL's huge_pages does for its buffer pool.
// Measured on bench/'s small ingest: 230–300 k page faults → 3–15 k and
// about a quarter less CPU (docs/benchmarks.md).
//
// What the runtime stopped for is the cost: with the kernel's THP defrag
// setting at its default ("madvise"), a fault in marked memory that finds
// no free 2 MiB page compacts memory then and there, which can stall the
// faulting goroutine for milliseconds on a machine whose free memory is
// fragmented (golang/go#61718, #64342); and khugepaged may fill partly
// used 2 MiB ranges, raising the resident size. Neither showed in
// bench/ (peak resident size unchanged), on a machine with most of its
// memory free. HugePageBytes -1 (strata serve --huge-page-mib -1) or
// GODEBUG=disablethp=1 turns the reservation off.
//
// The runtime reserves its heap in arenas of 64 MiB aligned to their size
// (runtime.heapArenaBytes on 64-bit Linux), so the whole arena around a heap
// pointer is the heap's own address space. A mark only helps memory not
// yet touched: a 2 MiB range that already has a 4 KiB page stays in small
// pages. Reserve therefore grows the heap by memory nothing has touched,
// marks it, and frees it for the heap to fill; Note and Refresh mark what
// the heap maps beyond it, once they see it. Recollapse (collapse_linux.go)
// rebuilds the huge pages the runtime's scavenger splits when it returns
// free pages that share them with live data.
package hugepage
