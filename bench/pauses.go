package main

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// pauseMin is the shortest gap between two clock reads of a busy thread
// counted as a pause: reading the clock takes tens of nanoseconds, so a
// gap of microseconds is time the thread did not run.
const pauseMin = 3 * time.Microsecond

// pauseProbe is how long the probe before each lookup phase spins.
const pauseProbe = 500 * time.Millisecond

// pauses is what a busy thread lost, over a probe, to interruptions it
// does not cause: the kernel's, other threads', and on a virtual machine
// the host's (a vCPU descheduled for a host tick is invisible to the
// guest, whose clocks, the thread's CPU clock included, keep running).
// A lookup whose time overlaps a pause is that much slower, so with
// pauses of p µs at n per second a lookup of d µs is slowed by about p
// with a chance of n·d: the floor under R1's p99 (docs/benchmarks.md).
type pauses struct {
	PerSec        float64
	P50, P99, Max time.Duration
	// Lost is the share of the probe's time the pauses took.
	Lost float64
}

// probePauses spins on one locked thread for d, reading the clock, and
// summarizes the gaps of at least pauseMin between reads.
func probePauses(d time.Duration) pauses {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	gaps := make([]time.Duration, 0, 4096)
	start := time.Now()
	last := start
	for {
		now := time.Now()
		if g := now.Sub(last); g >= pauseMin {
			gaps = append(gaps, g)
		}
		last = now
		if now.Sub(start) >= d {
			break
		}
	}
	return summarizePauses(gaps, last.Sub(start))
}

// summarizePauses summarizes gaps seen over a probe of length over.
func summarizePauses(gaps []time.Duration, over time.Duration) pauses {
	if over <= 0 {
		return pauses{}
	}
	var lost time.Duration
	for _, g := range gaps {
		lost += g
	}
	p := pauses{PerSec: float64(len(gaps)) / over.Seconds(), Lost: float64(lost) / float64(over)}
	if len(gaps) > 0 {
		s := slices.Clone(gaps)
		slices.Sort(s)
		p.P50, p.P99, p.Max = quantile(s, 0.50), quantile(s, 0.99), s[len(s)-1]
	}
	return p
}

func (p pauses) String() string {
	return fmt.Sprintf("a busy thread lost %.1f %% of its time in %.0f pauses/s (p50 %.0f µs, p99 %.0f µs, max %.0f µs)",
		100*p.Lost, p.PerSec, us(p.P50), us(p.P99), us(p.Max))
}
