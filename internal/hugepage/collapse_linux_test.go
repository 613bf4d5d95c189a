//go:build linux && (amd64 || arm64)

package hugepage

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestCollapseRange splits two huge pages the way the scavenger does
// (returning some of their base pages) and checks that collapseRange
// rebuilds the one still largely resident, keeps what it held, and
// leaves the one with too few resident pages alone.
func TestCollapseRange(t *testing.T) {
	const size = 2 * hugeBytes
	m, err := syscall.Mmap(-1, 0, size+hugeBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m) //nolint:errcheck
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	lo := (base + hugeBytes - 1) &^ (hugeBytes - 1)
	r := m[lo-base : lo-base+size]
	madvise := func(p, n uintptr, advice int) {
		t.Helper()
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, p, n, uintptr(advice)); e != 0 {
			t.Fatalf("madvise %d: %v", advice, e)
		}
	}
	madvise(lo, size, madvHugepage)
	for i := 0; i < size; i += smallBytes {
		r[i] = byte(i/smallBytes) | 1
	}
	if _, kib := vmFlags(t, lo); kib != size>>10 {
		t.Skipf("the kernel gave %d KiB of huge pages for %d (THP off or memory fragmented)", kib, size>>10)
	}
	// The first huge page loses every fourth base page (384 stay), the
	// second all but 100 (fewer than minResident).
	for p := uintptr(0); p < hugeBytes; p += 4 * smallBytes {
		madvise(lo+p, smallBytes, syscall.MADV_DONTNEED)
	}
	madvise(lo+hugeBytes, hugeBytes-100*smallBytes, syscall.MADV_DONTNEED)
	if _, kib := vmFlags(t, lo); kib != 0 {
		t.Fatalf("after returning pages %d KiB are still huge pages", kib)
	}
	n := collapseRange(lo, size, make([]byte, size/smallBytes))
	if noCollapse.Load() {
		noCollapse.Store(false)
		t.Skip("this kernel has no MADV_COLLAPSE")
	}
	if n != 1 {
		t.Fatalf("collapsed %d ranges, want 1", n)
	}
	if _, kib := vmFlags(t, lo); kib != hugeBytes>>10 {
		t.Fatalf("%d KiB of huge pages after collapsing, want %d", kib, hugeBytes>>10)
	}
	for i := 0; i < size; i += smallBytes {
		p := uintptr(i)
		want := byte(i/smallBytes) | 1
		if returned := (p < hugeBytes && p%(4*smallBytes) == 0) || (p >= hugeBytes && p < size-100*smallBytes); returned {
			want = 0
		}
		if r[i] != want {
			t.Fatalf("byte at page %d is %d after collapsing, want %d", i/smallBytes, r[i], want)
		}
	}
}

// TestRecollapseBeforeReserve checks that Recollapse leaves a heap alone
// until Reserve has marked it.
func TestRecollapseBeforeReserve(t *testing.T) {
	if active.Load() {
		t.Skip("Reserve ran earlier in this process")
	}
	if n := Recollapse(); n != 0 {
		t.Fatalf("Recollapse before Reserve rebuilt %d ranges", n)
	}
}
