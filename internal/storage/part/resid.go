package part

import (
	"github.com/parquet-go/parquet-go"

	"github.com/strata-db/strata/internal/version"
)

// Resolution columns stored as residuals (format 3).
//
// A version's resolution repeats its other columns in most rows: WonAt is
// the row's Commit whenever it ever won (state current, superseded or
// deleted; 0 when late or dropped), and SupersededBy is the row's EndedAt
// when superseded or deleted (version.Resolve sets both to the commit of
// the version or delete that ended it). In key order commits jump at
// every key, so each of these columns took ~1.4 bytes of a history row's
// ~17 (docs/benchmarks.md, "Bytes on disk, second pass"). So history
// parts store
//
//	_won_at          WonAt − wonBase(State, Commit)
//	_superseded_by   SupersededBy − supersededBase(State, EndedAt)
//
// modulo 2^64: a bijection for any values, since the bases are taken from
// columns stored as they are, and in the rows version.Resolve produces both
// residuals are 0, which DELTA_BINARY_PACKED stores in ~0 bits.
//
// SupersededBy is taken from EndedAt rather than the other way round so
// that the interval scans, which read Commit, WonAt and EndedAt (storage's
// runscan and AS OF index), need only State on top to undo them: never the
// wide SupersededBy column.
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

// wonBase is the part of WonAt that state and commit predict.
func wonBase(s version.State, commit uint64) uint64 {
	switch s {
	case version.Current, version.Superseded, version.Deleted:
		return commit
	}
	return 0
}

// supersededBase is the part of SupersededBy that state and ended_at
// predict.
func supersededBase(s version.State, endedAt uint64) uint64 {
	if s == version.Superseded || s == version.Deleted {
		return endedAt
	}
	return 0
}

// residualBases returns the fixed columns needed to undo the residuals of
// the fixed columns in f.
func residualBases(f Fixed) Fixed {
	var need Fixed
	if f&FixWonAt != 0 {
		need |= FixState | FixCommit
	}
	if f&FixSupersededBy != 0 {
		need |= FixState | FixEndedAt
	}
	return need
}

// undoWonAt turns residuals xs of rows whose states and commits are s and
// c into WonAt values, in place.
func undoWonAt(xs []uint64, s []version.State, c []uint64) {
	s, c = s[:len(xs)], c[:len(xs)]
	for i := range xs {
		xs[i] += wonBase(s[i], c[i])
	}
}

// undoSupersededBy is undoWonAt for SupersededBy, from states and EndedAt.
func undoSupersededBy(xs []uint64, s []version.State, e []uint64) {
	s, e = s[:len(xs)], e[:len(xs)]
	for i := range xs {
		xs[i] += supersededBase(s[i], e[i])
	}
}

// undoBlock undoes the residuals of the fixed columns in f, which
// readBlockFixed decoded into dst for block i (the others dst holds came
// from the chunk cache, final already). The bases are taken from dst when
// the read asked for them (fixed) and are read into dst.residSrc when not.
func (r *Reader) undoBlock(i int, f, fixed Fixed, dst *Data) error {
	need := residualBases(f)
	if miss := need &^ fixed; miss != 0 {
		if dst.residSrc == nil {
			dst.residSrc = &Data{}
		}
		// The bases are stored as they are, so this read has no residual
		// to undo and does not come back here.
		if err := r.readBlockFixed(i, miss, nil, dst.residSrc); err != nil {
			return err
		}
	}
	state, commit, ended := dst.State, dst.Commit, dst.EndedAt
	if need&^fixed&FixState != 0 {
		state = dst.residSrc.State
	}
	if need&^fixed&FixCommit != 0 {
		commit = dst.residSrc.Commit
	}
	if need&^fixed&FixEndedAt != 0 {
		ended = dst.residSrc.EndedAt
	}
	n := r.blocks[i].Rows
	if len(state) != n || need&FixCommit != 0 && len(commit) != n || need&FixEndedAt != 0 && len(ended) != n {
		return r.corrupt("block %d: the columns residuals are taken from do not hold %d rows", i, n)
	}
	if f&FixWonAt != 0 {
		if len(dst.WonAt) != n {
			return r.corrupt("block %d: won_at holds %d rows, want %d", i, len(dst.WonAt), n)
		}
		undoWonAt(dst.WonAt, state, commit)
	}
	if f&FixSupersededBy != 0 {
		if len(dst.SupersededBy) != n {
			return r.corrupt("block %d: superseded_by holds %d rows, want %d", i, len(dst.SupersededBy), n)
		}
		undoSupersededBy(dst.SupersededBy, state, ended)
	}
	return nil
}

// undoPages undoes the residuals of fixed column f (fWonAt or
// fSupersededBy) in pages decodePages decoded into sc, which start at
// block row first, before they are cached or copied out. The bases' pages
// are decoded (or taken from the caches) through decodePages too, into
// the scratch Datas of scratch; tr counts them.
func (r *Reader) undoPages(blk, f int, chunks []parquet.ColumnChunk, first int, sc, scratch *Data, tr *PageTrace) error {
	xs, bf := sc.WonAt, fCommit
	if f == fSupersededBy {
		xs, bf = sc.SupersededBy, fEndedAt
	}
	n := len(xs)
	if scratch.residPages[0] == nil {
		scratch.residPages = [2]*Data{{}, {}}
	}
	w := r.window()
	defer r.windows.Put(w)
	var cols [2][]uint64
	var states []version.State
	for k, g := range [2]int{fState, bf} {
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
	if f == fWonAt {
		undoWonAt(xs, states, cols[1])
	} else {
		undoSupersededBy(xs, states, cols[1])
	}
	return nil
}
