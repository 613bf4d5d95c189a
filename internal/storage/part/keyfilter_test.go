package part

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// randomKeys returns n distinct sort keys shaped like the benchmark's
// balances key (chain, hex address, token), sorted.
func randomKeys(rng *rand.Rand, n int) [][]byte {
	seen := make(map[string]bool, n)
	var out [][]byte
	for len(out) < n {
		addr := make([]byte, 20)
		for i := range addr {
			addr[i] = byte(rng.Uint32())
		}
		k := types.AppendKey(nil, types.NewUint64(uint64(rng.IntN(4))))
		k = types.AppendKey(k, types.NewBytes(addr))
		k = types.AppendKey(k, types.NewString("USDC"))
		if !seen[string(k)] {
			seen[string(k)] = true
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b []byte) int { return strings.Compare(string(a), string(b)) })
	return out
}

func keysData(keys [][]byte, repeat int) *Data {
	d := &Data{Sort: types.NewVector(types.Of(types.Bytes), len(keys)*repeat)}
	for _, k := range keys {
		for range repeat {
			d.Sort.AppendBytes(k)
			d.Rows++
		}
	}
	return d
}

// TestKeyFilterRate builds a filter over random keys (each twice, as a
// key's versions repeat it) and checks that it holds every one of them and
// that its false-positive rate on other keys is near the designed rate.
func TestKeyFilterRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 1000, 30_000} {
		keys := randomKeys(rng, n)
		f := buildKeyFilter(keysData(keys, 2), KeyFilterBits)
		for _, k := range keys {
			if !f.MayContain(k) {
				t.Fatalf("%d keys: the filter misses key %x", n, k)
			}
		}
		in := make(map[string]bool, n)
		for _, k := range keys {
			in[string(k)] = true
		}
		const probes = 60_000
		fp, tried := 0, 0
		for _, k := range randomKeys(rng, probes) {
			if in[string(k)] {
				continue
			}
			tried++
			if f.MayContain(k) {
				fp++
			}
		}
		rate := float64(fp) / float64(tried)
		t.Logf("%d keys: %d bytes (%.2f per key), false positives %.4f %%", n, f.Bytes(), float64(f.Bytes())/float64(n), 100*rate)
		if n >= 1000 && rate > 0.004 {
			t.Fatalf("%d keys: false-positive rate %.4f, want about 0.001", n, rate)
		}
	}
}

// TestKeyFilterWritten checks that Write gives keyed parts a filter that
// holds every key and that Check accepts, and append parts none.
func TestKeyFilterWritten(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 3000, allTypes[:3], nil)
	writeFixture(t, fsys, "parts/k.parquet", fx, WriteOptions{BlockRows: 1000})
	r, err := Open(fsys, "parts/k.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.KeyFilterBytes() == 0 {
		t.Fatal("a current part has no key filter")
	}
	for i := range fx.d.Rows {
		if !r.MayContain(fx.d.Sort.BytesAt(i)) {
			t.Fatalf("row %d: the part's filter misses its key", i)
		}
	}
	misses := 0
	for i := fx.d.Rows; i < fx.d.Rows+10_000; i++ {
		if !r.MayContain(sortKey(nil, i)) {
			misses++
		}
	}
	if misses == 0 {
		t.Fatal("the filter holds every key it was not given")
	}
	if err := Check(fsys, "parts/k.parquet"); err != nil {
		t.Fatal(err)
	}
	fx.meta.Kind = KindAppend
	writeFixture(t, fsys, "parts/a.parquet", fx, WriteOptions{})
	ra, err := Open(fsys, "parts/a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	if ra.KeyFilterBytes() != 0 || !ra.MayContain([]byte("x")) {
		t.Fatal("an append part has a key filter")
	}
}

// TestKeyFilterOldAndBad writes a part as one from before filters (none)
// and one whose filter misses keys: the first reads every key as possibly
// held and passes Check; Check reports the second as corrupt, naming it.
func TestKeyFilterOldAndBad(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 2000, allTypes[:2], nil)
	keyFilterHook = func([]byte) []byte { return nil }
	writeFixture(t, fsys, "parts/old.parquet", fx, WriteOptions{BlockRows: 700})
	keyFilterHook = func(b []byte) []byte { return make([]byte, len(b)) }
	writeFixture(t, fsys, "parts/bad.parquet", fx, WriteOptions{BlockRows: 700})
	keyFilterHook = func(b []byte) []byte { return b[:len(b)-1] }
	writeFixture(t, fsys, "parts/short.parquet", fx, WriteOptions{BlockRows: 700})
	keyFilterHook = nil
	r, err := Open(fsys, "parts/old.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.KeyFilterBytes() != 0 {
		t.Fatal("a part written without a filter has one")
	}
	for i := range fx.d.Rows + 10 {
		if !r.MayContain(sortKey(nil, i)) {
			t.Fatalf("a part without a filter rules out key %d", i)
		}
	}
	if err := Check(fsys, "parts/old.parquet"); err != nil {
		t.Fatal(err)
	}
	err = Check(fsys, "parts/bad.parquet")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "parts/bad.parquet") || !strings.Contains(err.Error(), "key filter") {
		t.Fatalf("Check of a part whose filter misses its keys: %v", err)
	}
	_, err = Open(fsys, "parts/short.parquet")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "key filter") {
		t.Fatalf("Open of a part whose filter is cut short: %v", err)
	}
}
