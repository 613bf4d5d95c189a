package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSkiplistSeekAfter inserts sorted runs of random keys the way
// keyedMem.entries does (a seek, then seekAfter from the nodes it left)
// into a list that already holds keys, and checks that every search lands
// where a search from the head does and that the list stays sorted and
// indexed.
func TestSkiplistSeekAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newSkiplist()
	var all [][]byte
	for round := range 50 {
		var run [][]byte
		for range 1 + rng.IntN(200) {
			k := []byte(fmt.Sprintf("k%06d", rng.IntN(20000)))
			if s.get(k) == nil && !slices.ContainsFunc(run, func(b []byte) bool { return bytes.Equal(b, k) }) {
				run = append(run, k)
			}
		}
		slices.SortFunc(run, bytes.Compare)
		var prev [maxHeight]*keyEntry
		for i, k := range run {
			var want [maxHeight]*keyEntry
			wantNext := s.seek(k, &want)
			var got *keyEntry
			if i == 0 {
				got = s.seek(k, &prev)
			} else {
				got = s.seekAfter(k, &prev)
			}
			if got != wantNext {
				t.Fatalf("round %d: seekAfter(%s) = %v, want %v", round, k, got, wantNext)
			}
			for lvl := 0; lvl < s.height; lvl++ {
				if prev[lvl] != want[lvl] {
					t.Fatalf("round %d: seekAfter(%s) left level %d at %q, want %q", round, k, lvl, prev[lvl].key, want[lvl].key)
				}
			}
			s.insert(&keyEntry{key: k}, &prev)
			all = append(all, k)
		}
	}
	slices.SortFunc(all, bytes.Compare)
	i := 0
	for e := s.first(); e != nil; e = e.next[0] {
		if i >= len(all) || !bytes.Equal(e.key, all[i]) {
			t.Fatalf("entry %d is %q, want %q", i, e.key, all[i])
		}
		if s.get(e.key) != e {
			t.Fatalf("get(%q) does not find its entry", e.key)
		}
		i++
	}
	if i != len(all) || s.n != len(all) {
		t.Fatalf("%d entries, n = %d, want %d", i, s.n, len(all))
	}
}
