package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// listSource is a source over sorted keys, for TestSourceHeap.
type listSource struct {
	keys [][]byte
	i    int
}

func (l *listSource) key() ([]byte, error) {
	if l.i >= len(l.keys) {
		return nil, nil
	}
	return l.keys[l.i], nil
}

func (l *listSource) take(key []byte, ins []keyInput) ([]keyInput, error) {
	if l.i < len(l.keys) && bytes.Equal(l.keys[l.i], key) {
		l.i++
	}
	return ins, nil
}

// TestSourceHeap merges 1 to 12 sources of random sorted keys through a
// sourceHeap, as scanCurrent does (the smallest key, the sources holding
// it taken in commit order, moved on and pushed back), both as a list
// (few sources) and as a heap, and checks every step against a merge
// that asks every source.
func TestSourceHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 12; n++ {
		for round := range 20 {
			var srcs, ref []*listSource
			for range n {
				var ks [][]byte
				for k := range 60 {
					if rng.IntN(3) == 0 {
						ks = append(ks, fmt.Appendf(nil, "k%03d", k))
					}
				}
				srcs = append(srcs, &listSource{keys: ks})
				ref = append(ref, &listSource{keys: ks})
			}
			in := make([]source, n)
			for i, s := range srcs {
				in[i] = s
			}
			sh, err := newSourceHeap(in)
			if err != nil {
				t.Fatal(err)
			}
			holding := 0
			for _, s := range srcs {
				if len(s.keys) > 0 {
					holding++
				}
			}
			if sh.linear != (holding <= linearSources) {
				t.Fatalf("%d sources holding keys: linear %v", holding, sh.linear)
			}
			var taken []sourceHead
			for step := 0; ; step++ {
				// The reference: the smallest next key, and which sources
				// hold it, in order.
				var want []byte
				for _, r := range ref {
					if k, _ := r.key(); k != nil && (want == nil || bytes.Compare(k, want) < 0) {
						want = k
					}
				}
				got := sh.min()
				if !bytes.Equal(got, want) {
					t.Fatalf("%d sources, round %d, step %d: next key %q, want %q", n, round, step, got, want)
				}
				if want == nil {
					break
				}
				var wantAt []int
				for i, r := range ref {
					if k, _ := r.key(); bytes.Equal(k, want) {
						wantAt = append(wantAt, i)
						r.i++
					}
				}
				taken = sh.popAt(got, taken[:0])
				var gotAt []int
				for _, th := range taken {
					gotAt = append(gotAt, th.at)
					if _, err := th.src.take(got, nil); err != nil {
						t.Fatal(err)
					}
				}
				if !slices.Equal(gotAt, wantAt) {
					t.Fatalf("%d sources, round %d, key %q: took sources %v, want %v", n, round, got, gotAt, wantAt)
				}
				if err := sh.pushAll(taken); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
