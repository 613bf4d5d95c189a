package plan_test

import (
	"context"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// fakeRow is a stored row tagged with the commit that wrote it.
type fakeRow struct {
	commit uint64
	vals   map[catalog.ColumnID]types.Value
}

// fakeSource is an in-memory Source: each table holds rows tagged by
// commit; a read AS OF n sees the rows committed at or before n.
type fakeSource struct {
	cat    *catalog.Catalog
	commit uint64
	rows   map[catalog.TableID][]fakeRow
}

func (f *fakeSource) Commit() uint64                    { return f.commit }
func (f *fakeSource) Catalog() *catalog.Catalog         { return f.cat }
func (f *fakeSource) CommitAt(time.Time) (uint64, bool) { return 1, true }
func (f *fakeSource) Shards(catalog.TableID) []storage.ShardInfo {
	return []storage.ShardInfo{{Shard: 0}}
}
func (f *fakeSource) Parts(catalog.TableID) []storage.PartInfo { return nil }

func (f *fakeSource) Scan(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error) {
	t, _ := f.cat.TableByID(spec.Table)
	ts := make([]types.Type, 0, len(spec.Cols)+1)
	for _, id := range spec.Cols {
		c, _ := t.AnyColumn(id)
		ts = append(ts, c.Type)
	}
	if spec.Commit {
		ts = append(ts, types.Of(types.Uint64))
	}
	b := types.NewBatch(ts, 16)
	at := spec.AsOf
	if at == 0 {
		at = f.commit
	}
	var st storage.ScanStats
	for _, r := range f.rows[spec.Table] {
		if r.commit > at {
			continue
		}
		for i, id := range spec.Cols {
			v, ok := r.vals[id]
			if !ok {
				v = types.Null(ts[i])
			}
			b.Cols[i].Append(v)
		}
		if spec.Commit {
			b.Cols[len(spec.Cols)].AppendUint64(r.commit)
		}
		b.Rows++
		st.RowsReturned++
	}
	if b.Rows == 0 {
		return st, nil
	}
	return st, fn(b)
}

func (f *fakeSource) Versions(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error) {
	return storage.ScanStats{}, nil
}
