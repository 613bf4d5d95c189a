//go:build linux && (amd64 || arm64)

package hugepage

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags line of the mapping holding p in
// /proc/self/smaps, and its AnonHugePages in KiB.
func vmFlags(t *testing.T, p uintptr) (flags string, hugeKiB int) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(l) <= p && p < uintptr(h)
			continue
		}
		if !in {
			continue
		}
		if len(f) >= 2 && f[0] == "AnonHugePages:" {
			hugeKiB, _ = strconv.Atoi(f[1])
		}
		if len(f) > 0 && f[0] == "VmFlags:" {
			return line, hugeKiB
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return "", 0
}

func needTHP(t *testing.T) string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Skipf("kernel without transparent huge pages: %v", err)
	}
	return strings.TrimSpace(string(b))
}

func TestNoteBeforeReserveDoesNothing(t *testing.T) {
	if active.Load() {
		t.Skip("Reserve already ran in this process")
	}
	b := make([]byte, 1<<20)
	Note(unsafe.Pointer(&b[0]))
	if n := marked(); n != 0 {
		t.Fatalf("Note before Reserve marked %d arenas", n)
	}
	runtime.KeepAlive(b)
}

// TestReserve checks that Reserve marks the arenas it grew the heap by,
// frees what it allocated, and that memory Note sees afterwards is marked
// too: the kernel lists the mark as "hg" in the mapping's VmFlags.
func TestReserve(t *testing.T) {
	mode := needTHP(t)
	if thpDisabled(os.Getenv("GODEBUG")) {
		t.Skip("GODEBUG=disablethp=1: Reserve leaves the heap alone")
	}
	const n = 96 << 20
	Reserve(n)
	if !active.Load() || marked() < 2 {
		t.Fatalf("Reserve(%d) marked %d arenas, active %v", n, marked(), active.Load())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc >= n {
		t.Fatalf("after Reserve the heap holds %d bytes: the reservation was not freed", ms.HeapAlloc)
	}
	before := marked()
	Reserve(n / 2) // already held: nothing more
	if marked() != before {
		t.Fatalf("a smaller Reserve marked more arenas: %d → %d", before, marked())
	}

	b := make([]byte, 16<<20)
	p := uintptr(unsafe.Pointer(&b[0]))
	Note(unsafe.Pointer(&b[0]))
	Refresh()
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	flags, huge := vmFlags(t, p)
	if !strings.Contains(flags, " hg") {
		t.Fatalf("the mapping of a noted allocation is not marked: %q", flags)
	}
	t.Logf("THP mode %q; the mapping holds %d KiB of huge pages", mode, huge)
	runtime.KeepAlive(b)
}

func TestClamp(t *testing.T) {
	const g = 1 << 30
	for _, c := range []struct {
		n       int64
		ram, as uint64
		want    int64
	}{
		{4 * g, 24 * g, ^uint64(0), 4 * g},
		{4 * g, 8 * g, ^uint64(0), 2 * g},
		{4 * g, 0, ^uint64(0), 4 * g},
		{4 * g, 24 * g, 2 * g, g / 2},
		{g, 24 * g, 1 << 20, 1 << 18},
	} {
		if got := clamp(c.n, c.ram, c.as); got != c.want {
			t.Errorf("clamp(%d, %d, %d) = %d, want %d", c.n, c.ram, c.as, got, c.want)
		}
	}
}

func TestTHPDisabled(t *testing.T) {
	for in, want := range map[string]bool{
		"":                          false,
		"disablethp=1":              true,
		"disablethp=0":              false,
		"gctrace=1,disablethp=1":    true,
		"disablethp=1,disablethp=0": false,
		"xdisablethp=1":             false,
	} {
		if got := thpDisabled(in); got != want {
			t.Errorf("thpDisabled(%q) = %v, want %v", in, got, want)
		}
	}
}
