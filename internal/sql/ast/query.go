package ast

// SelectStmt is a whole query: an optional WITH, a body, and the clauses
// that apply to the body's result. It is a statement on its own and the
// operand of INSERT … SELECT, subqueries, derived tables, CTEs and
// CREATE TRANSFORMATION.
//
// AsOf is the query-block form of SPEC R6.2 (written after WHERE, GROUP
// BY, HAVING and ORDER BY, before LIMIT/OFFSET): it applies to every
// relation of the statement that has no AS OF of its own, subqueries and
// CTEs included. The parser allows it once per query block, and not in a
// block whose own relations carry AS OF.
type SelectStmt struct {
	Span
	With    *With // nil when absent
	Body    QueryBody
	OrderBy []*OrderItem
	AsOf    *AsOf // nil when absent
	Limit   Expr  // nil when absent; FETCH FIRST n ROWS ONLY lands here too
	Offset  Expr  // nil when absent
	// Locking holds the FOR UPDATE / FOR SHARE clauses, in order.
	Locking []*Locking
}

// LockStrength is the strength a locking clause names.
type LockStrength uint8

// The locking clauses' strengths, as PostgreSQL spells them.
const (
	LockUpdate      LockStrength = iota // FOR UPDATE
	LockNoKeyUpdate                     // FOR NO KEY UPDATE
	LockShare                           // FOR SHARE
	LockKeyShare                        // FOR KEY SHARE
)

// LockWait is what a locking clause does about rows locked by others.
type LockWait uint8

// The locking clauses' wait policies.
const (
	LockWaitDefault LockWait = iota
	LockNoWait               // NOWAIT
	LockSkipLocked           // SKIP LOCKED
)

// Locking is one FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
// [OF table, …] [NOWAIT | SKIP LOCKED] clause of a query.
type Locking struct {
	Span
	Strength LockStrength
	Of       []*ObjectName // nil: every table of the FROM clause
	Wait     LockWait
}

// String returns the clause's strength as written: FOR UPDATE, ….
func (l *Locking) String() string {
	return [...]string{LockUpdate: "FOR UPDATE", LockNoKeyUpdate: "FOR NO KEY UPDATE", LockShare: "FOR SHARE", LockKeyShare: "FOR KEY SHARE"}[l.Strength]
}

// QueryBody is what a query computes before ORDER BY and LIMIT: a
// SelectBlock, a SetOp, a Values list or a ParenSelect.
type QueryBody interface {
	Node
	bodyNode()
}

// SelectBlock is one SELECT … FROM … WHERE … GROUP BY … HAVING block.
type SelectBlock struct {
	Span
	Distinct bool
	// DistinctOn holds the expressions of DISTINCT ON (…) (Distinct is
	// set too); nil for a plain DISTINCT.
	DistinctOn []Expr
	Items      []*SelectItem
	From       []TableExpr // comma-separated; nil for SELECT without FROM
	Where      Expr
	GroupBy    []Expr
	Having     Expr
	// Windows are the WINDOW clause's named windows, in order.
	Windows []*WindowDef
}

// SelectItem is one output column: Expr [AS Alias]. Expr may be a StarExpr.
type SelectItem struct {
	Span
	Expr  Expr
	Alias *Ident // nil when absent
}

// SetOpKind is the kind of a set operation.
type SetOpKind uint8

// The set operations.
const (
	Union SetOpKind = iota
	Intersect
	Except
)

// SetOp is Left UNION|INTERSECT|EXCEPT [ALL] Right. INTERSECT binds
// tighter than UNION and EXCEPT, which associate to the left.
type SetOp struct {
	Span
	Op          SetOpKind
	All         bool
	Left, Right QueryBody
}

// Values is VALUES (…), (…) used as a query or as INSERT's rows.
//
// The rows of INSERT's own VALUES list, when every item is a lone number
// or string literal or NULL, are kept in Lits instead of Rows: a bulk
// INSERT is thousands of such rows, and a node and an interface per item
// were most of its parse (a 1 000-row, 10-column UPSERT: 0.53 ms to
// parse, 0.18 ms of it scanning). Code that reads the rows as nodes calls
// AllRows; Inspect does not visit compact rows.
type Values struct {
	Span
	Rows []*Row
	Lits *LitRows
}

// LitRows is a VALUES list of lone literals, Width items to a row: the
// parser's compact form of it (Values).
type LitRows struct {
	Width int
	// Cells holds the items row by row: item j of row r is
	// Cells[r*Width+j].
	Cells []Lit
	// Rows holds each row's span, from its "(" to its ")".
	Rows []Span
}

// Lit is one item of LitRows: what a NumberLit, StringLit or NullLit
// would hold.
type Lit struct {
	Span
	Kind LitKind
	// Text is a number's text or a string's decoded value.
	Text string
}

// LitKind says which literal a Lit is.
type LitKind uint8

// The kinds of Lit.
const (
	LitNumber LitKind = iota
	LitString
	LitNull
)

// Expr returns the node l stands for.
func (l *Lit) Expr() Expr {
	switch l.Kind {
	case LitString:
		return &StringLit{Span: l.Span, Value: l.Text}
	case LitNull:
		return &NullLit{Span: l.Span}
	}
	return &NumberLit{Span: l.Span, Text: l.Text}
}

// NumRows returns the number of rows of v.
func (v *Values) NumRows() int {
	if v.Lits != nil {
		return len(v.Lits.Rows)
	}
	return len(v.Rows)
}

// AllRows returns v's rows as nodes: Rows, or the nodes Lits stands for,
// built afresh on each call (exactly those the parser builds for such
// rows when it does not keep them compact).
func (v *Values) AllRows() []*Row {
	l := v.Lits
	if l == nil {
		return v.Rows
	}
	rows := make([]*Row, len(l.Rows))
	for r := range rows {
		items := make([]Expr, l.Width)
		for j := range items {
			items[j] = l.Cells[r*l.Width+j].Expr()
		}
		rows[r] = &Row{Span: l.Rows[r], Items: items}
	}
	return rows
}

// Row is one parenthesised row of a VALUES list.
type Row struct {
	Span
	Items []Expr
}

// ParenSelect is a parenthesised query used as a set operation's operand,
// which may carry its own ORDER BY, AS OF and LIMIT.
type ParenSelect struct {
	Span
	Select *SelectStmt
}

// With is WITH [RECURSIVE] cte, ….
type With struct {
	Span
	Recursive bool
	CTEs      []*CTE
}

// CTE is one common table expression: Name [(Columns)] AS (Query), or AS
// (Write) for PostgreSQL's data-modifying WITH, where Write is an
// InsertStmt, UpdateStmt or DeleteStmt whose RETURNING rows are the
// definition's and Query is nil. Only the WITH of a statement at the top
// level may hold a Write (the binder refuses one elsewhere).
type CTE struct {
	Span
	Name    *Ident
	Columns []*Ident
	Query   *SelectStmt
	Write   Stmt
	// Materialized is what AS [NOT] MATERIALIZED asked for.
	Materialized Materialize
}

// Materialize is a WITH definition's AS MATERIALIZED or AS NOT
// MATERIALIZED (PostgreSQL 12's), or neither: whether the definition is
// computed once for the statement or inlined where it is referenced.
type Materialize uint8

// The choices of Materialize.
const (
	// MaterializeDefault leaves it to the planner: once when referenced
	// more than once, recursive or calling a volatile function; inlined
	// otherwise.
	MaterializeDefault Materialize = iota
	// MaterializeAlways is AS MATERIALIZED.
	MaterializeAlways
	// MaterializeNever is AS NOT MATERIALIZED: inlined at every reference
	// (unless recursive or data-modifying, which are always computed once).
	MaterializeNever
)

// OrderItem is one ORDER BY term. Expr may be a NumberLit ordinal.
type OrderItem struct {
	Span
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// NullsOrder is the NULLS FIRST / NULLS LAST choice of an ORDER BY term.
type NullsOrder uint8

// The NULLS choices; NullsDefault sorts NULLs as PostgreSQL does (last
// ascending, first descending).
const (
	NullsDefault NullsOrder = iota
	NullsFirst
	NullsLast
)

// AsOfKind says how an AS OF operand is read.
type AsOfKind uint8

// The AS OF kinds of SPEC R6.1 and R6.7.
const (
	AsOfCommit    AsOfKind = iota // AS OF COMMIT n
	AsOfTimestamp                 // AS OF TIMESTAMP '…'
)

// AsOf is AS OF COMMIT Expr or AS OF TIMESTAMP Expr. The operand is any
// expression; the binder checks that it is a constant of the right kind
// (SPEC R6.3).
type AsOf struct {
	Span
	Kind AsOfKind
	Expr Expr
}

// TableExpr is a relation in FROM: a TableRef, TableFunc, DerivedTable,
// JoinExpr or ParenTable.
type TableExpr interface {
	Node
	tableNode()
}

// Alias is a relation's alias with optional column names: AS x (a, b).
type Alias struct {
	Span
	Name    *Ident
	Columns []*Ident
}

// TableRef is a named table, optionally with an alias and its own AS OF.
type TableRef struct {
	Span
	Name  *ObjectName
	Alias *Alias // nil when absent
	AsOf  *AsOf  // nil when absent
}

// TableFunc is a function in FROM, such as versions(t), with an optional
// alias and AS OF.
type TableFunc struct {
	Span
	Name  *ObjectName
	Args  []Expr
	Alias *Alias
	AsOf  *AsOf
	// Lateral is set when written LATERAL f(…). A function in FROM may
	// read the FROM items before it either way, as in PostgreSQL.
	Lateral bool
}

// DerivedTable is (query) [AS] alias in FROM.
type DerivedTable struct {
	Span
	Query *SelectStmt
	Alias *Alias // nil when absent (the binder requires it as PostgreSQL 15 does)
	// Lateral is set for LATERAL (query): the query may read the columns
	// of the FROM items before it.
	Lateral bool
}

// ParenTable is a parenthesised join, (a JOIN b ON …) [AS alias].
type ParenTable struct {
	Span
	Inner TableExpr
	Alias *Alias
}

// JoinKind is the kind of a join.
type JoinKind uint8

// The join kinds. JOIN alone is JoinInner.
const (
	JoinInner JoinKind = iota
	JoinLeft
	JoinRight
	JoinFull
	JoinCross
)

// JoinExpr is Left [NATURAL] kind JOIN Right [ON On | USING (Using)].
type JoinExpr struct {
	Span
	Kind        JoinKind
	Natural     bool
	Left, Right TableExpr
	On          Expr     // nil when absent
	Using       []*Ident // nil when absent
}

func (*SelectBlock) bodyNode() {}
func (*SetOp) bodyNode()       {}
func (*Values) bodyNode()      {}
func (*ParenSelect) bodyNode() {}

func (*TableRef) tableNode()     {}
func (*TableFunc) tableNode()    {}
func (*DerivedTable) tableNode() {}
func (*ParenTable) tableNode()   {}
func (*JoinExpr) tableNode()     {}
