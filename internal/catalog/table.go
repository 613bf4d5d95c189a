package catalog

import (
	"slices"
	"strings"
)

// Mode is a table's mode (R1.1).
type Mode uint8

// The modes. ModeUnset is what a TableSpec carries when the statement has
// no MODE clause; CreateTable turns it into ModeUpsert (R1.1), so a Table
// never has it.
const (
	ModeUnset Mode = iota
	ModeAppend
	ModeUpsert
	ModeVersioned
)

// String returns the lower-case name system.tables shows.
func (m Mode) String() string {
	switch m {
	case ModeAppend:
		return "append"
	case ModeUpsert:
		return "upsert"
	case ModeVersioned:
		return "versioned"
	}
	return "unset"
}

// Keyed reports whether tables of mode m keep one current row per key.
func (m Mode) Keyed() bool { return m == ModeUpsert || m == ModeVersioned }

// ParseMode returns the mode of a lower- or upper-case name.
func ParseMode(s string) (Mode, bool) {
	switch strings.ToLower(s) {
	case "append":
		return ModeAppend, true
	case "upsert":
		return ModeUpsert, true
	case "versioned":
		return ModeVersioned, true
	}
	return ModeUnset, false
}

// MaxShards is the largest SHARDS n (R11.1).
const MaxShards = 4096

// TableID identifies a table for its whole life; ids are never reused,
// also after DROP TABLE, so storage never confuses two tables' files.
type TableID uint32

// TableSpec is CREATE TABLE as the binder hands it over: plain data, names
// already case-folded, nothing checked yet.
type TableSpec struct {
	Name        string
	IfNotExists bool
	Mode        Mode
	Columns     []ColumnSpec
	// PrimaryKey is the table-level PRIMARY KEY (...) clause; an inline
	// PRIMARY KEY sits on its ColumnSpec.
	PrimaryKey []string
	Groups     []GroupSpec
	// ValidBy and RevisionBy at table level order the default group.
	ValidBy    []string
	RevisionBy []string
	ShardBy    []string
	// Shards is SHARDS n; 0 when not given.
	Shards     int
	ShardsAuto bool
	OrderBy    []string
	// Policies are the trailing POLICY names, at most one per role.
	Policies []string
}

// Table is a table as the catalog knows it now. A *Table reachable from a
// catalog is never modified: every DDL builds a new one (invariant 3 in
// doc.go), so a reader may keep the pointer as long as it likes. Callers
// must not modify it either.
type Table struct {
	ID   TableID
	Name string
	Mode Mode
	// Columns are the current columns in position order.
	Columns []*Column
	// Dropped are the columns dropped so far, oldest first. They keep
	// their ids and introduced defaults because storage still holds their
	// data in parts of older generations (R8.2).
	Dropped []*Column
	// Key is the primary key in key order; empty for append tables.
	Key []ColumnID
	// Groups are the attribute groups of a keyed table, the group default
	// first (ID 0), then the named groups in the order they were declared.
	// Append tables have none.
	Groups []*Group
	// ShardBy is the SHARD BY clause as written; see ShardColumns.
	ShardBy    []ColumnID
	Shards     int
	ShardsAuto bool
	// OrderBy is the stored sort order: the key unless ORDER BY said
	// otherwise; empty for an append table without ORDER BY.
	OrderBy  []ColumnID
	Policies Bindings
	// RetentionLog is every retention binding the table had, oldest
	// first (RetentionBinding); empty while it has had none.
	RetentionLog []RetentionBinding
	// CreatedCommit is the commit of CREATE TABLE; AlteredCommit the
	// commit of the latest ALTER TABLE (CreatedCommit until one happens).
	CreatedCommit uint64
	AlteredCommit uint64
	// Generation starts at 1 and grows by one with every ALTER TABLE (R8.2).
	Generation uint64

	nextColumn ColumnID
	nextGroup  GroupID
}

// Keyed reports whether the table keeps one current row per key.
func (t *Table) Keyed() bool { return t.Mode.Keyed() }

// Column returns the current column of that name.
func (t *Table) Column(name string) (*Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// ColumnByID returns the current column with that id.
func (t *Table) ColumnByID(id ColumnID) (*Column, bool) {
	for _, c := range t.Columns {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}

// AnyColumn returns the column with that id, current or dropped: storage
// uses it to read parts written under an older generation.
func (t *Table) AnyColumn(id ColumnID) (*Column, bool) {
	if c, ok := t.ColumnByID(id); ok {
		return c, true
	}
	for _, c := range t.Dropped {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}

// IsKey reports whether column id is part of the primary key.
func (t *Table) IsKey(id ColumnID) bool { return slices.Contains(t.Key, id) }

// KeyColumns returns the key columns in key order.
func (t *Table) KeyColumns() []*Column { return t.columns(t.Key) }

// Group returns the attribute group of that name ("default" included).
func (t *Table) Group(name string) (*Group, bool) {
	for _, g := range t.Groups {
		if g.Name == name {
			return g, true
		}
	}
	return nil, false
}

// GroupByID returns the attribute group with that id.
func (t *Table) GroupByID(id GroupID) (*Group, bool) {
	for _, g := range t.Groups {
		if g.ID == id {
			return g, true
		}
	}
	return nil, false
}

// ShardColumns returns the columns whose hash places a row in a shard:
// SHARD BY as written, else the key of a keyed table. Empty for an append
// table without SHARD BY, whose rows may go to any shard.
func (t *Table) ShardColumns() []ColumnID {
	if len(t.ShardBy) > 0 || !t.Keyed() {
		return t.ShardBy
	}
	return t.Key
}

// Names returns the current names of the columns with those ids.
func (t *Table) Names(ids []ColumnID) []string {
	out := make([]string, 0, len(ids))
	for _, c := range t.columns(ids) {
		out = append(out, c.Name)
	}
	return out
}

func (t *Table) columns(ids []ColumnID) []*Column {
	out := make([]*Column, 0, len(ids))
	for _, id := range ids {
		if c, ok := t.AnyColumn(id); ok {
			out = append(out, c)
		}
	}
	return out
}

// clone returns a deep copy that a DDL may modify before publishing it.
func (t *Table) clone() *Table {
	n := *t
	n.Columns = make([]*Column, len(t.Columns))
	for i, c := range t.Columns {
		n.Columns[i] = c.clone()
	}
	n.Dropped = nil
	for _, c := range t.Dropped {
		n.Dropped = append(n.Dropped, c.clone())
	}
	n.Key = slices.Clone(t.Key)
	n.Groups = nil
	for _, g := range t.Groups {
		n.Groups = append(n.Groups, g.clone())
	}
	n.ShardBy = slices.Clone(t.ShardBy)
	n.OrderBy = slices.Clone(t.OrderBy)
	n.RetentionLog = slices.Clone(t.RetentionLog)
	return &n
}

// renumber sets every current column's Position from its index (1-based).
func (t *Table) renumber() {
	for i, c := range t.Columns {
		c.Position = i + 1
	}
}

// resolve maps column names to ids for a clause; what names the clause in
// the error ("SHARD BY", "the primary key").
func (t *Table) resolve(names []string, what string) ([]ColumnID, error) {
	var ids []ColumnID // nil when empty: the form Decode produces too
	for i, name := range names {
		c, ok := t.Column(name)
		if !ok {
			return nil, errorf(CodeUndefinedColumn, "%s of table %s names column %s, which does not exist", what, t.Name, name)
		}
		if slices.Contains(names[:i], name) {
			return nil, errorf(CodeDuplicateColumn, "%s of table %s names column %s twice", what, t.Name, name)
		}
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// CreateTable checks spec against every definition rule and adds the
// table. With IfNotExists and a table of that name already there, it
// returns that table, created false and no error, and changes nothing.
func (c *Catalog) CreateTable(spec TableSpec, commit uint64) (t *Table, created bool, err error) {
	if err := c.begin(commit); err != nil {
		return nil, false, err
	}
	if err := checkName("table", spec.Name); err != nil {
		return nil, false, err
	}
	if id, ok := c.tableNames[spec.Name]; ok {
		if spec.IfNotExists {
			return c.tables[id], false, nil
		}
		return nil, false, errorf(CodeDuplicateTable, "table %s already exists", spec.Name)
	}
	if _, ok := c.views[spec.Name]; ok {
		// Even with IF NOT EXISTS: no table of that name is there.
		return nil, false, errorf(CodeDuplicateTable, "relation %s already exists: it is a view", spec.Name)
	}
	t, err = buildTable(spec, commit)
	if err != nil {
		return nil, false, err
	}
	if err := c.relationFree(spec.Name, t.Keyed()); err != nil {
		return nil, false, err
	}
	if err := c.bindPolicies(t, spec.Policies, commit); err != nil {
		return nil, false, err
	}
	t.ID = c.nextTable
	c.nextTable++
	c.putTable(t)
	c.commit = commit
	return t, true, nil
}

// buildTable turns a spec into a table without looking at the rest of the
// catalog; policies are bound afterwards.
func buildTable(spec TableSpec, commit uint64) (*Table, error) {
	t := &Table{
		Name: spec.Name, Mode: spec.Mode, CreatedCommit: commit, AlteredCommit: commit,
		Generation: 1, nextColumn: 1, nextGroup: 1, Policies: defaultBindings(),
	}
	if t.Mode == ModeUnset {
		t.Mode = ModeUpsert // R1.1
	}
	if len(spec.Columns) == 0 {
		return nil, errorf(CodeInvalidTableDef, "table %s has no columns", t.Name)
	}
	var inlineKey []string
	for _, cs := range spec.Columns {
		if _, dup := t.Column(cs.Name); dup {
			return nil, errorf(CodeDuplicateColumn, "column %s of table %s is declared twice", cs.Name, t.Name)
		}
		col, err := newColumn(t, cs, t.nextColumn, commit)
		if err != nil {
			return nil, err
		}
		t.nextColumn++
		t.Columns = append(t.Columns, col)
		if cs.PrimaryKey {
			inlineKey = append(inlineKey, cs.Name)
		}
	}
	t.renumber()
	if err := checkModeClauses(t, spec, inlineKey); err != nil {
		return nil, err
	}
	if t.Keyed() {
		if err := buildKey(t, spec, inlineKey); err != nil {
			return nil, err
		}
		if err := buildGroups(t, spec, commit); err != nil {
			return nil, err
		}
	} else {
		for _, col := range t.Columns {
			col.Group = NoGroup
		}
	}
	if err := buildLayout(t, spec); err != nil {
		return nil, err
	}
	return t, nil
}

// checkModeClauses enforces R1.2: an append table has no key, group or
// ordering clause. The message names the clause and the mode.
func checkModeClauses(t *Table, spec TableSpec, inlineKey []string) error {
	if t.Keyed() {
		return nil
	}
	clause := ""
	switch {
	case len(spec.PrimaryKey) > 0 || len(inlineKey) > 0:
		clause = "primary key"
	case len(spec.Groups) > 0:
		clause = "attribute groups (ATTRIBUTE GROUP " + spec.Groups[0].Name + ")"
	case len(spec.ValidBy) > 0:
		clause = "VALID BY"
	case len(spec.RevisionBy) > 0:
		clause = "REVISION BY"
	default:
		return nil
	}
	return errorf(CodeInvalidTableDef,
		"MODE APPEND tables have no %s: table %s keeps every row it accepts; corrections belong in a keyed table (MODE UPSERT or MODE VERSIONED)",
		clause, t.Name)
}

// buildKey enforces R1.5: a keyed table has exactly one primary key, given
// once, and its columns are NOT NULL.
func buildKey(t *Table, spec TableSpec, inlineKey []string) error {
	switch {
	case len(inlineKey) > 1:
		return errorf(CodeInvalidTableDef,
			"table %s marks more than one column PRIMARY KEY (%s); write a composite key as PRIMARY KEY (%s)",
			t.Name, strings.Join(inlineKey, ", "), strings.Join(inlineKey, ", "))
	case len(inlineKey) == 1 && len(spec.PrimaryKey) > 0:
		return errorf(CodeInvalidTableDef,
			"table %s gives its primary key twice: inline on column %s and as PRIMARY KEY (%s)",
			t.Name, inlineKey[0], strings.Join(spec.PrimaryKey, ", "))
	case len(inlineKey) == 0 && len(spec.PrimaryKey) == 0:
		if spec.Mode == ModeUnset {
			return errorf(CodeInvalidTableDef,
				"table %s has no primary key: without a MODE clause a table is MODE UPSERT, which needs PRIMARY KEY (...); add PRIMARY KEY (...) or, to keep every row as it comes, MODE APPEND",
				t.Name)
		}
		return errorf(CodeInvalidTableDef,
			"table %s has no primary key: a MODE %s table needs PRIMARY KEY (...); use MODE APPEND to keep every row without one",
			t.Name, strings.ToUpper(t.Mode.String()))
	}
	names := spec.PrimaryKey
	if len(inlineKey) == 1 {
		names = inlineKey
	}
	key, err := t.resolve(names, "the primary key")
	if err != nil {
		return err
	}
	for _, id := range key {
		col, _ := t.ColumnByID(id)
		for _, cs := range spec.Columns {
			if cs.Name == col.Name && cs.ExplicitNull {
				return errorf(CodeInvalidColumnDef,
					"column %s of table %s is declared NULL but is a primary key column, which is always NOT NULL", col.Name, t.Name)
			}
		}
		col.Nullable = false
		if col.Default != nil && col.Default.Null {
			return errorf(CodeInvalidColumnDef, "primary key column %s of table %s cannot default to NULL", col.Name, t.Name)
		}
		col.Group = NoGroup
	}
	t.Key = key
	return nil
}

// buildLayout checks SHARD BY, SHARDS and ORDER BY (R11.1, R11.2).
func buildLayout(t *Table, spec TableSpec) error {
	shard, err := t.resolve(spec.ShardBy, "SHARD BY")
	if err != nil {
		return err
	}
	if t.Keyed() {
		for _, id := range shard {
			if !t.IsKey(id) {
				col, _ := t.ColumnByID(id)
				return errorf(CodeInvalidTableDef,
					"SHARD BY column %s of table %s is not a primary key column: all versions of a key must live in one shard", col.Name, t.Name)
			}
		}
	}
	t.ShardBy = shard
	switch {
	case spec.ShardsAuto && spec.Shards != 0:
		return errorf(CodeInvalidTableDef, "table %s gives both SHARDS %d and SHARDS AUTO", t.Name, spec.Shards)
	case spec.Shards < 0 || spec.Shards > MaxShards:
		return errorf(CodeInvalidParameter, "SHARDS %d of table %s is out of range: the number of shards must be from 1 to %d", spec.Shards, t.Name, MaxShards)
	case spec.ShardsAuto:
		t.ShardsAuto = true
	case spec.Shards > 0:
		t.Shards = spec.Shards
	case len(shard) > 0:
		// SHARD BY without a count asks for sharding; let the engine size it.
		t.ShardsAuto = true
	default:
		t.Shards = 1
	}
	order, err := t.resolve(spec.OrderBy, "ORDER BY")
	if err != nil {
		return err
	}
	if t.Keyed() {
		if len(order) == 0 {
			order = slices.Clone(t.Key)
		}
		if order, err = checkKeyedOrder(t, order); err != nil {
			return err
		}
	}
	t.OrderBy = order
	return nil
}

// checkKeyedOrder enforces R11.2 for keyed tables and returns the order
// stored. Strata stores all versions of a key next to each other, sorted
// by (key, group, commit), so the sort order may permute the key columns
// but not put another column before any of them: a non-key column differs
// between versions of one key and would scatter them. Columns after the
// whole key order nothing (a key is unique), so they are accepted, as
// R11.2 only asks that the order contain the key, and not stored.
func checkKeyedOrder(t *Table, order []ColumnID) ([]ColumnID, error) {
	seen := 0
	for i, id := range order {
		if seen == len(t.Key) {
			return order[:i], nil
		}
		if !t.IsKey(id) {
			col, _ := t.ColumnByID(id)
			return nil, errorf(CodeInvalidTableDef,
				"ORDER BY of table %s puts column %s, which is not a primary key column, before the key's last column: a keyed table is stored in key order, so other columns may only follow the whole key", t.Name, col.Name)
		}
		seen++
	}
	for _, id := range t.Key {
		if !slices.Contains(order, id) {
			col, _ := t.ColumnByID(id)
			return nil, errorf(CodeInvalidTableDef,
				"ORDER BY of table %s must contain every primary key column; column %s is missing", t.Name, col.Name)
		}
	}
	return order, nil
}

// DropTable removes a table and its indexes. A table a transformation
// reads or writes cannot be dropped until the transformation is. Without
// ifExists an unknown table is an error; with it, dropped is false.
func (c *Catalog) DropTable(name string, ifExists bool, commit uint64) (dropped bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	t, ok := c.Table(name)
	if !ok {
		if ifExists {
			return false, nil
		}
		if _, isView := c.views[name]; isView {
			return false, errorf(CodeWrongObjectType, "%s is a view, not a table: use DROP VIEW", name)
		}
		return false, errorf(CodeUndefinedTable, "table %s does not exist", name)
	}
	if x := c.transformationUsing(t.ID); x != nil {
		return false, errorf(CodeDependentObjects,
			"table %s is used by transformation %s; drop the transformation first", name, x.Name)
	}
	if vs := c.viewsReadingTable(t.ID); len(vs) > 0 {
		return false, errorf(CodeDependentObjects,
			"cannot drop table %s because %s %s on it; drop them first", name, plural(vs, "view"), plural(vs, "depends"))
	}
	for _, ix := range c.Indexes(name) {
		delete(c.indexes, ix.Name)
	}
	delete(c.tables, t.ID)
	delete(c.tableNames, t.Name)
	c.commit = commit
	return true, nil
}

// RenameTableSpec is ALTER TABLE Table RENAME TO New.
type RenameTableSpec struct {
	Table string
	New   string
	// Rewrite, when set, returns the text of a view's or transformation's
	// query with its references to the table renamed (the catalog holds
	// query text and does not parse it); the views and transformations
	// that read the table then follow the rename. Without it, or when it
	// fails, they keep the table from being renamed.
	Rewrite func(query, old, new string) (string, error)
}

// RenameTable gives a table a new, free name. Storage, indexes and
// transformation targets refer to tables by id and follow; the views and
// transformations that read the table name it in their query text, which
// spec.Rewrite renames too (without it, they keep the rename from
// happening).
func (c *Catalog) RenameTable(spec RenameTableSpec, commit uint64) (*Table, error) {
	if err := checkName("table", spec.New); err != nil {
		return nil, err
	}
	if _, taken := c.tableNames[spec.New]; taken {
		return nil, errorf(CodeDuplicateTable, "cannot rename table %s to %s: table %s already exists", spec.Table, spec.New, spec.New)
	}
	if _, taken := c.views[spec.New]; taken {
		return nil, errorf(CodeDuplicateTable, "cannot rename table %s to %s: view %s already exists", spec.Table, spec.New, spec.New)
	}
	if old, ok := c.Table(spec.Table); ok {
		if err := c.relationFree(spec.New, old.Keyed()); err != nil {
			return nil, errorf(CodeDuplicateTable, "cannot rename table %s to %s: %s", spec.Table, spec.New, err.(*Error).Msg)
		}
	}
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		for _, x := range c.sortedTransformations() {
			if !slices.Contains(x.Sources, t.ID) {
				continue
			}
			if spec.Rewrite == nil {
				return errorf(CodeDependentObjects,
					"cannot rename table %s: transformation %s reads it by name; drop the transformation first", t.Name, x.Name)
			}
			q, err := spec.Rewrite(x.Select, t.Name, spec.New)
			if err != nil {
				return errorf(CodeDependentObjects, "cannot rename table %s: transformation %s reads it and cannot follow: %v", t.Name, x.Name, err)
			}
			nx := x.clone()
			nx.Select = q
			c.transforms[x.Name] = nx
		}
		for _, name := range c.viewsReadingTable(t.ID) {
			v := c.views[name]
			if spec.Rewrite == nil {
				return errorf(CodeDependentObjects, "cannot rename table %s: view %s reads it by name; drop it first", t.Name, name)
			}
			q, err := spec.Rewrite(v.Select, t.Name, spec.New)
			if err != nil {
				return errorf(CodeDependentObjects, "cannot rename table %s: view %s reads it and cannot follow: %v", t.Name, name, err)
			}
			nv := v.clone()
			nv.Select = q
			c.views[name] = nv
		}
		t.Name = spec.New
		return nil
	})
}

// SetPolicySpec is ALTER TABLE Table SET POLICY name [, name ...].
type SetPolicySpec struct {
	Table    string
	Policies []string
}

// SetPolicy binds each named policy to the table in its role (R9.2),
// after checking that the policy can serve the table.
func (c *Catalog) SetPolicy(spec SetPolicySpec, commit uint64) (*Table, error) {
	if len(spec.Policies) == 0 {
		return nil, errorf(CodeInvalidTableDef, "SET POLICY on table %s names no policy", spec.Table)
	}
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		return c.bindPolicies(t, spec.Policies, commit)
	})
}
