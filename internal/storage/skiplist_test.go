package storage

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// TestSkiplistSeekAfter inserts sorted runs of random keys the way
// keyedMem.entries does (a seek, then seekAfter from the nodes it left)
// into a list that already holds keys, and checks that every search lands
// where a search from the head does and that the list stays sorted and
// indexed.
func TestSkiplistSeekAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newSkiplist(0)
	if s.last() != nil || s.first() != nil {
		t.Fatal("an empty list has a first or last entry")
	}
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
		// last is the largest key inserted so far (scanCurrent bounds
		// the memtables' keys with first and last).
		if mx := slices.MaxFunc(all, bytes.Compare); !bytes.Equal(s.last().key, mx) {
			t.Fatalf("round %d: last() = %q, want %q", round, s.last().key, mx)
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

// TestSkiplistPrefixOrder checks the key prefixes a search compares before
// the keys' bytes: keys of 0 to 12 bytes over a small alphabet that holds
// zero bytes (a short key's prefix pads with zeros, so "a" and "a\x00" have
// the same prefix and must be told apart by their bytes), inserted in
// random order, must come out sorted, and every seek must land on the
// first key at or after its target, as a binary search over the sorted
// keys does.
func TestSkiplistPrefixOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() []byte {
		k := make([]byte, rng.IntN(21))
		for i := range k {
			k[i] = []byte{0, 1, 'a', 0xff}[rng.IntN(4)]
		}
		if rng.IntN(2) == 0 {
			// A shared start of up to 16 bytes: prefixes that tie.
			k = append([]byte("0123456789abcdef")[:rng.IntN(17):16], k...)
		}
		return k
	}
	for range 2000 {
		a, b := key(), key()
		pa, pb := keyPrefix(a), keyPrefix(b)
		if pa != pb && (pa[0] < pb[0] || pa[0] == pb[0] && pa[1] < pb[1]) != (bytes.Compare(a, b) < 0) {
			t.Fatalf("prefixes of %x and %x order them wrongly", a, b)
		}
	}
	s := newSkiplist(0)
	var all [][]byte
	for range 3000 {
		k := key()
		if s.get(k) != nil {
			continue
		}
		var prev [maxHeight]*keyEntry
		if e := s.seek(k, &prev); e != nil && bytes.Equal(e.key, k) {
			t.Fatalf("seek(%x) found a key get does not", k)
		}
		s.insert(&keyEntry{key: k}, &prev)
		all = append(all, k)
	}
	slices.SortFunc(all, bytes.Compare)
	i := 0
	for e := s.first(); e != nil; e = e.next[0] {
		if !bytes.Equal(e.key, all[i]) {
			t.Fatalf("entry %d is %x, want %x", i, e.key, all[i])
		}
		i++
	}
	for range 2000 {
		k := key()
		j, _ := slices.BinarySearchFunc(all, k, bytes.Compare)
		got := s.seek(k, nil)
		if (j == len(all)) != (got == nil) || (got != nil && !bytes.Equal(got.key, all[j])) {
			t.Fatalf("seek(%x) = %v, want entry %d of %d", k, got, j, len(all))
		}
	}
}

// TestKeyEntrySize keeps keyEntry at 128 bytes, two cache lines, with the
// fields a search reads in the first (see keyEntry).
func TestKeyEntrySize(t *testing.T) {
	var e keyEntry
	if n := unsafe.Sizeof(e); n != 128 {
		t.Fatalf("keyEntry is %d bytes, want 128", n)
	}
	if end := unsafe.Offsetof(e.tower) + unsafe.Sizeof(e.tower); end > 64 {
		t.Fatalf("a search's fields end at byte %d, past the first cache line", end)
	}
}

// TestSkiplistAddLink: keys added (found by get at once) and keys inserted
// mixed, in random order and in several rounds, walk in key order once
// linked, each exactly once.
func TestSkiplistAddLink(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	s := newSkiplist(0)
	var all [][]byte
	for round := range 5 {
		for range 400 {
			k := fmt.Appendf(nil, "0x%06x-%02d", rng.IntN(1<<20), rng.IntN(20))
			if s.get(k) != nil {
				continue
			}
			if rng.IntN(4) == 0 {
				var prev [maxHeight]*keyEntry
				s.seek(k, &prev)
				s.insert(&keyEntry{key: k}, &prev)
			} else {
				s.add(&keyEntry{key: k})
			}
			if s.get(k) == nil {
				t.Fatalf("round %d: %s not found right after it was added", round, k)
			}
			all = append(all, k)
		}
		s.link()
		if len(s.unlinked) != 0 {
			t.Fatalf("round %d: %d keys left unlinked", round, len(s.unlinked))
		}
		want := slices.SortedFunc(slices.Values(all), bytes.Compare)
		i := 0
		for e := s.first(); e != nil; e = e.next[0] {
			if i >= len(want) || !bytes.Equal(e.key, want[i]) {
				t.Fatalf("round %d: entry %d is %s", round, i, e.key)
			}
			i++
		}
		if i != len(want) || s.n != len(want) {
			t.Fatalf("round %d: walked %d entries, counted %d, want %d", round, i, s.n, len(want))
		}
	}
}

// TestScanSeesKeysAddedConcurrently: scans of the memtable while commits
// add new keys in random order (each scan links what was added,
// keyedMem.ordered, in pieces between which commits go on) see exactly
// the keys of the commits at or before their snapshot, in key order.
func TestScanSeesKeysAddedConcurrently(t *testing.T) {
	e, err := Open(t.TempDir(), Options{MemtableBytes: 1 << 40, NoBackgroundMerges: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tbl := createKV(t, e)
	const batches, per = 120, 2 * linkChunk / 3
	perm := rand.New(rand.NewPCG(11, 12)).Perm(batches * per)
	var upTo sync.Map // commit → keys committed at or before it
	done := make(chan error, 1)
	go func() {
		for i := range batches {
			n, err := e.Commit(context.Background(), &Txn{Kind: KindWrite, Writes: []Write{benchWriteKeys(tbl, perm[i*per:(i+1)*per], 1)}})
			if err != nil {
				done <- err
				return
			}
			upTo.Store(n, (i+1)*per)
		}
		done <- nil
	}()
	scans := 0
	for finished := false; !finished; scans++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		snap := e.Snapshot()
		n := snap.Commit()
		var keys []int64
		_, err := snap.Scan(context.Background(), ScanSpec{Table: tbl.ID, Cols: []catalog.ColumnID{tbl.Key[0]}}, func(b *types.Batch) error {
			for i := range b.Rows {
				keys = append(keys, b.Cols[0].Int64s()[i])
			}
			return nil
		})
		snap.Release()
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if v, ok := upTo.Load(n); ok {
			want = v.(int)
		} else if n > 2 { // a commit published before the writer recorded it
			for !ok {
				time.Sleep(time.Millisecond)
				v, ok = upTo.Load(n)
			}
			want = v.(int)
		}
		if len(keys) != want || !slices.IsSorted(keys) {
			t.Fatalf("scan at commit %d: %d keys (sorted %v), want %d", n, len(keys), slices.IsSorted(keys), want)
		}
	}
	if scans < 3 {
		t.Logf("only %d scans ran beside the commits", scans)
	}
}

// TestSortEntries: sortEntries orders entries as bytes.Compare orders
// their keys, with prefixes that differ anywhere in their first word, tie
// on it, tie on both words (keys longer than 16 bytes) or are padded
// (keys shorter than 16 bytes), below and above the radix sort's size.
func TestSortEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 1, 100, 255, 256, 5000} {
		es := make([]*keyEntry, n)
		seen := map[string]bool{}
		for i := range es {
			var k []byte
			for {
				switch rng.IntN(4) {
				case 0: // random throughout
					k = fmt.Appendf(nil, "%016x%08x", rng.Uint64(), rng.Uint32())
				case 1: // the first word shared by many
					k = fmt.Appendf(nil, "\x00\x01\x010x%03x%016x", rng.IntN(8), rng.Uint64())
				case 2: // both words shared, the tail differs
					k = fmt.Appendf(nil, "0123456789abcdef%x", rng.IntN(1000))
				default: // short keys, zero-padded prefixes
					k = []byte{byte(rng.IntN(3)), byte(rng.IntN(3))}[:1+rng.IntN(2)]
				}
				if !seen[string(k)] {
					break
				}
			}
			seen[string(k)] = true
			es[i] = &keyEntry{key: k, pfx: keyPrefix(k)}
		}
		got := sortEntries(slices.Clone(es))
		want := slices.SortedFunc(slices.Values(es), func(a, b *keyEntry) int { return bytes.Compare(a.key, b.key) })
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d: entry %d is %x, want %x", n, i, got[i].key, want[i].key)
			}
		}
	}
}
