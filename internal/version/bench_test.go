package version

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// benchStream builds versions for keys (key = i % keys), depth per key, with
// a VALID BY value that grows per key except for the late fraction, which
// lands below the key's current maximum. Commits grow by one per version.
func benchStream(keys, depth int, late float64) []Version {
	rng := rand.New(rand.NewPCG(1, 2))
	top := make([]uint64, keys)
	vs := make([]Version, keys*depth)
	vals := []byte("payload-of-a-version")
	for i := range vs {
		k := i % keys
		var idx uint64
		if top[k] > 0 && rng.Float64() < late {
			idx = 1 + rng.Uint64N(top[k])
		} else {
			top[k] += 1 + rng.Uint64N(4)
			idx = top[k] + 1
		}
		vs[i] = Version{
			Key:    []byte{byte(k), byte(k >> 8)},
			Order:  ints(idx),
			Commit: uint64(i + 1),
			Values: vals,
		}
	}
	return vs
}

// benchRegister feeds the stream round robin to one Register per key. When
// the stream runs out, every Register is re-initialised (as after a
// memtable flush) and the stream starts again, so each key holds at most
// depth counted versions.
func benchRegister(b *testing.B, keys, depth int, late float64) {
	g := ord([]string{"idx"}, nil)
	vs := benchStream(keys, depth, late)
	regs := make([]Register, keys)
	for i := range regs {
		regs[i].Init(g)
	}
	lost := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(vs)
		if j == 0 && i > 0 {
			for k := range regs {
				regs[k].Init(g)
			}
		}
		s, err := regs[j%keys].Add(&vs[j])
		if err != nil {
			b.Fatal(err)
		}
		if s.Outcome != Won {
			lost++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "versions/s")
	b.ReportMetric(float64(lost)/float64(b.N), "late-fraction")
}

func BenchmarkRegister(b *testing.B) {
	b.Run("in-order", func(b *testing.B) { benchRegister(b, 1024, 64, 0) })
	b.Run("late-30pct", func(b *testing.B) { benchRegister(b, 1024, 64, 0.3) })
	b.Run("late-30pct-deep", func(b *testing.B) { benchRegister(b, 16, 4096, 0.3) })
}

func BenchmarkResolve(b *testing.B) {
	b.Run("commit-order", func(b *testing.B) { benchResolve(b, false) })
	// As storage reads it: merge-sorted by key, group and position.
	b.Run("key-order", func(b *testing.B) { benchResolve(b, true) })
}

func benchResolve(b *testing.B, byKey bool) {
	g := []Ordering{ord([]string{"idx"}, nil)}
	vs := benchStream(1024, 64, 0.3)
	if byKey {
		slices.SortStableFunc(vs, func(a, b Version) int { return bytes.Compare(a.Key, b.Key) })
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Resolve(g, vs, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(vs))/b.Elapsed().Seconds(), "versions/s")
}
