package storage

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"unsafe"
)

// maxHeight bounds the towers of the skip list: with a branching factor of
// 4 it serves 4^12 = 16M keys per memtable at full speed, far past the
// sizes MemtableBytes allows.
const maxHeight = 12

// skiplist is the sorted index of a keyed memtable: sort key → *keyEntry.
// It is not safe for concurrent use; the memtable's lock guards it (writers
// take it exclusively, readers shared, one batch at a time). Entries are
// never removed: a memtable only grows until it is flushed and dropped.
//
// Beside the list, byKey maps every key to its entry: most writes hit a key
// the memtable already has, and a hash probe finds it without the seek's
// dozens of key comparisons over cold memory. Only a new key pays the seek.
type skiplist struct {
	head   keyEntry
	height int
	rnd    uint64
	n      int
	byKey  map[string]*keyEntry // keys alias the entries' arena bytes
	nexts  []*keyEntry          // slab the towers of inserted entries are cut from
	// unlinked holds the entries add put in byKey and not yet in the
	// list's order; link links them.
	unlinked []*keyEntry
}

// newSkiplist returns an empty list whose key index has room for keys
// entries: a memtable that replaces a flushed one is sized by it, since
// growing the index from empty rehashes it a score of times on the
// committing goroutine (4 % of all ingest CPU at 1 M keys).
func newSkiplist(keys int) *skiplist {
	s := &skiplist{height: 1, rnd: 0x9e3779b97f4a7c15, byKey: make(map[string]*keyEntry, keys)}
	s.head.next = make([]*keyEntry, maxHeight)
	return s
}

// get returns the entry of key, nil if the list has none.
func (s *skiplist) get(key []byte) *keyEntry {
	return s.byKey[string(key)] // the conversion in a map index does not allocate
}

// indexed records e, just linked, in byKey. The map's key shares e.key's
// bytes instead of copying them: they are in the memtable's arena and never
// modified (invariant 5 of doc.go), so the string stays valid and equal.
func (s *skiplist) indexed(e *keyEntry) {
	s.byKey[unsafe.String(unsafe.SliceData(e.key), len(e.key))] = e
	s.n++
}

func (s *skiplist) randomHeight() int {
	// xorshift64: deterministic, allocation-free, good enough for towers.
	s.rnd ^= s.rnd << 13
	s.rnd ^= s.rnd >> 7
	s.rnd ^= s.rnd << 17
	h := 1
	for x := s.rnd; h < maxHeight && x&3 == 0; x >>= 2 {
		h++
	}
	return h
}

// seek returns the first entry whose key is ≥ key (nil at the end), and
// fills prev, when given, with the last node before it at each level.
func (s *skiplist) seek(key []byte, prev *[maxHeight]*keyEntry) *keyEntry {
	x := &s.head
	kp := keyPrefix(key)
	for lvl := s.height - 1; lvl >= 0; lvl-- {
		for nx := x.next[lvl]; nx != nil && nx.less(kp, key); nx = x.next[lvl] {
			x = nx
		}
		if prev != nil {
			prev[lvl] = x
		}
	}
	return x.next[0]
}

// seekAfter is seek for a key greater than the one prev was last filled
// for (by seek, seekAfter or insert), starting from prev instead of the
// head. prev[lvl] is then the last node at level lvl at or before that
// key, so it is a valid start at every level; the search climbs from level
// 0 only as high as the gap to key needs, then walks down as seek does.
// For keys close together that is a few comparisons over nodes just
// visited, instead of a descent from the head.
func (s *skiplist) seekAfter(key []byte, prev *[maxHeight]*keyEntry) *keyEntry {
	kp := keyPrefix(key)
	top := 0
	for top < s.height-1 {
		if nx := prev[top].next[top]; nx == nil || !nx.less(kp, key) {
			break
		}
		top++
	}
	var x *keyEntry
	moved := false
	for lvl := top; lvl >= 0; lvl-- {
		// A node walked to on a level above is past the previous key, so
		// past prev[lvl] too; until the walk moves, prev[lvl] is the
		// further start.
		if !moved {
			x = prev[lvl]
		}
		for nx := x.next[lvl]; nx != nil && nx.less(kp, key); nx = x.next[lvl] {
			x, moved = nx, true
		}
		prev[lvl] = x
	}
	return x.next[0]
}

// insert links e, whose key is not in the list, after the nodes prev that
// seek filled for e.key, and leaves prev[lvl] at e on every level e has
// (so that a seekAfter may follow).
func (s *skiplist) insert(e *keyEntry, prev *[maxHeight]*keyEntry) {
	e.pfx = keyPrefix(e.key)
	s.linkAt(e, prev)
	s.indexed(e)
}

// add records e, whose key is not in the list, in the key index only: get
// finds it at once, walks of the list's order only after link. A write's
// new keys are added, not inserted: searching a large list for where each
// goes was a quarter of the committing goroutine's time at 1 M keys (a
// cache miss per node passed), while link puts many keys in order at once,
// sorted first, each search starting where the last ended, and mostly
// where nothing waits for it (a flush, or the first ordered read).
func (s *skiplist) add(e *keyEntry) {
	e.pfx = keyPrefix(e.key)
	s.indexed(e)
	s.unlinked = append(s.unlinked, e)
}

// link puts the entries add recorded into the list's order.
func (s *skiplist) link() {
	var prev [maxHeight]*keyEntry
	s.linkSorted(sortEntries(s.takeUnlinked()), &prev, true)
}

// takeUnlinked returns the entries add recorded since the last call and
// forgets them: the caller must link them (linkSorted) before a walk of
// the list's order may rely on it.
func (s *skiplist) takeUnlinked() []*keyEntry {
	es := s.unlinked
	s.unlinked = nil
	return es
}

// sortEntries sorts es by key. It reads only the entries' keys and
// prefixes, which never change once an entry is added, so it needs none
// of the memtable's locks. A flush sorts a whole memtable's keys (~400 k
// at bench/'s medium scale, where a comparison sort took ~150 ms of the
// flush worker): the records are ordered by the prefix's first word with
// a radix sort, eight passes of a byte, and only runs that tie on it are
// compared further.
func sortEntries(es []*keyEntry) []*keyEntry {
	ks := make([]byPrefix, len(es))
	for i, e := range es {
		ks[i] = byPrefix{e.pfx, e}
	}
	if len(ks) < 256 {
		slices.SortFunc(ks, cmpByPrefix)
	} else {
		tmp := make([]byPrefix, len(ks))
		src, dst := ks, tmp
		var count [256]int
		for shift := uint(0); shift < 64; shift += 8 {
			clear(count[:])
			for i := range src {
				count[byte(src[i].pfx[0]>>shift)]++
			}
			if count[byte(src[0].pfx[0]>>shift)] == len(src) {
				continue // every record has this byte: the pass moves nothing
			}
			sum := 0
			for d := range count {
				c := count[d]
				count[d] = sum
				sum += c
			}
			for i := range src {
				d := byte(src[i].pfx[0] >> shift)
				dst[count[d]] = src[i]
				count[d]++
			}
			src, dst = dst, src
		}
		ks = src
		for i := 0; i < len(ks); {
			j := i + 1
			for j < len(ks) && ks[j].pfx[0] == ks[i].pfx[0] {
				j++
			}
			if j-i > 1 {
				slices.SortFunc(ks[i:j], cmpByPrefix)
			}
			i = j
		}
	}
	for i := range ks {
		es[i] = ks[i].e
	}
	return es
}

// byPrefix is an entry with its prefix beside it, so that sorting reads
// the entry only when prefixes tie.
type byPrefix struct {
	pfx prefix
	e   *keyEntry
}

func cmpByPrefix(a, b byPrefix) int {
	if c := cmp.Compare(a.pfx[0], b.pfx[0]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.pfx[1], b.pfx[1]); c != 0 {
		return c
	}
	return bytes.Compare(a.e.key, b.e.key)
}

// linkSorted links es, sorted by key and none in the list, into its
// order: the first found by seek when first is set, each other by
// seekAfter from where the one before left prev. A caller may link a
// long run in pieces, keeping prev between them, and other entries may
// be inserted in between: nodes are never removed, so prev stays a valid
// start.
func (s *skiplist) linkSorted(es []*keyEntry, prev *[maxHeight]*keyEntry, first bool) {
	for i, e := range es {
		if first && i == 0 {
			s.seek(e.key, prev)
		} else {
			s.seekAfter(e.key, prev)
		}
		s.linkAt(e, prev)
	}
}

// linkAt links e after the nodes prev, as insert does.
func (s *skiplist) linkAt(e *keyEntry, prev *[maxHeight]*keyEntry) {
	h := s.randomHeight()
	if h > s.height {
		for lvl := s.height; lvl < h; lvl++ {
			prev[lvl] = &s.head
		}
		s.height = h
	}
	e.next = e.towerOf(h, &s.nexts)
	for lvl := 0; lvl < h; lvl++ {
		e.next[lvl] = prev[lvl].next[lvl]
		prev[lvl].next[lvl] = e
		prev[lvl] = e
	}
}

// prefix is the first 16 bytes of a key as two big-endian numbers.
type prefix [2]uint64

// keyPrefix is the first 16 bytes of key as a prefix, zeros standing in
// for bytes past a shorter key: two keys whose prefixes differ compare as
// their prefixes do, so a search compares the numbers held in the node and
// reads the key's bytes (in the arena: another cache line, cold in a large
// memtable) only on a tie. Sixteen bytes, not eight, because sort keys
// often begin with a column of few values (a chain or tenant id) and a
// string's fixed start ("0x"): of bench/'s keys, eight bytes left ties
// between most neighbours of a 1 M-key memtable, and comparing their key
// bytes was the largest cost of inserting new keys.
func keyPrefix(key []byte) prefix {
	if len(key) >= 16 {
		return prefix{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
	}
	var b [16]byte
	copy(b[:], key)
	return prefix{binary.BigEndian.Uint64(b[:]), binary.BigEndian.Uint64(b[8:])}
}

// less reports whether e's key sorts before key, whose prefix is kp.
func (e *keyEntry) less(kp prefix, key []byte) bool {
	if e.pfx[0] != kp[0] {
		return e.pfx[0] < kp[0]
	}
	if e.pfx[1] != kp[1] {
		return e.pfx[1] < kp[1]
	}
	return bytes.Compare(e.key, key) < 0
}

// towerOf returns the tower of a node of height h: within the entry for
// the low towers most nodes have (3 in 4 have height 1), from slab
// otherwise.
func (e *keyEntry) towerOf(h int, slab *[]*keyEntry) []*keyEntry {
	if h <= len(e.tower) {
		return e.tower[:h:h]
	}
	return cut(slab, h)
}

// first returns the smallest entry, nil when empty.
func (s *skiplist) first() *keyEntry { return s.head.next[0] }

// last returns the entry of the largest key, nil if the list is empty:
// down the towers from the head, as far right as each level goes.
func (s *skiplist) last() *keyEntry {
	e := &s.head
	for h := s.height - 1; h >= 0; h-- {
		for e.next[h] != nil {
			e = e.next[h]
		}
	}
	if e == &s.head {
		return nil
	}
	return e
}
