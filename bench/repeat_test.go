package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRepeatPair: R2's and R3's timed runs alternate, each reaches -reps
// and then -min-time of its own, and an error names its measure.
func TestRepeatPair(t *testing.T) {
	var order []string
	cfg := &config{reps: 3}
	ds, _, err := cfg.repeatPair(
		func() error { order = append(order, "a"); return nil },
		func() error { order = append(order, "b"); return nil })
	if err != nil || len(ds[0]) != 3 || len(ds[1]) != 3 || strings.Join(order, "") != "ababab" {
		t.Fatalf("reps 3: runs %d/%d, order %v, err %v", len(ds[0]), len(ds[1]), order, err)
	}

	// b is slow: it reaches min-time in fewer runs, then a runs alone.
	order = nil
	cfg = &config{reps: 2, minTime: 20 * time.Millisecond}
	ds, _, err = cfg.repeatPair(
		func() error { order = append(order, "a"); time.Sleep(time.Millisecond); return nil },
		func() error { order = append(order, "b"); time.Sleep(5 * time.Millisecond); return nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		if sum < cfg.minTime || len(d) < cfg.reps {
			t.Fatalf("measure %d: %d runs, %v together", i, len(d), sum)
		}
	}
	if len(ds[0]) <= len(ds[1]) || !strings.HasPrefix(strings.Join(order, ""), "abab") {
		t.Fatalf("runs %d/%d, order %v", len(ds[0]), len(ds[1]), order)
	}

	boom := errors.New("boom")
	cfg = &config{reps: 2}
	_, _, err = cfg.repeatPair(func() error { return nil }, func() error { return boom })
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), mR3) {
		t.Fatalf("err %v", err)
	}
}

// TestRepeatMaxReps: a read far shorter than -min-time stops at maxReps.
func TestRepeatMaxReps(t *testing.T) {
	cfg := &config{reps: 1, minTime: time.Hour}
	ds, err := cfg.repeat(func() error { return nil })
	if err != nil || len(ds) != maxReps {
		t.Fatalf("runs %d, err %v", len(ds), err)
	}
}
