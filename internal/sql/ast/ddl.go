package ast

// TableMode is the MODE clause of CREATE TABLE (SPEC R1.1).
type TableMode uint8

// The table modes; ModeDefault means no MODE clause was written (the
// catalog treats it as UPSERT, R1.1).
const (
	ModeDefault TableMode = iota
	ModeAppend
	ModeUpsert
	ModeVersioned
)

// CreateTableStmt is CREATE TABLE [IF NOT EXISTS] Name (elements) clauses.
// The clauses after the parenthesis may come in any order, each at most
// once; the printer writes them in field order.
type CreateTableStmt struct {
	Span
	IfNotExists bool
	Name        *ObjectName
	Columns     []*ColumnDef
	PrimaryKey  []*Ident             // table-level PRIMARY KEY (…); nil when absent
	Uniques     [][]*Ident           // table-level UNIQUE (…) constraints
	Groups      []*AttributeGroupDef // ATTRIBUTE GROUP name (cols) … (R4.1)
	Mode        TableMode            // MODE …
	ValidBy     []*Ident             // table-level VALID BY (…) (R3.1)
	RevisionBy  []*Ident             // table-level REVISION BY (…)
	ShardBy     []*Ident             // SHARD BY (…) (R11.1)
	Shards      *ShardCount          // SHARDS n | AUTO; nil when absent
	OrderBy     []*Ident             // ORDER BY (…) (R11.2)
	Policies    []*Ident             // POLICY a, b (R9.2)
}

// NullSpec records whether a column was declared NULL or NOT NULL.
type NullSpec uint8

// The nullability choices; NullDefault means neither was written (R2.2).
const (
	NullDefault NullSpec = iota
	Nullable
	NotNullable
)

// ColumnDef is one column definition: Name Type [NULL|NOT NULL] [DEFAULT
// expr] [PRIMARY KEY] [UNIQUE] [CODEC(…)], the constraints in any order.
type ColumnDef struct {
	Span
	Name       *Ident
	Type       *TypeName
	Null       NullSpec
	Default    Expr     // nil when absent
	PrimaryKey bool     // inline PRIMARY KEY
	Unique     bool     // inline UNIQUE
	Codecs     []*Codec // CODEC(DELTA, ZSTD(3)); nil when absent (R11.3)
}

// Codec is one entry of a CODEC(…) list: NONE, LZ4, ZSTD(3), DELTA.
// Name is upper case.
type Codec struct {
	Span
	Name     string
	Level    int64
	HasLevel bool
}

// AttributeGroupDef is ATTRIBUTE GROUP Name (…) [VALID BY (…)] [REVISION BY
// (…)]. Inside CREATE TABLE the list names existing columns (Columns); in
// ALTER TABLE … ADD ATTRIBUTE GROUP it defines new ones (ColumnDefs).
type AttributeGroupDef struct {
	Span
	Name       *Ident
	Columns    []*Ident
	ColumnDefs []*ColumnDef
	ValidBy    []*Ident
	RevisionBy []*Ident
}

// ShardCount is SHARDS n or SHARDS AUTO.
type ShardCount struct {
	Span
	Auto bool
	N    int64
}

// AlterTableStmt is ALTER TABLE Table cmd, cmd, ….
type AlterTableStmt struct {
	Span
	Table *ObjectName
	Cmds  []AlterCmd
}

// AlterCmd is one action of ALTER TABLE.
type AlterCmd interface {
	Node
	alterNode()
}

// AddColumn is ADD [COLUMN] def [TO ATTRIBUTE GROUP Group] (R8.1).
type AddColumn struct {
	Span
	Column *ColumnDef
	Group  *Ident // nil when absent
}

// AddGroup is ADD ATTRIBUTE GROUP g (defs) [VALID BY …] [REVISION BY …]
// (R4.5).
type AddGroup struct {
	Span
	Group *AttributeGroupDef
}

// DropColumn is DROP [COLUMN] [IF EXISTS] Name.
type DropColumn struct {
	Span
	Name     *Ident
	IfExists bool
}

// RenameColumn is RENAME [COLUMN] Old TO New.
type RenameColumn struct {
	Span
	Old, New *Ident
}

// RenameTable is RENAME TO New.
type RenameTable struct {
	Span
	New *Ident
}

// SetDefault is ALTER [COLUMN] Column SET DEFAULT Expr.
type SetDefault struct {
	Span
	Column *Ident
	Expr   Expr
}

// DropDefault is ALTER [COLUMN] Column DROP DEFAULT.
type DropDefault struct {
	Span
	Column *Ident
}

// AlterColumnType is ALTER [COLUMN] Column [SET DATA] TYPE Type (R8.1).
type AlterColumnType struct {
	Span
	Column *Ident
	Type   *TypeName
}

// SetPolicy is SET POLICY p [, q] (R9.2).
type SetPolicy struct {
	Span
	Policies []*Ident
}

func (*AddColumn) alterNode()       {}
func (*AddGroup) alterNode()        {}
func (*DropColumn) alterNode()      {}
func (*RenameColumn) alterNode()    {}
func (*RenameTable) alterNode()     {}
func (*SetDefault) alterNode()      {}
func (*DropDefault) alterNode()     {}
func (*AlterColumnType) alterNode() {}
func (*SetPolicy) alterNode()       {}

// ObjectKind is the kind of object a DROP removes.
type ObjectKind uint8

// The droppable object kinds.
const (
	ObjTable ObjectKind = iota
	ObjIndex
	ObjPolicy
	ObjTransformation
	ObjUser
	ObjView
)

// DropStmt is DROP TABLE|INDEX|POLICY|TRANSFORMATION|USER|VIEW [IF EXISTS]
// name, ….
type DropStmt struct {
	Span
	Kind     ObjectKind
	IfExists bool
	Names    []*ObjectName
}

// IndexScope is the SCOPE clause of CREATE INDEX (SPEC R10.1).
type IndexScope uint8

// The index scopes; ScopeDefault means none was written (CURRENT).
const (
	ScopeDefault IndexScope = iota
	ScopeCurrent
	ScopeHistory
	ScopeBoth
)

// CreateIndexStmt is CREATE [UNIQUE] INDEX [IF NOT EXISTS] Name ON Table
// (cols) [SCOPE …] [POLICY …].
type CreateIndexStmt struct {
	Span
	Unique      bool
	IfNotExists bool
	Name        *Ident
	Table       *ObjectName
	Columns     []*IndexColumn
	Scope       IndexScope
	Policies    []*Ident
}

// IndexColumn is one indexed column with its direction.
type IndexColumn struct {
	Span
	Name *Ident
	Desc bool
}

// CreatePolicyStmt is CREATE POLICY Name FOR Role (key = value, …) (R9.2).
// Role is the word as written (lower case); the catalog validates it.
type CreatePolicyStmt struct {
	Span
	Name     *Ident
	Role     *Ident
	Settings []*PolicySetting
}

// PolicySetting is key = value in a CREATE POLICY. Value is a literal, an
// IntervalLit, a ColumnRef (by = event_time) or a TupleExpr (volumes =
// ('/a', '/b')).
type PolicySetting struct {
	Span
	Key   *Ident
	Value Expr
}

// CreateTransformationStmt is CREATE TRANSFORMATION Name INTO Target
// [ATTRIBUTE GROUP Group] AS Query (SPEC R12.1).
type CreateTransformationStmt struct {
	Span
	Name   *Ident
	Target *ObjectName
	Group  *Ident // nil when absent
	Query  *SelectStmt
}

// CreateViewStmt is CREATE [OR REPLACE] VIEW [IF NOT EXISTS] Name
// [(Columns)] AS Query.
type CreateViewStmt struct {
	Span
	OrReplace   bool
	IfNotExists bool
	Name        *ObjectName
	Columns     []*Ident
	Query       *SelectStmt
}

// SyncTransformationsStmt is SYNC TRANSFORMATIONS (R12.4).
type SyncTransformationsStmt struct {
	Span
}

// CheckpointStmt is CHECKPOINT: flush every memtable and run the merges
// the compaction policy has due, returning once they are done.
type CheckpointStmt struct {
	Span
}

// CreateUserStmt is CREATE USER Name [WITH] PASSWORD 'secret'.
type CreateUserStmt struct {
	Span
	Name        *Ident
	Password    string
	HasPassword bool
}

// AlterUserStmt is ALTER USER Name [WITH] PASSWORD 'secret'.
type AlterUserStmt struct {
	Span
	Name     *Ident
	Password string
}
