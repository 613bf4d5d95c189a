//go:build linux && (amd64 || arm64)

package hugepage

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// arenaBytes is the Go runtime's heap arena size on 64-bit Linux
// (runtime.heapArenaBytes): arenas are reserved whole and aligned to it.
const arenaBytes = 64 << 20

// madvHugepage is MADV_HUGEPAGE (the syscall package does not name it).
const madvHugepage = 14

var (
	active atomic.Bool    // set by the first Reserve: Note and Refresh act only then
	last   atomic.Uintptr // the arena Note saw last: most calls stop at it
	mu     sync.Mutex
	arenas []uintptr // marked arenas, sorted
	held   int64     // bytes Reserve has grown the heap by
)

// Reserve grows the heap by up to n bytes (less on a small machine, see
// clamp) of memory nothing has touched, marks the arenas holding it for
// huge pages, and frees it: the runtime hands it out again as the heap
// fills, and each 2 MiB of it then faults in as one huge page. Only the first n bytes asked for in a process are
// reserved; later calls reserve only what a larger n adds. It runs one
// garbage collection, so that the memory is free before the heap grows
// past it (a collection that found it live would set the heap's goal
// beyond it, and the heap would grow into fresh, unmarked memory). The
// first call that marks memory also starts the goroutine that calls
// Recollapse after the scavenger has returned memory (watch).
func Reserve(n int64) {
	if godebug, _ := syscall.Getenv("GODEBUG"); thpDisabled(godebug) {
		return // the user asked the runtime to keep the heap off huge pages
	}
	var si syscall.Sysinfo_t
	var ram uint64
	if syscall.Sysinfo(&si) == nil {
		ram = uint64(si.Totalram) * uint64(si.Unit)
	}
	var as syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &as) != nil {
		as.Cur = ^uint64(0)
	}
	n = clamp(n, ram, as.Cur)
	mu.Lock()
	grow := n - held
	if grow <= 0 {
		mu.Unlock()
		return
	}
	held = n
	// One allocation, fresh from the system at a process's first Open: the
	// runtime does not clear it, so nothing touches it before its mark.
	// (Were it to start in memory the heap used before, the runtime would
	// clear it whole; pieces of one arena each, marked once all were
	// mapped, bounded that but measured 1–2 s more system time and 0.3 GB
	// more resident memory per small ingest, for reasons not found.)
	b := make([]byte, grow)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for a := p &^ (arenaBytes - 1); a < p+uintptr(grow); a += arenaBytes {
		mark(a)
	}
	active.Store(true)
	mu.Unlock()
	watchOnce.Do(func() { go watch() })
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
}

// thpDisabled reports whether a GODEBUG value sets disablethp=1, with
// which the runtime marks its heap MADV_NOHUGEPAGE: Reserve then leaves
// the heap as asked. The last setting of a name wins, as in the runtime.
func thpDisabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "disablethp" {
			off = v == "1"
		}
	}
	return off
}

// clamp bounds a reservation to a quarter of the machine's memory (ram,
// 0 if unknown) and of the process's address-space limit (as): the
// memory is only address space until the heap uses it, but a system that
// counts committed memory strictly (vm.overcommit_memory=2) or an
// address-space limit would refuse more, and the runtime dies when the
// system refuses it memory.
func clamp(n int64, ram, as uint64) int64 {
	for _, l := range []uint64{ram, as} {
		if l != 0 && l/4 < uint64(max(n, 0)) {
			n = int64(l / 4)
		}
	}
	return n
}

// Note marks the heap arena holding p for huge pages, the first time that
// arena is seen, once Reserve has run. p must point into the Go heap (a
// slice from make, not a global).
func Note(p unsafe.Pointer) {
	if p == nil || !active.Load() {
		return
	}
	a := uintptr(p) &^ (arenaBytes - 1)
	if last.Load() == a {
		return
	}
	last.Store(a)
	mu.Lock()
	defer mu.Unlock()
	mark(a)
}

// Refresh marks every arena seen so far again, once Reserve has run: the
// runtime maps an arena piece by piece as the heap grows, and a new
// mapping does not keep an earlier mark.
func Refresh() {
	if !active.Load() {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range arenas {
		advise(a)
	}
}

// mark records the arena at a and advises it, if it is new. Under mu.
func mark(a uintptr) {
	i, found := slices.BinarySearch(arenas, a)
	if found {
		return
	}
	arenas = slices.Insert(arenas, i, a)
	advise(a)
}

// advise marks the arena at a for huge pages. Parts of it the runtime has
// only reserved are marked too (they are mapped, without access) and lose
// the mark when the runtime maps them for use, which Refresh repairs. The
// kernel's answer is ignored: the mark is a hint whose failure changes
// only speed.
func advise(a uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, a, arenaBytes, madvHugepage)
}

// marked reports how many arenas have been marked (tests).
func marked() int {
	mu.Lock()
	defer mu.Unlock()
	return len(arenas)
}
