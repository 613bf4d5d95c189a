package part

import (
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// TestReadRowsMatchesReadBlock reads row windows of every size and place,
// across page boundaries, and compares them with the whole block, in a
// delta and a current part written with their kinds' default page sizes
// (PageRows, CurrentPageRows).
func TestReadRowsMatchesReadBlock(t *testing.T) {
	for _, kind := range []Kind{KindDelta, KindCurrent} {
		t.Run(kind.String(), func(t *testing.T) { testReadRows(t, kind) })
	}
}

func testReadRows(t *testing.T, kind Kind) {
	pageRows := defaultPageRows(kind)
	fs := vfs.NewMem()
	cols := []ColumnMeta{
		{ID: 1, Type: types.Of(types.Int64), Codec: catalog.DefaultCodec(types.Of(types.Int64))},
		{ID: 2, Type: types.Of(types.String), Codec: catalog.DefaultCodec(types.Of(types.String))},
	}
	rows := 3*pageRows + 77
	d := &Data{Sort: types.NewVector(types.Of(types.Bytes), rows), IDs: []catalog.ColumnID{1, 2},
		Cols: []*types.Vector{types.NewVector(cols[0].Type, rows), types.NewVector(cols[1].Type, rows)}}
	for i := 0; i < rows; i++ {
		d.Sort.AppendBytes(types.AppendKey(nil, types.NewInt64(int64(i/3))))
		d.Commit = append(d.Commit, uint64(i+1))
		d.Seq = append(d.Seq, uint32(i))
		d.Tomb = append(d.Tomb, i%3 == 1) // bits at odd offsets within pages
		d.Cols[0].AppendInt64(int64(i))
		if i%7 == 0 {
			d.Cols[1].AppendNull()
		} else {
			d.Cols[1].AppendString(fmt.Sprint("v", i))
		}
		d.Rows++
	}
	if _, err := Write(fs, "p", d, Meta{Table: 1, Part: 1, Kind: kind, Columns: cols}, WriteOptions{BlockRows: 2*pageRows + 10}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(fs, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Meta().PageRows != pageRows {
		t.Fatalf("%s part written with %d-row pages, want %d", kind, r.Meta().PageRows, pageRows)
	}
	ids := []catalog.ColumnID{2, 1, 9}
	var whole, part Data
	for bi, b := range r.Blocks() {
		if err := r.ReadBlock(bi, ids, &whole); err != nil {
			t.Fatal(err)
		}
		for _, w := range [][2]int{{0, 1}, {0, b.Rows}, {pageRows - 1, pageRows + 1}, {5, 9}, {b.Rows - 1, b.Rows}, {pageRows, 2 * pageRows}} {
			lo, hi := w[0], min(w[1], b.Rows)
			if lo >= hi {
				continue
			}
			if err := r.ReadRows(bi, lo, hi, FixAll, ids, &part); err != nil {
				t.Fatalf("block %d rows [%d, %d): %v", bi, lo, hi, err)
			}
			if part.Rows != hi-lo || part.Cols[2] != nil {
				t.Fatalf("block %d rows [%d, %d): %d rows", bi, lo, hi, part.Rows)
			}
			for i := 0; i < part.Rows; i++ {
				j := lo + i
				if string(part.Sort.BytesAt(i)) != string(whole.Sort.BytesAt(j)) || part.Commit[i] != whole.Commit[j] ||
					part.Seq[i] != whole.Seq[j] || part.Tomb[i] != whole.Tomb[j] ||
					!sameValue(part.Cols[0], i, whole.Cols[0], j) || !sameValue(part.Cols[1], i, whole.Cols[1], j) {
					t.Fatalf("block %d row %d differs from ReadBlock", bi, j)
				}
			}
		}
	}
	// FindKey: every key's rows, keys straddling pages, absent keys.
	var scratch Data
	for bi, b := range r.Blocks() {
		if err := r.ReadBlock(bi, nil, &whole); err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < b.Rows; {
			hi := lo
			for hi < b.Rows && string(whole.Sort.BytesAt(hi)) == string(whole.Sort.BytesAt(lo)) {
				hi++
			}
			gl, gh, err := r.FindKey(bi, whole.Sort.BytesAt(lo), &scratch)
			if err != nil || gl != lo || gh != hi {
				t.Fatalf("block %d: FindKey of the key of rows [%d, %d) = [%d, %d), %v", bi, lo, hi, gl, gh, err)
			}
			lo = hi
		}
		for _, k := range [][]byte{types.AppendKey(nil, types.NewInt64(-1)), append(whole.Sort.BytesAt(pageRows), 0), types.AppendKey(nil, types.NewInt64(1<<40))} {
			if gl, gh, err := r.FindKey(bi, k, &scratch); err != nil || gl != gh {
				t.Fatalf("block %d: FindKey of an absent key = [%d, %d), %v", bi, gl, gh, err)
			}
		}
	}
	if !r.Meta().KeyBlocks {
		t.Fatal("blocks not cut at keys")
	}
	for bi := 1; bi < len(r.Blocks()); bi++ {
		if string(r.Blocks()[bi].MinSort) == string(r.Blocks()[bi-1].MaxSort) {
			t.Fatalf("key split between blocks %d and %d", bi-1, bi)
		}
	}
	if err := Check(fs, "p"); err != nil {
		t.Fatal(err)
	}
}

func sameValue(a *types.Vector, i int, b *types.Vector, j int) bool {
	if a.IsNull(i) || b.IsNull(j) {
		return a.IsNull(i) == b.IsNull(j)
	}
	return types.Equal(a.Get(i), b.Get(j))
}
