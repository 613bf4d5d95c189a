package part

import (
	"github.com/parquet-go/parquet-go"

	"github.com/strata-db/strata/internal/version"
)

// Positions and resolution stored as residuals (format 3).
//
// A history row's commit, seq and resolution repeat its neighbours' in
// most rows (version.Resolve): WonAt is the row's own Commit whenever it
// won (state current, superseded or deleted; 0 when late or dropped); a
// superseded row's EndedAt is the commit of the next arrival of its key
// and group that won, and its SupersededBy equals its EndedAt; a late
// row's SupersededBy is the commit of the winner it lost to, the last
// arrival before it that won. And where one write gives a key rows in two
// attribute groups (the benchmark's holding and activity groups), the
// second group's rows repeat the first's commits, in the same order. In
// key order commits jump at every key, so each of these columns took ~1.4
// bytes of a history row's ~17 (docs/benchmarks.md, "Bytes on disk, second
// pass"). So history parts store, modulo 2^64 (2^32 for seq),
//
//	_commit          Commit − (ref ≥ 0 ? Commit[ref] : 0)
//	_seq             Seq − (ref ≥ 0 ? Seq[ref] : 0)
//	_won_at          WonAt − (won ? Commit : 0)
//	_ended_at        EndedAt − (ended ? Commit of the page's next row that won : 0)
//	_superseded_by   SupersededBy − (ended ? EndedAt : lost ? Commit of the page's last earlier row that won : 0)
//
// with ref the row of the same rank in the run of rows of the previous
// group before the row's own run (groupRef), and won, ended and lost as
// below. The first two only where they pay (Meta.PositionResidual,
// positionsRepeat): where a key's groups are written by separate commits
// they would store differences of unrelated commits. The bases are taken from _group and _state, stored as they are,
// and from final values of earlier rows or other columns, so each is a
// bijection for any values; in the rows merges write most residuals are 0.
// A base never reaches outside the row's page (Meta.PageRows rows, the
// unit a point lookup decodes), and neighbours are found without the sort
// key: a row whose neighbour in the page belongs to another key costs
// bytes, not correctness.
//
// The interval scans (storage's runscan and AS OF index) read Sort, Group,
// Commit, WonAt and EndedAt, so they decode _state on top, never the
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

// writeResiduals is a test hook: false makes Write store positions and
// resolution as they are (format 2 or 1), as builds before format 3 did.
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

// groupRef finds, row by row through one page, the row a row's commit
// and seq are stored relative to (format 3): the row of the same rank in
// the run of rows just before its own run of equal groups, when that run
// is of a smaller group and long enough. Rows are sorted by (key, group,
// commit, seq), so that is the same key's previous group, and where one
// write gave a key rows in two groups (the benchmark's holding and activity
// groups, say) both runs hold the same commits: the second stores 0. A run
// of the previous group of another key (a key without rows in the smaller
// group) is taken all the same: it costs bytes, not correctness, and keeps
// the sort key out of the bases. Use a fresh groupRef{ps: -1} per page.
type groupRef struct{ ps, pe, start int }

// next returns the reference row of row i (rows are visited in order), or
// -1 when it has none.
func (r *groupRef) next(g []uint16, i int) int {
	if i > 0 && g[i] != g[i-1] {
		r.ps, r.pe, r.start = r.start, i, i
	}
	if r.ps >= 0 && g[r.ps] < g[i] {
		if j := r.ps + i - r.start; j < r.pe {
			return j
		}
	}
	return -1
}

// residualsPos writes what format 3 stores of the commits c and seqs q of
// one page's rows, of groups g (empty: all 0), into outC and outQ (either
// may be nil).
func residualsPos(g []uint16, c []uint64, q []uint32, outC []uint64, outQ []uint32) {
	ref := groupRef{ps: -1}
	for i := range c {
		j := -1
		if len(g) > 0 {
			j = ref.next(g, i)
		}
		if outC != nil {
			outC[i] = c[i]
			if j >= 0 {
				outC[i] -= c[j]
			}
		}
		if outQ != nil {
			outQ[i] = q[i]
			if j >= 0 {
				outQ[i] -= q[j]
			}
		}
	}
}

// undoCommit turns one page's stored commits xs, of groups g, into
// commits, in place: a reference row comes before its row, so it is final
// by then.
func undoCommit(xs []uint64, g []uint16) {
	g = g[:len(xs)]
	ref := groupRef{ps: -1}
	for i := range xs {
		if j := ref.next(g, i); j >= 0 {
			xs[i] += xs[j]
		}
	}
}

// undoSeq is undoCommit for seqs.
func undoSeq(xs []uint32, g []uint16) {
	g = g[:len(xs)]
	ref := groupRef{ps: -1}
	for i := range xs {
		if j := ref.next(g, i); j >= 0 {
			xs[i] += xs[j]
		}
	}
}

// residualBases returns the fixed columns needed to undo the residuals of
// the fixed columns in f.
func residualBases(f Fixed) Fixed {
	var need Fixed
	if f&(FixCommit|FixSeq) != 0 {
		need |= FixGroup
	}
	if f&(FixWonAt|FixEndedAt) != 0 {
		need |= FixState | FixCommit
	}
	if f&FixSupersededBy != 0 {
		need |= FixState | FixCommit | FixEndedAt
	}
	return need
}

// residBases are the columns residuals are undone from, for one block or
// one range of pages.
type residBases struct {
	group  []uint16
	state  []version.State
	commit []uint64
	ended  []uint64
}

// undoRows undoes the residuals of fixed column f in d, whose rows are
// whole pages starting at a page start, page by page (a base never
// reaches across a page, so that a page decodes alone). b holds the same
// rows' bases, final (commit and ended_at undone already).
func undoRows(f int, pageRows int, d *Data, b *residBases) {
	n := d.pageLen(f, nil)
	for lo := 0; lo < n; lo += pageRows {
		hi := min(lo+pageRows, n)
		switch f {
		case fCommit:
			undoCommit(d.Commit[lo:hi], b.group[lo:hi])
		case fSeq:
			undoSeq(d.Seq[lo:hi], b.group[lo:hi])
		case fWonAt:
			undoWonAt(d.WonAt[lo:hi], b.state[lo:hi], b.commit[lo:hi])
		case fEndedAt:
			undoEndedAt(d.EndedAt[lo:hi], b.state[lo:hi], b.commit[lo:hi])
		default:
			undoSupersededBy(d.SupersededBy[lo:hi], b.state[lo:hi], b.commit[lo:hi], b.ended[lo:hi])
		}
	}
}

// residualOrder lists the fixed columns with residuals in the order they
// are undone: the commit before the resolution taken from it, ended_at
// before superseded_by.
var residualOrder = [...]int{fCommit, fSeq, fWonAt, fEndedAt, fSupersededBy}

// residual reports whether the part stores fixed column f as a residual.
func (r *Reader) residual(f int) bool {
	switch f {
	case fCommit, fSeq:
		return r.meta.PositionResidual
	case fWonAt, fEndedAt, fSupersededBy:
		return r.meta.Residual
	}
	return false
}

// positionsRepeat reports whether Write should store d's commits and seqs
// as residuals: whether at least half the rows that have a reference row
// (groupRef, page by page) repeat its commit. Where a key's groups are
// written by separate commits the residuals would be differences of
// unrelated commits, larger than the sorted commits DELTA stores now
// (storage's BenchmarkBalances: 2.34 → 2.94 bytes per version).
func positionsRepeat(d *Data, pageRows int) bool {
	if len(d.Group) == 0 {
		return false
	}
	refs, same := 0, 0
	for lo := 0; lo < d.Rows; lo += pageRows {
		hi := min(lo+pageRows, d.Rows)
		g, c := d.Group[lo:hi], d.Commit[lo:hi]
		ref := groupRef{ps: -1}
		for i := range c {
			if j := ref.next(g, i); j >= 0 {
				refs++
				if c[i] == c[j] {
					same++
				}
			}
		}
	}
	return refs > 0 && 2*same >= refs
}

// undoBlock undoes the residuals of the fixed columns in f, which
// readBlockFixed decoded into dst for block i (the others dst holds came
// from the chunk cache, final already). The bases are taken from dst when
// the read asked for them (fixed) and are read into dst.residSrc when not;
// that read undoes the commit and ended_at itself when they are bases.
func (r *Reader) undoBlock(i int, f, fixed Fixed, dst *Data) error {
	need := residualBases(f)
	miss := need &^ fixed
	b := residBases{group: dst.Group, state: dst.State, commit: dst.Commit, ended: dst.EndedAt}
	if miss != 0 {
		if dst.residSrc == nil {
			dst.residSrc = &Data{}
		}
		src := dst.residSrc
		if err := r.readBlockFixed(i, miss, nil, src); err != nil {
			return err
		}
		if miss&FixGroup != 0 {
			b.group = src.Group
		}
		if miss&FixState != 0 {
			b.state = src.State
		}
		if miss&FixCommit != 0 {
			b.commit = src.Commit
		}
		if miss&FixEndedAt != 0 {
			b.ended = src.EndedAt
		}
	}
	n := r.blocks[i].Rows
	if need&FixGroup != 0 && len(b.group) != n || need&FixState != 0 && len(b.state) != n ||
		need&FixCommit != 0 && len(b.commit) != n || need&FixEndedAt != 0 && len(b.ended) != n {
		return r.corrupt("block %d: the columns residuals are taken from do not hold %d rows", i, n)
	}
	for _, c := range residualOrder {
		if f&(1<<c) == 0 {
			continue
		}
		if got := dst.pageLen(c, nil); got != n {
			return r.corrupt("block %d: %s holds %d rows, want %d", i, fixedNames[c], got, n)
		}
		undoRows(c, r.meta.PageRows, dst, &b)
	}
	return nil
}

// undoPages undoes the residuals of fixed column f (Reader.residual) in the
// pages decodePages decoded into sc, which start at block row first (a
// page start), before they are cached or copied out. The bases' pages are
// decoded (or taken from the caches) through decodePages too, into the
// scratch Datas of scratch, the commit's and ended_at's with their own
// residuals undone; tr counts them.
func (r *Reader) undoPages(blk, f int, chunks []parquet.ColumnChunk, first int, sc, scratch *Data, tr *PageTrace) error {
	var bases []int
	switch f {
	case fCommit, fSeq:
		bases = []int{fGroup}
	case fWonAt, fEndedAt:
		bases = []int{fState, fCommit}
	default:
		bases = []int{fState, fCommit, fEndedAt}
	}
	n := sc.pageLen(f, nil)
	if scratch.residPages[0] == nil {
		scratch.residPages = [3]*Data{{}, {}, {}}
	}
	w := r.window()
	defer r.windows.Put(w)
	var b residBases
	for k, g := range bases {
		// A base column's page is decoded into scratch and not cached:
		// a lookup AS OF a commit reads the intervals, never _state, and
		// _commit only when it asks for it, and at bench/'s medium scale
		// the two took a third of the cache's history pages. WonAt and
		// EndedAt of the same rows share the bases decoded once.
		tag := pageTag{reader: r.id, block: blk, col: g, first: first, rows: n}
		src := scratch.residPages[k]
		if src.basePage != tag {
			t := chunkTask{col: r.fixed[g], fixed: g, noPut: true}
			var err error
			if src, _, err = r.decodePages(w, blk, &t, chunks, first, first+n, scratch.residPages[k], 0, tr); err != nil {
				return err
			}
			if src == scratch.residPages[k] {
				src.basePage = tag
			}
		}
		a := first - src.first
		if a < 0 || src.pageLen(g, nil) < a+n {
			return r.corrupt("block %d column %d: pages from row %d do not hold rows [%d, %d)", blk, r.fixed[g], src.first, first, first+n)
		}
		switch g {
		case fGroup:
			b.group = src.Group[a : a+n]
		case fState:
			b.state = src.State[a : a+n]
		case fCommit:
			b.commit = src.Commit[a : a+n]
		default:
			b.ended = src.EndedAt[a : a+n]
		}
	}
	undoRows(f, r.meta.PageRows, sc, &b)
	return nil
}
