//go:build linux && (amd64 || arm64)

package hugepage

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The runtime's background scavenger returns free heap pages to the
// kernel a few minutes after the heap shrinks (a collection after a burst
// of writes, the runtime's forced one every two minutes of idleness
// included), 4 KiB at a time. Where a free page shares a 2 MiB huge page
// with live data (the engine's page cache among an ingest's garbage),
// the kernel splits the huge page, and the live data stays on 4 KiB pages
// for good: khugepaged may rebuild some of them, at 16 MiB per ten
// seconds at best. Point lookups then miss the TLB on each page they
// touch; a server idle for eight minutes answered them ~25 % slower
// (docs/benchmarks.md, 2026-12-06, sixth session). Recollapse undoes
// the split with MADV_COLLAPSE (Linux 6.1), for the 2 MiB ranges of the
// marked arenas that are still largely resident, and watch calls it
// after the scavenger has worked.

// madvCollapse is MADV_COLLAPSE (the syscall package does not name it).
const madvCollapse = 25

// hugeBytes and smallBytes are the huge and base page sizes of amd64 and
// arm64 Linux with 4 KiB pages, the configurations huge pages are asked
// for on.
const (
	hugeBytes  = 2 << 20
	smallBytes = 4 << 10
)

// minResident is how many of a 2 MiB range's 512 base pages must be
// resident for Recollapse to rebuild it: the rebuild makes the rest
// resident too, so this bounds the memory it adds to 3× what the range
// holds, and spends it only where live data is dense.
const minResident = 128

// noCollapse is set once the kernel refuses MADV_COLLAPSE as unknown.
var noCollapse atomic.Bool

// Recollapse rebuilds the huge pages of every marked arena's 2 MiB
// ranges that have at least minResident base pages resident but are not
// whole, and returns how many it rebuilt. It does nothing before Reserve
// or on a kernel without MADV_COLLAPSE.
func Recollapse() int {
	if !active.Load() || noCollapse.Load() {
		return 0
	}
	mu.Lock()
	as := append([]uintptr(nil), arenas...)
	mu.Unlock()
	n := 0
	vec := make([]byte, arenaBytes/smallBytes)
	for _, a := range as {
		n += collapseRange(a, arenaBytes, vec)
	}
	return n
}

// collapseRange rebuilds the partly resident 2 MiB ranges of [lo,
// lo+size), lo and size multiples of hugeBytes; vec has room for one
// byte per base page. A range mincore cannot report on (not all of it
// mapped) is left alone.
func collapseRange(lo, size uintptr, vec []byte) int {
	pages := size / smallBytes
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, lo, size, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return 0
	}
	n := 0
	for r := uintptr(0); r < pages; r += hugeBytes / smallBytes {
		resident := 0
		for _, b := range vec[r : r+hugeBytes/smallBytes] {
			resident += int(b & 1)
		}
		if resident < minResident || resident == hugeBytes/smallBytes {
			continue
		}
		_, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo+r*smallBytes, hugeBytes, madvCollapse)
		switch e {
		case 0:
			n++
		case syscall.EINVAL:
			// A kernel before 6.1, or THP turned off for the process.
			noCollapse.Store(true)
			return n
		}
		// Other errors (no free huge page: EAGAIN, ENOMEM) leave the
		// range as it is; a later call may succeed.
	}
	return n
}

// watchEvery is how often watch looks at the memory the runtime has
// returned to the kernel; watchBytes is how much more it must be than at
// the last look (or the least since) for Recollapse to run.
const (
	watchEvery = 10 * time.Second
	watchBytes = 16 << 20
)

// watchOnce starts watch with the first Reserve that marks the heap.
var watchOnce sync.Once

// watch runs for the life of the process once Reserve has marked the
// heap: whenever the scavenger has returned another watchBytes, it
// rebuilds the huge pages the returns split, unless a memory limit is
// set (GOMEMLIMIT, debug.SetMemoryLimit).
func watch() {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	read := func() uint64 {
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}
	base := read()
	for !noCollapse.Load() {
		time.Sleep(watchEvery)
		var now bool
		base, now = due(base, read(), debug.SetMemoryLimit(-1) != math.MaxInt64)
		if now {
			Recollapse()
		}
	}
}

// due decides, from the bytes returned at watch's last look (base) and
// now (r), whether Recollapse should run, and what the next look compares
// with.
func due(base, r uint64, limited bool) (next uint64, now bool) {
	switch {
	case limited:
		// Under a memory limit the scavenger returns memory to keep the
		// process within it; putting it back would defeat that.
		return r, false
	case r >= base+watchBytes:
		return r, true
	case r < base:
		// The heap reused returned memory; a rise from here is new
		// returns.
		return r, false
	}
	// A rise smaller than watchBytes accumulates until it is one.
	return base, false
}
