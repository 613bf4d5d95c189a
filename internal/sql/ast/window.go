package ast

// Window functions: f(args) [FILTER (WHERE …)] OVER (spec) or OVER name,
// and the SELECT block's WINDOW name AS (spec) clause. The frame is kept
// as written (the short form `ROWS n PRECEDING` has no End) so that the
// printer reproduces the tree.

// WindowSpec is a window specification: the parenthesised body of OVER (…)
// or of WINDOW w AS (…), or a bare OVER w (Name set, nothing else).
type WindowSpec struct {
	Span
	// Name is the w of a bare OVER w; the spec has nothing else.
	Name string
	// Ref is the existing window of OVER (w ORDER BY …) or WINDOW x AS
	// (w …), copied per PostgreSQL's rules; "" when absent.
	Ref         string
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *WindowFrame // nil when absent
}

// FrameMode is the unit of a frame clause's offsets.
type FrameMode uint8

// The frame modes.
const (
	FrameRange FrameMode = iota
	FrameRows
	FrameGroups
)

// FrameBoundKind is where a frame bound lies.
type FrameBoundKind uint8

// The frame bound kinds, in the order they may appear (a frame's start may
// not come after its end in this order).
const (
	UnboundedPreceding FrameBoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset is set for n PRECEDING and n
// FOLLOWING.
type FrameBound struct {
	Span
	Kind   FrameBoundKind
	Offset Expr
}

// FrameExclude is a frame's EXCLUDE option.
type FrameExclude uint8

// The EXCLUDE options; ExcludeNoOthers is the default.
const (
	ExcludeNoOthers FrameExclude = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// WindowFrame is ROWS|RANGE|GROUPS Start, or … BETWEEN Start AND End, with
// an optional EXCLUDE.
type WindowFrame struct {
	Span
	Mode    FrameMode
	Start   *FrameBound
	End     *FrameBound // nil for the short form (the end is CURRENT ROW)
	Exclude FrameExclude
	// ExcludeSet records that EXCLUDE was written (EXCLUDE NO OTHERS is
	// the default but is printed back as written).
	ExcludeSet bool
}

// WindowDef is one WINDOW name AS (spec) of a SELECT block.
type WindowDef struct {
	Span
	Name *Ident
	Spec *WindowSpec
}

// String returns the FrameMode's SQL spelling.
func (m FrameMode) String() string { return pick(int(m), "RANGE", "ROWS", "GROUPS") }

// String returns the FrameBoundKind's SQL spelling.
func (k FrameBoundKind) String() string {
	return pick(int(k), "UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW", "FOLLOWING", "UNBOUNDED FOLLOWING")
}

// String returns the FrameExclude's SQL spelling.
func (e FrameExclude) String() string {
	return pick(int(e), "NO OTHERS", "CURRENT ROW", "GROUP", "TIES")
}
