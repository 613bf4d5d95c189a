package storage

import (
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// A point read's reader is built from the table and the columns asked
// for, not from the snapshot: its column plans, fast plan, key decoder,
// one-row batch and scratch were most of a lookup's allocations (~25 of
// a warm lookup's ~40, and of a point SELECT's ~95). Lookup therefore
// takes a reader from a small free list per (table version, columns,
// _commit) and gives it back when it returns without error; a reader
// that failed mid-read is dropped, as its scratch may be half-written.
// The catalog table is immutable (DDL makes a new one), so its pointer
// names the schema the plans were built for; the free lists keep old
// tables alive only until the map is next emptied (maxLookupKeys).

// A read of one key's versions (versionsOfKey) takes its reader from the
// same free lists, under keys of their own: building it (column plans,
// the batch of every column, the maps) was an eighth of the read.

// maxPooledCols is the most columns a pooled read reads; a wider read
// builds its reader each time (the key is a fixed-size array so that
// finding the free list allocates nothing).
const maxPooledCols = 16

// maxPooledReaders bounds each free list: about the number of lookups of
// one table and column set in flight at once.
const maxPooledReaders = 4

// maxLookupKeys bounds the free lists kept; past it they are all dropped.
const maxLookupKeys = 256

// lookupReaderKey names the readers that can serve a lookup.
type lookupReaderKey struct {
	t      *catalog.Table
	n      int
	cols   [maxPooledCols]catalog.ColumnID
	commit bool
	// versions: a reader of versions (newReader's versions), of batches
	// of batch rows.
	versions bool
	batch    int
}

// unpooledLookups, set by tests, makes every lookup build its reader, the
// reference the pooled readers are compared with.
var unpooledLookups bool

var lookupReaders struct {
	mu sync.Mutex
	m  map[lookupReaderKey][]*reader
}

// lookupReader returns a reader for a one-row lookup of spec.Cols of t,
// pooled when it can be: ok reports whether it should be handed back to
// putLookupReader with k when the lookup succeeds.
func lookupReader(t *catalog.Table, spec *ScanSpec) (rd *reader, k lookupReaderKey, ok bool, err error) {
	return pooledReader(t, spec, false)
}

// pooledReader is lookupReader, or with versions the reader of one key's
// versions; a reader taken back after its last batch was handed on gets
// a new one.
func pooledReader(t *catalog.Table, spec *ScanSpec, versions bool) (rd *reader, k lookupReaderKey, ok bool, err error) {
	if len(spec.Cols) > maxPooledCols || unpooledLookups {
		rd, err = newReader(t, spec, versions)
		return rd, k, false, err
	}
	k = lookupReaderKey{t: t, n: len(spec.Cols), commit: spec.Commit, versions: versions, batch: spec.BatchRows}
	copy(k.cols[:], spec.Cols)
	lookupReaders.mu.Lock()
	if l := lookupReaders.m[k]; len(l) > 0 {
		rd = l[len(l)-1]
		l[len(l)-1] = nil
		lookupReaders.m[k] = l[:len(l)-1]
	}
	lookupReaders.mu.Unlock()
	if rd == nil {
		if rd, err = newReader(t, spec, versions); err != nil {
			return nil, k, false, err
		}
	}
	if rd.batch == nil {
		rd.batch = types.NewBatch(rd.outTypes, rd.batchCap)
	}
	rd.readOnly, rd.slow = spec.ReadOnly, slowReads
	return rd, k, true, nil
}

// putLookupReader empties what of rd's state one lookup left behind and
// keeps it for the next lookup of k.
func putLookupReader(k lookupReaderKey, rd *reader) {
	if rd.batch != nil {
		rd.batch.Reset()
	}
	rd.stats = ScanStats{}
	rd.seek = nil
	rd.trace = nil
	rd.retain, rd.horizon = Retention{}, nil
	// Entries name part Data and layouts of the snapshot just read: drop
	// them so a pooled reader does not keep their pages alive (layouts are
	// per memtable, and there are few). The classified run (rd.runOf,
	// rd.run) stays, as the next lookup reuses it: an idle reader thus
	// keeps the part list of a shard a merge has since retired (memory
	// only; files are closed by their references) until it is reused or
	// evicted.
	clear(rd.pcCache)
	rd.pcCache = rd.pcCache[:0]
	if len(rd.layMap) > 16 {
		clear(rd.layMap)
	}
	lookupReaders.mu.Lock()
	defer lookupReaders.mu.Unlock()
	if lookupReaders.m == nil || len(lookupReaders.m) >= maxLookupKeys && lookupReaders.m[k] == nil {
		lookupReaders.m = map[lookupReaderKey][]*reader{}
	}
	if l := lookupReaders.m[k]; len(l) < maxPooledReaders {
		lookupReaders.m[k] = append(l, rd)
	}
}
