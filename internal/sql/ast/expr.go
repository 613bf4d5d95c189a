package ast

import "github.com/strata-db/strata/internal/sql/token"

// Expr is a scalar expression.
type Expr interface {
	Node
	exprNode()
}

// ColumnRef is a column reference: a, t.a or s.t.a.
type ColumnRef struct {
	Span
	Schema string // "" unless written s.t.a
	Table  string // "" unless qualified
	Name   string
}

// StarExpr is * or t.* in a select list.
type StarExpr struct {
	Span
	Schema string
	Table  string // "" for a bare *
}

// NumberLit is a number literal kept as its text ("115792…935", "1.5e3").
// A leading minus is a UnaryExpr around it, not part of the text.
type NumberLit struct {
	Span
	Text string
}

// StringLit is a string literal; Value is the decoded text.
type StringLit struct {
	Span
	Value string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Span
	Value bool
}

// NullLit is NULL.
type NullLit struct {
	Span
}

// DefaultExpr is the word DEFAULT standing for a column's default, in an
// INSERT's VALUES row or an UPDATE's SET.
type DefaultExpr struct {
	Span
}

// Param is a bind parameter $N; Index is N (1-based).
type Param struct {
	Span
	Index int
}

// TypedLit is a literal of a named type, DATE '2026-01-01' or TIMESTAMP
// '2026-10-01 12:00:00'.
type TypedLit struct {
	Span
	Type  *TypeName
	Value string
}

// IntervalLit is INTERVAL '90 days' or INTERVAL '5' MINUTE; Value is the
// text between the quotes, Field the qualifier (YEAR, MONTH, DAY, HOUR,
// MINUTE or SECOND; "" when absent).
type IntervalLit struct {
	Span
	Value string
	Field string
}

// UnaryExpr is a prefix operator applied to X: Op is token.MINUS,
// token.PLUS or token.NOT.
type UnaryExpr struct {
	Span
	Op token.Token
	X  Expr
}

// BinaryExpr is L Op R for the arithmetic (+ - * / % ^), concatenation
// (||), comparison (= <> < <= > >=) and logical (AND OR) operators. != is
// recorded as token.NE, like <>.
type BinaryExpr struct {
	Span
	Op   token.Token
	L, R Expr
}

// IsKind says what an IS test checks.
type IsKind uint8

// The IS tests.
const (
	IsNull IsKind = iota
	IsTrue
	IsFalse
	IsUnknown
	IsDistinctFrom // X IS [NOT] DISTINCT FROM From
)

// IsExpr is X IS [NOT] NULL / TRUE / FALSE / UNKNOWN / DISTINCT FROM From.
type IsExpr struct {
	Span
	X    Expr
	Not  bool
	Kind IsKind
	From Expr // only for IsDistinctFrom
}

// BetweenExpr is X [NOT] BETWEEN [SYMMETRIC] Lo AND Hi.
type BetweenExpr struct {
	Span
	X, Lo, Hi Expr
	Not       bool
	Symmetric bool
}

// InExpr is X [NOT] IN (List...) or X [NOT] IN (Query); exactly one of
// List and Query is set.
type InExpr struct {
	Span
	X     Expr
	Not   bool
	List  []Expr
	Query *SelectStmt
}

// LikeExpr is X [NOT] LIKE|ILIKE Pattern [ESCAPE Escape].
type LikeExpr struct {
	Span
	X, Pattern Expr
	Escape     Expr // nil when absent
	Not        bool
	ILike      bool
}

// CastExpr is CAST(X AS Type), or X::Type when Colons is set.
type CastExpr struct {
	Span
	X      Expr
	Type   *TypeName
	Colons bool
}

// CaseExpr is CASE [Operand] WHEN … THEN … [ELSE Else] END.
type CaseExpr struct {
	Span
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr // nil when absent
}

// When is one WHEN Cond THEN Result arm of a CASE.
type When struct {
	Span
	Cond, Result Expr
}

// QuantifiedExpr is X Op ANY (Query) or X Op ALL (Query); SOME is ANY.
// Op is a comparison operator.
type QuantifiedExpr struct {
	Span
	X     Expr
	Op    token.Token
	All   bool
	Query *SelectStmt
}

// ExistsExpr is EXISTS (Query).
type ExistsExpr struct {
	Span
	Query *SelectStmt
}

// SubqueryExpr is a scalar subquery, (SELECT …) used as a value.
type SubqueryExpr struct {
	Span
	Query *SelectStmt
}

// FuncCall is a function or aggregate call: name([DISTINCT] args) or
// count(*) (Star). Name is lower case unless quoted; Schema qualifies it.
type FuncCall struct {
	Span
	Schema   string
	Name     string
	Args     []Expr
	Distinct bool
	Star     bool
	// Filter is an aggregate's FILTER (WHERE Filter) clause; nil when
	// absent.
	Filter Expr
	// OrderBy is an aggregate's ORDER BY, written inside the parentheses
	// after the arguments (string_agg(s, ',' ORDER BY s)) or, when
	// WithinGroup is set, in WITHIN GROUP (ORDER BY …) of an ordered-set
	// aggregate (percentile_cont(0.5) WITHIN GROUP (ORDER BY x)).
	OrderBy     []*OrderItem
	WithinGroup bool
	// Over makes the call a window function: OVER (…) or OVER w; nil for
	// a plain call.
	Over *WindowSpec
}

// ParenExpr is an expression in parentheses, kept so that the printer
// reproduces what was written.
type ParenExpr struct {
	Span
	X Expr
}

// TupleExpr is a parenthesised list of two or more expressions (a row
// value), or, as a policy setting's value, a list of any length.
type TupleExpr struct {
	Span
	Items []Expr
}

// GroupingKind says which grouping construct a GroupingSet is.
type GroupingKind uint8

// The grouping constructs of GROUP BY.
const (
	GroupingSets     GroupingKind = iota // GROUPING SETS (Items)
	Rollup                               // ROLLUP (Items)
	Cube                                 // CUBE (Items)
	EmptyGroupingSet                     // (), the grand total; no Items
)

// GroupingSet is a GROUP BY item that lists several groupings: GROUPING
// SETS (…), ROLLUP (…), CUBE (…) or the empty set (). It appears only in
// SelectBlock.GroupBy. An item of ROLLUP or CUBE that is a TupleExpr is a
// column list taken as one unit; an item of GROUPING SETS may be any
// grouping item, a nested GroupingSet included.
type GroupingSet struct {
	Span
	Kind  GroupingKind
	Items []Expr
}

func (*ColumnRef) exprNode()      {}
func (*StarExpr) exprNode()       {}
func (*NumberLit) exprNode()      {}
func (*StringLit) exprNode()      {}
func (*BoolLit) exprNode()        {}
func (*NullLit) exprNode()        {}
func (*DefaultExpr) exprNode()    {}
func (*Param) exprNode()          {}
func (*TypedLit) exprNode()       {}
func (*IntervalLit) exprNode()    {}
func (*UnaryExpr) exprNode()      {}
func (*BinaryExpr) exprNode()     {}
func (*IsExpr) exprNode()         {}
func (*BetweenExpr) exprNode()    {}
func (*InExpr) exprNode()         {}
func (*LikeExpr) exprNode()       {}
func (*CastExpr) exprNode()       {}
func (*CaseExpr) exprNode()       {}
func (*ExistsExpr) exprNode()     {}
func (*QuantifiedExpr) exprNode() {}
func (*SubqueryExpr) exprNode()   {}
func (*FuncCall) exprNode()       {}
func (*ParenExpr) exprNode()      {}
func (*TupleExpr) exprNode()      {}
func (*GroupingSet) exprNode()    {}

// ValueFunctions are the SQL-standard functions written without
// parentheses (current_date, current_user, …): the parser reads such a
// bare word as a FuncCall without arguments, and Format prints that call
// bare again. USER is left out: Strata does not reserve it, and a column
// named user is common.
var ValueFunctions = map[string]bool{"current_user": true, "session_user": true, "current_catalog": true,
	"current_schema": true, "current_role": true, "current_timestamp": true, "current_date": true, "localtimestamp": true}
