package version

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
)

// GroupID names an attribute group of a table; it indexes the []Ordering
// that Resolve is given.
type GroupID uint16

// NoCommit marks a commit that never happened: the WonAt and EndedAt of a
// version that never won. Real commits start at 1 (R5.1).
const NoCommit uint64 = 0

// Forever is the EndedAt of a version that still wins.
const Forever uint64 = math.MaxUint64

// Errors returned for malformed input. They mean a caller broke the contract
// of this package, never that a user wrote bad SQL.
var (
	// ErrOutOfOrder is returned by Register when a version or delete does
	// not come strictly after everything it has already seen.
	ErrOutOfOrder = errors.New("version: input not in commit order")
	// ErrOrderColumns is returned when a version carries a different number
	// of ordering values than its group has ordering columns.
	ErrOrderColumns = errors.New("version: wrong number of ordering values")
	// ErrUnknownGroup is returned by Resolve for a GroupID it has no
	// Ordering for.
	ErrUnknownGroup = errors.New("version: unknown group")
	// ErrDuplicatePosition is returned by Resolve when two versions of one
	// key and group, two deletes of one key, or a delete and a version of one
	// key share a position.
	ErrDuplicatePosition = errors.New("version: two inputs at one position")
)

// Ordering is how one group orders its versions (rule 1): the names of its
// VALID BY and REVISION BY columns, in order, and a printer for reasons.
type Ordering struct {
	// Valid and Revision name the ordering columns. Ordering values arrive
	// in this order: Valid... then Revision...
	Valid, Revision []string
	// Format appends to dst the encoded value of ordering column col (an
	// index over Valid then Revision) as SQL text, for reasons. It is
	// called only while building a Reason, never while deciding. Nil
	// prints hex.
	Format func(dst []byte, col int, enc []byte) []byte
	// Horizon, when set, returns for a commit c the retention horizon as
	// it stood when c was made (R9.3): a version that stopped counting at
	// or before it (Expired) is not one a version committed at c can
	// repeat (rule 3). So whether a write is a repeat is decided at its
	// arrival and never depends on whether the expired version is still
	// stored. nil when the group's versions never expire.
	Horizon func(c uint64) uint64
	// Same, when set, reports whether payloads a and b, encoded under
	// the differing layouts la and lb (Version.Layout), hold the same
	// values (rule 3) as a version committed at commit at, the later of
	// the two, sees them: a column widened between them, or added to the
	// group after one of them was written. It must answer alike whenever
	// it is asked, so that a repeat is decided once, at arrival. It is
	// called only when the layouts differ (!=) and ordering values tie,
	// never on the common path. Nil compares bytes whatever the layouts.
	Same func(la any, a []byte, lb any, b []byte, at uint64) bool
}

// sameValues reports whether two payloads hold the same values (rule 3)
// for a version committed at at: byte for byte under one layout, by
// o.Same across two.
func (o *Ordering) sameValues(la any, a []byte, lb any, b []byte, at uint64) bool {
	if o.Same == nil || la == lb {
		return bytes.Equal(a, b)
	}
	return o.Same(la, a, lb, b, at)
}

// mixedLayouts reports whether the versions ep of vs are not all of one
// layout while o.Same tells layouts apart, so that equal values need not
// be equal bytes.
func (o *Ordering) mixedLayouts(vs []Version, ep []int) bool {
	if o.Same == nil || len(ep) == 0 {
		return false
	}
	l := vs[ep[0]].Layout
	for _, i := range ep[1:] {
		if vs[i].Layout != l {
			return true
		}
	}
	return false
}

// Columns returns the number of ordering columns: len(Valid)+len(Revision).
func (o *Ordering) Columns() int { return len(o.Valid) + len(o.Revision) }

// Ordered reports whether the group has any ordering column; only then are
// repeats dropped (rule 3).
func (o *Ordering) Ordered() bool { return o.Columns() > 0 }

// name returns the name of ordering column col.
func (o *Ordering) name(col int) string {
	if col < len(o.Valid) {
		return o.Valid[col]
	}
	return o.Revision[col-len(o.Valid)]
}

// appendFormat appends ordering value enc of column col, as text.
func (o *Ordering) appendFormat(dst []byte, col int, enc []byte) []byte {
	if o.Format != nil {
		return o.Format(dst, col, enc)
	}
	return hex.AppendEncode(append(dst, "0x"...), enc)
}

// Version is one write of one group for one key. The package keeps
// references to Key, Order and Values, never copies: callers must not modify
// them afterwards.
type Version struct {
	// Key is the memcmp-ordered encoding of the primary key.
	Key []byte
	// Group is the attribute group written.
	Group GroupID
	// Order holds one memcmp-ordered value per ordering column of Group.
	Order [][]byte
	// Commit is the commit that made the write (≥ 1).
	Commit uint64
	// Seq is the write's position inside its commit.
	Seq uint32
	// Values is the encoded payload; repeats compare it with bytes.Equal
	// (rule 3), or with Ordering.Same where Layouts differ.
	Values []byte
	// Layout is the caller's description of how Values is encoded, opaque
	// to this package: nil, or a value that == another exactly when the
	// two encode alike. A table whose columns were widened or added to
	// (R8.1) holds versions of one group under several encodings, whose
	// equal values are then unequal bytes; Ordering.Same compares those.
	Layout any
}

// Pos returns the version's position.
func (v *Version) Pos() Pos { return Pos{v.Commit, v.Seq} }

// Delete ends every group of Key at its position (rule 2, R5.4).
type Delete struct {
	Key    []byte
	Commit uint64
	Seq    uint32
}

// Pos returns the delete's position.
func (d *Delete) Pos() Pos { return Pos{d.Commit, d.Seq} }

// Pos is a position in commit order: the commit, then the place inside it.
type Pos struct {
	Commit uint64
	Seq    uint32
}

// Compare returns -1, 0 or +1 as p is before, at or after q.
func (p Pos) Compare(q Pos) int {
	switch {
	case p.Commit < q.Commit:
		return -1
	case p.Commit > q.Commit:
		return 1
	case p.Seq < q.Seq:
		return -1
	case p.Seq > q.Seq:
		return 1
	}
	return 0
}

// Compare orders two versions of one key and group under rule 1: ordering
// values column by column, then commit, then seq. It returns -1, 0 or +1.
// Missing ordering values (a malformed version) compare as empty.
func Compare(g Ordering, a, b *Version) int {
	if c := compareOrder(g.Columns(), a.Order, b.Order); c != 0 {
		return c
	}
	return a.Pos().Compare(b.Pos())
}

// Less reports whether a is less than b under rule 1: b would win over a.
func Less(g Ordering, a, b *Version) bool { return Compare(g, a, b) < 0 }

// compareOrder compares the first n ordering values of a and b.
func compareOrder(n int, a, b [][]byte) int {
	for i := range n {
		if c := bytes.Compare(col(a, i), col(b, i)); c != 0 {
			return c
		}
	}
	return 0
}

// equalOrder reports whether a and b agree on their first n ordering values.
func equalOrder(n int, a, b [][]byte) bool {
	for i := range n {
		if !bytes.Equal(col(a, i), col(b, i)) {
			return false
		}
	}
	return true
}

// firstDiff returns the first of n ordering columns on which a and b differ,
// or -1.
func firstDiff(n int, a, b [][]byte) int {
	for i := range n {
		if !bytes.Equal(col(a, i), col(b, i)) {
			return i
		}
	}
	return -1
}

// col returns ordering value i, or nil when the version has too few.
func col(o [][]byte, i int) []byte {
	if i < len(o) {
		return o[i]
	}
	return nil
}
