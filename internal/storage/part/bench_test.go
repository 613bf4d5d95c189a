package part

import (
	"encoding/binary"
	"fmt"
	"github.com/strata-db/strata/internal/cputime"
	"sync"
	"testing"

	"github.com/holiman/uint256"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// balances builds the benchmark part: a balances-like keyed table with a
// sort key of about 40 bytes (account, token), two attribute groups
// (amount + updated_at; nonce + block), UINT256, DATETIME64(3), UINT128
// and UINT64 columns. Each key has one row per group; a group's row holds
// NULL in the other group's columns.
func balances(rows int) fixture {
	d := &Data{Rows: rows, Sort: types.NewVector(types.Of(types.Bytes), rows), Order: types.NewVector(types.Of(types.Bytes), rows)}
	ts := types.Type{Kind: types.DateTime64, Precision: 3}
	colTypes := []types.Type{types.Of(types.Uint256), ts, types.Of(types.Uint128), types.Of(types.Uint64)}
	for i, t := range colTypes {
		d.IDs = append(d.IDs, catalog.ColumnID(i+1))
		d.Cols = append(d.Cols, types.NewVector(t, rows))
	}
	var key, ord []byte
	for i := range rows {
		acct, g := i/2, i%2
		key = types.AppendKey(key[:0], types.NewString(fmt.Sprintf("0x%026x", uint64(acct)*1_000_003)))
		key = types.AppendKey(key, types.NewUint64(uint64(acct%7)))
		d.Sort.AppendBytes(key)
		d.Group = append(d.Group, uint16(g))
		commit := uint64(1 + i/100)
		d.Commit = append(d.Commit, commit)
		d.Seq = append(d.Seq, uint32(i%100))
		ord = types.AppendKey(ord[:0], types.NewUint64(commit))
		d.Order.AppendBytes(ord)
		if g == 0 {
			amt := uint256.NewInt(uint64(acct) * 1_000_003)
			amt.Mul(amt, uint256.NewInt(1e12))
			d.Cols[0].AppendWide(amt)
			d.Cols[1].AppendInt64(1_780_000_000_000 + int64(i)*37)
			d.Cols[2].AppendNull()
			d.Cols[3].AppendNull()
		} else {
			d.Cols[0].AppendNull()
			d.Cols[1].AppendNull()
			d.Cols[2].AppendWide(uint256.NewInt(uint64(acct % 1000)))
			d.Cols[3].AppendUint64(20_000_000 + uint64(i/50))
		}
	}
	meta := Meta{Table: 1, Shard: 0, Part: 1, Kind: KindDelta}
	for i, t := range colTypes {
		meta.Columns = append(meta.Columns, ColumnMeta{ID: d.IDs[i], Type: t, Codec: catalog.DefaultCodec(t)})
	}
	return fixture{d: d, meta: meta}
}

var (
	benchOnce sync.Once
	benchFx   fixture
)

const benchRows = 1 << 20

func benchFixture() fixture {
	benchOnce.Do(func() { benchFx = balances(benchRows) })
	return benchFx
}

func BenchmarkWrite(b *testing.B) {
	fx := benchFixture()
	var info Info
	for b.Loop() {
		fsys := vfs.NewMem()
		var err error
		if info, err = Write(fsys, "p.parquet", fx.d, fx.meta, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(info.Bytes)/benchRows, "bytes/row")
	for _, c := range info.Columns {
		b.Logf("column %d: %.2f bytes/row on disk, %.2f uncompressed", c.ID, float64(c.Compressed)/benchRows, float64(c.Uncompressed)/benchRows)
	}
	b.Logf("fixed columns: %.2f bytes/row on disk, %.2f uncompressed", float64(info.Fixed.Compressed)/benchRows, float64(info.Fixed.Uncompressed)/benchRows)
	b.ReportMetric(0, "ns/op")
}

// BenchmarkWriteWarm is BenchmarkWrite building the pages for a cache
// (WriteOptions.Warm) and opening the part with it: what warming costs a
// flush or merge on top of writing.
func BenchmarkWriteWarm(b *testing.B) {
	fx := benchFixture()
	for b.Loop() {
		fsys := vfs.NewMem()
		c := NewCache(1 << 30)
		if _, err := Write(fsys, "p.parquet", fx.d, fx.meta, WriteOptions{Warm: c}); err != nil {
			b.Fatal(err)
		}
		r, err := OpenCached(fsys, "p.parquet", c)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkReadColumns(b *testing.B) {
	fx := benchFixture()
	fsys := vfs.NewMem()
	if _, err := Write(fsys, "p.parquet", fx.d, fx.meta, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	r, err := Open(fsys, "p.parquet")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, proj := range []struct {
		name string
		cols []catalog.ColumnID
	}{{"all", ids(fx.meta)}, {"fixed-only", nil}, {"amount", []catalog.ColumnID{1}}} {
		b.Run(proj.name, func(b *testing.B) {
			var d Data
			for b.Loop() {
				for i := range r.Blocks() {
					if err := r.ReadBlock(i, proj.cols, &d); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkReadOrder reads a 1 M-row history part of the balances fixture
// whose ordering values are its columns' (group 0 by updated_at, group 1
// by the UINT128 and UINT64 columns), with _order stored ("stored") and
// rebuilt from the columns ("rebuilt", part format 2): reading every
// column, as merges do, and the ordering values alone, the worst case,
// which decodes the ordering columns only to encode them.
func BenchmarkReadOrder(b *testing.B) {
	fx := benchFixture()
	d := *fx.d
	d.Order = types.NewVector(types.Of(types.Bytes), d.Rows)
	var ord []byte
	for i := range d.Rows {
		ord = ord[:0]
		cols := []int{1}
		if d.Group[i] == 1 {
			cols = []int{2, 3}
		}
		for _, j := range cols {
			k := types.AppendKeyAt(nil, d.Cols[j], i)
			ord = append(binary.AppendUvarint(ord, uint64(len(k))), k...)
		}
		d.Order.AppendBytes(ord)
	}
	meta := fx.meta
	meta.Kind = KindHistory
	fsys := vfs.NewMem()
	for _, name := range []string{"stored", "rebuilt"} {
		m := meta
		if name == "rebuilt" {
			m.OrderFrom = []GroupOrder{{Group: 0, Cols: []catalog.ColumnID{2}}, {Group: 1, Cols: []catalog.ColumnID{3, 4}}}
		}
		info, err := Write(fsys, name, &d, m, WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		r, err := Open(fsys, name)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		if (len(r.Meta().OrderFrom) > 0) != (name == "rebuilt") {
			b.Fatalf("%s: OrderFrom %v", name, r.Meta().OrderFrom)
		}
		for _, read := range []struct {
			name  string
			fixed Fixed
			cols  []catalog.ColumnID
		}{{"all", FixAll, ids(meta)}, {"order-only", FixOrder, nil},
			// What a scan resolving versions reads of a part (a delta,
			// the first current read after an ingest): the fixed
			// columns, and a table column that orders nothing. The part
			// here is a history part; the columns read are the same.
			{"resolve", FixSort | FixGroup | FixCommit | FixSeq | FixTomb | FixOrder, ids(meta)[:1]}} {
			b.Run(name+"/"+read.name, func(b *testing.B) {
				var out Data
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					for i := range r.Blocks() {
						if err := r.ReadBlockFixed(i, read.fixed, read.cols, &out); err != nil {
							b.Fatal(err)
						}
					}
				}
				// Process CPU per op: on a shared machine wall time
				// mostly measures the other load.
				b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(info.Bytes)/benchRows, "bytes/row")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkReadCold opens the 1 M-row part and reads every block once
// with every column, per op: what a merge or the first scan of a part
// pays, including checkPages's one pass over each chunk's pages (the
// delta-encoded ones decompressed a second time), which later reads of
// an open reader skip. Default codecs (ZSTD) and an LZ4 variant.
func BenchmarkReadCold(b *testing.B) {
	for _, comp := range []catalog.Compression{catalog.CompressZSTD, catalog.CompressLZ4} {
		fx := benchFixture()
		name := "zstd"
		if comp == catalog.CompressLZ4 {
			name = "lz4"
			for i := range fx.meta.Columns {
				fx.meta.Columns[i].Codec.Compression, fx.meta.Columns[i].Codec.Level = comp, 0
			}
		}
		fsys := vfs.NewMem()
		if _, err := Write(fsys, "p.parquet", fx.d, fx.meta, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		all := ids(fx.meta)
		b.Run(name, func(b *testing.B) {
			var d Data
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for b.Loop() {
				r, err := Open(fsys, "p.parquet")
				if err != nil {
					b.Fatal(err)
				}
				for i := range r.Blocks() {
					if err := r.ReadBlock(i, all, &d); err != nil {
						b.Fatal(err)
					}
				}
				r.Close()
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkReadResidual reads the fixed columns of a 1 M-row history part
// laid out like the benchmark's (residFixture) with the positions and the
// resolution stored as residuals (format 3) and as they are (the hook
// off), whole blocks and one page per block, and reports process CPU per
// pass: what undoing the residuals costs a scan and a lookup
// (docs/benchmarks.md, "Bytes on disk, third pass").
func BenchmarkReadResidual(b *testing.B) {
	fx := residFixture(b, 1<<20)
	fsys := vfs.NewMem()
	for _, name := range []string{"plain", "residual"} {
		writeResiduals = name == "residual"
		info, err := Write(fsys, name, fx.d, fx.meta, WriteOptions{BlockRows: 1 << 16})
		writeResiduals = true
		if err != nil {
			b.Fatal(err)
		}
		r, err := Open(fsys, name)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		for _, read := range []struct {
			name  string
			fixed Fixed
			page  bool
		}{
			{"interval", FixSort | FixGroup | FixCommit | FixWonAt | FixEndedAt, false},
			{"resolution", FixCommit | FixSeq | FixWonAt | FixEndedAt | FixSupersededBy | FixState, false},
			{"commit", FixCommit, false},
			{"page", FixAll &^ FixOrder, true},
		} {
			b.Run(name+"/"+read.name, func(b *testing.B) {
				var out Data
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					for i, blk := range r.Blocks() {
						if read.page {
							err = r.ReadRows(i, blk.Rows/2, blk.Rows/2+8, read.fixed, nil, &out)
						} else {
							err = r.ReadBlockFixed(i, read.fixed, nil, &out)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(info.Fixed.Compressed)/float64(fx.d.Rows), "fixed-bytes/row")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
