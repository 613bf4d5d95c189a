package ast

// Stmt is a statement. Its Pos/End cover the statement text without the
// terminating semicolon, so a shell can run statements one by one.
type Stmt interface {
	Node
	stmtNode()
}

// InsertStmt is [WITH …] INSERT INTO or UPSERT INTO Table [[AS] Alias]
// [(Columns)] Source [ATTRIBUTE GROUP Group] [RETURNING …] (SPEC R4.3,
// R5.2). Source's body is a Values for the VALUES form.
type InsertStmt struct {
	Span
	With    *With // nil when absent; every query of the statement sees it
	Upsert  bool
	Table   *ObjectName
	Alias   *Ident   // nil when absent; RETURNING names the table by it
	Columns []*Ident // nil when no column list was written
	Source  *SelectStmt
	Group   *Ident // nil when absent
	// OnConflict is PostgreSQL's ON CONFLICT clause; nil when absent.
	OnConflict *OnConflict
	Returning  []*SelectItem // RETURNING list; nil when absent
}

// OnConflict is ON CONFLICT [(c, …) | ON CONSTRAINT name] DO NOTHING or
// DO UPDATE SET c = e, … [WHERE Where] of an INSERT (docs/conformance.md).
type OnConflict struct {
	Span
	Target     []*Ident // the conflict target's columns; nil when absent
	Constraint *Ident   // ON CONSTRAINT name; nil when absent
	Update     bool     // DO UPDATE; DO NOTHING when false
	Sets       []*SetClause
	Where      Expr // nil when absent
}

// UpdateStmt is [WITH …] UPDATE Table [[AS] Alias] SET c = e, … [WHERE
// Where] [RETURNING …].
type UpdateStmt struct {
	Span
	With  *With // nil when absent; every query of the statement sees it
	Table *ObjectName
	Alias *Ident
	Sets  []*SetClause
	// From are the tables of UPDATE … FROM (PostgreSQL's join of other
	// tables into the update); nil when absent.
	From      []TableExpr
	Where     Expr
	Returning []*SelectItem // RETURNING list; nil when absent
}

// SetClause is one Column = Value of an UPDATE; Value may be DefaultExpr.
type SetClause struct {
	Span
	Column *Ident
	Value  Expr
}

// DeleteStmt is [WITH …] DELETE FROM Table [[AS] Alias] [WHERE Where]
// [RETURNING …].
type DeleteStmt struct {
	Span
	With  *With // nil when absent; every query of the statement sees it
	Table *ObjectName
	Alias *Ident
	// Using are the tables of DELETE … USING (PostgreSQL's join of other
	// tables into the delete); nil when absent.
	Using     []TableExpr
	Where     Expr
	Returning []*SelectItem // RETURNING list; nil when absent
}

// TxKind is the kind of a transaction-control statement.
type TxKind uint8

// The transaction statements.
const (
	TxBegin      TxKind = iota // BEGIN [TRANSACTION|WORK], START TRANSACTION
	TxCommit                   // COMMIT [TRANSACTION|WORK], END
	TxRollback                 // ROLLBACK [TRANSACTION|WORK]
	TxSavepoint                // SAVEPOINT name
	TxRelease                  // RELEASE [SAVEPOINT] name
	TxRollbackTo               // ROLLBACK [TRANSACTION|WORK] TO [SAVEPOINT] name
)

// TransactionStmt is BEGIN, COMMIT, ROLLBACK or a savepoint statement.
// Modes holds BEGIN's transaction modes; nil when none were given. Name
// is the savepoint of SAVEPOINT, RELEASE and ROLLBACK TO.
type TransactionStmt struct {
	Span
	Kind  TxKind
	Modes *TxModes
	Name  *Ident
}

// TxModes are PostgreSQL's transaction modes, as BEGIN, START TRANSACTION,
// SET TRANSACTION and SET SESSION CHARACTERISTICS AS TRANSACTION take them.
// A zero field was not given, so the statement leaves that mode as it is.
type TxModes struct {
	// Isolation is the lower-case level: "serializable", "repeatable
	// read", "read committed" or "read uncommitted"; "" when not given.
	Isolation string
	// Access is READ WRITE or READ ONLY.
	Access TxTristate
	// Deferrable is DEFERRABLE (TxOn) or NOT DEFERRABLE (TxOff).
	Deferrable TxTristate
}

// TxTristate is a transaction mode that was given on, given off, or not
// given. For Access, TxOn is READ ONLY and TxOff is READ WRITE.
type TxTristate uint8

// The values of a TxTristate.
const (
	TxUnset TxTristate = iota
	TxOn
	TxOff
)

// SetTransactionStmt is SET TRANSACTION modes (this transaction) or, with
// Session set, SET SESSION CHARACTERISTICS AS TRANSACTION modes (the
// defaults of later transactions).
type SetTransactionStmt struct {
	Span
	Session bool
	Modes   TxModes
}

// ExplainStmt is EXPLAIN [ANALYZE] Stmt (SPEC R10.2).
type ExplainStmt struct {
	Span
	Analyze bool
	Stmt    Stmt
}

// ShowTablesStmt is SHOW TABLES.
type ShowTablesStmt struct {
	Span
}

// ShowCreateTableStmt is SHOW CREATE TABLE Table.
type ShowCreateTableStmt struct {
	Span
	Table *ObjectName
}

// DescribeStmt is DESCRIBE Table (or DESC Table).
type DescribeStmt struct {
	Span
	Table *ObjectName
}

// SetStmt is SET [SESSION|LOCAL] Name = Value | TO Value | TO DEFAULT, and
// SET TIME ZONE Value (Name "timezone"). Name is lower case, dotted parts
// joined with '.'. Values holds one or more comma-separated values; nil
// with Default set for DEFAULT. A bare word value (SET search_path =
// public, SET x = on) is a ColumnRef naming the word. Local records SET
// LOCAL; SET SESSION is the default and is not recorded.
type SetStmt struct {
	Span
	Local   bool
	Name    string
	Values  []Expr
	Default bool
}

// ShowStmt is SHOW Name or SHOW ALL (All, Name "").
type ShowStmt struct {
	Span
	Name string
	All  bool
}

// ResetStmt is RESET Name or RESET ALL.
type ResetStmt struct {
	Span
	Name string
	All  bool
}

func (*SelectStmt) stmtNode()               {}
func (*InsertStmt) stmtNode()               {}
func (*UpdateStmt) stmtNode()               {}
func (*DeleteStmt) stmtNode()               {}
func (*CreateTableStmt) stmtNode()          {}
func (*AlterTableStmt) stmtNode()           {}
func (*DropStmt) stmtNode()                 {}
func (*CreateIndexStmt) stmtNode()          {}
func (*CreatePolicyStmt) stmtNode()         {}
func (*CreateTransformationStmt) stmtNode() {}
func (*CreateViewStmt) stmtNode()           {}
func (*SyncTransformationsStmt) stmtNode()  {}
func (*CheckpointStmt) stmtNode()           {}
func (*CreateUserStmt) stmtNode()           {}
func (*AlterUserStmt) stmtNode()            {}
func (*TransactionStmt) stmtNode()          {}
func (*ExplainStmt) stmtNode()              {}
func (*ShowTablesStmt) stmtNode()           {}
func (*ShowCreateTableStmt) stmtNode()      {}
func (*DescribeStmt) stmtNode()             {}
func (*SetStmt) stmtNode()                  {}
func (*SetTransactionStmt) stmtNode()       {}
func (*ShowStmt) stmtNode()                 {}
func (*ResetStmt) stmtNode()                {}
