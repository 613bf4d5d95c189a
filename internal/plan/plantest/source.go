// Package plantest holds an in-memory plan.Source for the tests of plan and
// exec, so both test the same fake.
package plantest

import (
	"context"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// Row is a stored row tagged with the commit that wrote it.
type Row struct {
	Commit uint64
	Vals   map[catalog.ColumnID]types.Value
}

// Source is an in-memory plan.Source: each table holds rows tagged by
// commit; a read AS OF n sees the rows committed at or before n. Versions
// returns no rows.
type Source struct {
	Cat    *catalog.Catalog
	Newest uint64
	Rows   map[catalog.TableID][]Row
	// BatchRows, when set, caps the rows of each batch a scan hands on
	// (each a new batch, as storage's are); 0 hands on one batch.
	BatchRows int
}

// Commit implements plan.Source.
func (f *Source) Commit() uint64 { return f.Newest }

// Catalog implements plan.Source.
func (f *Source) Catalog() *catalog.Catalog { return f.Cat }

// CommitAt implements plan.Source: every time is commit 1.
func (f *Source) CommitAt(time.Time) (uint64, bool) { return 1, true }

// Retention implements plan.Source: nothing expires.
func (f *Source) Retention(catalog.TableID) storage.Retention { return storage.Retention{} }

// Shards implements plan.Source: one shard.
func (f *Source) Shards(catalog.TableID) []storage.ShardInfo {
	return []storage.ShardInfo{{Shard: 0}}
}

// Parts implements plan.Source: no parts.
func (f *Source) Parts(catalog.TableID) []storage.PartInfo { return nil }

// Scan implements plan.Source.
func (f *Source) Scan(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error) {
	t, _ := f.Cat.TableByID(spec.Table)
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
		at = f.Newest
	}
	var st storage.ScanStats
	for _, r := range f.Rows[spec.Table] {
		if r.Commit > at {
			continue
		}
		for i, id := range spec.Cols {
			v, ok := r.Vals[id]
			if !ok {
				v = types.Null(ts[i])
			}
			b.Cols[i].Append(v)
		}
		if spec.Commit {
			b.Cols[len(spec.Cols)].AppendUint64(r.Commit)
		}
		b.Rows++
		st.RowsReturned++
		if b.Rows == f.BatchRows {
			if err := fn(b); err != nil {
				return st, err
			}
			b = types.NewBatch(ts, 16)
		}
	}
	if b.Rows == 0 {
		return st, nil
	}
	return st, fn(b)
}

// Versions implements plan.Source.
func (f *Source) Versions(ctx context.Context, spec storage.ScanSpec, fn func(*types.Batch) error) (storage.ScanStats, error) {
	return storage.ScanStats{}, nil
}

// LookupInto implements plan.Source: the newest row at spec.AsOf whose
// key columns equal key.
func (f *Source) LookupInto(ctx context.Context, table catalog.TableID, key []types.Value, spec storage.ScanSpec, dst *types.Batch) (bool, error) {
	t, _ := f.Cat.TableByID(table)
	at := spec.AsOf
	if at == 0 {
		at = f.Newest
	}
	var found *Row
	for i := range f.Rows[table] {
		r := &f.Rows[table][i]
		if r.Commit > at {
			continue
		}
		match := true
		for j, id := range t.Key {
			if types.Compare(r.Vals[id], key[j]) != 0 {
				match = false
				break
			}
		}
		if match && (found == nil || r.Commit >= found.Commit) {
			found = r
		}
	}
	if found == nil {
		return false, nil
	}
	var out []types.Value
	for _, id := range spec.Cols {
		c, _ := t.AnyColumn(id)
		v, ok := found.Vals[id]
		if !ok {
			v = types.Null(c.Type)
		}
		out = append(out, v)
	}
	if spec.Commit {
		out = append(out, types.NewUint64(found.Commit))
	}
	dst.AppendRow(out)
	return true, nil
}
