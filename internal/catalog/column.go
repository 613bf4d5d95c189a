package catalog

import (
	"slices"
	"strings"

	"github.com/strata-db/strata/internal/types"
)

// ColumnID identifies a column within its table. Ids are handed out in
// increasing order and never reused, also after DROP COLUMN (invariant 1 in
// doc.go): storage files name columns by id, so a new column that takes an
// old name must not read the old one's data (schema.slt).
type ColumnID uint32

// Default is a column DEFAULT: the expression as written and its value,
// which the binder evaluated and wrote in the column type's canonical text.
type Default struct {
	// SQL is the expression as the user wrote it, for SHOW CREATE TABLE.
	SQL string `json:"sql,omitempty"`
	// Value is the canonical text of the evaluated value; empty when Null.
	Value string `json:"value,omitempty"`
	// Null is set for DEFAULT NULL.
	Null bool `json:"null,omitempty"`
	// Volatile is set for an expression that calls a function (now(),
	// current_commit(), random(), gen_random_uuid(), …): each write
	// evaluates SQL afresh, as PostgreSQL does, and Value is its value
	// when the DDL ran, which the rows written before the column existed
	// read (R6.5).
	Volatile bool `json:"volatile,omitempty"`
}

func (d *Default) clone() *Default {
	if d == nil {
		return nil
	}
	n := *d
	return &n
}

// ColumnSpec is one column definition as written.
type ColumnSpec struct {
	Name string
	Type types.Type
	// NotNull and ExplicitNull record NOT NULL and NULL as written;
	// neither means nullable (R2.2).
	NotNull      bool
	ExplicitNull bool
	// PrimaryKey is an inline PRIMARY KEY on this column.
	PrimaryKey bool
	Default    *Default
	// Codec is the CODEC(...) list as written, e.g. "ZSTD(3)" or
	// "DELTA, ZSTD"; "" when none is named.
	Codec string
}

// Column is a column of a table, current or dropped.
type Column struct {
	ID       ColumnID
	Name     string
	Type     types.Type
	Nullable bool
	// Default is the current DEFAULT, applied to writes that omit the
	// column; nil when there is none (the column then defaults to NULL).
	Default *Default
	// Introduced is the DEFAULT the column had when it came to exist. Rows
	// written before it was added read this value (R6.5); SET/DROP DEFAULT
	// never change it. nil means those rows read NULL.
	Introduced *Default
	// Group is the attribute group holding the column; NoGroup for key
	// columns and for every column of an append table.
	Group GroupID
	// AddedCommit is the commit of the DDL that created the column.
	AddedCommit uint64
	// DroppedCommit is the commit of DROP COLUMN; 0 while the column lives.
	DroppedCommit uint64
	// Codec is the effective codec in canonical form (Codec.String): the
	// named one, else DefaultCodec of the type.
	Codec string
	// CodecNamed records that the user named the codec; a chosen codec
	// follows the type when ALTER COLUMN TYPE changes it.
	CodecNamed bool
	// Position is the 1-based place among the current columns (system.columns,
	// SELECT *); 0 once dropped.
	Position int
}

func (c *Column) clone() *Column {
	n := *c
	n.Default = c.Default.clone()
	n.Introduced = c.Introduced.clone()
	return &n
}

// hiddenColumns are the names of the hidden and virtual columns reads
// expose (R7.1, R7.2) and storage writes beside the user's columns; a user
// column of one of these names would be shadowed.
var hiddenColumns = []string{"_commit", "_group", "_state", "_superseded_by", "_reason", "_seq", "_tomb"}

// Reserved reports whether name is reserved for a hidden column.
func Reserved(name string) bool { return slices.Contains(hiddenColumns, name) }

// checkName rejects names no statement could refer to.
func checkName(what, name string) error {
	if strings.TrimSpace(name) == "" {
		return errorf(CodeInvalidName, "a %s name cannot be empty", what)
	}
	return nil
}

// validType reports whether t is a column type: a known kind that is not
// the type of an untyped NULL nor INTERVAL (an expression type only).
func validType(t types.Type) bool {
	return t.Kind != types.Invalid && t.Kind != types.Unknown && t.Kind != types.Interval && !strings.HasPrefix(t.Kind.String(), "Kind(")
}

// newColumn checks one column definition of table t (for messages) and
// builds the column with the given id.
func newColumn(t *Table, cs ColumnSpec, id ColumnID, commit uint64) (*Column, error) {
	if err := checkName("column", cs.Name); err != nil {
		return nil, err
	}
	if Reserved(cs.Name) {
		return nil, errorf(CodeReservedName, "column %s of table %s cannot be so named: the name is reserved for a hidden column", cs.Name, t.Name)
	}
	if !validType(cs.Type) {
		return nil, errorf(CodeInvalidColumnDef, "column %s of table %s has no valid type", cs.Name, t.Name)
	}
	if cs.NotNull && cs.ExplicitNull {
		return nil, errorf(CodeInvalidColumnDef, "column %s of table %s is declared both NULL and NOT NULL", cs.Name, t.Name)
	}
	if cs.NotNull && cs.Default != nil && cs.Default.Null {
		return nil, errorf(CodeInvalidColumnDef, "column %s of table %s is NOT NULL but defaults to NULL", cs.Name, t.Name)
	}
	col := &Column{
		ID: id, Name: cs.Name, Type: cs.Type, Nullable: !cs.NotNull,
		Default: cs.Default.clone(), Introduced: cs.Default.clone(), AddedCommit: commit,
	}
	if err := setCodec(t, col, cs.Codec); err != nil {
		return nil, err
	}
	return col, nil
}

// setCodec sets col's effective codec from the text as written ("" = none).
func setCodec(t *Table, col *Column, text string) error {
	if text == "" {
		col.Codec, col.CodecNamed = DefaultCodec(col.Type).String(), false
		return nil
	}
	codec, err := ParseCodec(text, col.Type)
	if err != nil {
		return errorf(CodeInvalidColumnDef, "column %s of table %s: %v", col.Name, t.Name, err)
	}
	col.Codec, col.CodecNamed = codec.String(), true
	return nil
}

// AddColumnSpec is ALTER TABLE Table ADD COLUMN Column [TO ATTRIBUTE GROUP Group].
type AddColumnSpec struct {
	Table  string
	Column ColumnSpec
	// Group is the TO ATTRIBUTE GROUP name; "" puts a keyed table's column
	// in the group default.
	Group string
	// KnownEmpty is set by a caller that knows the table holds no rows at
	// any commit; only then may a NOT NULL column come without a DEFAULT.
	KnownEmpty bool
}

// AddColumn adds a column (R8.1). Rows written before read it as its
// DEFAULT at this moment, else NULL (R6.5); nothing is rewritten.
func (c *Catalog) AddColumn(spec AddColumnSpec, commit uint64) (*Table, error) {
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		cs := spec.Column
		if _, dup := t.Column(cs.Name); dup {
			return errorf(CodeDuplicateColumn, "column %s of table %s already exists", cs.Name, t.Name)
		}
		if cs.PrimaryKey {
			return errorf(CodeInvalidTableDef, "cannot add primary key column %s to table %s: the key of a table is fixed when it is created", cs.Name, t.Name)
		}
		if cs.NotNull && cs.Default == nil && !spec.KnownEmpty {
			return errorf(CodeNotNullViolation,
				"cannot add NOT NULL column %s to table %s without a DEFAULT: rows already written would have no value; give it a DEFAULT or make it NULL", cs.Name, t.Name)
		}
		col, err := newColumn(t, cs, t.nextColumn, commit)
		if err != nil {
			return err
		}
		col.Group = NoGroup
		if t.Keyed() {
			name := spec.Group
			if name == "" {
				name = DefaultGroupName
			}
			g, ok := t.Group(name)
			if !ok {
				return errorf(CodeUndefinedObject, "table %s has no attribute group %s", t.Name, name)
			}
			col.Group = g.ID
			g.Columns = append(g.Columns, col.ID)
		} else if spec.Group != "" {
			return errorf(CodeInvalidTableDef, "MODE APPEND tables have no attribute groups: cannot add column %s of table %s to group %s", cs.Name, t.Name, spec.Group)
		}
		t.nextColumn++
		t.Columns = append(t.Columns, col)
		t.renumber()
		return nil
	})
}

// RenameColumnSpec is ALTER TABLE Table RENAME COLUMN Old TO New.
type RenameColumnSpec struct {
	Table string
	Old   string
	New   string
}

// RenameColumn renames a column; its id, data and roles stay (R8.2). The
// old name is gone at once.
func (c *Catalog) RenameColumn(spec RenameColumnSpec, commit uint64) (*Table, error) {
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		col, ok := t.Column(spec.Old)
		if !ok {
			return errorf(CodeUndefinedColumn, "column %s of table %s does not exist", spec.Old, t.Name)
		}
		if err := checkName("column", spec.New); err != nil {
			return err
		}
		if _, taken := t.Column(spec.New); taken {
			return errorf(CodeDuplicateColumn, "cannot rename column %s of table %s to %s: column %s already exists", spec.Old, t.Name, spec.New, spec.New)
		}
		if Reserved(spec.New) {
			return errorf(CodeReservedName, "column %s of table %s cannot be so named: the name is reserved for a hidden column", spec.New, t.Name)
		}
		if role := c.nameDependency(t, col); role != "" {
			return errorf(CodeDependentObjects, "cannot rename column %s of table %s: it is %s", col.Name, t.Name, role)
		}
		col.Name = spec.New
		return nil
	})
}

// nameDependency names an object that refers to col by name, which a
// rename or drop would break: the bound retention policy's `by`, or a
// transformation whose SELECT reads the column or whose output writes it
// (the key and the owned group of a keyed target, every column of an
// append target).
func (c *Catalog) nameDependency(t *Table, col *Column) string {
	if p, ok := c.policies[t.Policies.Retention]; ok {
		if by, ok := p.Text("by"); ok && by == col.Name {
			return "the `by` column of retention policy " + p.Name
		}
	}
	for _, b := range t.RetentionLog {
		if b.By == col.ID {
			// Rows an earlier policy expired by it stay expired by it.
			return "the column rows of the table expire by (an earlier retention policy)"
		}
	}
	if g, ok := t.GroupByID(col.Group); ok && g.Owner != "" {
		return "written by transformation " + g.Owner + " (attribute group " + g.Name + ")"
	}
	for _, x := range c.sortedTransformations() {
		if x.Target == t.ID && (x.Group == NoGroup || t.IsKey(col.ID)) {
			return "written by transformation " + x.Name + ", whose output names it"
		}
		if slices.Contains(x.Reads, ColumnKey{Table: t.ID, Column: col.ID}) {
			return "read by transformation " + x.Name
		}
	}
	if v := c.viewReadingColumn(ColumnKey{Table: t.ID, Column: col.ID}); v != "" {
		return "read by view " + v + "; drop the view first"
	}
	return ""
}

// DropColumnSpec is ALTER TABLE Table DROP COLUMN Column.
type DropColumnSpec struct {
	Table  string
	Column string
}

// DropColumn drops a column that has no role in the table's structure
// (R8.1). Its data stays in storage and its id is kept in Table.Dropped, so
// older generations still decode; reads no longer see it.
func (c *Catalog) DropColumn(spec DropColumnSpec, commit uint64) (*Table, error) {
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		col, ok := t.Column(spec.Column)
		if !ok {
			return errorf(CodeUndefinedColumn, "column %s of table %s does not exist", spec.Column, t.Name)
		}
		if role := c.columnRole(t, col); role != "" {
			return errorf(CodeDependentObjects, "cannot drop column %s of table %s: it is %s", col.Name, t.Name, role)
		}
		if len(t.Columns) == 1 {
			return errorf(CodeInvalidTableDef, "cannot drop column %s: it is the last column of table %s", col.Name, t.Name)
		}
		// An index on the column goes with it, as in PostgreSQL (an index
		// of several columns too): it could no longer be read or built.
		for _, ix := range c.Indexes(t.Name) {
			if slices.Contains(ix.Columns, col.ID) {
				delete(c.indexes, ix.Name)
			}
		}
		if g, ok := t.GroupByID(col.Group); ok {
			g.Columns = slices.DeleteFunc(g.Columns, func(id ColumnID) bool { return id == col.ID })
		}
		t.Columns = slices.DeleteFunc(t.Columns, func(x *Column) bool { return x == col })
		col.DroppedCommit, col.Position = commit, 0
		t.Dropped = append(t.Dropped, col)
		t.renumber()
		return nil
	})
}

// columnRole names the structural role that keeps col from being dropped,
// or returns "".
func (c *Catalog) columnRole(t *Table, col *Column) string {
	switch {
	case t.IsKey(col.ID):
		return "a primary key column"
	case slices.Contains(t.ShardBy, col.ID):
		return "a SHARD BY column"
	case slices.Contains(t.OrderBy, col.ID):
		return "an ORDER BY column"
	}
	if g, ok := t.GroupByID(col.Group); ok {
		if slices.Contains(g.ValidBy, col.ID) {
			return "the VALID BY column of attribute group " + g.Name
		}
		if slices.Contains(g.RevisionBy, col.ID) {
			return "the REVISION BY column of attribute group " + g.Name
		}
	}
	return c.nameDependency(t, col)
}

// SetDefaultSpec is ALTER TABLE Table ALTER COLUMN Column SET DEFAULT ...
type SetDefaultSpec struct {
	Table   string
	Column  string
	Default Default
}

// SetDefault changes the default of later writes only: the column's
// Introduced value, which older rows read, stays (R6.5).
func (c *Catalog) SetDefault(spec SetDefaultSpec, commit uint64) (*Table, error) {
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		col, ok := t.Column(spec.Column)
		if !ok {
			return errorf(CodeUndefinedColumn, "column %s of table %s does not exist", spec.Column, t.Name)
		}
		if spec.Default.Null && !col.Nullable {
			return errorf(CodeInvalidColumnDef, "column %s of table %s is NOT NULL and cannot default to NULL", col.Name, t.Name)
		}
		d := spec.Default
		col.Default = &d
		return nil
	})
}

// DropDefaultSpec is ALTER TABLE Table ALTER COLUMN Column DROP DEFAULT.
type DropDefaultSpec struct {
	Table  string
	Column string
}

// DropDefault removes the default of later writes; Introduced stays.
func (c *Catalog) DropDefault(spec DropDefaultSpec, commit uint64) (*Table, error) {
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		col, ok := t.Column(spec.Column)
		if !ok {
			return errorf(CodeUndefinedColumn, "column %s of table %s does not exist", spec.Column, t.Name)
		}
		col.Default = nil
		return nil
	})
}

// AlterColumnTypeSpec is ALTER TABLE Table ALTER COLUMN Column TYPE Type.
type AlterColumnTypeSpec struct {
	Table  string
	Column string
	Type   types.Type
}

// AlterColumnType widens a column's type where types.CanWiden allows it
// (R8.1): every stored value is a value of the new type, so nothing is
// rewritten. Key, SHARD BY and ordering columns widen only where their
// stored encoding stays the same (types.KeyStable): a row's shard is a hash
// of it and storage sorts and compares by it.
func (c *Catalog) AlterColumnType(spec AlterColumnTypeSpec, commit uint64) (*Table, error) {
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		col, ok := t.Column(spec.Column)
		if !ok {
			return errorf(CodeUndefinedColumn, "column %s of table %s does not exist", spec.Column, t.Name)
		}
		from, to := col.Type, spec.Type
		if v := c.viewReadingColumn(ColumnKey{Table: t.ID, Column: col.ID}); v != "" {
			return errorf(CodeDependentObjects, "cannot alter type of column %s of table %s: it is read by view %s; drop the view first", col.Name, t.Name, v)
		}
		if !validType(to) {
			return errorf(CodeInvalidColumnDef, "column %s of table %s: the new type is not a valid type", col.Name, t.Name)
		}
		if !types.CanWiden(from, to) {
			why := "that is not a widening: some values of " + from.String() + " are not values of " + to.String()
			switch {
			case narrows(from, to):
				why = "it would narrow the type and lose values"
			case types.HoldsAll(from, to):
				why = "ALTER COLUMN … TYPE changes a type only within its kind, without rewriting data (wider integers, FLOAT32 to FLOAT64, a DECIMAL with more digits, a longer VARCHAR; R8.1), and this changes its kind or its precision's unit"
			}
			return errorf(CodeDatatypeMismatch, "cannot change column %s of table %s from %s to %s: %s", col.Name, t.Name, from, to, why)
		}
		if !types.KeyStable(from, to) && t.storesEncoded(col.ID) {
			return errorf(CodeFeatureNotSupported,
				"cannot change column %s of table %s from %s to %s: it is a key, SHARD BY or ordering column, whose stored values are sorted and hashed in an encoding that this change would alter", col.Name, t.Name, from, to)
		}
		col.Type = to
		// The defaults are values of the old type: keep them as those
		// values, written at the new type, as PostgreSQL converts a
		// column's default with its type. It matters for FLOAT32: the
		// float32 0.1 is 0.10000000149011612 as a FLOAT64, not 0.1, and
		// rows from before the column existed read that (R6.5), as the
		// versions written with the float32 default hold it (R3.4).
		widenDefault(col.Introduced, from, to)
		widenDefault(col.Default, from, to)
		if !col.CodecNamed {
			col.Codec = DefaultCodec(to).String()
		} else if _, err := ParseCodec(col.Codec, to); err != nil {
			return errorf(CodeInvalidColumnDef, "cannot change column %s of table %s to %s: its codec %s does not suit the new type: %v", col.Name, t.Name, to, col.Codec, err)
		}
		return nil
	})
}

// widenDefault rewrites d's value, a value of type from, as the same value
// of type to. A default that does not parse as from (none should) is left.
func widenDefault(d *Default, from, to types.Type) {
	if d == nil || d.Null {
		return
	}
	v, err := types.ParseText(from, d.Value)
	if err != nil {
		return
	}
	if w, err := types.Cast(v, to); err == nil {
		d.Value = string(types.AppendText(nil, w))
	}
}

// storesEncoded reports whether storage keeps column id's values as
// order-preserving encodings: ORDER BY (key) and SHARD BY columns, and
// every group's VALID BY / REVISION BY columns.
func (t *Table) storesEncoded(id ColumnID) bool {
	if slices.Contains(t.OrderBy, id) || slices.Contains(t.ShardColumns(), id) {
		return true
	}
	for _, g := range t.Groups {
		if slices.Contains(g.ValidBy, id) || slices.Contains(g.RevisionBy, id) {
			return true
		}
	}
	return false
}

// narrows reports whether to is a smaller type of the same family as from.
func narrows(from, to types.Type) bool {
	f, t := from.Kind, to.Kind
	switch {
	case f.IsInteger() && t.IsInteger(), f.IsFloat() && t.IsFloat():
		return t.Bits() < f.Bits() || (f.IsSigned() && t.IsUnsigned())
	case f == types.Decimal && t == types.Decimal:
		return to.Precision < from.Precision || to.Scale < from.Scale
	case f == types.String && t == types.String:
		return to.Len > 0 && (from.Len == 0 || to.Len < from.Len)
	}
	return false
}
