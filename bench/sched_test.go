package main

import (
	"syscall"
	"testing"
	"time"
)

// TestStatusField reads a field only at a line's start: "voluntary" must
// not match inside "nonvoluntary".
func TestStatusField(t *testing.T) {
	st := []byte("Name:\tstrata\nnonvoluntary_ctxt_switches:\t3\nvoluntary_ctxt_switches:\t12\n")
	if v := statusField(st, "voluntary_ctxt_switches:"); v != 12 {
		t.Errorf("voluntary = %d, want 12", v)
	}
	if v := statusField(st, "nonvoluntary_ctxt_switches:"); v != 3 {
		t.Errorf("nonvoluntary = %d, want 3", v)
	}
	if v := statusField(st, "Threads:"); v != 0 {
		t.Errorf("absent field = %d, want 0", v)
	}
}

// TestReadSched reads this process's counts around spinning and around
// 32 MiB of fresh anonymous memory, touched page by page: time on a core
// must reach 20 ms within seconds of spinning (a loaded machine may give
// less per wall second), and the touches must count as minor faults.
func TestReadSched(t *testing.T) {
	a, err := readSched(0)
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	b := a
	for deadline := time.Now().Add(5 * time.Second); b.run-a.run < 20*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("time on a core grew by %v over 5 s of spinning", b.run-a.run)
		}
		for end := time.Now().Add(5 * time.Millisecond); time.Now().Before(end); {
		}
		if b, err = readSched(0); err != nil {
			t.Fatal(err)
		}
	}
	if b.threads < 1 {
		t.Fatalf("%d threads read", b.threads)
	}
	// Memory from mmap, not the Go heap: the heap may reuse pages an
	// earlier test faulted in.
	mem, err := syscall.Mmap(-1, 0, 32<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem) //nolint:errcheck // test memory
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	c, err := readSched(0)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.faults - b.faults; d < 8 {
		t.Errorf("minor faults grew by %d over 32 MiB of fresh memory", d)
	}
	var sum schedUsage
	sum.add(c, a)
	if got, want := sum.perLookup(schedUsage{}, 2), c.perLookup(a, 2); got != want {
		t.Errorf("add then perLookup %q, perLookup %q", got, want)
	}
}
