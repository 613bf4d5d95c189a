package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// R1 over pgwire, paired. Strata's server and PostgreSQL answer a point
// lookup in 75–150 µs here (p50), most of it the loopback round trip and the
// two processes' wake-ups, and this machine's speed for that work drifts
// by more than the difference between them within minutes: run one after
// the other, minutes apart, their R1 p50 traded places from one run to
// the next. So once both have run (and settled), they are kept open and
// R1 runs again on both, in alternating blocks of the same keys, each
// block's order swapped every time: both then see the same minutes of the
// machine, and the ratio of their p99s is what their servers make of it.

// Paired measures: R1 settled, over pgwire, interleaved with the other
// wire system's.
const (
	mR1wp50 = "R1 paired p50"
	mR1wp99 = "R1 paired p99"
)

// pairedBlock is the lookups one system answers before the other takes
// its turn: long enough that each turn's first lookup (the other process
// just ran) is a small share, short enough that a drift of the machine
// lands on both.
const pairedBlock = 250

// pairedSystems are the systems R1 paired compares, in this order.
var pairedSystems = []string{"strata-pg", "postgres"}

// pairs reports whether the run measures R1 paired: every system of
// pairedSystems is asked for.
func (c *config) pairs() bool {
	for _, s := range pairedSystems {
		if !contains(c.systems, s) {
			return false
		}
	}
	return true
}

// pairedLookups looks up every key of keys on each of syss (open and
// settled), block by block in turn, checks every answer against the model
// and records each system's p50 and p99 as mR1wp50 and mR1wp99.
func pairedLookups(ctx context.Context, rep *Report, syss []System, model *Model, seed uint64, keys []int32) error {
	ds := make([][]time.Duration, len(syss))
	// The scheduler's counts of each system's server and of the client
	// (this process), summed over that system's blocks.
	pids := make([]int, len(syss))
	srv, cli := make([]schedUsage, len(syss)), make([]schedUsage, len(syss))
	for i, sys := range syss {
		if s, ok := sys.(serving); ok {
			pid, err := s.serverPID(ctx)
			if err != nil {
				return fmt.Errorf("%s: R1 paired: server pid: %w", sys.Name(), err)
			}
			pids[i] = pid
		}
	}
	order := make([]int, len(syss))
	b := bar(len(keys)*len(syss), "R1 paired")
	done := 0
	for from, turn := 0, 0; from < len(keys); from, turn = from+pairedBlock, turn+1 {
		block := keys[from:min(from+pairedBlock, len(keys))]
		for i := range order {
			order[i] = i
		}
		if turn%2 == 1 {
			slices.Reverse(order)
		}
		for _, si := range order {
			sys := syss[si]
			c0, _ := readSched(0)
			var s0 schedUsage
			if pids[si] > 0 {
				s0, _ = readSched(pids[si])
			}
			for _, k := range block {
				chain, addr, tok := KeyOf(seed, k)
				t := time.Now()
				v, err := sys.Point(ctx, chain, addr, tok, 0)
				ds[si] = append(ds[si], time.Since(t))
				if err != nil {
					return fmt.Errorf("%s: R1 paired: %w", sys.Name(), err)
				}
				if want := model.Amount(k, false); v != want {
					return fmt.Errorf("%s: R1 paired of (%d, %s, %s) = %q, the model says %q", sys.Name(), chain, addr, tok, v, want)
				}
			}
			// Read around the block, between the two systems' turns (a
			// few file reads, before either system's block alike).
			if c1, err := readSched(0); err == nil {
				cli[si].add(c1, c0)
			}
			if pids[si] > 0 {
				if s1, err := readSched(pids[si]); err == nil {
					srv[si].add(s1, s0)
				}
			}
			done += len(block)
			b.Set(done) //nolint:errcheck // progress only
		}
	}
	b.Finish() //nolint:errcheck
	for si, sys := range syss {
		slices.Sort(ds[si])
		p50, p99 := us(quantile(ds[si], 0.50)), us(quantile(ds[si], 0.99))
		rep.add(sys.Name(), mR1wp50, p50, unitUs)
		rep.add(sys.Name(), mR1wp99, p99, unitUs)
		fmt.Printf("%s: R1 paired p50 %.0f µs, p99 %.0f µs\n", sys.Name(), p50, p99)
		n := len(ds[si])
		fmt.Printf("%s: R1 paired client: %s\n", sys.Name(), cli[si].perLookup(schedUsage{}, n))
		if pids[si] > 0 {
			fmt.Printf("%s: R1 paired server: %s\n", sys.Name(), srv[si].perLookup(schedUsage{}, n))
		}
	}
	return nil
}
