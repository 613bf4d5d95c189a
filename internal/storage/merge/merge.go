package merge

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/vfs"
)

// DefaultPartRows is the number of rows after which a merge closes an
// output part (at the next key boundary) when Options names none: four
// blocks. part.Write takes a whole part in memory, so this bounds the
// output side of a merge's memory as the one block per input bounds the
// input side (invariant 4 of doc.go).
const DefaultPartRows = 4 * part.DefaultBlockRows

// Options describe one merge. Table, FS and Create are required.
type Options struct {
	// Table is the table the inputs belong to, as the catalog knows it
	// now: its mode chooses the algorithm, its groups the orderings, its
	// current columns the output columns.
	Table *catalog.Table
	// FS is where the output parts are written.
	FS vfs.FS
	// Create names each output part before it is written: the path on FS
	// and the part's id (from manifest.Store.NextPartID).
	Create func(kind part.Kind) (path string, id uint64, err error)
	// Shard is the shard the inputs belong to.
	Shard uint32
	// Level is the output level (Plan.Level).
	Level uint8
	// Oldest says that the inputs hold the shard's oldest data: every part
	// of the shard not in the merge is newer than every input (Plan.Oldest).
	// Only then may a keyed merge resolve versions for good (versioned:
	// current and history runs) and drop deletes (upsert).
	Oldest bool
	// PartRows bounds the rows of one output part (0 = DefaultPartRows). A
	// part is closed at the first key boundary at or after it, so all rows
	// of a key stay in one part.
	PartRows int
	// Write tunes the output parts' layout.
	Write part.WriteOptions
	// Pace, when set, is called every PaceRows input rows; it may block
	// to hold the merge back (the engine's background merges give way to
	// foreground reads on a machine with few cores).
	Pace func()
	// Expire drops what the table's retention policy has expired (R9.3).
	Expire Expiry
	// Horizon is the Ordering.Horizon of the table's groups: under
	// retention, whether a version repeats an earlier one is decided by
	// the horizon at its commit (version rule 3). nil when nothing
	// expires.
	Horizon func(uint64) uint64
}

// Expiry is what a merge drops because retention expired it. Reads leave
// the same rows out whether or not a merge has dropped them, so a merge
// may drop any of them, or none.
type Expiry struct {
	// Horizon: in a versioned merge with Oldest, the versions that
	// stopped counting at or before it (version.Expired) are dropped; in
	// an append merge, the rows committed at or before it. 0 drops none.
	// A versioned merge may drop them only if it holds every version of
	// the shard committed before the instant the horizon was judged at:
	// a repeat of an expired version (which the merge discards) must not
	// outlive it in a part left out.
	Horizon uint64
	// ByCol and Before: in an append merge, rows whose column ByCol holds
	// a value before Before are dropped (NULL is kept). ByCol 0 drops none.
	ByCol  catalog.ColumnID
	Before types.Value
}

// PaceRows is how many input rows a merge reads between calls of
// Options.Pace: a few milliseconds of merging.
const PaceRows = 4096

// Output is one part a merge wrote. Part is filled except CreatedAt and
// Location, which are the engine's; File is the path Create returned.
type Output struct {
	Part manifest.Part
	Info part.Info
}

// Stats count what a merge did.
type Stats struct {
	// In and Out count rows read and written.
	In, Out int64
	// Repeats counts versions dropped as repeats (version rule 3).
	Repeats int64
	// Discarded counts rows an upsert merge left out: losers, versions a
	// delete ended, and deletes no longer needed.
	Discarded int64
	// Expired counts rows left out because retention expired them.
	Expired int64
}

// ErrInput is wrapped by errors about inputs that break the contract:
// unsorted rows across inputs, a delete marker outside group 0, ordering
// values that do not fit their group, or parts of another table.
var ErrInput = errors.New("merge: bad input")

// Merge merges the parts inputs of one shard of opts.Table into new parts
// (doc.go, "Merging by mode") and returns them in output order: for a
// versioned merge with Oldest, the current run's parts, then the history
// run's. It reads each input one block at a time and writes parts of at most
// about PartRows rows, so its memory does not grow with the inputs' size.
// One part at a time is written on a second goroutine while merging goes
// on; Merge returns only after every write has finished. On error every
// part it wrote is removed. The inputs stay open; the caller
// closes them and swaps inputs for outputs in one manifest edit.
func Merge(inputs []*part.Reader, opts Options) ([]Output, Stats, error) {
	if opts.Table == nil || opts.FS == nil || opts.Create == nil {
		return nil, Stats{}, errors.New("merge: Options need Table, FS and Create")
	}
	if len(inputs) == 0 {
		return nil, Stats{}, errors.New("merge: no inputs")
	}
	for _, r := range inputs {
		if m := r.Meta(); m.Table != opts.Table.ID || m.Shard != opts.Shard {
			return nil, Stats{}, fmt.Errorf("%w: part %d is of table %d shard %d, not table %d shard %d",
				ErrInput, m.Part, m.Table, m.Shard, opts.Table.ID, opts.Shard)
		}
	}
	if opts.PartRows <= 0 {
		opts.PartRows = DefaultPartRows
	}
	lay, err := newLayout(opts.Table, inputs)
	if err != nil {
		return nil, Stats{}, err
	}
	m := &merger{opts: opts, lay: lay, busy: make(chan struct{}, 1)}
	// An output part holds at most about PartRows rows (a sixteenth more
	// leaves room for the key that crosses PartRows, as cut waits for the
	// key's end) and at most every input row; its first Data is sized for
	// that many.
	var rows uint64
	for _, r := range inputs {
		rows += r.Meta().Rows
	}
	m.outRows = int(min(rows, uint64(opts.PartRows)+uint64(opts.PartRows)/16))
	err = m.run(inputs)
	if werr := m.wait(); err == nil {
		err = werr
	}
	outs := m.written()
	if err != nil {
		for _, o := range outs {
			_ = opts.FS.Remove(o.Part.File)
		}
		return nil, Stats{}, err
	}
	// Parts were written as each run filled up; list each run's parts
	// together, in key order, the current run first.
	slices.SortStableFunc(outs, func(a, b Output) int { return cmp.Compare(a.Part.Kind, b.Part.Kind) })
	return outs, m.stats, nil
}

// merger is the state of one Merge.
type merger struct {
	opts  Options
	lay   *layout
	stats Stats
	// outs are the output runs.
	outs []*output
	// One part is written in the background while the merge goes on
	// (doc.go invariant 4 counts it): busy holds a token while a write is in
	// flight, and mu guards what the writer reports back — done, the parts
	// written in the order they were started, and werr, the first error.
	busy chan struct{}
	mu   sync.Mutex
	done []Output
	werr error
	// outRows sizes an output run's first Data (newData).
	outRows int
}

// wait blocks until no part write is in flight and returns the first
// write error.
func (m *merger) wait() error {
	m.busy <- struct{}{}
	<-m.busy
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.werr
}

// written returns the parts written so far; only after wait.
func (m *merger) written() []Output {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

// sink receives the merged input rows in (sort, group, commit, seq) order.
type sink interface {
	row(src *part.Data, in, i int) error
	finish() error
}

// run streams the inputs through the mode's sink.
func (m *merger) run(inputs []*part.Reader) error {
	// The heap reads each input's first block, which sizes the outputs.
	h, err := newHeap(inputs, m.lay.ids)
	if err != nil {
		return err
	}
	m.lay.measure(h.c)
	var s sink
	switch {
	case m.opts.Table.Mode == catalog.ModeAppend:
		o := m.newOutput(part.KindAppend)
		s = &appendSink{m: m, out: o}
	case m.opts.Table.Keyed():
		k, err := newKeyedSink(m)
		if err != nil {
			return err
		}
		s = k
	default:
		return fmt.Errorf("merge: table %s has no mode", m.opts.Table.Name)
	}
	for h.len() > 0 {
		c := h.c[0]
		m.stats.In++
		if m.opts.Pace != nil && m.stats.In%PaceRows == 0 {
			m.opts.Pace()
		}
		if err := s.row(&c.d, c.in, c.row); err != nil {
			return err
		}
		if err := h.advance(); err != nil {
			return err
		}
	}
	if err := s.finish(); err != nil {
		return err
	}
	for _, o := range m.outs {
		if err := o.flush(); err != nil {
			return err
		}
	}
	return nil
}

// appendSink concatenates: append rows are already in (sort, commit, seq)
// order in the merged stream, and nothing is dropped.
type appendSink struct {
	m   *merger
	out *output
}

func (a *appendSink) row(src *part.Data, in, i int) error {
	if x := &a.m.opts.Expire; x.Horizon != 0 || x.ByCol != 0 {
		if a.expired(src, i) {
			a.m.stats.Expired++
			return nil
		}
	}
	d := a.out.d
	if err := a.m.lay.copyCols(d, src, in, i, 0, false); err != nil {
		return err
	}
	a.out.fixed(src.Sort.BytesAt(i), 0, src.Commit[i], src.Seq[i], false, nil, zeroRes)
	return a.out.cut()
}

func (a *appendSink) finish() error { return nil }

// expired reports whether row i of src is past the merge's Expiry.
func (a *appendSink) expired(src *part.Data, i int) bool {
	x := &a.m.opts.Expire
	if src.Commit[i] <= x.Horizon {
		return true
	}
	if x.ByCol == 0 {
		return false
	}
	for j, id := range src.IDs {
		if id != x.ByCol {
			continue
		}
		v := src.Cols[j]
		if v == nil || v.IsNull(i) {
			return false
		}
		return types.Compare(v.Get(i), x.Before) < 0
	}
	return false
}

// output accumulates one output run, written as parts of about PartRows
// rows.
type output struct {
	m    *merger
	kind part.Kind
	// d collects the rows of the next part; spare is the Data of the part
	// last written, handed back by the writer (guarded by m.mu).
	d     *part.Data
	spare *part.Data
}

// newOutput adds an output run of kind k.
func (m *merger) newOutput(k part.Kind) *output {
	o := &output{m: m, kind: k, d: m.lay.newData(m.outRows, nil)}
	m.outs = append(m.outs, o)
	return o
}

// res is the resolution a row is written with.
type res struct {
	state                      version.State
	wonAt, endedAt, superseded uint64
}

var zeroRes res

// fixed appends the fixed columns of one row; the table columns were
// appended by the caller.
func (o *output) fixed(sort []byte, group uint16, commit uint64, seq uint32, tomb bool, order []byte, r res) {
	d := o.d
	d.Sort.AppendBytes(sort)
	d.Order.AppendBytes(order)
	d.Group = append(d.Group, group)
	d.Commit = append(d.Commit, commit)
	d.Seq = append(d.Seq, seq)
	d.Tomb = append(d.Tomb, tomb)
	d.WonAt = append(d.WonAt, r.wonAt)
	d.EndedAt = append(d.EndedAt, r.endedAt)
	d.SupersededBy = append(d.SupersededBy, r.superseded)
	d.State = append(d.State, r.state)
	d.Rows++
	o.m.stats.Out++
}

// cut writes the run's rows as a part once there are PartRows of them; the
// caller calls it only at key boundaries.
func (o *output) cut() error {
	if o.d.Rows < o.m.opts.PartRows {
		return nil
	}
	return o.flush()
}

// flush hands the run's pending rows to the background writer as one part
// and continues with the buffers of the part written before, so a run holds
// at most two parts' rows. It waits only while the previous write is still
// in flight.
func (o *output) flush() error {
	d := o.d
	if d.Rows == 0 {
		return nil
	}
	m := o.m
	path, id, err := m.opts.Create(o.kind)
	if err != nil {
		return fmt.Errorf("merge: name output part: %w", err)
	}
	m.busy <- struct{}{}
	m.mu.Lock()
	werr := m.werr
	o.d, o.spare = o.spare, nil
	m.mu.Unlock()
	if werr != nil {
		<-m.busy
		return werr
	}
	if o.d == nil {
		// The second Data of the run: sized like the first, whose part
		// the writer has not started on yet.
		o.d = m.lay.newData(max(d.Rows, m.outRows), d)
	}
	go o.write(d, path, id)
	return nil
}

// write writes d as part id at path, reports the result, and hands d back
// for reuse. It runs while holding m.busy.
func (o *output) write(d *part.Data, path string, id uint64) {
	m := o.m
	defer func() { <-m.busy }()
	meta := part.Meta{Table: m.opts.Table.ID, Shard: m.opts.Shard, Part: id, Kind: o.kind,
		Level: m.opts.Level, Columns: m.lay.metas, OrderFrom: m.lay.orderFrom}
	info, err := part.Write(m.opts.FS, path, d, meta, m.opts.Write)
	mp := manifest.Part{
		Table: uint64(m.opts.Table.ID), Shard: m.opts.Shard, ID: id, Level: m.opts.Level,
		Kind: manifest.Kind(o.kind), Rows: uint64(d.Rows), Bytes: uint64(info.Bytes),
		MinCommit: d.Commit[0], MaxCommit: d.Commit[0],
		MinKey: bytes.Clone(d.Sort.BytesAt(0)), MaxKey: bytes.Clone(d.Sort.BytesAt(d.Rows - 1)),
		File: path,
	}
	for _, c := range d.Commit {
		mp.MinCommit, mp.MaxCommit = min(mp.MinCommit, c), max(mp.MaxCommit, c)
	}
	if o.kind == part.KindHistory {
		mp.ExpiresFrom = expiresFrom(d)
	}
	d.Reset()
	m.mu.Lock()
	defer m.mu.Unlock()
	o.spare = d
	if err != nil {
		if m.werr == nil {
			m.werr = fmt.Errorf("merge: %w", err)
		}
		return
	}
	m.done = append(m.done, Output{Part: mp, Info: info})
}

// expiresFrom is manifest.Part.ExpiresFrom of a history part holding d:
// the lowest horizon that expires one of its versions. Delete markers are
// left out: no merge drops them.
func expiresFrom(d *part.Data) uint64 {
	from := uint64(math.MaxUint64)
	for i := range d.Rows {
		if d.Tomb[i] {
			continue
		}
		if at, ok := version.ExpiresAt(version.Resolved{Commit: d.Commit[i], State: d.State[i], EndedAt: d.EndedAt[i]}); ok {
			from = min(from, at)
		}
	}
	return from
}

// cursor reads one input block by block.
type cursor struct {
	r   *part.Reader
	in  int
	blk int
	row int
	d   part.Data
}

// load reads block c.blk; it reports false when the input is exhausted.
func (c *cursor) load(ids []catalog.ColumnID) (bool, error) {
	for c.blk < len(c.r.Blocks()) {
		if err := c.r.ReadBlock(c.blk, ids, &c.d); err != nil {
			return false, fmt.Errorf("merge: %w", err)
		}
		c.row = 0
		if c.d.Rows > 0 {
			return true, nil
		}
		c.blk++
	}
	return false, nil
}

// cmpRow orders the current rows of two cursors by (sort, group, commit,
// seq), then by input so that the order is total.
func cmpRow(a, b *cursor) int {
	if c := bytes.Compare(a.d.Sort.BytesAt(a.row), b.d.Sort.BytesAt(b.row)); c != 0 {
		return c
	}
	ag, bg := a.d.Group[a.row], b.d.Group[b.row]
	if ag != bg {
		return int(ag) - int(bg)
	}
	ac, bc := a.d.Commit[a.row], b.d.Commit[b.row]
	if ac != bc {
		if ac < bc {
			return -1
		}
		return 1
	}
	as, bs := a.d.Seq[a.row], b.d.Seq[b.row]
	if as != bs {
		if as < bs {
			return -1
		}
		return 1
	}
	return a.in - b.in
}

// heap is a binary min-heap of the cursors that still have rows, by cmpRow.
// It is hand-written so that the row loop makes no interface calls and
// boxes nothing.
type heap struct {
	c   []*cursor
	ids []catalog.ColumnID
}

func newHeap(inputs []*part.Reader, ids []catalog.ColumnID) (*heap, error) {
	h := &heap{ids: ids}
	for i, r := range inputs {
		c := &cursor{r: r, in: i}
		ok, err := c.load(ids)
		if err != nil {
			return nil, err
		}
		if ok {
			h.c = append(h.c, c)
		}
	}
	for i := len(h.c)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h, nil
}

func (h *heap) len() int { return len(h.c) }

// advance moves the top cursor to its next row and restores the heap. It
// also checks that each input is sorted, which the merged order relies on.
func (h *heap) advance() error {
	c := h.c[0]
	c.row++
	if c.row < c.d.Rows {
		if c.d.Sort != nil && bytes.Compare(c.d.Sort.BytesAt(c.row-1), c.d.Sort.BytesAt(c.row)) > 0 {
			return fmt.Errorf("%w: part %d is not sorted", ErrInput, c.r.Meta().Part)
		}
		h.down(0)
		return nil
	}
	c.blk++
	ok, err := c.load(h.ids)
	if err != nil {
		return err
	}
	if !ok {
		last := len(h.c) - 1
		h.c[0] = h.c[last]
		h.c[last] = nil
		h.c = h.c[:last]
	}
	if len(h.c) > 0 {
		h.down(0)
	}
	return nil
}

func (h *heap) down(i int) {
	n := len(h.c)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && cmpRow(h.c[r], h.c[l]) < 0 {
			j = r
		}
		if cmpRow(h.c[j], h.c[i]) >= 0 {
			return
		}
		h.c[i], h.c[j] = h.c[j], h.c[i]
		i = j
	}
}
