package part

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// TestIndexFilterEveryType writes a part of every type with an index
// filter on every column, several blocks and pages, and checks that each
// granule's filter holds every value of its rows (Check too), that a
// value no granule holds is refused nearly everywhere, and that a
// granule of NULLs holds nothing.
func TestIndexFilterEveryType(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 5000, allTypes, nil)
	cols := ids(fx.meta)
	writeFixture(t, fsys, "parts/ix", fx, WriteOptions{BlockRows: 1500, PageRows: 128, IndexCols: func(Kind) []catalog.ColumnID { return cols }})
	if err := Check(fsys, "parts/ix"); err != nil {
		t.Fatal(err)
	}
	r, err := Open(fsys, "parts/ix")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var d Data
	var key []byte
	for c, id := range cols {
		f := r.IndexFilter(id)
		if f == nil {
			t.Fatalf("column %d has no filter", id)
		}
		if f.Type != allTypes[c].t || f.GranuleRows != 128 {
			t.Fatalf("column %d: filter of %s, %d rows a granule", id, f.Type, f.GranuleRows)
		}
		for b := range r.Blocks() {
			if err := r.ReadBlock(b, []catalog.ColumnID{id}, &d); err != nil {
				t.Fatal(err)
			}
			if want := (d.Rows + 127) / 128; f.Granules(b) != want {
				t.Fatalf("block %d: %d granules, want %d", b, f.Granules(b), want)
			}
			for i := range d.Rows {
				if d.Cols[0].IsNull(i) {
					continue
				}
				key = types.AppendKeyAt(key[:0], d.Cols[0], i)
				if !f.MayHold(b, i/128, []uint64{IndexHash(key)}) {
					t.Fatalf("column %s block %d: granule %d misses row %d", f.Type, b, i/128, i)
				}
			}
		}
	}
	// A value of no row: the fixtures' texts repeat, so an INT64 outside
	// them must be refused by (almost) every granule.
	f := r.IndexFilter(cols[3])
	miss := IndexHash(types.AppendKey(nil, types.NewInt64(123456789)))
	held := 0
	total := 0
	for b := range r.Blocks() {
		for g := range f.Granules(b) {
			total++
			if f.MayHold(b, g, []uint64{miss}) {
				held++
			}
		}
	}
	if held > total/10 {
		t.Fatalf("an absent value passes %d of %d granules", held, total)
	}
	if r.IndexFilter(9999) != nil {
		t.Fatal("a column the part does not index has a filter")
	}
}

// TestIndexFilterNulls checks that a granule with no non-NULL value holds
// nothing, and that a part without IndexCols has no filter.
func TestIndexFilterNulls(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 300, []typeCase{{types.Of(types.Int64), []string{"NULL"}}}, nil)
	writeFixture(t, fsys, "parts/n", fx, WriteOptions{PageRows: 100, IndexCols: func(Kind) []catalog.ColumnID { return ids(fx.meta) }})
	writeFixture(t, fsys, "parts/none", fx, WriteOptions{PageRows: 100})
	r, err := Open(fsys, "parts/n")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := r.IndexFilter(ids(fx.meta)[0])
	if f == nil || f.Bytes() != 0 {
		t.Fatalf("filter %v of an all-NULL column", f)
	}
	if f.MayHold(0, 0, []uint64{IndexHash(types.AppendKey(nil, types.NewInt64(0)))}) {
		t.Fatal("a granule of NULLs may hold a value")
	}
	r2, err := Open(fsys, "parts/none")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.IndexFilter(ids(fx.meta)[0]) != nil {
		t.Fatal("a part written without IndexCols has a filter")
	}
}

// TestIndexFilterCheck: a filter that misses values (a buggy writer whose
// footer still seals) is corruption to Check, and garbage in the entry is
// corruption to Open.
func TestIndexFilterCheck(t *testing.T) {
	fsys := newFS(t)
	fx := makeFixture(t, 600, []typeCase{{types.Of(types.Int64), []string{"1", "2", "3", "NULL"}}}, nil)
	opts := WriteOptions{PageRows: 100, IndexCols: func(Kind) []catalog.ColumnID { return ids(fx.meta) }}
	defer func() { indexHook = nil }()
	indexHook = func(b []byte) []byte {
		c := append([]byte(nil), b...)
		// The words are last: clearing them keeps the layout valid.
		clear(c[len(c)-32:])
		return c
	}
	writeFixture(t, fsys, "parts/cleared", fx, opts)
	if err := Check(fsys, "parts/cleared"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Check of a filter missing values: %v", err)
	}
	indexHook = func(b []byte) []byte { return b[:len(b)-1] }
	writeFixture(t, fsys, "parts/short", fx, opts)
	if _, err := Open(fsys, "parts/short"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a truncated filter: %v", err)
	}
}

// FuzzDecodeIndex: decodeIndex rejects garbage without panicking, and what
// it accepts answers MayHold for every granule.
func FuzzDecodeIndex(f *testing.F) {
	blocks := []BlockInfo{{Rows: 300}, {Rows: 50}}
	fx := makeFixture(f, 350, []typeCase{{types.Of(types.Int64), []string{"1", "NULL", "7"}}, {types.Of(types.String), []string{"a", "b"}}}, nil)
	good := buildIndex(fx.d, &fx.meta, ids(fx.meta), []int{300, 350}, 100)
	f.Add(good)
	f.Add([]byte{indexFormat, 1, 10, 3, 0, 0, 0, 0, 4, 0, 0, 0, 0})
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		b := append([]byte(nil), good...)
		b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := decodeIndex(b, blocks, 100)
		if err != nil {
			if !errors.Is(err, errIndex) {
				t.Fatalf("error %v does not wrap errIndex", err)
			}
			return
		}
		for i := range fs {
			for bl := range blocks {
				for g := range fs[i].Granules(bl) {
					fs[i].MayHold(bl, g, []uint64{1, 2})
				}
			}
		}
	})
}
