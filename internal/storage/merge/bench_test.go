package merge

import (
	"fmt"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// balancesTable is the seed's balances table (SPEC §14) without the
// labels group.
func balancesTable() *catalog.Table {
	dt := types.Type{Kind: types.DateTime64, Precision: 3, TZ: "UTC"}
	col := func(id catalog.ColumnID, name string, t types.Type, g catalog.GroupID) *catalog.Column {
		return &catalog.Column{ID: id, Name: name, Type: t, Nullable: g != catalog.NoGroup, Group: g,
			Codec: catalog.DefaultCodec(t).String(), Position: int(id)}
	}
	return &catalog.Table{ID: 1, Name: "balances", Mode: catalog.ModeVersioned, Generation: 1,
		Columns: []*catalog.Column{
			col(1, "chain_id", types.Of(types.Uint16), catalog.NoGroup),
			col(2, "address", types.Of(types.String), catalog.NoGroup),
			col(3, "token", types.Of(types.String), catalog.NoGroup),
			col(4, "amount", types.Of(types.Uint256), 1), col(5, "updated_at", dt, 1),
			col(6, "balance_index", types.Of(types.Uint128), 1), col(7, "balance_version", types.Of(types.Uint64), 1),
			col(8, "transfer_count", types.Of(types.Uint64), 2), col(9, "last_transfer_at", dt, 2),
			col(10, "activity_index", types.Of(types.Uint128), 2),
		},
		Key: []catalog.ColumnID{1, 2, 3}, OrderBy: []catalog.ColumnID{1, 2, 3},
		Groups: []*catalog.Group{
			{ID: 0, Name: "default"},
			{ID: 1, Name: "holding", Columns: []catalog.ColumnID{4, 5, 6, 7}, ValidBy: []catalog.ColumnID{6}, RevisionBy: []catalog.ColumnID{7}},
			{ID: 2, Name: "activity", Columns: []catalog.ColumnID{8, 9, 10}, ValidBy: []catalog.ColumnID{10}},
		},
	}
}

// writeBalances writes a part of keys×2 rows (holding and activity per
// key) at commit c, with ordering values that grow with c.
func writeBalances(b *testing.B, fs vfs.FS, t *catalog.Table, path string, id uint64, keys int, c uint64) {
	rows := 2 * keys
	d := &part.Data{Sort: types.NewVector(types.Of(types.Bytes), rows), Order: types.NewVector(types.Of(types.Bytes), rows)}
	var metas []part.ColumnMeta
	for _, col := range t.Columns {
		metas = append(metas, part.ColumnMeta{ID: col.ID, Type: col.Type, Codec: catalog.DefaultCodec(col.Type)})
		d.IDs = append(d.IDs, col.ID)
		d.Cols = append(d.Cols, types.NewVector(col.Type, rows))
	}
	u128 := types.Of(types.Uint128)
	var key, ord, k1, k2 []byte
	var w uint256.Int
	for k := range keys {
		addr := fmt.Sprintf("0x%08x9c2e4f1a", k)
		key = types.AppendKey(key[:0], types.NewUint64(1))
		key = types.AppendKey(key, types.NewString(addr))
		key = types.AppendKey(key, types.NewString("USDC"))
		ticks := int64(1790000000000 + 1000*int64(c))
		for g := uint16(1); g <= 2; g++ {
			d.Sort.AppendBytes(key)
			d.Group = append(d.Group, g)
			d.Commit = append(d.Commit, c)
			d.Seq = append(d.Seq, uint32(2*k)+uint32(g))
			d.Cols[0].AppendUint64(1)
			d.Cols[1].AppendString(addr)
			d.Cols[2].AppendString("USDC")
			for j := 3; j < len(d.Cols); j++ {
				if t.Columns[j].Group != catalog.GroupID(g) {
					d.Cols[j].AppendNull()
				}
			}
			if g == 1 {
				w.SetUint64(uint64(k)*1_000_000 + c)
				d.Cols[3].AppendWide(&w)
				d.Cols[4].AppendInt64(ticks)
				w.SetUint64(1000*c + uint64(k%7))
				d.Cols[5].AppendWide(&w)
				d.Cols[6].AppendUint64(1)
				v, _ := types.NewWide(u128, w)
				k1 = types.AppendKey(k1[:0], v)
				k2 = types.AppendKey(k2[:0], types.NewUint64(1))
				ord = AppendOrder(ord[:0], [][]byte{k1, k2})
			} else {
				d.Cols[7].AppendUint64(10 * c)
				d.Cols[8].AppendInt64(ticks)
				w.SetUint64(c)
				d.Cols[9].AppendWide(&w)
				v, _ := types.NewWide(u128, w)
				k1 = types.AppendKey(k1[:0], v)
				ord = AppendOrder(ord[:0], [][]byte{k1})
			}
			d.Order.AppendBytes(ord)
			d.Rows++
		}
	}
	if _, err := part.Write(fs, path, d, part.Meta{Table: t.ID, Part: id, Kind: part.KindDelta, Columns: metas}, part.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMerge merges two 1 M-row parts of the balances table (500k
// keys, holding and activity each, the second part superseding the first):
// for a versioned table into a current and a history run, for an upsert
// table into one current run. It reports rows/s of input.
func BenchmarkMerge(b *testing.B) {
	for _, mode := range []catalog.Mode{catalog.ModeVersioned, catalog.ModeUpsert} {
		b.Run(mode.String(), func(b *testing.B) { benchMerge(b, mode) })
	}
}

func benchMerge(b *testing.B, mode catalog.Mode) {
	const keys = 500_000
	fs := vfs.NewMem()
	t := balancesTable()
	t.Mode = mode
	writeBalances(b, fs, t, "a.parquet", 1, keys, 1)
	writeBalances(b, fs, t, "b.parquet", 2, keys, 2)
	var rs []*part.Reader
	for _, p := range []string{"a.parquet", "b.parquet"} {
		r, err := part.Open(fs, p)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		rs = append(rs, r)
	}
	id := uint64(10)
	create := func(part.Kind) (string, uint64, error) {
		id++
		return fmt.Sprintf("out%d.parquet", id), id, nil
	}
	b.ResetTimer()
	start := time.Now()
	var st Stats
	for range b.N {
		outs, s, err := Merge(rs, Options{Table: t, FS: fs, Create: create, Oldest: true, Level: 1})
		if err != nil {
			b.Fatal(err)
		}
		st = s
		b.StopTimer()
		for _, o := range outs {
			_ = fs.Remove(o.Part.File)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(st.In)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
}
