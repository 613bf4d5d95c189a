package part

import (
	"bytes"
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// Kind says what rows a part holds and so which of its columns mean
// something (ARCHITECTURE.md "Storage, concretely").
type Kind uint8

// The kinds of part.
const (
	// KindDelta holds versions and delete markers as they were committed:
	// a memtable flush, or a merge of such parts. WonAt, EndedAt,
	// SupersededBy and State are zero.
	KindDelta Kind = iota + 1
	// KindCurrent is the current run a merge of a versioned or upsert shard
	// writes: one winner per key and group as of the merge's newest commit,
	// with its resolution in WonAt, EndedAt, SupersededBy and State.
	KindCurrent
	// KindHistory is the history run of a merge of a versioned shard: every
	// other version, each with the commit at which it stopped being current.
	KindHistory
	// KindAppend holds rows of an append table; Group is 0 and Tomb false.
	KindAppend
	// KindAsOf is one epoch of a run's AS OF index (storage/asofindex.go):
	// the current and history rows whose interval [WonAt, EndedAt) meets
	// the epoch, copied with their resolution. Its rows repeat the run's,
	// so no reader may take it for a part of the shard.
	KindAsOf
)

var kindNames = [...]string{KindDelta: "delta", KindCurrent: "current", KindHistory: "history", KindAppend: "append", KindAsOf: "asof"}

// String returns the kind as system.parts and the part metadata spell it.
func (k Kind) String() string {
	if k >= KindDelta && k <= KindAsOf {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// parseKind reads a Kind back from String's form.
func parseKind(s string) (Kind, bool) {
	for k := KindDelta; k <= KindAsOf; k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return 0, false
}

// ColumnMeta describes one table column stored in a part: its id, the type
// it had when the part was written (a later ALTER may have widened it,
// R8.1; readers cast), and the codec it was written with (R11.3).
type ColumnMeta struct {
	ID    catalog.ColumnID
	Type  types.Type
	Codec catalog.Codec
}

// Meta is what a part file says about itself, kept in the Parquet footer's
// key/value metadata. The caller of Write sets the identity (Table, Shard,
// Part, Kind, Level) and Columns; Write computes the rest from the rows.
type Meta struct {
	Table catalog.TableID
	Shard uint32
	Part  uint64
	Kind  Kind
	// Level is the merge level: 0 for a flush, one more than the highest
	// input for a merge.
	Level uint8
	// Columns describes Data.Cols, in that order.
	Columns []ColumnMeta

	// Rows is the number of stored rows.
	Rows uint64
	// MinCommit and MaxCommit bound the Commit column: a read AS OF n skips
	// a part whose MinCommit is above n.
	MinCommit, MaxCommit uint64
	// MinSort and MaxSort are the first and last sort keys.
	MinSort, MaxSort []byte
	// KeyBlocks says every block ends at a sort-key boundary: all rows of
	// a key are in one block. Write sets it unless one key held more than
	// two blocks' worth of rows; parts written before it existed read as
	// false. The fast read paths of storage need it.
	KeyBlocks bool
	// PageRows is the most rows of one page: pages end at its multiples
	// (Write sets it; 0 in parts written before it existed, which have
	// no Keys).
	PageRows int
	// OrderFrom lists, per attribute group, the table columns its ordering
	// values are encoded from (VALID BY, then REVISION BY): the caller
	// of Write offers it (flushes and merges do), and Write keeps it, in
	// a history or delta part, only if every row's Order is exactly that
	// encoding (empty for delete markers and for groups it does not
	// list). The part then stores
	// _order empty and readers rebuild Order from the columns (order.go);
	// on a Reader's Meta it is set only for such parts.
	OrderFrom []GroupOrder
	// Residual says the resolution columns are stored as residuals
	// (resid.go): Write sets it for the kinds residualKind names, and
	// reads undo them, so Data always holds the values written.
	Residual bool
	// PositionResidual says _commit and _seq are stored as residuals
	// (resid.go): Write sets it for such a part when at least half the
	// rows that have a row to refer to repeat its commit, so a part whose
	// groups are written by separate commits keeps them as they are.
	PositionResidual bool
}

// GroupOrder names the ordering columns of one attribute group, in the
// order the group compares them.
type GroupOrder struct {
	Group uint16
	Cols  []catalog.ColumnID
}

// Overlaps reports whether a key range [lo, hi) (storage.KeyRange: nil
// bounds are open, bounds may be prefixes of a sort key) can hold a key of
// the part.
func (m *Meta) Overlaps(lo, hi []byte) bool { return overlaps(m.MinSort, m.MaxSort, lo, hi) }

// Column returns the index in Columns of column id, or -1.
func (m *Meta) Column(id catalog.ColumnID) int {
	for i := range m.Columns {
		if m.Columns[i].ID == id {
			return i
		}
	}
	return -1
}

// BlockInfo describes one block (Parquet row group) of a part: enough to
// skip it without reading it.
type BlockInfo struct {
	Rows                 int
	MinSort, MaxSort     []byte
	MinCommit, MaxCommit uint64
	// Keys is a sparse index of the sort column: Keys[j] is the sort key
	// of row (j+1)·Meta.PageRows, the first row of a page. A lookup finds the
	// page that can hold a key without decoding the others (FindKey).
	Keys [][]byte
}

// Overlaps reports whether the key range [lo, hi) can hold a key of the
// block; see Meta.Overlaps.
func (b *BlockInfo) Overlaps(lo, hi []byte) bool { return overlaps(b.MinSort, b.MaxSort, lo, hi) }

// overlaps reports whether [min, max] meets [lo, hi). A key equal to hi, or
// extending hi, is at or above it, so hi excludes every key with the prefix
// hi: the exclusive bound of a prefix range.
func overlaps(min, max, lo, hi []byte) bool {
	if lo != nil && bytes.Compare(max, lo) < 0 {
		return false
	}
	if hi != nil && bytes.Compare(min, hi) >= 0 {
		return false
	}
	return true
}

// Data is the content of a part, or of one block of it, column by column.
// Row i of the part is row i of every column. Rows are sorted by (Sort,
// Group, Commit, Seq).
//
// For Write, Sort, Commit and Seq are required; Group, Tomb, WonAt, EndedAt,
// SupersededBy, State and Order may be left empty, which stores zero
// (false, empty) in every row. ReadBlock always fills them all.
type Data struct {
	// Rows is the number of rows.
	Rows int
	// Sort is the memcmp sort key of each row (a BYTES vector without
	// NULLs): types.AppendKey of the ORDER BY columns, one after another.
	Sort *types.Vector
	// Group is the attribute group of the row (0 for append tables).
	Group []uint16
	// Commit and Seq are the row's position: its commit and its place in
	// the commit.
	Commit []uint64
	Seq    []uint32
	// Tomb marks a delete marker (R5.4).
	Tomb []bool
	// WonAt, EndedAt, SupersededBy and State are version.Resolved's fields,
	// meaningful in current and history parts.
	WonAt, EndedAt, SupersededBy []uint64
	State                        []version.State
	// Order holds the encoded ordering values of the row's group (a BYTES
	// vector without NULLs): a length-prefixed concatenation of one memcmp
	// value per ordering column, so reads resolve without decoding columns.
	Order *types.Vector
	// IDs names the table columns in Cols.
	IDs []catalog.ColumnID
	// Cols holds the table columns, each of the type the part stores for
	// it; a column a row's group does not hold is NULL in that row. After
	// ReadBlock, the vector of a column the part does not hold is nil (the
	// caller fills the column's introduced default, R6.5).
	Cols []*types.Vector
	// Trace, when not nil, counts the pages that point reads into d
	// (FindKey, ReadRows) take from the caches and decode. Reset keeps it.
	Trace *PageTrace

	// scratch holds the whole pages ReadRows decodes before copying out
	// the rows asked for; kept with d so that lookups reuse it.
	scratch *Data
	// first is the block row of row 0 of a scratch Data.
	first int
	// tasks is ReadRows' task list, kept for reuse.
	tasks []chunkTask
	// view: ReadBlockView filled d with the cache's shared slices, which
	// Reset and the reads into d drop instead of reusing.
	view bool
	// orderSrc holds the groups, delete markers and ordering columns a
	// read of a part with Meta.OrderFrom decodes to rebuild Order, when
	// the read itself does not ask for them (order.go); kept for reuse.
	orderSrc *Data
	// orderVecs, orderMiss and orderBuf are that rebuild's scratch.
	orderVecs []*types.Vector
	orderMiss []catalog.ColumnID
	orderBuf  []byte
	// residSrc holds the columns a read of a part with Meta.Residual
	// decodes to undo the residuals when the read itself does not ask for
	// them, and residPages the pages ReadRows decodes for the same
	// (resid.go); kept for reuse.
	residSrc   *Data
	residPages [3]*Data
	// basePage names the page a residPages entry holds (undoPages), so
	// that the next residual column of the same rows reuses it; zero when
	// it holds none.
	basePage pageTag
	// keyIdx indexes Sort's keys (keyindex.go), on pages in the page
	// cache only.
	keyIdx []uint16
	// runEnds, on a sort-key page cached as key runs (keyruns.go) only,
	// is where the rows of each of Sort's keys end: Sort then holds each
	// key of the page once, and the rows of key x are [runEnds[x-1],
	// runEnds[x]) of the page (from 0 for the first).
	runEnds []uint16
}

// Reset empties d, keeping every buffer for reuse.
func (d *Data) Reset() {
	if d.view {
		*d = Data{Trace: d.Trace}
		return
	}
	d.Rows = 0
	d.keyIdx, d.runEnds = nil, nil
	d.basePage = pageTag{}
	if d.Sort != nil {
		d.Sort.Reset()
	}
	if d.Order != nil {
		d.Order.Reset()
	}
	d.Group, d.Commit, d.Seq, d.Tomb = d.Group[:0], d.Commit[:0], d.Seq[:0], d.Tomb[:0]
	d.WonAt, d.EndedAt, d.SupersededBy, d.State = d.WonAt[:0], d.EndedAt[:0], d.SupersededBy[:0], d.State[:0]
	for _, c := range d.Cols {
		if c != nil {
			c.Reset()
		}
	}
}

// optionalLen checks that an optional fixed column is empty or has one
// entry per row.
func optionalLen(name string, n, rows int) error {
	if n != 0 && n != rows {
		return fmt.Errorf("part: %s has %d rows, want %d or none", name, n, rows)
	}
	return nil
}

// validate checks d against meta before anything is written: lengths,
// types, and the sort order every reader relies on (invariant 2 of doc.go).
func (d *Data) validate(meta *Meta) error {
	n := d.Rows
	if n <= 0 {
		return fmt.Errorf("part: a part needs at least one row")
	}
	if d.Sort == nil || d.Sort.Type().Kind != types.Bytes || d.Sort.Len() != n || d.Sort.HasNulls() {
		return fmt.Errorf("part: Sort must be a BYTES vector of %d rows without NULLs", n)
	}
	if len(d.Commit) != n || len(d.Seq) != n {
		return fmt.Errorf("part: Commit and Seq need %d rows, have %d and %d", n, len(d.Commit), len(d.Seq))
	}
	for _, c := range []struct {
		name string
		n    int
	}{
		{"Group", len(d.Group)}, {"Tomb", len(d.Tomb)}, {"WonAt", len(d.WonAt)}, {"EndedAt", len(d.EndedAt)},
		{"SupersededBy", len(d.SupersededBy)}, {"State", len(d.State)},
	} {
		if err := optionalLen(c.name, c.n, n); err != nil {
			return err
		}
	}
	if d.Order != nil && d.Order.Len() != 0 {
		if d.Order.Type().Kind != types.Bytes || d.Order.Len() != n || d.Order.HasNulls() {
			return fmt.Errorf("part: Order must be empty or a BYTES vector of %d rows without NULLs", n)
		}
	}
	if meta.Kind < KindDelta || meta.Kind > KindAsOf {
		return fmt.Errorf("part: unknown part kind %d", meta.Kind)
	}
	if len(d.Cols) != len(meta.Columns) || len(d.IDs) != len(meta.Columns) {
		return fmt.Errorf("part: %d column vectors and %d ids for %d described columns", len(d.Cols), len(d.IDs), len(meta.Columns))
	}
	seen := make(map[catalog.ColumnID]bool, len(meta.Columns))
	for i, c := range meta.Columns {
		if seen[c.ID] {
			return fmt.Errorf("part: column %d appears twice", c.ID)
		}
		seen[c.ID] = true
		v := d.Cols[i]
		switch {
		case d.IDs[i] != c.ID:
			return fmt.Errorf("part: column %d of Data is id %d, Meta says %d", i, d.IDs[i], c.ID)
		case v == nil || v.Type() != c.Type:
			return fmt.Errorf("part: column %d must be a %s vector", c.ID, c.Type)
		case v.Len() != n:
			return fmt.Errorf("part: column %d has %d rows, want %d", c.ID, v.Len(), n)
		}
		if _, err := physicalOf(c.Type); err != nil {
			return fmt.Errorf("part: column %d: %w", c.ID, err)
		}
	}
	for i := 1; i < n; i++ {
		if d.less(i, i-1) {
			return fmt.Errorf("part: rows %d and %d are out of (sort key, group, commit, seq) order", i-1, i)
		}
	}
	return nil
}

// less reports whether row i sorts before row j.
func (d *Data) less(i, j int) bool {
	return posLess(d.Sort.BytesAt(i), at(d.Group, i), d.Commit[i], d.Seq[i], d.Sort.BytesAt(j), at(d.Group, j), d.Commit[j], d.Seq[j])
}

// posLess orders two rows by (sort key, group, commit, seq).
func posLess(as []byte, ag uint16, ac uint64, aq uint32, bs []byte, bg uint16, bc uint64, bq uint32) bool {
	if c := bytes.Compare(as, bs); c != 0 {
		return c < 0
	}
	if ag != bg {
		return ag < bg
	}
	if ac != bc {
		return ac < bc
	}
	return aq < bq
}

// at returns s[i], or the zero value when the optional column s is empty.
func at[T any](s []T, i int) T {
	if len(s) == 0 {
		var z T
		return z
	}
	return s[i]
}
