package storage

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// The versions of one key (R7.1). `SELECT … FROM versions(t) WHERE <full
// key>` reaches Versions as the one-key range [key, prefixEnd(key)); the
// general read (scanKeyed → mergeShard) then decodes every block of every
// part whose bounds hold the key, every column of 8 192 rows, to keep the
// few rows of that key: milliseconds for what is a lookup. versionsOfKey
// gathers the key's inputs as Lookup does instead, by seeking the key in
// each part (seekKey: the block by its bounds, the rows by binary search
// over the sort-key page the block's index names, then only the pages
// holding those rows, through the page cache) and from the memtable, and
// resolves and emits them exactly as the general read would: the same
// inputs, the same resolution (resolveKey), the same rows (emitVersions).

// keyVersionReads counts the reads versionsOfKey answered, for tests that
// must see it taken.
var keyVersionReads atomic.Int64

// oneKeyOf returns the sort key when rs can hold rows of one sort key of
// t only: a single range whose Lo is a whole sort key (every ORDER BY
// column, each encoding self-delimiting, so no other sort key has it as a
// prefix) and whose Hi is at most the end of Lo's prefix range. Otherwise
// nil.
func oneKeyOf(t *catalog.Table, rs []KeyRange) []byte {
	if len(rs) != 1 || rs[0].Lo == nil || rs[0].Hi == nil || !t.Keyed() {
		return nil
	}
	lo, hi := rs[0].Lo, rs[0].Hi
	if bytes.Compare(lo, hi) >= 0 {
		return nil
	}
	if end := keyPrefixEnd(lo); end != nil && bytes.Compare(hi, end) > 0 {
		return nil
	}
	rest := lo
	for _, id := range t.OrderBy {
		c, ok := t.AnyColumn(id)
		if !ok {
			return nil
		}
		var err error
		if _, rest, err = types.DecodeKey(c.Type, rest); err != nil {
			return nil
		}
	}
	if len(rest) != 0 {
		return nil
	}
	return lo
}

// keyVersionsBatch is the batch size of a read of one key's versions when
// the caller names none: the default (a thousand rows of every column)
// was most of such a read's cost, for the handful of rows a key has. The
// batch is a starting size: a key's rows all go into one batch, which
// grows as they are appended.
const keyVersionsBatch = 16

// keyPrefixEnd is the least byte string above every string with prefix
// p, nil when there is none (p is all 0xff).
func keyPrefixEnd(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			end := append([]byte(nil), p[:i+1]...)
			end[i]++
			return end
		}
	}
	return nil
}

// versionsOfKey reads the versions of sort key key (oneKeyOf) from the
// one shard that can hold it (keyShard), seeking it in each part, into
// rd.batch, which the caller then hands on (flushLast). It reports false,
// having read nothing, when key is nil or a part is not laid out for
// seeking (KeyBlocks): the caller then takes the general read.
func (rd *reader) versionsOfKey(ctx context.Context, td *tableData, key []byte, n uint64) (bool, error) {
	if rd.slow || key == nil {
		return false, nil
	}
	sd, err := keyShard(rd.t, td, key)
	if err != nil {
		return false, nil
	}
	for _, pf := range sd.parts {
		if !pf.r.Meta().KeyBlocks {
			return false, nil
		}
	}
	keyVersionReads.Add(1)
	// The pooled buffers and arena, as Lookup takes them: a fresh arena's
	// first block was most of this read's garbage.
	rd.seek = seekPool.Get().(*seekBufs)
	rd.seek.takeArena(rd)
	defer func() {
		rd.seek.keepArena(rd)
		seekPool.Put(rd.seek)
		rd.seek = nil
	}()
	rd.stats.Shards++
	if err := ctx.Err(); err != nil {
		return true, err
	}
	lays := map[string]*layout{}
	var ins []keyInput
	for _, pf := range sd.parts {
		m := pf.r.Meta()
		if m.MinCommit > n || bytes.Compare(key, m.MinSort) < 0 || bytes.Compare(key, m.MaxSort) > 0 {
			rd.stats.PartsSkipped++
			continue
		}
		rd.stats.Parts++
		var err error
		// nil columns: with rd.versions, lookupGroups reads every
		// column of the part, as the general read does.
		if ins, err = rd.seekKey(pf, key, n, lays, nil, ins); err != nil {
			return true, err
		}
	}
	ins, _ = sd.memInputs(key, n, ins)
	if len(ins) == 0 {
		return true, nil
	}
	sortInputs(ins)
	e, err := rd.resolveKey(key, ins, true)
	if err != nil {
		return true, err
	}
	if err := rd.emitVersions(e, n); err != nil {
		return true, err
	}
	rd.arena.reset()
	// The rows stay in the batch for the caller's last flush (flushLast):
	// flushing a full one here built the next batch, of every column, for
	// nothing to fill (a key with at least a batch of versions).
	return true, nil
}

// keyShard returns the shard of td that holds sort key key: the shard
// columns' values, decoded from it, hash to one shard as a write's do.
func keyShard(t *catalog.Table, td *tableData, key []byte) (*shardData, error) {
	if len(td.shards) == 1 {
		return td.shards[0], nil
	}
	vals := make(map[catalog.ColumnID]types.Value, len(t.OrderBy))
	rest := key
	for _, id := range t.OrderBy {
		c, ok := t.AnyColumn(id)
		if !ok {
			return nil, fmt.Errorf("storage: column %d of the sort key is gone", id)
		}
		var v types.Value
		var err error
		if v, rest, err = types.DecodeKey(c.Type, rest); err != nil {
			return nil, err
		}
		vals[id] = v
	}
	var hk []byte
	for _, id := range t.ShardColumns() {
		v, ok := vals[id]
		if !ok {
			return nil, fmt.Errorf("storage: shard column %d is not in the sort key", id)
		}
		hk = types.AppendKey(hk, v)
	}
	return td.shards[td.shardOf(shardHash(hk))], nil
}
