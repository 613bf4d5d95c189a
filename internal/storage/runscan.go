package storage

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// Reads of a merged shard (ARCHITECTURE.md "Reads at a commit").
//
// A merge of a keyed shard's oldest data writes a current run (KindCurrent:
// one winner per key and group as of the run's newest commit, with its
// interval [WonAt, EndedAt)) and, for a versioned table, a history run
// (every other retained version and every delete marker, each with its
// interval). Newer data sits in KindDelta parts and the memtable. Then:
//
//   - At a commit n at or after the run's newest commit, a key no newer
//     source touches (commit ≤ n) reads exactly its current-run rows: the
//     winners did not change. Those rows are streamed block by block,
//     column by column, into the output (scanCurrent). A key a newer
//     source touches is resolved from its inputs as the general path does
//     (rule 7 of package version): its newer ones, its current-run rows
//     taken from the streamed block, and its history (found by seeking,
//     not scanning) only when mayRepeatHistory says it can matter. The
//     inputs are resolved without their payloads first (lightinputs.go)
//     and again with them only when the rules say a tie made them matter.
//   - At a commit n before the run's newest commit, nothing newer is
//     visible, and the winner of each (key, group) is the one row of the
//     current or history run with WonAt ≤ n < EndedAt (rule 6): a range
//     check over both runs, merged by key (scanInterval), not a re-merge;
//     or, when the run has an AS OF index, over the index's epoch holding
//     n alone (asofindex.go).
//
// Both need every row of a key in one block (part.Meta.KeyBlocks) and the
// runs' parts to be key-disjoint; a shard that is not laid out so (or a
// versions() read, or an upsert table read before its run's newest commit)
// takes the general path (partscan.go), which tests compare these with.

// fastReads and intervalReads count the shard reads the fast paths took,
// so tests can tell that they ran; touchedLight counts the touched keys
// scanCurrent resolved without payloads (resolveLight), touchedAlone and
// touchedHistory the others, resolved without and with the history run,
// touchedRepeats those of the first whose tie was an exact repeat.
var fastReads, intervalReads, touchedLight, touchedAlone, touchedHistory, touchedRepeats atomic.Int64

// runShard is a shard's parts, classified for the fast paths.
type runShard struct {
	cur, hist []*partFile // key-disjoint, in key order
	newer     []*partFile // KindDelta parts, all newer than the run
	runMax    uint64      // newest commit of the run
}

// classifyRun reports whether sd is laid out for the fast paths.
func classifyRun(sd *shardData) (runShard, bool) {
	var rs runShard
	for _, pf := range sd.parts {
		m := pf.r.Meta()
		switch m.Kind {
		case part.KindCurrent:
			rs.cur = append(rs.cur, pf)
		case part.KindHistory:
			rs.hist = append(rs.hist, pf)
		case part.KindDelta:
			rs.newer = append(rs.newer, pf)
			continue
		default:
			return rs, false
		}
		if !m.KeyBlocks {
			return rs, false
		}
		rs.runMax = max(rs.runMax, m.MaxCommit)
	}
	if len(rs.cur)+len(rs.hist) == 0 {
		return rs, false
	}
	for _, pf := range rs.newer {
		if pf.r.Meta().MinCommit <= rs.runMax {
			return rs, false
		}
	}
	return rs, disjoint(rs.cur) && disjoint(rs.hist)
}

// disjoint sorts the parts of one run by key and reports whether their
// key spans are disjoint.
func disjoint(ps []*partFile) bool {
	slices.SortFunc(ps, func(a, b *partFile) int { return bytes.Compare(a.r.Meta().MinSort, b.r.Meta().MinSort) })
	for i := 1; i < len(ps); i++ {
		if bytes.Compare(ps[i-1].r.Meta().MaxSort, ps[i].r.Meta().MinSort) >= 0 {
			return false
		}
	}
	return true
}

// fastPlan is what the fast paths precompute about a read's columns.
type fastPlan struct {
	ids    []catalog.ColumnID // non-key columns to read from parts
	colOf  []int              // output column → index in ids, -1 for key columns
	slotOf []int              // output column → group slot, -1 for key columns or no group
	groups []catalog.GroupID  // group of each slot
	keys   keyDecoder
	absent []types.Value // per output column: what a row without its group reads
	// keyOut is the output column of each key column read, -1 for one not
	// read.
	keyOut []int
}

// newFastPlan returns the plan, or false when a column is one the fast
// paths do not handle (a key column outside ORDER BY, or a key column
// asked for twice: the key decoder fills one vector per key column).
func (rd *reader) newFastPlan() (*fastPlan, bool) {
	if rd.keyDup {
		return nil, false
	}
	fp := &fastPlan{keys: keyDecoder{types: rd.keyTypes, out: make([]*types.Vector, len(rd.keyTypes))}}
	for range rd.keyTypes {
		fp.keyOut = append(fp.keyOut, -1)
	}
	for _, g := range rd.t.Groups {
		fp.groups = append(fp.groups, g.ID)
	}
	for oi := range rd.plans {
		p := &rd.plans[oi]
		fp.colOf = append(fp.colOf, -1)
		fp.slotOf = append(fp.slotOf, -1)
		fp.absent = append(fp.absent, types.Null(p.typ))
		if p.late {
			fp.absent[oi] = p.intro
		}
		if p.keyIdx >= 0 {
			fp.keyOut[p.keyIdx] = oi
			continue
		}
		if rd.t.IsKey(p.id) {
			return nil, false
		}
		// A column asked for twice is read once: the current run's rows
		// of a touched key are rebuilt from the streamed block
		// (runScan.curInputs), and a payload must not hold a column twice.
		ci := slices.Index(fp.ids, p.id)
		if ci < 0 {
			ci = len(fp.ids)
			fp.ids = append(fp.ids, p.id)
		}
		fp.colOf[oi] = ci
		for s, g := range fp.groups {
			if g == p.group {
				fp.slotOf[oi] = s
			}
		}
	}
	return fp, true
}

// slot returns the slot of group g, -1 when the table has no such group.
func (fp *fastPlan) slot(g uint16) int {
	for s, id := range fp.groups {
		if uint16(id) == g {
			return s
		}
	}
	return -1
}

// runScan is one fast read of one shard.
type runScan struct {
	rd    *reader
	fp    *fastPlan
	rs    runShard
	spans []KeyRange
	n     uint64
	fn    func(*types.Batch) error

	// pending output rows, not yet copied into the batch: per slot the
	// stored row (gather index) of each, per output row the max commit
	// and the sort key's source and row.
	gidx    [][]int32
	commits []uint64
	keyRef  []int32
	srcs    [2]*part.Data
	colIdx  []int32
	scratch [2]*types.Vector
	// all: the read has one unbounded span, so it wants every row of the
	// blocks it loads. keyCols then holds, per source, the key columns
	// read, decoded for the whole of its block (blockKeys).
	all     bool
	keyCols [2][]*types.Vector
	// curIDs are the columns of each current-run part, for seekCur.
	curIDs [][]catalog.ColumnID
	// full holds the inputs resolveFull rebuilds with whole current-run
	// rows; wide is the block of the current run wholeCur read last
	// (widePF's block wideBI), wideComb its rows with the streamed
	// block's fixed columns.
	full           []keyInput
	wide, wideComb part.Data
	widePF         *partFile
	wideBI         int
}

func newRunScan(rd *reader, fp *fastPlan, rs runShard, spans []KeyRange, n uint64, fn func(*types.Batch) error) *runScan {
	s := &runScan{rd: rd, fp: fp, rs: rs, spans: spans, n: n, fn: fn, gidx: make([][]int32, len(fp.groups))}
	s.all = len(spans) == 1 && spans[0].Lo == nil && spans[0].Hi == nil
	for oi := range rd.plans {
		if k := rd.plans[oi].keyIdx; k >= 0 {
			fp.keys.out[k] = nil
		}
	}
	return s
}

// materialize copies the pending rows into the batch, and flushes it
// when full.
func (s *runScan) materialize() error {
	rd := s.rd
	rows := len(s.keyRef)
	if rows == 0 {
		return nil
	}
	b := rd.batch
	for k := range s.fp.keys.out {
		s.fp.keys.out[k] = nil
	}
	for oi := range rd.plans {
		if k := rd.plans[oi].keyIdx; k >= 0 {
			s.fp.keys.out[k] = b.Cols[oi]
		}
	}
	switch {
	case rd.needKey && s.keyCols[0] != nil && (s.srcs[1] == nil || s.keyCols[1] != nil):
		// Every source's block has its key columns decoded: gather them
		// like any other column.
		for k, oi := range s.fp.keyOut {
			if oi < 0 {
				continue
			}
			for src := range s.scratch {
				s.scratch[src] = nil
				if s.keyCols[src] != nil {
					s.scratch[src] = s.keyCols[src][k]
				}
			}
			if err := gather(b.Cols[oi], &s.scratch, s.keyRef, s.fp.absent[oi], s.fp.absent[oi]); err != nil {
				return err
			}
		}
	case rd.needKey:
		for _, ref := range s.keyRef {
			src, row := 0, int(ref&^srcB)
			if ref&srcB != 0 {
				src = 1
			}
			if s.keyCols[src] == nil {
				if err := s.fp.keys.decode(s.srcs[src].Sort.BytesAt(row)); err != nil {
					return err
				}
				continue
			}
			for k, oi := range s.fp.keyOut {
				if oi < 0 {
					continue
				}
				v, dst := s.keyCols[src][k], b.Cols[oi]
				if v.Type() == dst.Type() {
					dst.AppendFrom(v, row)
					continue
				}
				x, err := types.Cast(v.Get(row), dst.Type())
				if err != nil {
					return err
				}
				dst.Append(x)
			}
		}
	}
	for oi := range rd.plans {
		p := &rd.plans[oi]
		if p.keyIdx >= 0 {
			continue
		}
		sl := s.fp.slotOf[oi]
		if sl < 0 {
			for range rows {
				b.Cols[oi].Append(s.fp.absent[oi])
			}
			continue
		}
		ci := s.fp.colOf[oi]
		for k, d := range s.srcs {
			s.scratch[k] = nil
			if d != nil && ci < len(d.Cols) { // a stream that never loaded a block has none
				s.scratch[k] = d.Cols[ci]
			}
		}
		idx := s.gidx[sl]
		if c, _ := rd.t.AnyColumn(p.id); c != nil && (p.late || c.DroppedCommit != 0) {
			// Rows written before the column existed (or after it was
			// dropped) do not hold it (reader.partVersion).
			s.colIdx = append(s.colIdx[:0], idx...)
			for i, j := range s.colIdx {
				if j < 0 {
					continue
				}
				d := s.srcs[0]
				if j&srcB != 0 {
					d = s.srcs[1]
				}
				if cm := d.Commit[j&^srcB]; c.AddedCommit >= cm || c.DroppedCommit != 0 && c.DroppedCommit <= cm {
					s.colIdx[i] = introRow
				}
			}
			idx = s.colIdx
		}
		if err := gather(b.Cols[oi], &s.scratch, idx, s.fp.absent[oi], p.intro); err != nil {
			return err
		}
	}
	if rd.commit {
		cv := b.Cols[len(rd.plans)]
		for _, c := range s.commits {
			cv.AppendUint64(c)
		}
	}
	b.Rows += rows
	rd.stats.RowsRead += uint64(rows)
	s.keyRef = s.keyRef[:0]
	s.commits = s.commits[:0]
	for sl := range s.gidx {
		s.gidx[sl] = s.gidx[sl][:0]
	}
	if rd.full() {
		rd.arena.reset()
		return rd.flush(s.fn)
	}
	return nil
}

// blockKeys sets source src's key columns (keyCols) to those the read
// wants of block bi of pf, now loaded in d, decoded from every sort key of
// the block — when the read wants every row (s.all) and the block is a
// view of the part cache, so that the decoded columns are kept with its
// chunks (part.Reader.Derived) and a repeated scan only gathers them.
// Decoding them row by row as rows were emitted cost as much as the rest
// of a repeated merged scan. Otherwise keyCols[src] is nil and materialize
// decodes the emitted rows' keys one by one: a block read once, or a
// history block of which few rows win, would decode far more than it
// emits.
func (s *runScan) blockKeys(src int, pf *partFile, bi int, d *part.Data) error {
	s.keyCols[src] = nil
	if !s.all || !s.rd.needKey || !d.Shared() {
		return nil
	}
	kts := s.rd.keyTypes
	cols := make([]*types.Vector, len(kts))
	kd := keyDecoder{types: kts, out: make([]*types.Vector, len(kts))}
	missing := false
	for k, oi := range s.fp.keyOut {
		if oi < 0 {
			continue
		}
		if v := pf.r.Derived(bi, k); v != nil && v.Type() == kts[k] {
			cols[k] = v
			continue
		}
		kd.out[k] = types.NewVector(kts[k], d.Rows)
		missing = true
	}
	if missing {
		for i := range d.Rows {
			if err := kd.decode(d.Sort.BytesAt(i)); err != nil {
				return err
			}
		}
		for k, v := range kd.out {
			if v == nil {
				continue
			}
			// Another read may have kept its copy first; a copy decoded
			// under other key types is not this read's.
			if c := pf.r.KeepDerived(bi, k, v); c.Type() == v.Type() {
				v = c
			}
			cols[k] = v
		}
	}
	s.keyCols[src] = cols
	return nil
}

// room is how many more rows fit before the batch is full.
func (s *runScan) room() int { return s.rd.batchCap - s.rd.batch.Rows - len(s.keyRef) }

// addRow starts a pending output row whose key is row ref.
func (s *runScan) addRow(ref int32) {
	s.keyRef = append(s.keyRef, ref)
	s.commits = append(s.commits, 0)
	for sl := range s.gidx {
		s.gidx[sl] = append(s.gidx[sl], absentRow)
	}
}

// setGroup gives the newest pending row the stored row ref of a group.
func (s *runScan) setGroup(d *part.Data, i int, ref int32) {
	if sl := s.fp.slot(d.Group[i]); sl >= 0 {
		s.gidx[sl][len(s.keyRef)-1] = ref
	}
	last := len(s.commits) - 1
	s.commits[last] = max(s.commits[last], d.Commit[i])
}

// spanOf returns the rows [lo, hi) of a block that fall in span r.
func spanOf(d *part.Data, r KeyRange) (int, int) {
	lo, hi := 0, d.Rows
	if r.Lo != nil {
		lo = sort.Search(d.Rows, func(i int) bool { return bytes.Compare(d.Sort.BytesAt(i), r.Lo) >= 0 })
	}
	if r.Hi != nil {
		hi = sort.Search(d.Rows, func(i int) bool { return bytes.Compare(d.Sort.BytesAt(i), r.Hi) >= 0 })
	}
	return lo, max(lo, hi)
}

// scanCurrent is the read at n ≥ runMax: the current run streamed, each
// key a newer source touches resolved from its newer inputs and its
// current-run rows, and from the history run only when that can change
// the answer (mayRepeatHistory, as lookups do). After a burst of ingest
// the newer sources touch nearly every key, and seeking and rebuilding
// every key's history was most of such a read.
func (s *runScan) scanCurrent(ctx context.Context, sd *shardData) error {
	rd := s.rd
	versioned := rd.t.Mode == catalog.ModeVersioned
	lays := map[string]*layout{}
	// The sources of touched keys, and the seekers that complete them.
	var newer []source
	for _, pf := range s.rs.newer {
		meta := pf.r.Meta()
		if !blockWanted(meta.MinCommit, s.n, meta.Overlaps, s.spans) {
			rd.stats.PartsSkipped++
			continue
		}
		rd.stats.Parts++
		// Only the columns resolution and the output need, and light
		// inputs where the part's blocks end at keys (lightinputs.go).
		c := &partCursor{rd: rd, r: pf.r, meta: meta, rs: s.spans, n: s.n, lays: lays, ids: rd.inputColumns(meta), view: true,
			light: meta.KeyBlocks}
		var refs []blockRef
		for bi := range pf.r.Blocks() {
			b := &pf.r.Blocks()[bi]
			if blockWanted(b.MinCommit, s.n, b.Overlaps, s.spans) {
				c.blocks = append(c.blocks, bi)
				refs = append(refs, blockRef{pf, bi, inputFixed})
			} else {
				rd.stats.BlocksSkipped++
			}
		}
		if len(refs) > 0 && !ivSerial {
			// Each newer part's blocks are decoded ahead too: right after
			// an ingest, decoding them is as much of the read as
			// resolving the keys they touch.
			c.pre = prefetch(refs, c.ids)
			defer c.pre.close()
		}
		newer = append(newer, c)
	}
	newer = sd.memCursors(newer, s.spans, s.n)
	histSeek := &runSeeker{rd: rd, parts: s.rs.hist, n: s.n, lays: lays}
	var tbuf []byte
	var ins []keyInput
	var alone int64
	var counts touchCounts
	defer func() {
		touchedLight.Add(alone)
		touchedAlone.Add(counts.alone)
		touchedHistory.Add(counts.withHist)
		touchedRepeats.Add(counts.repeats)
	}()
	// The newer sources by their next key, smallest first: a touched key
	// is found and its sources taken from without asking every source
	// (a dozen delta parts right after an ingest at medium scale, where
	// asking each for its key for every touched key was a third of the
	// scan goroutine's time).
	heads, err := newSourceHeap(newer)
	if err != nil {
		return err
	}
	// touched returns the next key a newer source holds, nil when none.
	touched := func() ([]byte, error) {
		m := heads.min()
		if m == nil {
			return nil, nil
		}
		tbuf = append(tbuf[:0], m...)
		return tbuf, nil
	}
	var taken []sourceHead
	// resolve emits key from its inputs: its current-run rows (rows
	// [cur.lo, cur.hi) of the streamed block cur.d when cur.known, so that
	// block is not decoded a second time; else read by seekCur), then
	// those of the newer sources. They are resolved light first
	// (resolveLight: no payloads); only a key whose versions tie on their
	// ordering values is resolved again with them (resolveFull).
	resolve := func(key []byte, cur curRows) error {
		if err := s.materialize(); err != nil {
			return err
		}
		var err error
		ins = ins[:0]
		if cur.known {
			d := cur.d
			for i := cur.lo; i < cur.hi; i++ {
				if d.Commit[i] > s.n {
					continue
				}
				if ins, err = rd.appendLight(ins, d, cur.meta, i, key); err != nil {
					return err
				}
			}
		} else if ins, err = s.seekCur(key, lays, ins); err != nil {
			return err
		}
		nCur := len(ins)
		// The sources holding key, which move on past it only once it is
		// resolved: a light input is a slice of its source's loaded block.
		taken = heads.popAt(key, taken[:0])
		for _, th := range taken {
			src := th.src
			if c, ok := src.(*partCursor); ok && c.light {
				ins, err = c.takeLight(key, ins)
			} else {
				ins, err = src.take(key, ins)
			}
			if err != nil {
				return err
			}
		}
		// Every current-run row precedes every newer one, so sorting
		// keeps them in front.
		sortInputs(ins)
		ok, err := rd.resolveLight(key, ins, s.n, versioned, lays, nil)
		if err != nil {
			return err
		}
		if ok {
			alone++
		} else if err := s.resolveFull(key, ins, cur, nCur, !cur.known, lays, histSeek, &counts); err != nil {
			return err
		}
		// Resolved: its sources move on.
		if err := heads.pushAll(taken); err != nil {
			return err
		}
		if rd.full() {
			rd.arena.reset()
			return rd.flush(s.fn)
		}
		return nil
	}
	single := len(s.fp.groups) == 1
	var starts, startsBuf []uint64 // the loaded block's key starts (keyStarts)
	d := &part.Data{}
	s.srcs = [2]*part.Data{d, nil}
	// The run's blocks, each read with what its rows are rebuilt from as
	// inputs (resolve) when a newer source may hold one of its keys.
	blocks := s.curBlocks(sd)
	var pre *prefetcher
	if len(blocks) >= prefetchMin && !ivSerial {
		// Decoded a block ahead on a goroutine of their own, as interval
		// reads do: right after an ingest, resolving the keys the newer
		// sources touch (their blocks decoded, the rules run) takes this
		// goroutine as long as decoding the run does.
		pre = prefetch(blocks, s.fp.ids)
		defer pre.close()
	}
	for _, ref := range blocks {
		pf, bi := ref.pf, ref.bi
		meta := pf.r.Meta()
		inputs := ref.fixed&part.FixOrder != 0 // read with its keys' inputs (curBlocks)
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.materialize(); err != nil {
			return err
		}
		if pre != nil {
			var err error
			if d, err = pre.take(d); err != nil {
				return err
			}
			s.srcs[0] = d
		} else if err := pf.r.ReadBlockView(bi, ref.fixed, s.fp.ids, d); err != nil {
			return err
		}
		if err := s.blockKeys(0, pf, bi, d); err != nil {
			return err
		}
		if !single {
			starts = keyStarts(pf, bi, d, startsBuf)
			if !d.Shared() {
				startsBuf = starts
			}
		}
		rd.stats.Blocks++
		for _, sp := range s.spans {
			lo, hi := spanOf(d, sp)
			for i := lo; i < hi; {
				t, err := touched()
				if err != nil {
					return err
				}
				if t != nil {
					if c := bytes.Compare(t, d.Sort.BytesAt(i)); c <= 0 {
						// Every row of a key is in one block
						// (KeyBlocks), and the rows before i are of
						// smaller keys: t's run rows are [i, j).
						j := i
						for c == 0 && j < hi && bytes.Equal(d.Sort.BytesAt(j), t) {
							j++
						}
						if err := resolve(t, curRows{d: d, meta: meta, pf: pf, bi: bi, lo: i, hi: j, known: inputs || c < 0}); err != nil {
							return err
						}
						i = j
						continue
					}
				}
				j := hi
				if t != nil {
					j = i + sort.Search(hi-i, func(k int) bool { return bytes.Compare(d.Sort.BytesAt(i+k), t) >= 0 })
				}
				// Stream rows [i, j): no newer source touches them.
				for i < j {
					room := s.room()
					if single {
						end := min(j, i+room)
						for k := i; k < end; k++ {
							s.addRow(int32(k))
							s.setGroup(d, k, int32(k))
						}
						i = end
					} else {
						for ; i < j && room > 0; room-- {
							s.addRow(int32(i))
							s.setGroup(d, i, int32(i))
							k := i + 1
							for ; k < j && starts[k>>6]&(1<<(uint(k)&63)) == 0; k++ {
								s.setGroup(d, k, int32(k))
							}
							i = k
						}
					}
					if s.room() == 0 {
						if err := s.materialize(); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	if err := s.materialize(); err != nil {
		return err
	}
	for {
		t, err := touched()
		if err != nil || t == nil {
			return err
		}
		// Past the run's last wanted row: t has none.
		if err := resolve(t, curRows{known: true}); err != nil {
			return err
		}
	}
}

// curBlocks returns the blocks of the current run scanCurrent reads, in
// key order, each with the fixed columns to read it with: a key's inputs
// (inputFixed) where the newer sources' keys may fall in the block's key
// range, which is told from their bounds before any is read, so that the
// blocks can be decoded ahead. It counts the parts and blocks skipped.
func (s *runScan) curBlocks(sd *shardData) []blockRef {
	lo, hi, newer := s.newerBounds(sd)
	return s.wantedBlocks(s.rs.cur, func(b *part.BlockInfo) part.Fixed {
		f := part.FixSort | part.FixGroup | part.FixCommit
		if newer && bytes.Compare(lo, b.MaxSort) <= 0 && bytes.Compare(b.MinSort, hi) <= 0 {
			f |= inputFixed
		}
		return f
	})
}

// wantedBlocks returns the blocks of parts the read wants (by commit and
// key range), in order, each with the fixed columns fixed gives it. It
// counts the parts and blocks skipped.
func (s *runScan) wantedBlocks(parts []*partFile, fixed func(*part.BlockInfo) part.Fixed) []blockRef {
	rd := s.rd
	var out []blockRef
	for _, pf := range parts {
		meta := pf.r.Meta()
		if !blockWanted(meta.MinCommit, s.n, meta.Overlaps, s.spans) {
			rd.stats.PartsSkipped++
			continue
		}
		rd.stats.Parts++
		for bi := range pf.r.Blocks() {
			b := &pf.r.Blocks()[bi]
			if !blockWanted(b.MinCommit, s.n, b.Overlaps, s.spans) {
				rd.stats.BlocksSkipped++
				continue
			}
			out = append(out, blockRef{pf, bi, fixed(b)})
		}
	}
	return out
}

// newerBounds returns the smallest and largest key the sources newer than
// the run may hold (the newer parts' key bounds, the memtables' first and
// last keys, their new keys linked first), and false if none holds any.
// A key a memtable gains later is of a commit past the read's. Bounds
// too narrow would cost speed, not answers: a touched key in a block read
// without inputs is read again by seekCur (curRows.known false).
func (s *runScan) newerBounds(sd *shardData) (lo, hi []byte, ok bool) {
	add := func(min, max []byte) {
		if !ok || bytes.Compare(min, lo) < 0 {
			lo = min
		}
		if !ok || bytes.Compare(max, hi) > 0 {
			hi = max
		}
		ok = true
	}
	for _, pf := range s.rs.newer {
		m := pf.r.Meta()
		add(m.MinSort, m.MaxSort)
	}
	mems := []*keyedMem{sd.keyed}
	if sd.frozen != nil {
		mems = append(mems, sd.frozen.keyed)
	}
	for _, m := range mems {
		if m == nil {
			continue
		}
		m.ordered()
		m.mu.RLock()
		if first := m.list.first(); first != nil {
			add(first.key, m.list.last().key)
		}
		m.mu.RUnlock()
	}
	return lo, hi, ok
}

// sourceHeap is a min-heap of sources by their next key. With few sources
// it is a plain list searched in full instead (linear): right after a
// burst every key is in most of a few sources, and a key's sources then
// cost fewer comparisons taken off a list than sifted through a heap.
type sourceHeap struct {
	h      []sourceHead
	linear bool
}

// linearSources is the most sources a sourceHeap keeps as a list.
const linearSources = 4

// min returns the smallest next key, nil if no source holds one.
func (sh *sourceHeap) min() []byte {
	if len(sh.h) == 0 {
		return nil
	}
	if !sh.linear {
		return sh.h[0].key
	}
	m := sh.h[0].key
	for _, x := range sh.h[1:] {
		if bytes.Compare(x.key, m) < 0 {
			m = x.key
		}
	}
	return m
}

// sourceHead is a source, its place among the sources (their commit
// order) and its next key, a slice of the source's own memory that stays
// valid until the source moves on.
type sourceHead struct {
	key []byte
	src source
	at  int
}

// newSourceHeap returns the sources, given in commit order, that hold a
// key, by their next key.
func newSourceHeap(srcs []source) (*sourceHeap, error) {
	sh := &sourceHeap{linear: true}
	for i, src := range srcs {
		if err := sh.push(sourceHead{src: src, at: i}); err != nil {
			return nil, err
		}
	}
	// Sources that hold nothing (an empty memtable) do not count.
	if len(sh.h) > linearSources {
		sh.linear = false
		for i := len(sh.h)/2 - 1; i >= 0; i-- {
			sh.down(i)
		}
	}
	return sh, nil
}

// push adds src if its next key is not nil.
func (sh *sourceHeap) push(src sourceHead) error {
	k, err := src.src.key()
	if err != nil || k == nil {
		return err
	}
	src.key = k
	sh.h = append(sh.h, src)
	if !sh.linear {
		sh.up(len(sh.h) - 1)
	}
	return nil
}

// pushAll adds back the sources popAt took, moved on.
func (sh *sourceHeap) pushAll(srcs []sourceHead) error {
	for _, src := range srcs {
		if err := sh.push(src); err != nil {
			return err
		}
	}
	return nil
}

// popAt removes the sources whose next key is key, appending them to out
// in commit order, so that their inputs come out nearly sorted.
func (sh *sourceHeap) popAt(key []byte, out []sourceHead) []sourceHead {
	if sh.linear {
		keep := sh.h[:0]
		for _, x := range sh.h {
			if bytes.Equal(x.key, key) {
				out = insertAt(out, x)
			} else {
				keep = append(keep, x)
			}
		}
		clear(sh.h[len(keep):])
		sh.h = keep
		return out
	}
	for len(sh.h) > 0 && bytes.Equal(sh.h[0].key, key) {
		out = insertAt(out, sh.h[0])
		last := len(sh.h) - 1
		sh.h[0] = sh.h[last]
		sh.h[last] = sourceHead{}
		sh.h = sh.h[:last]
		sh.down(0)
	}
	return out
}

// insertAt appends x to out, which is in commit order, keeping it so.
func insertAt(out []sourceHead, x sourceHead) []sourceHead {
	out = append(out, x)
	for i := len(out) - 1; i > 0 && out[i].at < out[i-1].at; i-- {
		out[i], out[i-1] = out[i-1], out[i]
	}
	return out
}

func (sh *sourceHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if bytes.Compare(sh.h[i].key, sh.h[p].key) >= 0 {
			return
		}
		sh.h[i], sh.h[p] = sh.h[p], sh.h[i]
		i = p
	}
}

func (sh *sourceHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(sh.h) {
			return
		}
		m := l
		if r := l + 1; r < len(sh.h) && bytes.Compare(sh.h[r].key, sh.h[l].key) < 0 {
			m = r
		}
		if bytes.Compare(sh.h[m].key, sh.h[i].key) >= 0 {
			return
		}
		sh.h[i], sh.h[m] = sh.h[m], sh.h[i]
		i = m
	}
}

// touchCounts counts the touched keys resolveFull resolved without and
// with the history run, and those of the first whose tie was an exact
// repeat.
type touchCounts struct{ alone, withHist, repeats int64 }

// resolveFull resolves a touched key whose light resolution tied, from
// its inputs with their payloads: ins (in position order) holds its
// current-run rows first (nCur of them, whole when curWhole, else only the
// columns read), then its newer ones. The history run is read only when a
// newer version ties with a current-run row (mayRepeatHistory), as
// lookups do.
func (s *runScan) resolveFull(key []byte, ins []keyInput, cur curRows, nCur int, curWhole bool, lays map[string]*layout, histSeek *runSeeker, counts *touchCounts) error {
	rd := s.rd
	for i := range ins {
		if err := rd.fillPayload(&ins[i], key, lays); err != nil {
			return err
		}
	}
	hist := mayRepeatHistory(ins[nCur:], ins[:nCur], curWhole)
	if hist && !curWhole {
		// Whether the tie is an exact repeat of the run's row, which
		// needs no history, is told by the whole payloads.
		full, err := s.wholeCur(key, cur, lays, s.full[:0])
		if err != nil {
			return err
		}
		newer := ins[nCur:]
		nCur = len(full)
		ins = append(full, newer...)
		s.full = ins
		if hist = mayRepeatHistory(ins[nCur:], ins[:nCur], true); !hist {
			counts.repeats++
		}
	}
	if hist {
		counts.withHist++
		var err error
		if ins, err = histSeek.take(key, ins); err != nil {
			return err
		}
	} else {
		counts.alone++
	}
	sortInputs(ins)
	e, err := rd.resolveKey(key, ins, rd.t.Mode == catalog.ModeVersioned)
	if err != nil {
		return err
	}
	_, err = rd.emitCurrent(e, s.n)
	return err
}

// seekCur appends the rows of key (commit ≤ n) in the current run, with
// their whole payloads: only the pages that hold them are read
// (reader.seekKey), because few keys need them (a tie on every ordering
// value, mayRepeatHistory) and the run's block was decoded for the stream
// already, without the columns the read does not return.
func (s *runScan) seekCur(key []byte, lays map[string]*layout, ins []keyInput) ([]keyInput, error) {
	cur := s.rs.cur
	i := sort.Search(len(cur), func(i int) bool { return bytes.Compare(cur[i].r.Meta().MaxSort, key) >= 0 })
	if i == len(cur) || bytes.Compare(cur[i].r.Meta().MinSort, key) > 0 {
		return ins, nil
	}
	if s.curIDs == nil {
		s.curIDs = make([][]catalog.ColumnID, len(cur))
	}
	if s.curIDs[i] == nil {
		s.curIDs[i] = []catalog.ColumnID{}
		for _, c := range cur[i].r.Meta().Columns {
			s.curIDs[i] = append(s.curIDs[i], c.ID)
		}
	}
	return s.rd.seekKey(cur[i], key, s.n, lays, s.curIDs[i], ins)
}

// curRows are the rows of one key in a streamed block of the current run
// (scanCurrent): rows [lo, hi) of d, from the part meta describes. known
// is false when the block was read without the columns inputs are rebuilt
// from (inputFixed).
type curRows struct {
	d      *part.Data
	meta   *part.Meta
	pf     *partFile // the part and block d holds
	bi     int
	lo, hi int
	known  bool
}

// wholeCur appends the current-run rows of a touched key (commit ≤ n)
// with whole payloads: the streamed block holds only the columns read, so
// the whole groups' columns of its block (reader.inputColumns) are read
// once, on the block's first such key, and its rows' fixed columns taken
// from the streamed block. A per-key seek decoded a page of every column
// for each such key (a tie of a newer version with the run's row, as an
// at-least-once producer's re-deliveries make often).
func (s *runScan) wholeCur(key []byte, cur curRows, lays map[string]*layout, ins []keyInput) ([]keyInput, error) {
	if cur.lo == cur.hi {
		return ins, nil
	}
	if s.widePF != cur.pf || s.wideBI != cur.bi {
		s.widePF = nil
		if err := cur.pf.r.ReadBlockView(cur.bi, 0, s.rd.inputColumns(cur.meta), &s.wide); err != nil {
			return ins, err
		}
		s.widePF, s.wideBI = cur.pf, cur.bi
	}
	// The streamed block's fixed columns with the wide read's table
	// columns: the same rows of the same block.
	comb := &s.wideComb
	*comb = part.Data{Rows: cur.d.Rows, Sort: cur.d.Sort, Group: cur.d.Group, Commit: cur.d.Commit, Seq: cur.d.Seq, Tomb: cur.d.Tomb,
		Order: cur.d.Order, IDs: s.wide.IDs, Cols: s.wide.Cols}
	for i := cur.lo; i < cur.hi; i++ {
		if comb.Commit[i] > s.n {
			continue
		}
		in := keyInput{pos: version.Pos{Commit: comb.Commit[i], Seq: comb.Seq[i]}, tomb: comb.Tomb[i], group: catalog.GroupID(comb.Group[i])}
		if !in.tomb {
			var err error
			if in.mv, err = s.rd.partVersion(comb, cur.meta, i, key, lays); err != nil {
				return ins, err
			}
		}
		ins = append(ins, in)
	}
	return ins, nil
}

// runSeeker finds the rows of keys, asked for in increasing order, in one
// run, decoding only the blocks that hold them.
type runSeeker struct {
	rd     *reader
	parts  []*partFile
	n      uint64
	lays   map[string]*layout
	pi, bi int
	loaded bool
	row    int
	ids    []catalog.ColumnID
	d      part.Data
}

// take appends the inputs of key (commit ≤ n) held by the run.
func (s *runSeeker) take(key []byte, ins []keyInput) ([]keyInput, error) {
	for s.pi < len(s.parts) && bytes.Compare(s.parts[s.pi].r.Meta().MaxSort, key) < 0 {
		s.pi, s.bi, s.loaded = s.pi+1, 0, false
	}
	if s.pi == len(s.parts) {
		return ins, nil
	}
	pf := s.parts[s.pi]
	meta := pf.r.Meta()
	if bytes.Compare(meta.MinSort, key) > 0 {
		return ins, nil
	}
	blocks := pf.r.Blocks()
	for s.bi < len(blocks) && bytes.Compare(blocks[s.bi].MaxSort, key) < 0 {
		s.bi, s.loaded = s.bi+1, false
	}
	if s.bi == len(blocks) || bytes.Compare(blocks[s.bi].MinSort, key) > 0 {
		return ins, nil
	}
	if !s.loaded {
		s.ids = s.ids[:0]
		for _, c := range meta.Columns {
			s.ids = append(s.ids, c.ID)
		}
		if err := pf.r.ReadBlockView(s.bi, inputFixed, s.ids, &s.d); err != nil {
			return ins, err
		}
		s.loaded, s.row = true, 0
		s.rd.stats.Blocks++
	}
	d := &s.d
	s.row += sort.Search(d.Rows-s.row, func(i int) bool { return bytes.Compare(d.Sort.BytesAt(s.row+i), key) >= 0 })
	for ; s.row < d.Rows && bytes.Equal(d.Sort.BytesAt(s.row), key); s.row++ {
		i := s.row
		if d.Commit[i] > s.n {
			continue
		}
		in := keyInput{pos: version.Pos{Commit: d.Commit[i], Seq: d.Seq[i]}, tomb: d.Tomb[i], group: catalog.GroupID(d.Group[i])}
		if !in.tomb {
			var err error
			if in.mv, err = s.rd.partVersion(d, meta, i, key, s.lays); err != nil {
				return ins, err
			}
		}
		ins = append(ins, in)
	}
	return ins, nil
}

// ivStream walks the rows of one run that win at n (WonAt ≤ n < EndedAt)
// within the read's spans.
type ivStream struct {
	s      *runScan
	blocks []blockRef // the blocks to read, in key order
	next   int        // the next of blocks to load
	d      *part.Data
	loaded bool
	row    int
	all    bool // one unbounded span: no per-row range check
	src    int  // the stream's source in the runScan (0 or 1)
	pre    *prefetcher
}

// blockRef names one block of one part, and the fixed columns it is read
// with.
type blockRef struct {
	pf    *partFile
	bi    int
	fixed part.Fixed
}

// ivFixed are the fixed columns an interval read decodes.
const ivFixed = part.FixSort | part.FixGroup | part.FixCommit | part.FixWonAt | part.FixEndedAt

// newIvStream lists the blocks of parts that a read at n within the
// spans must decode, counting the parts and blocks it skips.
func newIvStream(s *runScan, parts []*partFile, d *part.Data, all bool, src int) *ivStream {
	st := &ivStream{s: s, d: d, all: all, src: src}
	st.blocks = s.wantedBlocks(parts, func(*part.BlockInfo) part.Fixed { return ivFixed })
	return st
}

// head returns the key of the next winning row, nil at the end. It may
// load a block, so it materializes pending rows first.
func (st *ivStream) head() ([]byte, error) {
	s, rd := st.s, st.s.rd
	for {
		if st.loaded && st.row < st.d.Rows {
			i := st.row
			if st.d.WonAt[i] <= s.n && s.n < st.d.EndedAt[i] && (st.all || inRanges(st.d.Sort.BytesAt(i), s.spans)) {
				return st.d.Sort.BytesAt(i), nil
			}
			st.row++
			continue
		}
		if st.next == len(st.blocks) {
			return nil, nil
		}
		ref := st.blocks[st.next]
		st.next++
		// The pending rows point into the loaded block.
		if err := s.materialize(); err != nil {
			return nil, err
		}
		if st.pre != nil {
			d, err := st.pre.take(st.d)
			if err != nil {
				return nil, err
			}
			st.d = d
			s.srcs[st.src] = d
		} else if err := ref.pf.r.ReadBlockView(ref.bi, ref.fixed, s.fp.ids, st.d); err != nil {
			return nil, err
		}
		if err := s.blockKeys(st.src, ref.pf, ref.bi, st.d); err != nil {
			return nil, err
		}
		rd.stats.Blocks++
		st.loaded, st.row = true, 0
	}
}

// prefetcher decodes a stream's blocks, in order, on a goroutine of its
// own, one block ahead of the scan: an interval read is mostly Parquet
// decoding of the history run, which then overlaps with the range checks,
// the other stream's decoding and the copying into batches. Three Data
// take turns: the one the scan reads, one decoded and waiting, one being
// decoded.
type prefetcher struct {
	out  chan fetched
	free chan *part.Data
	stop chan struct{}
	done chan struct{}
}

type fetched struct {
	d   *part.Data
	err error
}

// prefetchMin is the fewest blocks a stream must have for a prefetcher to
// pay for its goroutine.
const prefetchMin = 2

// startPrefetch starts decoding st's blocks ahead of it, with the columns
// ids.
func (st *ivStream) startPrefetch(ids []catalog.ColumnID) { st.pre = prefetch(st.blocks, ids) }

// prefetch starts decoding blocks, in order, each with its fixed columns
// and the columns ids, on a goroutine of its own.
func prefetch(blocks []blockRef, ids []catalog.ColumnID) *prefetcher {
	p := &prefetcher{out: make(chan fetched, 1), free: make(chan *part.Data, 3), stop: make(chan struct{}), done: make(chan struct{})}
	p.free <- &part.Data{}
	p.free <- &part.Data{}
	go func() {
		defer close(p.done)
		for _, ref := range blocks {
			var d *part.Data
			select {
			case d = <-p.free:
			case <-p.stop:
				return
			}
			err := ref.pf.r.ReadBlockView(ref.bi, ref.fixed, ids, d)
			select {
			case p.out <- fetched{d, err}:
			case <-p.stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// take hands back the block the scan is done with and returns the next.
func (p *prefetcher) take(old *part.Data) (*part.Data, error) {
	if old != nil {
		p.free <- old // never blocks: at most three Data exist
	}
	f := <-p.out
	return f.d, f.err
}

// close stops the goroutine and waits for it, so that no block is read
// after the scan returns (the snapshot holding the parts may go).
func (p *prefetcher) close() {
	close(p.stop)
	<-p.done
}

// scanInterval is the read at n < runMax: per key, the rows of the current
// and history runs whose interval holds n. When the run has an AS OF index
// (asofindex.go), the epoch holding n has exactly those rows among its
// own, so it is read alone, as the one stream: the history's rows of other
// epochs are never decoded.
func (s *runScan) scanInterval(ctx context.Context, sd *shardData) error {
	all := len(s.spans) == 1 && s.spans[0].Lo == nil && s.spans[0].Hi == nil
	cur, hist := s.rs.cur, s.rs.hist
	if ix := sd.asofParts(s.rs, s.n); ix != nil {
		cur, hist = ix, nil
		asofReads.Add(1)
	}
	a := newIvStream(s, cur, &part.Data{}, all, 0)
	b := newIvStream(s, hist, &part.Data{}, all, 1)
	s.srcs = [2]*part.Data{a.d, b.d}
	for _, st := range []*ivStream{a, b} {
		if len(st.blocks) >= prefetchMin && !ivSerial {
			st.startPrefetch(s.fp.ids)
			defer st.pre.close()
		}
	}
	for count := 0; ; count++ {
		if count%defaultBatchRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ka, err := a.head()
		if err != nil {
			return err
		}
		kb, err := b.head()
		if err != nil {
			return err
		}
		// head may have loaded a block of the other stream: that
		// materialized the pending rows, so both keys are valid now.
		if ka == nil && kb == nil {
			return s.materialize()
		}
		if s.room() == 0 {
			if err := s.materialize(); err != nil {
				return err
			}
		}
		c := 0
		switch {
		case ka == nil:
			c = 1
		case kb == nil:
			c = -1
		default:
			c = bytes.Compare(ka, kb)
		}
		if c <= 0 {
			s.addRow(int32(a.row))
		} else {
			s.addRow(int32(b.row) | srcB)
		}
		// Every winning row of this key, from both runs: the key's rows
		// are all in the loaded block of each (KeyBlocks).
		key := ka
		if c > 0 {
			key = kb
		}
		if c <= 0 {
			a.takeKey(key, 0)
		}
		if c >= 0 {
			b.takeKey(key, srcB)
		}
	}
}

// ivSerial, set by tests, turns the prefetchers off (interval reads' and
// scanCurrent's), so that both ways of reading blocks are compared with
// the general path.
var ivSerial bool

// takeKey adds the winning rows of key, which starts at the stream's row,
// to the newest pending output row.
func (st *ivStream) takeKey(key []byte, tag int32) {
	s, d := st.s, st.d
	for ; st.row < d.Rows && bytes.Equal(d.Sort.BytesAt(st.row), key); st.row++ {
		if i := st.row; d.WonAt[i] <= s.n && s.n < d.EndedAt[i] {
			s.setGroup(d, i, int32(i)|tag)
		}
	}
}

// scanRun reads one shard by a fast path, if its layout allows; it
// reports false (having read nothing) when it does not.
func (rd *reader) scanRun(ctx context.Context, sd *shardData, spans []KeyRange, n uint64, fn func(*types.Batch) error) (bool, error) {
	if rd.versions || rd.slow {
		return false, nil
	}
	rs, ok := classifyRun(sd)
	if !ok {
		return false, nil
	}
	interval := n < rs.runMax
	if interval && rd.t.Mode != catalog.ModeVersioned {
		return false, nil
	}
	if rd.fast == nil {
		fp, ok := rd.newFastPlan()
		if !ok {
			return false, nil
		}
		rd.fast = fp
	}
	s := newRunScan(rd, rd.fast, rs, spans, n, fn)
	fastReads.Add(1)
	if interval {
		intervalReads.Add(1)
		return true, s.scanInterval(ctx, sd)
	}
	return true, s.scanCurrent(ctx, sd)
}

// lookupGroups sets rd.lookupWant to the groups whose columns a lookup
// reads from parts whose versions are compared with others: each group
// that holds a column asked for, and none of the others. Whole groups,
// because rule 3 (repeats) compares a version's whole payload and so
// decides which of two versions with equal ordering values wins. The other
// groups' payloads cannot change what is returned: of them only whether
// the group has a winner matters (a row exists when one group does), and
// that rests on ordering values, positions and deletes alone. With _commit
// (or the version columns) asked for, every group's winner counts, so
// every column is read (lookupAll).
func (rd *reader) lookupGroups() {
	if rd.lookupWant != nil || rd.lookupAll {
		return
	}
	if rd.commit || rd.versions {
		rd.lookupAll = true
		return
	}
	rd.lookupWant = []catalog.GroupID{}
	for _, p := range rd.plans {
		if p.keyIdx < 0 && !slices.Contains(rd.lookupWant, p.group) {
			rd.lookupWant = append(rd.lookupWant, p.group)
		}
	}
}

// mayRepeatHistory reports whether a lookup or scan at or after a merged
// run's newest commit must read the run's history because the newer sources'
// inputs (newer) might repeat (rule 3) a version kept there, given the
// current run's inputs of the key (cur).
//
// Every version the history holds of the key's current epoch lost to the
// current run's winner W of its group: its ordering values are at most
// W's. A newer version v whose ordering values differ from W's is then
// either greater than all of them (no repeat of any, and it beats W) or
// less than W's (it loses to W, or to a greater newer version, whether it
// counts or is dropped as a repeat; and a later equal version is dropped
// either way). Only ordering values equal to W's leave the winner to the
// payloads and positions of versions in the history (a version that W
// superseded by commit order alone, as in TestFastReadsSeeHistoryRepeats).
// A group without W has no version in the current epoch before the newer
// sources, and a group ordered by commit alone drops no repeats. Deletes
// only end epochs, so ignoring them can only make this say true.
//
// whole says that every payload in newer and cur is whole (every column
// of its group, as partVersion rebuilds it from all of a part's columns,
// or as the memtable holds it). Then a tie whose payload equals W's is a
// repeat of W, which still counts when it arrives (or a delete between
// ended W and the history's versions alike): it is dropped whatever the
// history holds (rule 3; rule 4 in an upsert table, where W or a greater
// winner decides). That is the common tie, an at-least-once producer
// re-delivering the version that won.
func mayRepeatHistory(newer, cur []keyInput, whole bool) bool {
	for i := range newer {
		v := &newer[i]
		if v.tomb || len(v.mv.v.Order) == 0 {
			continue
		}
		for j := range cur {
			w := &cur[j]
			if !w.tomb && w.group == v.group && slices.EqualFunc(w.mv.v.Order, v.mv.v.Order, bytes.Equal) &&
				!(whole && sameValues(w.mv.v.Layout, w.mv.v.Values, v.mv.v.Layout, v.mv.v.Values, v.mv.v.Commit)) {
				return true
			}
		}
	}
	return false
}

// seekBufs are the buffers of seekKey: the sort keys searched, the rows
// found, the columns read. Lookups take them from seekPool, so that a
// point read allocates no block-sized buffer.
type seekBufs struct {
	keys, data part.Data
	ids        []catalog.ColumnID
	// parts are the parts a lookup found its key in (used of them) and
	// ins and sorted its inputs (lookuplight.go), kept for the next one.
	parts       []*lookupSeek
	used        int
	ins, sorted []keyInput
	// arena is the reader's arena between lookups: the payloads a lookup
	// rebuilds live only until it returns (the row it returns is copied
	// out of them), and a fresh arena's first block was most of a
	// lookup's garbage (64 KiB and 1 024 slots), and so of its GC pauses.
	arena arena
}

// maxSeekArena is the most arena bytes seekBufs keeps for the next lookup.
const maxSeekArena = 1 << 20

// takeArena gives a lookup's reader the pooled arena, emptied.
func (sb *seekBufs) takeArena(rd *reader) {
	rd.arena = sb.arena
	rd.arena.buf, rd.arena.slots, rd.arena.used = rd.arena.buf[:0], rd.arena.slots[:0], 0
	sb.arena = arena{}
}

// keepArena takes the reader's arena back when it is not too large,
// dropping what its slots point to so that the pool holds no payloads.
func (sb *seekBufs) keepArena(rd *reader) {
	if cap(rd.arena.buf) > maxSeekArena {
		return
	}
	clear(rd.arena.slots)
	sb.arena = rd.arena
	rd.arena = arena{}
}

// keyBlock finds the one block of part pf that may hold key at a commit ≤
// n (the blocks are key-disjoint and sorted), counting it as read or as
// skipped: the key filter first, then a binary search over the blocks'
// bounds. The caller counted the part as read; ok is false when no block
// of it is.
func (rd *reader) keyBlock(pf *partFile, key []byte, n uint64) (bi int, ok bool) {
	if !rd.mayContain(pf, key) {
		rd.stats.BlocksSkipped++
		return 0, false
	}
	blocks := pf.r.Blocks()
	bi = sort.Search(len(blocks), func(i int) bool { return bytes.Compare(blocks[i].MaxSort, key) >= 0 })
	if bi == len(blocks) || bytes.Compare(blocks[bi].MinSort, key) > 0 || blocks[bi].MinCommit > n {
		rd.stats.BlocksSkipped++
		return 0, false
	}
	rd.stats.Blocks++
	return bi, true
}

var seekPool = sync.Pool{New: func() any { return &seekBufs{} }}

// seekKey appends the inputs of key (commit ≤ n) held by one part whose
// blocks end at keys, with the table columns ids (nil: the columns of
// the groups lookupGroups names, whole, which repeats are compared on): the block by binary search over the blocks' bounds,
// the key's rows by binary search over that block's sort keys, and then
// only the pages holding those rows (part.Reader.ReadRows).
func (rd *reader) seekKey(pf *partFile, key []byte, n uint64, lays map[string]*layout, ids []catalog.ColumnID, ins []keyInput) ([]keyInput, error) {
	bi, ok := rd.keyBlock(pf, key, n)
	if !ok {
		return ins, nil
	}
	if rd.seek == nil {
		rd.seek = &seekBufs{}
	}
	sb := rd.seek
	tr := rd.pageTrace(pf)
	sb.keys.Trace, sb.data.Trace = tr, tr
	lo, hi, err := pf.r.FindKey(bi, key, &sb.keys)
	if err != nil || lo == hi {
		return ins, err
	}
	d := &sb.data
	meta := pf.r.Meta()
	sb.ids = sb.ids[:0]
	rd.lookupGroups()
	switch {
	case ids != nil:
		sb.ids = append(sb.ids, ids...)
	case rd.lookupAll:
		for _, c := range meta.Columns {
			sb.ids = append(sb.ids, c.ID)
		}
	default:
		// In the part's column order, which is the order partVersion
		// encodes payloads in (repeats compare them byte for byte).
		for _, c := range meta.Columns {
			if cc, ok := rd.t.AnyColumn(c.ID); ok && slices.Contains(rd.lookupWant, cc.Group) {
				sb.ids = append(sb.ids, c.ID)
			}
		}
	}
	// What resolution and partVersion read: not the sort key (it is
	// key) nor the stored resolution (the inputs are resolved afresh).
	fixed := part.FixGroup | part.FixCommit | part.FixSeq | part.FixTomb | part.FixOrder
	if err := pf.r.ReadRows(bi, lo, hi, fixed, sb.ids, d); err != nil {
		return ins, err
	}
	for i := 0; i < d.Rows; i++ {
		if d.Commit[i] > n {
			continue
		}
		in := keyInput{pos: version.Pos{Commit: d.Commit[i], Seq: d.Seq[i]}, tomb: d.Tomb[i], group: catalog.GroupID(d.Group[i])}
		if !in.tomb {
			var err error
			if in.mv, err = rd.partVersion(d, meta, i, key, lays); err != nil {
				return ins, err
			}
		}
		ins = append(ins, in)
	}
	return ins, nil
}
