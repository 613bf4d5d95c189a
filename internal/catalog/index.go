package catalog

import (
	"slices"
	"strings"
)

// Scope is which rows an index covers (R10.1).
type Scope uint8

// The scopes. ScopeCurrent is the default.
const (
	ScopeCurrent Scope = iota
	ScopeHistory
	ScopeBoth
)

// String returns the lower-case name system.indexes shows.
func (s Scope) String() string {
	switch s {
	case ScopeHistory:
		return "history"
	case ScopeBoth:
		return "both"
	}
	return "current"
}

// ParseScope reads a scope name case-insensitively; "" is ScopeCurrent.
func ParseScope(s string) (Scope, bool) {
	switch strings.ToLower(s) {
	case "", "current":
		return ScopeCurrent, true
	case "history":
		return ScopeHistory, true
	case "both":
		return ScopeBoth, true
	}
	return ScopeCurrent, false
}

// IndexID identifies an index; ids are never reused, so storage can name
// index files by id.
type IndexID uint32

// IndexSpec is CREATE INDEX Name ON Table (Columns) [SCOPE Scope] [POLICY Policy].
type IndexSpec struct {
	Name        string
	IfNotExists bool
	Table       string
	Columns     []string
	// Scope is the scope name as written; "" means current.
	Scope string
	// Policy is the POLICY name; "" when none is given.
	Policy string
}

// Index is a secondary index over one table's columns. It refers to its
// table and columns by id, so renames follow it.
type Index struct {
	ID            IndexID
	Name          string
	Table         TableID
	Columns       []ColumnID
	Scope         Scope
	Policy        string
	CreatedCommit uint64
}

func (ix *Index) clone() *Index {
	n := *ix
	n.Columns = slices.Clone(ix.Columns)
	return &n
}

// CreateIndex checks and adds an index (R10.1). With IfNotExists and an
// index of that name already there, it returns that index and created
// false.
func (c *Catalog) CreateIndex(spec IndexSpec, commit uint64) (ix *Index, created bool, err error) {
	if err := c.begin(commit); err != nil {
		return nil, false, err
	}
	if err := checkName("index", spec.Name); err != nil {
		return nil, false, err
	}
	if old, ok := c.indexes[spec.Name]; ok {
		if spec.IfNotExists {
			return old, false, nil
		}
		return nil, false, errorf(CodeDuplicateObject, "index %s already exists", spec.Name)
	}
	if err := c.relationFree(spec.Name, false); err != nil {
		return nil, false, err
	}
	t, ok := c.Table(spec.Table)
	if !ok {
		return nil, false, errorf(CodeUndefinedTable, "cannot create index %s: table %s does not exist", spec.Name, spec.Table)
	}
	scope, ok := ParseScope(spec.Scope)
	if !ok {
		return nil, false, errorf(CodeInvalidParameter, "unknown index scope %s for index %s; the scopes are CURRENT, HISTORY and BOTH", strings.ToUpper(spec.Scope), spec.Name)
	}
	// BOTH is all the rows there are, which for a table without history
	// is its current rows (or an append table's rows); HISTORY would
	// cover nothing there.
	if scope == ScopeHistory && t.Mode != ModeVersioned {
		return nil, false, errorf(CodeInvalidTableDef,
			"index %s cannot have SCOPE %s: table %s is MODE %s and keeps no history; only MODE VERSIONED tables do",
			spec.Name, strings.ToUpper(scope.String()), t.Name, strings.ToUpper(t.Mode.String()))
	}
	if len(spec.Columns) == 0 {
		return nil, false, errorf(CodeInvalidTableDef, "index %s names no columns", spec.Name)
	}
	cols, err := t.resolve(spec.Columns, "index "+spec.Name)
	if err != nil {
		return nil, false, err
	}
	if spec.Policy != "" {
		p, ok := c.policies[spec.Policy]
		if !ok {
			return nil, false, errorf(CodeUndefinedObject, "policy %s of index %s does not exist", spec.Policy, spec.Name)
		}
		if err := servePolicy(p, t); err != nil {
			return nil, false, err
		}
	}
	ix = &Index{ID: c.nextIndex, Name: spec.Name, Table: t.ID, Columns: cols, Scope: scope, Policy: spec.Policy, CreatedCommit: commit}
	c.nextIndex++
	c.indexes[ix.Name] = ix
	c.commit = commit
	return ix, true, nil
}

// DropIndex removes an index. Without ifExists an unknown index is an
// error; with it, dropped is false.
func (c *Catalog) DropIndex(name string, ifExists bool, commit uint64) (dropped bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	if _, ok := c.indexes[name]; !ok {
		if ifExists {
			return false, nil
		}
		return false, errorf(CodeUndefinedObject, "index %s does not exist", name)
	}
	delete(c.indexes, name)
	c.commit = commit
	return true, nil
}

// Index returns the index of that name.
func (c *Catalog) Index(name string) (*Index, bool) {
	ix, ok := c.indexes[name]
	return ix, ok
}

// Indexes returns the indexes of the named table, sorted by name.
func (c *Catalog) Indexes(table string) []*Index {
	id, ok := c.tableNames[table]
	if !ok {
		return nil
	}
	var out []*Index
	for _, ix := range c.AllIndexes() {
		if ix.Table == id {
			out = append(out, ix)
		}
	}
	return out
}

// AllIndexes returns every index, sorted by name.
func (c *Catalog) AllIndexes() []*Index {
	out := make([]*Index, 0, len(c.indexes))
	for _, ix := range c.indexes {
		out = append(out, ix)
	}
	slices.SortFunc(out, func(a, b *Index) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// relationKind says what holds name in the namespace tables, views and
// indexes share, as PostgreSQL's pg_class does (psql's \d names any of
// them): "a table", "a view", "an index", "a primary key index" (t_pkey,
// as pg_catalog shows a keyed table's key), or "" when it is free.
func (c *Catalog) relationKind(name string) string {
	if _, ok := c.tableNames[name]; ok {
		return "a table"
	}
	if _, ok := c.views[name]; ok {
		return "a view"
	}
	if _, ok := c.indexes[name]; ok {
		return "an index"
	}
	if t, ok := c.tableNames[strings.TrimSuffix(name, "_pkey")]; ok && strings.HasSuffix(name, "_pkey") && c.tables[t].Keyed() {
		return "a primary key index"
	}
	return ""
}

// relationFree refuses a new relation name (or a table's, whose key
// index is named t_pkey) that another relation holds: 42P07.
func (c *Catalog) relationFree(name string, keyed bool) error {
	if k := c.relationKind(name); k != "" {
		return errorf(CodeDuplicateTable, "relation %s already exists: it is %s", name, k)
	}
	if keyed {
		if k := c.relationKind(name + "_pkey"); k != "" {
			return errorf(CodeDuplicateTable, "relation %s_pkey already exists: it is %s, and a keyed table's primary key index takes that name", name, k)
		}
	}
	return nil
}
