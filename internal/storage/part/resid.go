package part

import (
	"github.com/parquet-go/parquet-go"

	"github.com/strata-db/strata/internal/version"
)

// Resolution columns stored as residuals (format 3).
//
// A version's resolution repeats its neighbours' columns in most rows
// (version.Resolve): WonAt is the row's own Commit whenever it won (state
// current, superseded or deleted; 0 when late or dropped); a superseded
// row's EndedAt is the commit of the next arrival of its key and group
// that won, and its SupersededBy equals its EndedAt; a late row's
// SupersededBy is the commit of the winner it lost to, the last arrival
// before it that won. In key order commits jump at every key, so each of
// these columns took ~1.4 bytes of a history row's ~17 (docs/benchmarks.md,
// "Bytes on disk, second pass"). So history parts store, modulo 2^64,
//
//	_won_at          WonAt − (won ? Commit : 0)
//	_ended_at        EndedAt − (ended ? Commit of the page's next row that won : 0)
//	_superseded_by   SupersededBy − (ended ? EndedAt : lost ? Commit of the page's last earlier row that won : 0)
//
// (won, ended, lost below). The bases are taken from _state and _commit,
// stored as they are, and from the final EndedAt, so each is a bijection
// for any values; in rows version.Resolve produces most residuals are 0.
// A base never reaches outside the row's page (Meta.PageRows rows, the
// unit a point lookup decodes), and the neighbours are found without the
// sort key: a row whose next winner in the page is of another key or group
// keeps a residual that is not 0, which costs bytes, not correctness.
//
// The interval scans (storage's runscan and AS OF index) read Commit,
// WonAt and EndedAt, so they decode _state on top, and never the
// superseded_by column.
//
// The decoded chunk and page caches (chunkcache.go, cache.go) hand out
// and copy final values, so residuals are undone where a chunk or page is
// decoded, before anything is cached: in readBlockFixed for whole chunks
// (undoBlock) and in decodePages for pages (undoPages), each decoding the
// base columns of the same rows when the read did not ask for them.

// residualKind reports whether Write stores parts of kind k with
// residuals. Only merges write history parts, which hold most rows of a
// settled versioned table; delta parts' resolution is zero, and current
// parts are a fifth of the rows and warmed for lookups.
func residualKind(k Kind) bool { return k == KindHistory }

// writeResiduals is a test hook: false makes Write store the resolution
// as it is (format 2 or 1), as builds before format 3 did.
var writeResiduals = true

// won reports whether a row of state s won at some commit: WonAt is its
// commit, and it ended the epoch of the winner before it.
func won(s version.State) bool {
	return s == version.Current || s == version.Superseded || s == version.Deleted
}

// ended reports whether a row of state s won and was ended: EndedAt and
// SupersededBy are the commit of what ended it.
func ended(s version.State) bool { return s == version.Superseded || s == version.Deleted }

// lost reports whether a row of state s never won: SupersededBy is the
// commit of the winner it lost to (late) or repeats (dropped).
func lost(s version.State) bool { return s == version.Late || s == version.Dropped }

// residuals turns the resolution of the rows of one page (state s,
// commit c; s and the resolution columns may be empty, meaning zero) into
// what format 3 stores, writing the stored won_at, ended_at and
// superseded_by into outWon, outEnd and outSup (any may be nil).
func residuals(s []version.State, c, wonAt, endedAt, supBy, outWon, outEnd, outSup []uint64) {
	n := len(c)
	st := func(i int) version.State {
		if len(s) == 0 {
			return version.Invisible
		}
		return s[i]
	}
	var next uint64
	for i := n - 1; i >= 0; i-- {
		b := uint64(0)
		if ended(st(i)) {
			b = next
		}
		if outEnd != nil {
			outEnd[i] = at(endedAt, i) - b
		}
		if won(st(i)) {
			next = c[i]
		}
	}
	var prev uint64
	for i := range n {
		x := st(i)
		if outWon != nil {
			b := uint64(0)
			if won(x) {
				b = c[i]
			}
			outWon[i] = at(wonAt, i) - b
		}
		if outSup != nil {
			b := uint64(0)
			switch {
			case ended(x):
				b = at(endedAt, i)
			case lost(x):
				b = prev
			}
			outSup[i] = at(supBy, i) - b
		}
		if won(x) {
			prev = c[i]
		}
	}
}

// undoWonAt turns the stored won_at xs of one page's rows, whose states
// and commits are s and c, into WonAt, in place.
func undoWonAt(xs []uint64, s []version.State, c []uint64) {
	s, c = s[:len(xs)], c[:len(xs)]
	for i := range xs {
		if won(s[i]) {
			xs[i] += c[i]
		}
	}
}

// undoEndedAt is undoWonAt for ended_at: the base of an ended row is the
// commit of the next row of the page that won (the next arrival that beat
// it, in a key and group's rows; version.Resolve).
func undoEndedAt(xs []uint64, s []version.State, c []uint64) {
	s, c = s[:len(xs)], c[:len(xs)]
	var next uint64
	for i := len(xs) - 1; i >= 0; i-- {
		if ended(s[i]) {
			xs[i] += next
		}
		if won(s[i]) {
			next = c[i]
		}
	}
}

// undoSupersededBy is undoWonAt for superseded_by, from the final EndedAt
// e of the same rows: an ended row's base is its EndedAt, a late or
// dropped row's the commit of the page's last row before it that won (the
// winner it lost to, in a key and group's rows).
func undoSupersededBy(xs []uint64, s []version.State, c, e []uint64) {
	s, c, e = s[:len(xs)], c[:len(xs)], e[:len(xs)]
	var prev uint64
	for i := range xs {
		switch {
		case ended(s[i]):
			xs[i] += e[i]
		case lost(s[i]):
			xs[i] += prev
		}
		if won(s[i]) {
			prev = c[i]
		}
	}
}

// residualBases returns the fixed columns needed to undo the residuals of
// the fixed columns in f.
func residualBases(f Fixed) Fixed {
	var need Fixed
	if f&(FixWonAt|FixEndedAt) != 0 {
		need |= FixState | FixCommit
	}
	if f&FixSupersededBy != 0 {
		need |= FixState | FixCommit | FixEndedAt
	}
	return need
}

// undoRows undoes the residuals of fixed column f (fWonAt, fEndedAt or
// fSupersededBy) in xs, the rows of whole pages starting at a page start,
// page by page (a base never reaches across a page, so that a page
// decodes alone). s, c and e are the same rows' states, commits and final
// EndedAt (e only for fSupersededBy).
func undoRows(f int, pageRows int, xs []uint64, s []version.State, c, e []uint64) {
	for lo := 0; lo < len(xs); lo += pageRows {
		hi := min(lo+pageRows, len(xs))
		switch f {
		case fWonAt:
			undoWonAt(xs[lo:hi], s[lo:hi], c[lo:hi])
		case fEndedAt:
			undoEndedAt(xs[lo:hi], s[lo:hi], c[lo:hi])
		default:
			undoSupersededBy(xs[lo:hi], s[lo:hi], c[lo:hi], e[lo:hi])
		}
	}
}

// undoBlock undoes the residuals of the fixed columns in f, which
// readBlockFixed decoded into dst for block i (the others dst holds came
// from the chunk cache, final already). The bases are taken from dst when
// the read asked for them (fixed) and are read into dst.residSrc when not;
// that read undoes ended_at itself when superseded_by needs it.
func (r *Reader) undoBlock(i int, f, fixed Fixed, dst *Data) error {
	need := residualBases(f)
	miss := need &^ fixed
	state, commit, endedAt := dst.State, dst.Commit, dst.EndedAt
	if miss != 0 {
		if dst.residSrc == nil {
			dst.residSrc = &Data{}
		}
		src := dst.residSrc
		if err := r.readBlockFixed(i, miss, nil, src); err != nil {
			return err
		}
		if miss&FixState != 0 {
			state = src.State
		}
		if miss&FixCommit != 0 {
			commit = src.Commit
		}
		if miss&FixEndedAt != 0 {
			endedAt = src.EndedAt
		}
	}
	n := r.blocks[i].Rows
	if len(state) != n || len(commit) != n || need&FixEndedAt != 0 && len(endedAt) != n {
		return r.corrupt("block %d: the columns residuals are taken from do not hold %d rows", i, n)
	}
	// ended_at first: superseded_by's bases include it.
	for _, c := range []struct {
		fix Fixed
		f   int
		xs  []uint64
	}{{FixWonAt, fWonAt, dst.WonAt}, {FixEndedAt, fEndedAt, dst.EndedAt}, {FixSupersededBy, fSupersededBy, dst.SupersededBy}} {
		if f&c.fix == 0 {
			continue
		}
		if len(c.xs) != n {
			return r.corrupt("block %d: %s holds %d rows, want %d", i, fixedNames[c.f], len(c.xs), n)
		}
		undoRows(c.f, r.meta.PageRows, c.xs, state, commit, endedAt)
	}
	return nil
}

// undoPages undoes the residuals of fixed column f (fWonAt, fEndedAt or
// fSupersededBy) in the pages decodePages decoded into sc, which start at
// block row first (a page start), before they are cached or copied out.
// The bases' pages are decoded (or taken from the caches) through
// decodePages too, into the scratch Datas of scratch, ended_at's with its
// own residuals undone; tr counts them.
func (r *Reader) undoPages(blk, f int, chunks []parquet.ColumnChunk, first int, sc, scratch *Data, tr *PageTrace) error {
	var xs []uint64
	bases := []int{fState, fCommit}
	switch f {
	case fWonAt:
		xs = sc.WonAt
	case fEndedAt:
		xs = sc.EndedAt
	default:
		xs = sc.SupersededBy
		bases = append(bases, fEndedAt)
	}
	n := len(xs)
	if scratch.residPages[0] == nil {
		scratch.residPages = [3]*Data{{}, {}, {}}
	}
	w := r.window()
	defer r.windows.Put(w)
	var states []version.State
	var cols [3][]uint64
	for k, g := range bases {
		t := chunkTask{col: r.fixed[g], fixed: g}
		src, _, err := r.decodePages(w, blk, &t, chunks, first, first+n, scratch.residPages[k], 0, tr)
		if err != nil {
			return err
		}
		a := first - src.first
		if a < 0 || src.pageLen(g, nil) < a+n {
			return r.corrupt("block %d column %d: pages from row %d do not hold rows [%d, %d)", blk, t.col, src.first, first, first+n)
		}
		switch g {
		case fState:
			states = src.State[a : a+n]
		case fCommit:
			cols[k] = src.Commit[a : a+n]
		default:
			cols[k] = src.EndedAt[a : a+n]
		}
	}
	undoRows(f, r.meta.PageRows, xs, states, cols[1], cols[2])
	return nil
}
