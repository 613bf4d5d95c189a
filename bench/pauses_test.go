package main

import (
	"runtime"
	"testing"
	"time"
)

func TestSummarizePauses(t *testing.T) {
	us := time.Microsecond
	gaps := []time.Duration{20 * us, 18 * us, 22 * us, 19 * us, 100 * us}
	p := summarizePauses(gaps, 10*time.Millisecond)
	if p.PerSec != 500 {
		t.Errorf("PerSec = %v, want 500", p.PerSec)
	}
	if p.P50 != 20*us || p.Max != 100*us {
		t.Errorf("P50 %v, Max %v, want 20µs, 100µs", p.P50, p.Max)
	}
	if p.Lost < 0.0178 || p.Lost > 0.0180 {
		t.Errorf("Lost = %v, want 179 µs of 10 ms", p.Lost)
	}
	if z := summarizePauses(nil, time.Second); z.PerSec != 0 || z.Lost != 0 || z.Max != 0 {
		t.Errorf("no gaps summarized as %+v", z)
	}
}

// TestProbePauses makes a pause the probe must see: with one P, a
// goroutine that spins takes it from the probe at the scheduler's
// preemption (every 10 ms), so the probe's thread stops for milliseconds.
func TestProbePauses(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := 0; i < 1000; i++ {
				sink += i
			}
		}
	}()
	p := probePauses(100 * time.Millisecond)
	close(stop)
	<-done
	if p.Max < time.Millisecond || p.Lost < 0.05 || p.Lost >= 1 {
		t.Fatalf("a probe sharing its P with a spinning goroutine saw %+v", p)
	}
}

var sink int
