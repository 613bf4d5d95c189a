package plan

import (
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/types"
)

// FrameMode is the unit a window frame's offsets count in.
type FrameMode uint8

// The frame modes: RANGE counts in ORDER BY values (peers move together),
// ROWS in rows, GROUPS in peer groups.
const (
	FrameRange FrameMode = iota
	FrameRows
	FrameGroups
)

// BoundKind is where one end of a frame lies.
type BoundKind uint8

// The frame bound kinds.
const (
	UnboundedPreceding BoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame. Offset, for n PRECEDING and n
// FOLLOWING, reads no column (the binder refuses one that does): exec
// evaluates it once per run, so a parameter may give it.
type FrameBound struct {
	Kind   BoundKind
	Offset expr.Expr
}

// Exclude is a frame's EXCLUDE option: which rows around the current one
// leave its frame.
type Exclude uint8

// The EXCLUDE options; ExcludeNone is EXCLUDE NO OTHERS, the default.
const (
	ExcludeNone Exclude = iota
	ExcludeCurrentRow
	ExcludeGroup // the current row and its peers
	ExcludeTies  // its peers but not itself
)

// Frame is a window function's frame. Without a frame clause it is RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, which without ORDER BY is
// the whole partition (every row is a peer of every other).
type Frame struct {
	Mode       FrameMode
	Start, End FrameBound
	Exclude    Exclude
}

// WindowFunc is one window function call of a Window node: a ranking or
// value function (row_number, rank, dense_rank, percent_rank, cume_dist,
// ntile, lag, lead, first_value, last_value, nth_value) or, with Agg set,
// an aggregate computed over the frame of each row.
type WindowFunc struct {
	Fn   string
	Args []expr.Expr
	Star bool // count(*)
	Agg  bool
	T    types.Type
	// Partition and Order are the window's PARTITION BY and ORDER BY;
	// functions with the same ones share one sort.
	Partition []expr.Expr
	Order     []SortKey
	Frame     Frame
}

// Window computes window functions over its input, which it passes
// through with one more column per function (PostgreSQL evaluates them
// after grouping and HAVING, before DISTINCT, ORDER BY and LIMIT). Rows
// come out in the order of the last function's window (partition, then
// ORDER BY), as PostgreSQL's do when no ORDER BY follows.
type Window struct {
	In    Node
	Funcs []WindowFunc
	Cols  []ColRef
}

// Output implements Node.
func (n *Window) Output() []ColRef {
	return append(append([]ColRef(nil), n.In.Output()...), n.Cols...)
}

// Inputs implements Node.
func (n *Window) Inputs() []Node { return []Node{n.In} }

// exprs calls f with every expression of n.
func (n *Window) exprs(f func(e expr.Expr)) {
	for _, w := range n.Funcs {
		for _, e := range w.Args {
			f(e)
		}
		for _, e := range w.Partition {
			f(e)
		}
		for _, k := range w.Order {
			f(k.E)
		}
		if w.Frame.Start.Offset != nil {
			f(w.Frame.Start.Offset)
		}
		if w.Frame.End.Offset != nil {
			f(w.Frame.End.Offset)
		}
	}
}

// SameWindow reports whether two functions partition and order their rows
// alike, so one sort serves both.
func SameWindow(a, b *WindowFunc) bool {
	if len(a.Partition) != len(b.Partition) || len(a.Order) != len(b.Order) {
		return false
	}
	for i := range a.Partition {
		if a.Partition[i].String() != b.Partition[i].String() {
			return false
		}
	}
	for i, k := range a.Order {
		o := b.Order[i]
		if k.Desc != o.Desc || k.NullsFirst != o.NullsFirst || k.E.String() != o.E.String() {
			return false
		}
	}
	return true
}

// String is the EXPLAIN text of the call: fn(args) OVER (…).
func (w *WindowFunc) String() string {
	var sb strings.Builder
	sb.WriteString(w.Fn + "(")
	if w.Star {
		sb.WriteString("*")
	}
	for i, a := range w.Args {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(a.String())
	}
	sb.WriteString(") OVER (")
	sep := ""
	if len(w.Partition) > 0 {
		parts := make([]string, len(w.Partition))
		for i, e := range w.Partition {
			parts[i] = e.String()
		}
		sb.WriteString("PARTITION BY " + strings.Join(parts, ", "))
		sep = " "
	}
	if len(w.Order) > 0 {
		sb.WriteString(sep + "ORDER BY " + sortKeysString(w.Order))
		sep = " "
	}
	if f := w.Frame; f != (Frame{Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}) {
		fmt.Fprintf(&sb, "%s%s BETWEEN %s AND %s", sep, [...]string{"RANGE", "ROWS", "GROUPS"}[f.Mode], f.Start, f.End)
		if f.Exclude != ExcludeNone {
			sb.WriteString([...]string{"", " EXCLUDE CURRENT ROW", " EXCLUDE GROUP", " EXCLUDE TIES"}[f.Exclude])
		}
	}
	sb.WriteString(")")
	return sb.String()
}

// String is the SQL text of the bound.
func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case OffsetPreceding:
		return b.Offset.String() + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case OffsetFollowing:
		return b.Offset.String() + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

func describeWindow(n *Window) string {
	parts := make([]string, len(n.Funcs))
	for i := range n.Funcs {
		parts[i] = n.Funcs[i].String()
	}
	return "Window [" + strings.Join(parts, ", ") + "]"
}
