package main

import (
	"context"
	"strings"
	"testing"
)

// fakeWire answers point lookups from the model, and logs which system
// answered each lookup, in order, to calls.
type fakeWire struct {
	System
	name  string
	keys  map[string]int32
	model *Model
	calls *[]string
	wrong bool // answer every lookup wrongly
}

func (f *fakeWire) Name() string { return f.name }

func (f *fakeWire) Point(_ context.Context, chain int, address, token string, commit uint64) (string, error) {
	*f.calls = append(*f.calls, f.name)
	if f.wrong {
		return "-1", nil
	}
	chainKey := string(rune('0'+chain)) + "/" + address + "/" + token
	return f.model.Amount(f.keys[chainKey], commit > 0), nil
}

func pairedFixture(t *testing.T, nkeys int) (*Model, []int32, map[string]int32) {
	t.Helper()
	model := NewModel(tiny.Keys)
	for _, b := range allRows(t, tiny, 3) {
		model.Apply(b)
	}
	keys := make([]int32, nkeys)
	byKey := map[string]int32{}
	for i := range keys {
		keys[i] = int32(i * 7 % tiny.Keys)
		chain, addr, tok := KeyOf(3, keys[i])
		byKey[string(rune('0'+chain))+"/"+addr+"/"+tok] = keys[i]
	}
	return model, keys, byKey
}

// TestPairedLookups: both systems answer every key, in blocks of
// pairedBlock taken in turn, the order swapped every block, and each
// gets its own p50 and p99.
func TestPairedLookups(t *testing.T) {
	model, keys, byKey := pairedFixture(t, 3*pairedBlock+10)
	var calls []string
	a := &fakeWire{name: "strata-pg", keys: byKey, model: model, calls: &calls}
	b := &fakeWire{name: "postgres", keys: byKey, model: model, calls: &calls}
	rep := &Report{Results: map[string]map[string]Result{}}
	if err := pairedLookups(context.Background(), rep, []System{a, b}, model, 3, keys); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2*len(keys) {
		t.Fatalf("%d lookups, want %d", len(calls), 2*len(keys))
	}
	// Block j's keys go to both systems, strata-pg first in even blocks
	// and postgres first in odd ones.
	at := 0
	for j, from := 0, 0; from < len(keys); j, from = j+1, from+pairedBlock {
		n := min(pairedBlock, len(keys)-from)
		first, second := "strata-pg", "postgres"
		if j%2 == 1 {
			first, second = second, first
		}
		for _, who := range []string{first, second} {
			for i := range n {
				if calls[at+i] != who {
					t.Fatalf("lookup %d (block %d) went to %s, want %s", at+i, j, calls[at+i], who)
				}
			}
			at += n
		}
	}
	for _, s := range []string{"strata-pg", "postgres"} {
		for _, m := range []string{mR1wp50, mR1wp99} {
			if r, ok := rep.Results[s][m]; !ok || r.Unit != unitUs || r.Value <= 0 {
				t.Errorf("%s %s: %+v (recorded %v)", s, m, r, ok)
			}
		}
	}
}

// TestPairedLookupsChecksAnswers: an answer that differs from the model
// fails the run.
func TestPairedLookupsChecksAnswers(t *testing.T) {
	model, keys, byKey := pairedFixture(t, 20)
	var calls []string
	a := &fakeWire{name: "strata-pg", keys: byKey, model: model, calls: &calls}
	b := &fakeWire{name: "postgres", keys: byKey, model: model, calls: &calls, wrong: true}
	rep := &Report{Results: map[string]map[string]Result{}}
	err := pairedLookups(context.Background(), rep, []System{a, b}, model, 3, keys)
	if err == nil || !strings.Contains(err.Error(), "postgres: R1 paired") {
		t.Fatalf("err = %v, want postgres's wrong answer", err)
	}
}
