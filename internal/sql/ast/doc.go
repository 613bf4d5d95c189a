// Package ast declares the syntax tree of Strata's SQL dialect, the shape
// the parser produces and the binder consumes.
//
// Every node records its byte range in the statement text (Pos, End) so
// errors raised later, by the binder or the executor, can point at the
// offending column or literal. Names are kept as written after the
// scanner's folding (unquoted names are lower case); type names keep their
// spelling (upper-cased) and parameters unresolved, because resolving them
// is the types package's job (types.FromName takes exactly TypeName's
// Name and Params). Number literals keep their text: 2^256-1 does not fit
// any Go integer and only the binder knows the column it is meant for.
//
// Format prints a node as canonical SQL; Equal compares two trees ignoring
// positions; Dump prints a compact tree for tests.
//
// Invariants:
//  1. For every node n the parser returns, 0 <= n.Pos() <= n.End() <=
//     len(sql), and a child's range lies within its parent's, except that
//     a statement's range never includes the terminating semicolon.
//  2. Parse(Format(n)) is Equal to n for every tree the parser returns
//     (the round-trip test checks this over the conformance corpus).
//  3. The tree holds no type or catalog information: the sql packages
//     import nothing of Strata's except sqlerr.
//  4. Optional parts are nil (pointers, interfaces, slices) or the zero
//     value; the printer and Equal rely on nil meaning "absent".
package ast

// Node is implemented by every syntax tree node.
type Node interface {
	// Pos is the byte offset of the node's first character.
	Pos() int
	// End is the byte offset just past the node's last character.
	End() int
}

// Span is a byte range [Start, Stop) in the statement text. Embedding it
// gives a node its Pos and End methods.
type Span struct {
	Start, Stop int
}

// Pos returns the start offset of the span.
func (s Span) Pos() int { return s.Start }

// End returns the end offset of the span.
func (s Span) End() int { return s.Stop }

// Ident is a name as written: an unquoted name folded to lower case, or a
// quoted name exactly. The empty Name means "absent".
type Ident struct {
	Span
	Name string
}

// ObjectName names a table or another schema object, optionally qualified
// by a schema: system.commits has Schema "system" and Name "commits".
type ObjectName struct {
	Span
	Schema string
	Name   string
}

// TypeName is a column type as written: DECIMAL(10, 2), DATETIME64(3,
// 'UTC'), DOUBLE PRECISION. Name is upper case; multi-word names are joined
// with one space. It is resolved by types.FromName(Name, Params).
type TypeName struct {
	Span
	Name   string
	Params []TypeParam
}

// TypeParam is one parameter of a type name: an integer, or a string when
// IsStr is set. It mirrors types.Param.
type TypeParam struct {
	Int   int64
	Str   string
	IsStr bool
}
