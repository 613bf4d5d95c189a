package part

import (
	"bytes"
	"sort"

	"github.com/parquet-go/parquet-go"

	"github.com/strata-db/strata/internal/types"
)

// Sort-key pages of history parts, cached as key runs.
//
// A history part holds every version of a key side by side, ~10 rows per
// key in bench/'s data, so a 2 048-row page of its sort keys holds ~200
// distinct keys. Decoded as they are, the page is one key per row, ~100 KB
// for keys of ~45 bytes: half of what the page cache spends on a history
// page of every column a lookup AS OF a past commit reads, so at medium
// scale the history outgrew the cache's share for it and such a lookup
// decoded ~5 of its 9 pages cold (docs/benchmarks.md, "Session of
// 2026-12-06 (ninth)"). FindKey needs of a sort-key page only where each key's rows
// start and end, so the page it decodes of a history part is cached as
// key runs: each distinct key once (Data.Sort, with its key index) and
// where its rows end (Data.runEnds), under a key of its own (keyRunsCol),
// so that a reader of the page's keys row by row (ReadRows with FixSort,
// a scan) never finds this form. A page whose row-by-row form is already
// cached, or whose whole chunk a scan kept, is searched in that form as
// before rather than decoded again.

// keyRunsCol marks the column of a page cache key as the key-runs form of
// that column's page; Parquet column indexes stay far below it.
const keyRunsCol = 1 << 31

// keyRunsPage returns the sort-key page of block blk holding rows [from,
// to) (a whole page, as FindKey walks them) as key runs, from the cache or
// decoded, using d's scratch, and cached. It returns nil when the page is
// to be searched row by row (FindKey's other path): r is no history part
// or has no cache, the part names no page size or the page is larger than
// a key index covers, its row-by-row form or its chunk is cached, or the
// decoded rows are not the page asked for. That last case (a file whose
// pages are not cut every PageRows rows, which Write never makes) costs
// the page a second decode in FindKey's other path, each time.
func (r *Reader) keyRunsPage(w *[]byte, blk int, chunks []parquet.ColumnChunk, from, to int, d *Data) (*Data, error) {
	pr := r.meta.PageRows
	if r.cache == nil || r.meta.Kind != KindHistory || pr <= 0 || pr > maxIndexedRows || from%pr != 0 || to-from > pr || to <= from {
		return nil, nil
	}
	task := chunkTask{col: r.fixed[fSort], fixed: fSort}
	k := pageKey{reader: r.id, block: uint32(blk), col: uint32(task.col) | keyRunsCol, first: uint32(from)}
	if kr := r.cache.find(k); kr != nil {
		if d.Trace != nil {
			d.Trace.Hits++
		}
		return kr, nil
	}
	if full, ok := r.uniformPage(blk, &task, from, to); ok && r.cache.has(full) || r.cache.has(r.chunkKey(blk, &task)) {
		return nil, nil
	}
	r.cache.missed(k)
	task.uncached = true
	src, _, err := r.decodePages(w, blk, &task, chunks, from, to, d.scratch, 0, d.Trace)
	if err != nil {
		return nil, err
	}
	if src.first != from || src.Sort.Len() != to-from {
		return nil, nil
	}
	kr := keyRuns(src.Sort)
	return r.cache.put(k, kr, r.cacheClass()), nil
}

// warmKeyRuns puts the sort-key page of block blk holding rows [from, to)
// in the cache as key runs, as FindKey would (Prewarm); d is scratch. It
// reports false when the page is not one FindKey keeps as key runs
// (keyRunsPage's nil), so that the caller warms it row by row instead.
func (r *Reader) warmKeyRuns(blk, from, to int, d *Data) (bool, error) {
	if d.scratch == nil {
		d.scratch = &Data{}
	}
	w := r.window()
	defer r.windows.Put(w)
	kr, err := r.keyRunsPage(w, blk, r.file.RowGroups()[blk].ColumnChunks(), from, to, d)
	return kr != nil, err
}

// keyRuns builds the key-runs form of a page of at most maxIndexedRows
// sorted keys: each distinct key once, in order, and where its rows end.
func keyRuns(keys *types.Vector) *Data {
	n := keys.Len()
	// The keys are sorted, so a key equal to the one before it adds a row
	// to its run; the keys' storage is sized once the runs are known.
	var starts [maxIndexedRows]uint16
	runs, size := 0, 0
	var last []byte
	for i := 0; i < n; i++ {
		k := keys.BytesAt(i)
		if i > 0 && bytes.Equal(k, last) {
			continue
		}
		starts[runs] = uint16(i)
		runs++
		size += len(k)
		last = k
	}
	kr := &Data{Rows: n, Sort: types.NewVector(types.Of(types.Bytes), runs), runEnds: make([]uint16, runs)}
	kr.Sort.Reserve(size)
	for x := range runs {
		kr.Sort.AppendBytes(keys.BytesAt(int(starts[x])))
		if x > 0 {
			kr.runEnds[x-1] = starts[x]
		}
	}
	if runs > 0 {
		kr.runEnds[runs-1] = uint16(n)
	}
	return kr
}

// findRun returns the index of key among the distinct keys of key-runs
// page kr, or -1.
func (kr *Data) findRun(key []byte) int {
	if x, indexed := kr.findKey(key); indexed {
		return x
	}
	n := kr.Sort.Len()
	x := sort.Search(n, func(i int) bool { return bytes.Compare(kr.Sort.BytesAt(i), key) >= 0 })
	if x == n || !bytes.Equal(kr.Sort.BytesAt(x), key) {
		return -1
	}
	return x
}

// runStart is the first page row of run x of key-runs page kr.
func (kr *Data) runStart(x int) int {
	if x == 0 {
		return 0
	}
	return int(kr.runEnds[x-1])
}
