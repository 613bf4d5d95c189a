package part

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// TestKeyIndexFindsFirstRows checks a page's key index against a binary
// search over its sorted keys, on pages of random keys with runs of equal
// keys, for every key held and for keys between, before and after them.
func TestKeyIndexFindsFirstRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 256, 1000, maxIndexedRows} {
		var ks [][]byte
		for len(ks) < n {
			k := fmt.Appendf(nil, "k%06d", rng.IntN(4*n))
			for r := rng.IntN(3); r >= 0 && len(ks) < n; r-- {
				ks = append(ks, k)
			}
		}
		sort.Slice(ks, func(a, b int) bool { return bytes.Compare(ks[a], ks[b]) < 0 })
		d := &Data{Sort: types.NewVector(types.Of(types.Bytes), n)}
		for _, k := range ks {
			d.Sort.AppendBytes(k)
		}
		d.indexKeys()
		if d.keyIdx == nil {
			t.Fatalf("%d rows: no index", n)
		}
		for i := -1; i <= 4*n; i++ {
			for _, probe := range [][]byte{fmt.Appendf(nil, "k%06d", i), fmt.Appendf(nil, "k%06d\x00", i), []byte("k")} {
				want := sort.Search(n, func(x int) bool { return bytes.Compare(ks[x], probe) >= 0 })
				if want == n || !bytes.Equal(ks[want], probe) {
					want = -1
				}
				got, ok := d.findKey(probe)
				if !ok || got != want {
					t.Fatalf("%d rows: findKey(%q) = %d, %v; want %d", n, probe, got, ok, want)
				}
			}
		}
	}
	big := &Data{Sort: types.NewVector(types.Of(types.Bytes), maxIndexedRows+1)}
	for i := 0; i <= maxIndexedRows; i++ {
		big.Sort.AppendBytes(fmt.Appendf(nil, "%08d", i))
	}
	big.indexKeys()
	if _, ok := big.findKey([]byte("00000001")); ok {
		t.Fatal("a chunk-sized Data got a key index")
	}
	// Reset drops the index with the keys it indexed.
	d := &Data{Sort: types.NewVector(types.Of(types.Bytes), 1)}
	d.Sort.AppendBytes([]byte("a"))
	d.indexKeys()
	d.Reset()
	if _, ok := d.findKey([]byte("a")); ok {
		t.Fatal("Reset kept the key index")
	}
}

// TestFindKeyIndexedMatchesSearch: FindKey over pages served from the
// cache (with their key index) returns what an uncached reader finds by
// binary search, for keys held (three rows each, some straddling pages),
// keys between two held keys, and keys before and after every one.
func TestFindKeyIndexedMatchesSearch(t *testing.T) {
	fsys := vfs.NewMem()
	const rows = 5*PageRows + 77
	writePaged(t, fsys, "p", rows)
	plain, r, c := openPlainCached(t, fsys, "p")
	var ps, cs Data
	for pass := range 2 {
		for bi := range r.Blocks() {
			for k := int64(-1); k <= rows/3+1; k++ {
				key := types.AppendKey(nil, types.NewInt64(k))
				for _, probe := range [][]byte{key, append(key, 0)} {
					sameFindKey(t, plain, r, bi, probe, &ps, &cs, fmt.Sprint("pass ", pass))
				}
			}
		}
	}
	if st := c.Stats(); st.Hits == 0 {
		t.Fatalf("no page served from the cache: %+v", st)
	}
}

// openPlainCached opens path twice, without a cache and with a fresh one
// of DefaultCacheBytes, for tests that compare the two; both close with t.
func openPlainCached(t *testing.T, fsys vfs.FS, path string) (plain, cached *Reader, c *Cache) {
	t.Helper()
	plain, err := Open(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	c = NewCache(DefaultCacheBytes)
	if cached, err = OpenCached(fsys, path, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cached.Close() })
	return plain, cached, c
}
