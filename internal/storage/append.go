package storage

import (
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// appendMem is the memtable of one shard of an append table: the rows of
// each write, in commit order, as columnar chunks the memtable owns. Chunks
// are immutable once added; readers copy the chunk list under the read lock
// and then read the chunks without it.
type appendMem struct {
	mu        sync.RWMutex
	chunks    []*appendChunk
	rows      uint64
	used      uint64
	minCommit uint64
	maxCommit uint64
	colBytes  map[catalog.ColumnID]uint64
}

// appendChunk is the rows one write put in one shard.
type appendChunk struct {
	commit uint64
	lay    *layout
	cols   []*types.Vector // parallel to lay.cols
	rows   int
}

func newAppendMem() *appendMem { return &appendMem{colBytes: map[catalog.ColumnID]uint64{}} }

// add copies rows (indexes into w.Batch) into a new chunk at commit.
func (m *appendMem) add(w *Write, lay *layout, rows []int, commit uint64) {
	c := &appendChunk{commit: commit, lay: lay, rows: len(rows), cols: make([]*types.Vector, len(w.Cols))}
	var size uint64
	for i := range w.Cols {
		src := w.Batch.Cols[i]
		dst := types.NewVector(src.Type(), len(rows))
		for _, r := range rows {
			dst.AppendFrom(src, r)
		}
		c.cols[i] = dst
		sz := uint64(dst.ValueBytes())
		size += sz
		m.colBytesAdd(w.Cols[i], sz)
	}
	m.mu.Lock()
	m.chunks = append(m.chunks, c)
	m.rows += uint64(len(rows))
	m.used += size + 64
	if m.minCommit == 0 || commit < m.minCommit {
		m.minCommit = commit
	}
	m.maxCommit = max(m.maxCommit, commit)
	m.mu.Unlock()
}

func (m *appendMem) colBytesAdd(id catalog.ColumnID, n uint64) {
	m.mu.Lock()
	m.colBytes[id] += n
	m.mu.Unlock()
}

// view returns the chunks present now; the slice is never written again
// below its length, so it may be read without the lock.
func (m *appendMem) view() []*appendChunk {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.chunks[:len(m.chunks):len(m.chunks)]
}
