package part

import (
	"bytes"
	"math/bits"
)

// A point lookup's search of a cached sort-key page was a binary search:
// eight comparisons over a 256-row page, each of a key at another place in
// memory, so two cache misses apiece, most of FindKey's time at bench/'s
// medium scale (docs/benchmarks.md, 2026-12-06, seventh session). A page
// put in the page cache therefore gets a small hash table of its keys
// (keyIdx), built once and read by every lookup of the page: a probe
// touches the table and the one key it names.

// maxIndexedRows is the most rows a cached page gets a key index for: the
// pages lookups read (CurrentPageRows, PageRows) are far smaller, while a
// large chunk kept for scans (chunkcache.go) is not searched by key often
// enough to pay for one. A chunk this small (a small delta's block) is
// indexed like a page; FindKey uses it only when it is the whole page.
const maxIndexedRows = 1 << 12

// indexKeys builds d's key index, when d holds sort keys and few enough
// rows: an open-addressing table, twice the rows rounded up to a power of
// two, of each distinct key's first row plus one (0 is an empty slot).
// Keys are sorted, so equal keys are adjacent and the first of a run is
// the one indexed. d must not be shared yet.
func (d *Data) indexKeys() {
	if d.Sort == nil || d.keyIdx != nil {
		return
	}
	n := d.Sort.Len()
	if n == 0 || n > maxIndexedRows {
		return
	}
	size := 1 << bits.Len(uint(2*n-1))
	idx := make([]uint16, size)
	mask := uint64(size - 1)
	var prev []byte
	for i := 0; i < n; i++ {
		k := d.Sort.BytesAt(i)
		if i > 0 && bytes.Equal(k, prev) {
			continue
		}
		prev = k
		for s := keyHash(k) & mask; ; s = (s + 1) & mask {
			if idx[s] == 0 {
				idx[s] = uint16(i + 1)
				break
			}
		}
	}
	d.keyIdx = idx
}

// findKey looks key up in d's key index: the first row holding it, or -1
// when d holds no such key. indexed is false when d has no index, and the
// caller searches the keys itself.
func (d *Data) findKey(key []byte) (row int, indexed bool) {
	idx := d.keyIdx
	if idx == nil {
		return 0, false
	}
	mask := uint64(len(idx) - 1)
	for s := keyHash(key) & mask; ; s = (s + 1) & mask {
		v := idx[s]
		if v == 0 {
			return -1, true
		}
		if bytes.Equal(d.Sort.BytesAt(int(v)-1), key) {
			return int(v) - 1, true
		}
	}
}
