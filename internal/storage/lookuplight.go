package storage

import (
	"bytes"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
)

// Lookups of a key that a delta part or memtable holds beside the run
// (lookupParts). Such a lookup used to read, of every part holding the
// key, the sort key, five fixed columns and every column of the asked
// groups: ten pages per part for bench/'s balances table, nearly all of
// them cold right after ingest, when three delta parts hold nearly every
// key. The per-lookup trace (LookupTrace) showed them to be what the
// slowest 1 % of R1 decoded: 17.5 delta pages, 1.5 current-run pages and,
// for a quarter of them, ten 8 192-row history pages each.
//
// So the key's part rows are read light first (lightinputs.go): sort key,
// group, position, tomb and ordering values, no payload. When the rules
// consult no payload (no tie, version.Step.Tied), the outcome is the one
// the payloads would give, and only each asked group's winner has its
// asked columns read, from the one part that holds it. A tie reads every
// part's payloads of the asked groups and resolves the key again; only
// then, and only when a newer version ties a current-run winner without
// being an exact re-delivery of it, is the history run read (rule 3: it
// is the one case where a history version can change the winner).

// lookupSeek is one part a lookup found the key in: where its rows are,
// and the Data they were read into (light inputs point into it).
type lookupSeek struct {
	pf         *partFile
	bi, lo, hi int
	d          part.Data
	// whole: d holds the columns of the asked groups (inputColumns);
	// loaded: d holds the columns the lookup returns (loadWinner).
	whole, loaded bool
}

// lightFixed are the fixed columns of a light input (appendLight).
const lightFixed = part.FixGroup | part.FixCommit | part.FixSeq | part.FixTomb | part.FixOrder

// nextSeek returns a cleared lookupSeek for the next part a lookup finds
// its key in. They are pointers, so that light inputs' Data stay put as
// more are added.
func (sb *seekBufs) nextSeek() *lookupSeek {
	if sb.used == len(sb.parts) {
		sb.parts = append(sb.parts, &lookupSeek{})
	}
	ls := sb.parts[sb.used]
	sb.used++
	return ls
}

// seekOf returns the lookupSeek whose Data d is.
func (sb *seekBufs) seekOf(d *part.Data) *lookupSeek {
	for _, ls := range sb.parts[:sb.used] {
		if &ls.d == d {
			return ls
		}
	}
	return nil
}

// lookupParts answers a lookup of key at n from a merged shard's parts and
// memtables: it seeks each part by its bounds, key filter and block
// index, reads the key's rows light, and resolves them (see above),
// appending the row, if the key has one, to rd.batch. At n at or after a
// merged run's newest commit, the history run is read only when a tie
// needs it. It reports false, having read nothing into rd.batch, when a
// part is not laid out for seeking (KeyBlocks).
func (rd *reader) lookupParts(sd *shardData, key []byte, n uint64) (handled, found bool, err error) {
	if rd.slow {
		return false, false, nil
	}
	for _, pf := range sd.parts {
		if !pf.r.Meta().KeyBlocks {
			return false, false, nil
		}
	}
	if rd.lookupLays == nil {
		rd.lookupLays = map[string]*layout{}
	}
	lays := rd.lookupLays
	clear(lays)
	rd.seek.used = 0
	var cur, hist []*partFile
	var runMax uint64
	rs, run := rd.classifyRun(sd)
	if run {
		runMax = rs.runMax
	}
	ins := rd.seek.ins[:0]
	defer func() {
		// The pool keeps no payload, part or Data alive.
		clear(ins)
		rd.seek.ins = ins[:0]
		clear(rd.seek.sorted)
		for _, ls := range rd.seek.parts[:rd.seek.used] {
			ls.pf = nil
		}
	}()
	for _, pf := range sd.parts {
		m := pf.r.Meta()
		if m.MinCommit > n || bytes.Compare(key, m.MinSort) < 0 || bytes.Compare(key, m.MaxSort) > 0 {
			rd.stats.PartsSkipped++
			continue
		}
		switch {
		case run && m.Kind == part.KindHistory:
			hist = append(hist, pf)
			continue
		case run && m.Kind == part.KindCurrent:
			cur = append(cur, pf)
			continue
		}
		rd.stats.Parts++
		if ins, err = rd.seekLight(pf, key, n, ins); err != nil {
			return true, false, err
		}
	}
	ins, _ = sd.memInputs(key, n, ins)
	newer := len(ins)
	for _, pf := range cur {
		rd.stats.Parts++
		if ins, err = rd.seekLight(pf, key, n, ins); err != nil {
			return true, false, err
		}
	}
	// At or after the run's newest commit the history matters only when
	// a newer version ties a current-run winner: resolution then ties.
	withHist := !run || n < runMax
	if withHist {
		for _, pf := range hist {
			rd.stats.Parts++
			if ins, err = rd.seekLight(pf, key, n, ins); err != nil {
				return true, false, err
			}
		}
	} else {
		rd.stats.PartsSkipped += len(hist)
	}
	versioned := rd.t.Mode == catalog.ModeVersioned
	// ins stays in the order read (newer sources, then the current run)
	// for the tie case; resolution takes them in position order.
	sorted := rd.seek.sorted[:0]
	sorted = append(sorted, ins...)
	rd.seek.sorted = sorted
	sortInputs(sorted)
	ok, err := rd.resolveLight(key, sorted, n, versioned, lays, func(in *keyInput) error { return rd.loadWinner(in) })
	if err != nil {
		return true, false, err
	}
	if ok {
		return true, rd.batch.Rows > 0, nil
	}
	// A tie: the payloads decide.
	if err := rd.fillLight(ins, key, lays); err != nil {
		return true, false, err
	}
	if !withHist && rd.lookupRepeatsHistory(ins[:newer], ins[newer:]) {
		for _, pf := range hist {
			rd.stats.Parts++
			if ins, err = rd.seekLight(pf, key, n, ins); err != nil {
				return true, false, err
			}
		}
		if err := rd.fillLight(ins, key, lays); err != nil {
			return true, false, err
		}
	}
	sorted = append(sorted[:0], ins...)
	rd.seek.sorted = sorted
	sortInputs(sorted)
	e, err := rd.resolveKey(key, sorted, versioned)
	if err != nil {
		return true, false, err
	}
	found, err = rd.emitCurrent(e, n)
	return true, found, err
}

// seekLight appends the rows of key (commit ≤ n) that part pf holds as
// light inputs: the block by binary search over the blocks' bounds, the
// key's rows by binary search over that block's sort keys, and of those
// rows only the fixed columns (lightFixed) read.
func (rd *reader) seekLight(pf *partFile, key []byte, n uint64, ins []keyInput) ([]keyInput, error) {
	sb := rd.seek
	tr := rd.pageTrace(pf)
	var bi, lo, hi int
	if at := rd.newerAt; at.pf == pf {
		// newerHolds found the key's rows in this part moments ago, by
		// the same bounds, filter and block tests as keyBlock's.
		rd.stats.Blocks++
		bi, lo, hi = at.bi, at.lo, at.hi
	} else {
		var ok bool
		if bi, ok = rd.keyBlock(pf, key, n); !ok {
			return ins, nil
		}
		sb.keys.Trace = tr
		var err error
		if lo, hi, err = pf.r.FindKey(bi, key, &sb.keys); err != nil || lo == hi {
			return ins, err
		}
	}
	ls := sb.nextSeek()
	ls.pf, ls.bi, ls.lo, ls.hi, ls.whole, ls.loaded = pf, bi, lo, hi, false, false
	ls.d.Trace = tr
	if err := pf.r.ReadRows(bi, lo, hi, lightFixed, nil, &ls.d); err != nil {
		return ins, err
	}
	meta := pf.r.Meta()
	for i := 0; i < ls.d.Rows; i++ {
		if ls.d.Commit[i] > n {
			continue
		}
		var err error
		if ins, err = rd.appendLight(ins, &ls.d, meta, i, key); err != nil {
			return ins, err
		}
	}
	return ins, nil
}

// loadWinner reads, for a group winner that is a light input, the
// columns the lookup returns of its row's part (all of them with _commit,
// as lookupGroups reads them), unless its part's whole payloads are read.
// Its ordering values are sliced from the rows read again, which are the
// same rows.
func (rd *reader) loadWinner(in *keyInput) error {
	ls := rd.seek.seekOf(in.d)
	if ls == nil || ls.whole || ls.loaded {
		return nil
	}
	ls.loaded = true
	meta := ls.pf.r.Meta()
	var ids []catalog.ColumnID
	if rd.lookupAll {
		ids = rd.inputColumns(meta)
		ls.whole = true
	} else {
		ids = rd.seek.ids[:0]
		for _, p := range rd.plans {
			if p.keyIdx < 0 {
				ids = append(ids, p.id)
			}
		}
		rd.seek.ids = ids
	}
	return ls.pf.r.ReadRows(ls.bi, ls.lo, ls.hi, lightFixed, ids, &ls.d)
}

// fillLight reads the asked groups' columns of every part row in ins and
// turns its light inputs into whole ones (fillPayload).
func (rd *reader) fillLight(ins []keyInput, key []byte, lays map[string]*layout) error {
	for _, ls := range rd.seek.parts[:rd.seek.used] {
		if ls.whole {
			continue
		}
		if err := ls.pf.r.ReadRows(ls.bi, ls.lo, ls.hi, lightFixed, rd.inputColumns(ls.pf.r.Meta()), &ls.d); err != nil {
			return err
		}
		ls.whole = true
	}
	for i := range ins {
		if err := rd.fillPayload(&ins[i], key, lays); err != nil {
			return err
		}
	}
	return nil
}

// lookupRepeatsHistory reports whether a lookup at or after a merged
// run's newest commit must read the run's history (mayRepeatHistory), its
// inputs newer and cur being whole payloads of the groups lookupGroups
// names (fillLight, the memtables' whole versions): an exact re-delivery
// of a current-run winner then needs no history. Ties in the other groups
// are left out: whatever the history holds, such a group keeps a winner
// (W or a tie), and only its existence reaches the row (lookupGroups).
// With lookupAll every group's payload is whole and every group counts.
func (rd *reader) lookupRepeatsHistory(newer, cur []keyInput) bool {
	rd.lookupGroups()
	if rd.lookupAll {
		return mayRepeatHistory(newer, cur, true)
	}
	for i := range newer {
		if slices.Contains(rd.lookupWant, newer[i].group) && mayRepeatHistory(newer[i:i+1], cur, true) {
			return true
		}
	}
	return false
}
