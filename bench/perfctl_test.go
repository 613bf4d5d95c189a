package main

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestPrintSlowTimes checks that -perfctl's listing names the slowest 1 %
// of the lookups, slowest first, with their CLOCK_MONOTONIC windows.
func TestPrintSlowTimes(t *testing.T) {
	n := 300
	starts := make([]time.Duration, n)
	ds := make([]time.Duration, n)
	cs := make([]time.Duration, n)
	for i := range ds {
		starts[i] = time.Duration(i) * 100 * time.Microsecond
		ds[i] = 10 * time.Microsecond
		cs[i] = 9 * time.Microsecond
	}
	ds[7], ds[250], ds[123] = 300*time.Microsecond, 500*time.Microsecond, 400*time.Microsecond
	var b strings.Builder
	printSlowTimes(&b, "strata", "R1", 42, 5*time.Second, starts, ds, cs)
	want := "perf: strata R1 lookup 250 tid 42 from 5.025000 to 5.025500 wall 500 µs cpu 9 µs\n" +
		"perf: strata R1 lookup 123 tid 42 from 5.012300 to 5.012700 wall 400 µs cpu 9 µs\n" +
		"perf: strata R1 lookup 7 tid 42 from 5.000700 to 5.001000 wall 300 µs cpu 9 µs\n"
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}
}

// TestRuntimeActivity checks that the runtime's counters are read (a
// forced collection counts) and formatted as differences.
func TestRuntimeActivity(t *testing.T) {
	a := readRuntimeActivity()
	runtime.GC()
	b := readRuntimeActivity()
	if b.cycles <= a.cycles {
		t.Fatalf("GC cycles %d then %d after runtime.GC", a.cycles, b.cycles)
	}
	got := runtimeActivity{cycles: 7, released: 3 << 20, faults: 40}.since(runtimeActivity{cycles: 5, released: 5 << 20, faults: 10})
	want := "2 GC cycles, heap returned to the kernel -2.0 MiB, 30 page faults in the process"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
