package exec

import (
	"math/rand/v2"
	"testing"
)

// TestStrHashShortKeysDistinct checks what smallStrs.find relies on: two
// different keys of the same length up to 8 bytes never share a hash.
// Every key of up to 2 bytes, every 3-byte key over 32 byte values, and
// random keys of 4 to 8 bytes with their one-byte variants.
func TestStrHashShortKeysDistinct(t *testing.T) {
	seed := rand.Uint64() | 1
	seen := map[[2]uint64]string{}
	check := func(b []byte) {
		k := [2]uint64{strHash(seed, b), uint64(len(b))}
		if o, ok := seen[k]; ok && o != string(b) {
			t.Fatalf("%q and %q share hash %x", o, b, k[0])
		}
		seen[k] = string(b)
	}
	check(nil)
	for a := range 256 {
		check([]byte{byte(a)})
		for b := range 256 {
			check([]byte{byte(a), byte(b)})
		}
	}
	for a := range 32 {
		for b := range 32 {
			for c := range 32 {
				check([]byte{byte(a * 8), byte(b * 8), byte(c * 8)})
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, 4+rng.IntN(5))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		check(b)
		for i := range b {
			v := append([]byte(nil), b...)
			v[i] ^= byte(1 + rng.IntN(255))
			check(v)
		}
	}
}
