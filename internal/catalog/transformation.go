package catalog

import (
	"slices"
	"strings"
)

// TransformationID identifies a transformation; ids are never reused, so
// its checkpoints can be keyed by id.
type TransformationID uint32

// TransformationSpec is CREATE TRANSFORMATION Name INTO Target [ATTRIBUTE
// GROUP Group] AS Select. The binder has parsed the SELECT and lists the
// tables it reads in Sources.
type TransformationSpec struct {
	Name   string
	Target string
	// Group is the ATTRIBUTE GROUP name; "" means the group default of a
	// keyed target, and must be "" for an append target.
	Group string
	// Select is the query text as written, kept to recompile it at startup.
	Select string
	// Sources are the tables the query reads.
	Sources []string
	// Reads are the source columns the query refers to, as the binder
	// resolved them. While the transformation exists they cannot be
	// renamed or dropped, because the stored SELECT names them.
	Reads []ColumnRef
	// Stateful marks an aggregate, whose state is rebuilt from its
	// sources' rows at startup: no source may expire rows (R9.3).
	Stateful bool
}

// ColumnRef names a column of a table, as written.
type ColumnRef struct {
	Table  string
	Column string
}

// ColumnKey identifies a column of a table by ids, which survive renames.
type ColumnKey struct {
	Table  TableID  `json:"table"`
	Column ColumnID `json:"column"`
}

// Transformation keeps one group of a keyed table (or an append table)
// maintained from a query over append tables (§12).
type Transformation struct {
	ID     TransformationID
	Name   string
	Target TableID
	// Group is the target group it owns; NoGroup for an append target.
	Group   GroupID
	Select  string
	Sources []TableID
	// Reads are the source columns the query refers to.
	Reads []ColumnKey
	// CreatedCommit is the commit of CREATE TRANSFORMATION: the query
	// first processes every source row committed up to it (R12.2).
	CreatedCommit uint64
	// Stateful marks an aggregate (TransformationSpec.Stateful).
	Stateful bool
}

func (x *Transformation) clone() *Transformation {
	n := *x
	n.Sources = slices.Clone(x.Sources)
	n.Reads = slices.Clone(x.Reads)
	return &n
}

// CreateTransformation checks and adds a transformation (R12.1). Its
// target group becomes owned by it: direct writes to the group are
// rejected from now on (R12.3).
func (c *Catalog) CreateTransformation(spec TransformationSpec, commit uint64) (*Transformation, error) {
	if err := c.begin(commit); err != nil {
		return nil, err
	}
	if err := checkName("transformation", spec.Name); err != nil {
		return nil, err
	}
	if _, ok := c.transforms[spec.Name]; ok {
		return nil, errorf(CodeDuplicateObject, "transformation %s already exists", spec.Name)
	}
	if strings.TrimSpace(spec.Select) == "" {
		return nil, errorf(CodeInvalidObjectDef, "transformation %s has no query", spec.Name)
	}
	target, ok := c.Table(spec.Target)
	if !ok {
		return nil, errorf(CodeUndefinedTable, "target table %s of transformation %s does not exist", spec.Target, spec.Name)
	}
	if len(spec.Sources) == 0 {
		return nil, errorf(CodeInvalidObjectDef, "transformation %s reads no table", spec.Name)
	}
	x := &Transformation{Name: spec.Name, Target: target.ID, Group: NoGroup, Select: spec.Select, CreatedCommit: commit, Stateful: spec.Stateful}
	for _, name := range spec.Sources {
		src, ok := c.Table(name)
		if !ok {
			return nil, errorf(CodeUndefinedTable, "source table %s of transformation %s does not exist", name, spec.Name)
		}
		if src.Mode != ModeAppend {
			return nil, errorf(CodeInvalidObjectDef,
				"transformation %s reads table %s, which is MODE %s; a transformation reads append tables only", spec.Name, name, strings.ToUpper(src.Mode.String()))
		}
		if src.ID == target.ID {
			return nil, errorf(CodeInvalidObjectDef, "transformation %s reads and writes table %s", spec.Name, name)
		}
		if spec.Stateful {
			if err := c.statefulSource(spec.Name, src, c.Bound(src, RoleRetention)); err != nil {
				return nil, err
			}
		}
		if !slices.Contains(x.Sources, src.ID) {
			x.Sources = append(x.Sources, src.ID)
		}
	}
	for _, ref := range spec.Reads {
		src, ok := c.Table(ref.Table)
		if !ok || !slices.Contains(x.Sources, src.ID) {
			return nil, errorf(CodeInvalidObjectDef, "transformation %s reads column %s of table %s, which is not one of its sources", spec.Name, ref.Column, ref.Table)
		}
		col, ok := src.Column(ref.Column)
		if !ok {
			return nil, errorf(CodeUndefinedColumn, "transformation %s reads column %s of table %s, which does not exist", spec.Name, ref.Column, ref.Table)
		}
		if key := (ColumnKey{Table: src.ID, Column: col.ID}); !slices.Contains(x.Reads, key) {
			x.Reads = append(x.Reads, key)
		}
	}
	var nt *Table
	if target.Keyed() {
		name := spec.Group
		if name == "" {
			name = DefaultGroupName
		}
		g, ok := target.Group(name)
		if !ok {
			return nil, errorf(CodeUndefinedObject, "table %s has no attribute group %s (target of transformation %s)", target.Name, name, spec.Name)
		}
		if g.Owner != "" {
			return nil, errorf(CodeObjectInUse,
				"attribute group %s of table %s is already maintained by transformation %s", g.Name, target.Name, g.Owner)
		}
		x.Group = g.ID
		nt = target.clone()
		ng, _ := nt.GroupByID(g.ID)
		ng.Owner = x.Name
	} else if spec.Group != "" {
		return nil, errorf(CodeInvalidTableDef, "MODE APPEND tables have no attribute groups: transformation %s cannot write group %s of table %s", spec.Name, spec.Group, target.Name)
	}
	x.ID = c.nextTransform
	c.nextTransform++
	if nt != nil {
		c.putTable(nt)
	}
	c.transforms[x.Name] = x
	c.commit = commit
	return x, nil
}

// DropTransformation stops and removes a transformation and frees its
// group for direct writes. Without ifExists an unknown name is an error;
// with it, dropped is false.
func (c *Catalog) DropTransformation(name string, ifExists bool, commit uint64) (dropped bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	x, ok := c.transforms[name]
	if !ok {
		if ifExists {
			return false, nil
		}
		return false, errorf(CodeUndefinedObject, "transformation %s does not exist", name)
	}
	if t, ok := c.tables[x.Target]; ok && x.Group != NoGroup {
		nt := t.clone()
		if g, ok := nt.GroupByID(x.Group); ok && g.Owner == name {
			g.Owner = ""
		}
		c.putTable(nt)
	}
	delete(c.transforms, name)
	c.commit = commit
	return true, nil
}

// Transformation returns the transformation of that name.
func (c *Catalog) Transformation(name string) (*Transformation, bool) {
	x, ok := c.transforms[name]
	return x, ok
}

// Transformations returns every transformation, sorted by name.
func (c *Catalog) Transformations() []*Transformation { return c.sortedTransformations() }

func (c *Catalog) sortedTransformations() []*Transformation {
	out := make([]*Transformation, 0, len(c.transforms))
	for _, x := range c.transforms {
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b *Transformation) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// SourceNames returns the current names of the tables x reads.
func (c *Catalog) SourceNames(x *Transformation) []string {
	out := make([]string, 0, len(x.Sources))
	for _, id := range x.Sources {
		if t, ok := c.tables[id]; ok {
			out = append(out, t.Name)
		}
	}
	return out
}

// transformationUsing returns a transformation that reads or writes table
// id, or nil.
func (c *Catalog) transformationUsing(id TableID) *Transformation {
	for _, x := range c.sortedTransformations() {
		if x.Target == id || slices.Contains(x.Sources, id) {
			return x
		}
	}
	return nil
}

// statefulSource refuses retention policy p on src, a source of the
// aggregate transformation named x: the aggregate's state is rebuilt from
// the source rows at startup, so rows that expired would drop out of its
// totals (docs/retention.md).
func (c *Catalog) statefulSource(x string, src *Table, p *Policy) error {
	if p.Role != RoleRetention || src.Mode != ModeAppend {
		return nil
	}
	if _, expires := p.Setting("rows"); !expires {
		return nil
	}
	return errorf(CodeFeatureNotSupported,
		"table %s cannot expire rows (retention policy %s) while aggregate transformation %s reads it: its totals are rebuilt from the source rows at startup, and expired rows would drop out of them",
		src.Name, p.Name, x)
}

// statefulReaders checks retention policy p against every aggregate
// transformation that reads table t.
func (c *Catalog) statefulReaders(t *Table, p *Policy) error {
	for _, x := range c.Transformations() {
		if x.Stateful && slices.Contains(x.Sources, t.ID) {
			if err := c.statefulSource(x.Name, t, p); err != nil {
				return err
			}
		}
	}
	return nil
}
