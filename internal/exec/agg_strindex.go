package exec

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
)

// smallStrs maps the values of one STRING or BYTES group column to group
// ids while there are few of them (a GROUP BY token over millions of rows
// has tens): an open-addressing table of the key bytes, probed with a
// cheap seeded hash of 8-byte words. Go's map with a string(b) index did
// not allocate but cost ~22 ns a row, most of a grouped aggregate over a
// cached scan; this costs a few. Past maxSmallGroups values the caller
// moves to the map (aggSink.groupIDs), which needs no bound on probes.
type smallStrs struct {
	slots []strSlot // len a power of two
	keys  []byte    // the groups' key bytes, one after another
	offs  []int32   // entry e's bytes are keys[offs[e]:offs[e+1]]
	gids  []int     // the aggSink group id of each entry
	seed  uint64
}

// strSlot is one slot of smallStrs: the entry's hash, length and index +
// 1 (0: empty). A key of at most 8 bytes is told by its hash and length
// alone (strHash is injective on those), so finding it compares no bytes.
type strSlot struct {
	h uint64
	n int32
	e int32
}

// maxSmallGroups is the most values smallStrs takes.
const maxSmallGroups = 1024

func newSmallStrs() *smallStrs {
	return &smallStrs{slots: make([]strSlot, 64), offs: []int32{0}, seed: rand.Uint64() | 1}
}

// strHash hashes b under seed: a key of at most 8 bytes as one word
// (wordHash), a longer one as 8-byte words multiplied in, then mixed.
// Every step is invertible, so two keys of at most 8 bytes and one length
// have the same hash only if they are equal.
func strHash(seed uint64, b []byte) uint64 {
	if len(b) <= 8 {
		var w [8]byte
		copy(w[:], b)
		return wordHash(seed, binary.LittleEndian.Uint64(w[:]), len(b))
	}
	h := seed ^ uint64(len(b))*0x9e3779b97f4a7c15
	for len(b) > 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
		b = b[8:]
	}
	// The last 1–8 bytes as one word, by at most two loads: for a given
	// length each of these is injective (the two 4-byte loads overlap,
	// and b[0], b[n/2], b[n-1] are every byte of up to 3).
	var t uint64
	switch n := len(b); {
	case n == 8:
		t = binary.LittleEndian.Uint64(b)
	case n >= 4:
		t = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	default:
		t = uint64(b[0]) | uint64(b[n>>1])<<8 | uint64(b[n-1])<<16
	}
	h = (h ^ t) * 0x94d049bb133111eb
	return h ^ h>>29
}

// wordHash is strHash of a key of n ≤ 8 bytes whose bytes, zero-padded,
// are the little-endian word t: no branch on the length, so a column of
// short keys of mixed lengths hashes at a steady pace.
func wordHash(seed, t uint64, n int) uint64 {
	h := (seed ^ uint64(n)*0x9e3779b97f4a7c15 ^ t) * 0x94d049bb133111eb
	return h ^ h>>29
}

// shortWord returns the key data[lo:hi] as wordHash's word when it is at
// most 8 bytes long and 8 bytes can be loaded from lo (one load, masked
// to the key's length), and false otherwise.
func shortWord(data []byte, lo, hi int) (uint64, bool) {
	n := hi - lo
	if n > 8 || lo+8 > len(data) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[lo:lo+8]) & (^uint64(0) >> (64 - 8*uint(n))), true
}

// find returns the group id of b, or false with the slot a new entry
// goes in and b's hash.
func (x *smallStrs) find(b []byte) (int, int, uint64, bool) {
	if len(b) <= 8 {
		return x.probeShort(strHash(x.seed, b), int32(len(b)))
	}
	mask := len(x.slots) - 1
	h := strHash(x.seed, b)
	n := int32(len(b))
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &x.slots[i]
		if sl.e == 0 {
			return 0, i, h, false
		}
		if sl.h != h || sl.n != n {
			continue
		}
		e := sl.e - 1
		if bytes.Equal(x.keys[x.offs[e]:x.offs[e+1]], b) {
			return x.gids[e], i, h, true
		}
	}
}

// findWord is find of the key of n ≤ 8 bytes whose word (shortWord) is t.
func (x *smallStrs) findWord(t uint64, n int) (int, int, uint64, bool) {
	return x.probeShort(wordHash(x.seed, t, n), int32(n))
}

// probeShort finds the key of n ≤ 8 bytes with hash h: its hash and length
// tell it apart, so no bytes are compared.
func (x *smallStrs) probeShort(h uint64, n int32) (int, int, uint64, bool) {
	mask := len(x.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &x.slots[i]
		if sl.e == 0 {
			return 0, i, h, false
		}
		if sl.h == h && sl.n == n {
			return x.gids[sl.e-1], i, h, true
		}
	}
}

// add enters b, whose hash is h, with group id g at slot i (from find),
// and reports false when the index is full (maxSmallGroups): then b is not
// entered.
func (x *smallStrs) add(b []byte, h uint64, g, i int) bool {
	if len(x.gids) >= maxSmallGroups {
		return false
	}
	x.keys = append(x.keys, b...)
	x.offs = append(x.offs, int32(len(x.keys)))
	x.gids = append(x.gids, g)
	x.slots[i] = strSlot{h: h, n: int32(len(b)), e: int32(len(x.gids))}
	if load := len(x.gids) * smallLoad(len(x.slots)); load > len(x.slots) {
		x.grow()
	}
	return true
}

// smallLoad is the inverse of the most entries per slot a table of n
// slots holds before it grows: up to 512 slots (8 KiB) one in eight, so
// that a key almost always sits in its home slot and the probe's branch is
// predictable (the load of one in two cost GROUP BY token ~1.5 ns a row);
// beyond, one in two, to keep the table small.
func smallLoad(n int) int {
	if n < 512 {
		return 8
	}
	return 2
}

// grow doubles the table and enters every entry again.
func (x *smallStrs) grow() {
	old := x.slots
	x.slots = make([]strSlot, 2*len(old))
	mask := len(x.slots) - 1
	for _, sl := range old {
		if sl.e == 0 {
			continue
		}
		i := int(sl.h) & mask
		for x.slots[i].e != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = sl
	}
}

// each calls fn with every entry's key and group id.
func (x *smallStrs) each(fn func(k []byte, g int)) {
	for e, g := range x.gids {
		fn(x.keys[x.offs[e]:x.offs[e+1]], g)
	}
}
