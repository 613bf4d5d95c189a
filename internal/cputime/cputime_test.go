package cputime

import "testing"

// TestProcessAdvances: CPU spent between two readings shows up in them.
func TestProcessAdvances(t *testing.T) {
	t0 := Process()
	if t0 <= 0 {
		t.Skip("no process CPU time on this system")
	}
	x := 0
	for i := 0; Process()-t0 < 5e6 && i < 1e10; i++ {
		x += i
	}
	if d := Process() - t0; d < 5e6 {
		t.Fatalf("process CPU advanced %v after a busy loop (%d)", d, x)
	}
}
