package catalog

import "slices"

// GroupID identifies an attribute group within its table; ids are never
// reused. The group default is always 0.
type GroupID uint32

// DefaultGroup is the id of the group default, which every keyed table has
// (R4.1, R4.4), with or without columns.
const DefaultGroup GroupID = 0

// NoGroup is the Group of a key column and of every column of an append
// table: such columns belong to no attribute group.
const NoGroup GroupID = ^GroupID(0)

// DefaultGroupName is the reserved name of the group default.
const DefaultGroupName = "default"

// GroupSpec is one ATTRIBUTE GROUP clause of CREATE TABLE.
type GroupSpec struct {
	Name       string
	Columns    []string
	ValidBy    []string
	RevisionBy []string
}

// Group is an attribute group (§4): columns of a keyed table whose
// versions are ordered together and apart from other groups'.
type Group struct {
	ID      GroupID
	Name    string
	Columns []ColumnID
	// ValidBy and RevisionBy are the ordering columns of R3.1, compared
	// left to right; both empty means commit order alone.
	ValidBy    []ColumnID
	RevisionBy []ColumnID
	// Owner is the transformation that maintains the group (R12.3), ""
	// when writes go to it directly.
	Owner string
	// AddedCommit is the commit that created the group.
	AddedCommit uint64
}

// Ordered reports whether the group has VALID BY or REVISION BY columns.
func (g *Group) Ordered() bool { return len(g.ValidBy) > 0 || len(g.RevisionBy) > 0 }

func (g *Group) clone() *Group {
	n := *g
	n.Columns = slices.Clone(g.Columns)
	n.ValidBy = slices.Clone(g.ValidBy)
	n.RevisionBy = slices.Clone(g.RevisionBy)
	return &n
}

// describe names the group in messages.
func (g *Group) describe() string {
	if g.ID == DefaultGroup {
		return "the default group"
	}
	return "attribute group " + g.Name
}

// buildGroups creates the group default and the named groups of CREATE
// TABLE (R4.1) and their orderings (R3.2).
func buildGroups(t *Table, spec TableSpec, commit uint64) error {
	def := &Group{ID: DefaultGroup, Name: DefaultGroupName, AddedCommit: commit}
	t.Groups = []*Group{def}
	for _, gs := range spec.Groups {
		if err := checkGroupName(t, gs.Name); err != nil {
			return err
		}
		g := &Group{ID: t.nextGroup, Name: gs.Name, AddedCommit: commit}
		t.nextGroup++
		if len(gs.Columns) == 0 {
			return errorf(CodeInvalidTableDef, "attribute group %s of table %s has no columns", gs.Name, t.Name)
		}
		for i, name := range gs.Columns {
			col, ok := t.Column(name)
			if !ok {
				return errorf(CodeUndefinedColumn, "attribute group %s of table %s names column %s, which does not exist", gs.Name, t.Name, name)
			}
			if slices.Contains(gs.Columns[:i], name) {
				return errorf(CodeDuplicateColumn, "attribute group %s of table %s names column %s twice", gs.Name, t.Name, name)
			}
			if t.IsKey(col.ID) {
				return errorf(CodeInvalidTableDef,
					"column %s of table %s is a primary key column and cannot be in attribute group %s: the key belongs to every group", name, t.Name, gs.Name)
			}
			if col.Group != 0 {
				other, _ := t.GroupByID(col.Group)
				return errorf(CodeInvalidTableDef,
					"column %s of table %s is in two attribute groups, %s and %s; a column belongs to at most one group", name, t.Name, other.Name, gs.Name)
			}
			col.Group = g.ID
			g.Columns = append(g.Columns, col.ID)
		}
		t.Groups = append(t.Groups, g)
	}
	// What no named group took forms the group default, in column order.
	for _, col := range t.Columns {
		if col.Group == DefaultGroup {
			def.Columns = append(def.Columns, col.ID)
		}
	}
	for i, gs := range spec.Groups {
		if err := setOrdering(t, t.Groups[i+1], gs.ValidBy, gs.RevisionBy); err != nil {
			return err
		}
	}
	return setOrdering(t, def, spec.ValidBy, spec.RevisionBy)
}

// checkGroupName rejects an empty, reserved or taken group name.
func checkGroupName(t *Table, name string) error {
	if err := checkName("attribute group", name); err != nil {
		return err
	}
	if name == DefaultGroupName {
		return errorf(CodeReservedName,
			"attribute group name default is reserved in table %s: it is the group of the non-key columns no named group holds", t.Name)
	}
	if _, dup := t.Group(name); dup {
		return errorf(CodeDuplicateObject, "attribute group %s of table %s is declared twice", name, t.Name)
	}
	return nil
}

// setOrdering resolves and checks a group's VALID BY and REVISION BY
// (R3.2): columns of that very group, of an orderable type.
func setOrdering(t *Table, g *Group, validBy, revisionBy []string) error {
	v, err := orderingColumns(t, g, validBy, "VALID BY")
	if err != nil {
		return err
	}
	r, err := orderingColumns(t, g, revisionBy, "REVISION BY")
	if err != nil {
		return err
	}
	for _, id := range v {
		if slices.Contains(r, id) {
			col, _ := t.ColumnByID(id)
			return errorf(CodeInvalidTableDef, "column %s of table %s is both VALID BY and REVISION BY of %s", col.Name, t.Name, g.describe())
		}
	}
	g.ValidBy, g.RevisionBy = v, r
	return nil
}

func orderingColumns(t *Table, g *Group, names []string, clause string) ([]ColumnID, error) {
	var ids []ColumnID
	for i, name := range names {
		col, ok := t.Column(name)
		if !ok {
			return nil, errorf(CodeUndefinedColumn, "%s of %s in table %s names column %s, which does not exist", clause, g.describe(), t.Name, name)
		}
		if slices.Contains(names[:i], name) {
			return nil, errorf(CodeDuplicateColumn, "%s of %s in table %s names column %s twice", clause, g.describe(), t.Name, name)
		}
		if col.Group != g.ID {
			where := "a primary key column"
			if other, ok := t.GroupByID(col.Group); ok {
				where = "in " + other.describe()
			}
			hint := ""
			if g.ID == DefaultGroup && col.Group != NoGroup {
				hint = "; write VALID BY / REVISION BY inside that ATTRIBUTE GROUP clause"
			}
			return nil, errorf(CodeInvalidTableDef,
				"%s column %s of table %s is %s, not in %s: an ordering column must be a column of the group it orders%s",
				clause, name, t.Name, where, g.describe(), hint)
		}
		if !col.Type.Orderable() {
			return nil, errorf(CodeDatatypeMismatch,
				"%s column %s of %s in table %s has type %s; an ordering column must be an integer type, DATE or DATETIME64",
				clause, name, g.describe(), t.Name, col.Type)
		}
		ids = append(ids, col.ID)
	}
	return ids, nil
}

// AddGroupSpec is ALTER TABLE Table ADD ATTRIBUTE GROUP Name (Columns...)
// [VALID BY ...] [REVISION BY ...]; its columns are declared inline.
type AddGroupSpec struct {
	Table      string
	Name       string
	Columns    []ColumnSpec
	ValidBy    []string
	RevisionBy []string
}

// AddGroup declares a new attribute group with new, nullable columns
// (R4.5). Nothing existing moves: older rows read the new columns as their
// introduced defaults.
func (c *Catalog) AddGroup(spec AddGroupSpec, commit uint64) (*Table, error) {
	return c.alterTable(spec.Table, commit, func(t *Table) error {
		if !t.Keyed() {
			return errorf(CodeInvalidTableDef, "MODE APPEND tables have no attribute groups: cannot add attribute group %s to table %s", spec.Name, t.Name)
		}
		if err := checkGroupName(t, spec.Name); err != nil {
			return err
		}
		if len(spec.Columns) == 0 {
			return errorf(CodeInvalidTableDef, "attribute group %s of table %s has no columns", spec.Name, t.Name)
		}
		g := &Group{ID: t.nextGroup, Name: spec.Name, AddedCommit: commit}
		t.nextGroup++
		for _, cs := range spec.Columns {
			if _, dup := t.Column(cs.Name); dup {
				return errorf(CodeDuplicateColumn, "column %s of table %s already exists", cs.Name, t.Name)
			}
			if cs.NotNull {
				return errorf(CodeInvalidColumnDef,
					"column %s of new attribute group %s in table %s is NOT NULL; columns added with ADD ATTRIBUTE GROUP must be nullable (NULL), because existing keys have no value for them", cs.Name, spec.Name, t.Name)
			}
			if cs.PrimaryKey {
				return errorf(CodeInvalidTableDef, "column %s of new attribute group %s in table %s cannot be a primary key column", cs.Name, spec.Name, t.Name)
			}
			col, err := newColumn(t, cs, t.nextColumn, commit)
			if err != nil {
				return err
			}
			t.nextColumn++
			col.Group = g.ID
			g.Columns = append(g.Columns, col.ID)
			t.Columns = append(t.Columns, col)
		}
		t.Groups = append(t.Groups, g)
		t.renumber()
		return setOrdering(t, g, spec.ValidBy, spec.RevisionBy)
	})
}
