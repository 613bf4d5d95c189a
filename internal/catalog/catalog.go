package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// Catalog is the whole schema: tables, views, policies, indexes,
// transformations and users. A Catalog is not safe for concurrent modification; the engine
// applies a DDL to a Clone and publishes the clone when the DDL commits,
// so a published Catalog is only read and may be shared freely.
type Catalog struct {
	// commit is the commit of the latest DDL applied (0 for a new catalog).
	commit        uint64
	nextTable     TableID
	nextIndex     IndexID
	nextTransform TransformationID

	tables     map[TableID]*Table
	tableNames map[string]TableID
	policies   map[string]*Policy
	indexes    map[string]*Index
	transforms map[string]*Transformation
	users      map[string]*User
	views      map[string]*View
}

// New returns an empty catalog: no tables, only the built-in policies.
func New() *Catalog {
	return &Catalog{
		nextTable: 1, nextIndex: 1, nextTransform: 1,
		tables:     map[TableID]*Table{},
		tableNames: map[string]TableID{},
		policies:   map[string]*Policy{},
		indexes:    map[string]*Index{},
		transforms: map[string]*Transformation{},
		users:      map[string]*User{},
		views:      map[string]*View{},
	}
}

// Commit returns the commit of the latest DDL the catalog reflects.
func (c *Catalog) Commit() uint64 { return c.commit }

// Table returns the table of that name.
func (c *Catalog) Table(name string) (*Table, bool) {
	id, ok := c.tableNames[name]
	if !ok {
		return nil, false
	}
	return c.tables[id], true
}

// TableByID returns the table with that id.
func (c *Catalog) TableByID(id TableID) (*Table, bool) {
	t, ok := c.tables[id]
	return t, ok
}

// Tables returns every table, sorted by name.
func (c *Catalog) Tables() []*Table {
	out := make([]*Table, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Table) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Clone returns a deep copy: DDL applied to either side is invisible to the
// other.
func (c *Catalog) Clone() *Catalog {
	n := New()
	n.commit, n.nextTable, n.nextIndex, n.nextTransform = c.commit, c.nextTable, c.nextIndex, c.nextTransform
	for _, t := range c.tables {
		n.putTable(t.clone())
	}
	for k, p := range c.policies {
		n.policies[k] = p.clone()
	}
	for k, ix := range c.indexes {
		n.indexes[k] = ix.clone()
	}
	for k, x := range c.transforms {
		n.transforms[k] = x.clone()
	}
	for k, u := range c.users {
		cp := *u
		n.users[k] = &cp
	}
	for k, v := range c.views {
		n.views[k] = v.clone()
	}
	return n
}

// begin checks the commit a DDL gets. Commits only grow (R5.1); a
// transaction's statements share one, so equal is allowed.
func (c *Catalog) begin(commit uint64) error {
	if commit == 0 || commit < c.commit {
		return fmt.Errorf("catalog: DDL at commit %d, but the catalog is at commit %d", commit, c.commit)
	}
	return nil
}

// putTable publishes t under its id and name, replacing the table of that
// id (and its old name) if there is one.
func (c *Catalog) putTable(t *Table) {
	if old, ok := c.tables[t.ID]; ok && old.Name != t.Name {
		delete(c.tableNames, old.Name)
	}
	c.tables[t.ID] = t
	c.tableNames[t.Name] = t.ID
}

// alterTable runs one ALTER TABLE: fn changes a private copy of the table,
// which replaces the published one only if fn succeeds (invariant 3), with
// the generation bumped (R8.2).
func (c *Catalog) alterTable(name string, commit uint64, fn func(*Table) error) (*Table, error) {
	if err := c.begin(commit); err != nil {
		return nil, err
	}
	old, ok := c.Table(name)
	if !ok {
		return nil, errorf(CodeUndefinedTable, "table %s does not exist", name)
	}
	t := old.clone()
	if err := fn(t); err != nil {
		return nil, err
	}
	t.Generation++
	t.AlteredCommit = commit
	c.putTable(t)
	c.commit = commit
	return t, nil
}

// Check verifies that every structure of the catalog agrees with every
// other (the invariants of doc.go). Decode runs it, so a damaged or
// hand-edited encoding is refused instead of served.
func (c *Catalog) Check() error {
	if len(c.tables) != len(c.tableNames) {
		return fmt.Errorf("catalog: %d tables but %d table names", len(c.tables), len(c.tableNames))
	}
	for id, t := range c.tables {
		if t.ID != id || c.tableNames[t.Name] != id {
			return fmt.Errorf("catalog: table %s is filed under id %d and name %d", t.Name, id, c.tableNames[t.Name])
		}
		if id >= c.nextTable {
			return fmt.Errorf("catalog: table %s has id %d, not below the next id %d", t.Name, id, c.nextTable)
		}
		if err := t.check(); err != nil {
			return fmt.Errorf("catalog: table %s: %w", t.Name, err)
		}
		for _, r := range Roles() {
			name := t.Policies.Of(r)
			if p, ok := c.policies[name]; name != DefaultPolicyName && (!ok || p.Role != r) {
				return fmt.Errorf("catalog: table %s is bound to %s policy %q, which does not exist", t.Name, r, name)
			}
		}
	}
	for name, p := range c.policies {
		if p.Name != name || p.Role >= numRoles {
			return fmt.Errorf("catalog: policy %q is malformed", name)
		}
	}
	for name, ix := range c.indexes {
		t, ok := c.tables[ix.Table]
		if ix.Name != name || !ok || ix.ID >= c.nextIndex {
			return fmt.Errorf("catalog: index %q refers to a missing table or is misfiled", name)
		}
		for _, id := range ix.Columns {
			if _, ok := t.ColumnByID(id); !ok {
				return fmt.Errorf("catalog: index %s names column id %d, which table %s lacks", name, id, t.Name)
			}
		}
	}
	owners := map[[2]uint32]string{}
	for name, x := range c.transforms {
		t, ok := c.tables[x.Target]
		if x.Name != name || !ok || x.ID >= c.nextTransform {
			return fmt.Errorf("catalog: transformation %q refers to a missing table or is misfiled", name)
		}
		if x.Group != NoGroup {
			g, ok := t.GroupByID(x.Group)
			if !ok || g.Owner != name {
				return fmt.Errorf("catalog: transformation %s does not own its target group", name)
			}
			owners[[2]uint32{uint32(t.ID), uint32(g.ID)}] = name
		}
		for _, s := range x.Sources {
			if _, ok := c.tables[s]; !ok {
				return fmt.Errorf("catalog: transformation %s reads table id %d, which does not exist", name, s)
			}
		}
		for _, r := range x.Reads {
			src, ok := c.tables[r.Table]
			if !ok || !slices.Contains(x.Sources, r.Table) {
				return fmt.Errorf("catalog: transformation %s reads a column of table id %d, not one of its sources", name, r.Table)
			}
			if _, ok := src.ColumnByID(r.Column); !ok {
				return fmt.Errorf("catalog: transformation %s reads column id %d, which table %s lacks", name, r.Column, src.Name)
			}
		}
	}
	for _, t := range c.tables {
		for _, g := range t.Groups {
			if g.Owner != "" && owners[[2]uint32{uint32(t.ID), uint32(g.ID)}] != g.Owner {
				return fmt.Errorf("catalog: group %s of table %s names owner %s, which does not maintain it", g.Name, t.Name, g.Owner)
			}
		}
	}
	for name, u := range c.users {
		if u.Name != name {
			return fmt.Errorf("catalog: user %q is misfiled", name)
		}
	}
	return c.checkViews()
}

// check verifies one table's invariants.
func (t *Table) check() error {
	if t.Mode != ModeAppend && t.Mode != ModeUpsert && t.Mode != ModeVersioned {
		return fmt.Errorf("mode %d", t.Mode)
	}
	seenID := map[ColumnID]bool{}
	seenName := map[string]bool{}
	for i, col := range t.Columns {
		if !validType(col.Type) {
			return fmt.Errorf("column %s has no valid type", col.Name)
		}
		if col.ID == 0 || col.ID >= t.nextColumn || seenID[col.ID] || seenName[col.Name] {
			return fmt.Errorf("column %s (id %d) is duplicated or out of range", col.Name, col.ID)
		}
		if col.Position != i+1 || col.DroppedCommit != 0 {
			return fmt.Errorf("column %s is at position %d of %d, dropped at %d", col.Name, col.Position, i+1, col.DroppedCommit)
		}
		seenID[col.ID], seenName[col.Name] = true, true
	}
	for _, col := range t.Dropped {
		if col.ID == 0 || col.ID >= t.nextColumn || seenID[col.ID] || col.DroppedCommit == 0 {
			return fmt.Errorf("dropped column id %d is duplicated, out of range or undated", col.ID)
		}
		seenID[col.ID] = true
	}
	if t.Keyed() != (len(t.Key) > 0) || t.Keyed() != (len(t.Groups) > 0) {
		return fmt.Errorf("a %s table with %d key columns and %d groups", t.Mode, len(t.Key), len(t.Groups))
	}
	for _, id := range t.Key {
		col, ok := t.ColumnByID(id)
		if !ok || col.Nullable || col.Group != NoGroup {
			return fmt.Errorf("key column id %d is missing, nullable or grouped", id)
		}
	}
	inGroup := map[ColumnID]GroupID{}
	for i, g := range t.Groups {
		if (i == 0) != (g.ID == DefaultGroup) || (i == 0) != (g.Name == DefaultGroupName) || (i > 0 && g.ID >= t.nextGroup) {
			return fmt.Errorf("group %s has id %d at place %d", g.Name, g.ID, i)
		}
		for _, id := range g.Columns {
			col, ok := t.ColumnByID(id)
			if !ok || col.Group != g.ID {
				return fmt.Errorf("group %s lists column id %d, which is not its own", g.Name, id)
			}
			inGroup[id] = g.ID
		}
		for _, id := range append(slices.Clone(g.ValidBy), g.RevisionBy...) {
			col, ok := t.ColumnByID(id)
			if !ok || col.Group != g.ID || !col.Type.Orderable() {
				return fmt.Errorf("group %s orders by column id %d, which is not its own orderable column", g.Name, id)
			}
		}
	}
	for _, col := range t.Columns {
		if g, listed := inGroup[col.ID]; (col.Group != NoGroup) != listed || (listed && g != col.Group) {
			return fmt.Errorf("column %s is in group %d but not listed there", col.Name, col.Group)
		}
	}
	for _, id := range append(slices.Clone(t.ShardBy), t.OrderBy...) {
		if _, ok := t.ColumnByID(id); !ok {
			return fmt.Errorf("layout names column id %d, which is not a current column", id)
		}
	}
	if t.Keyed() && len(t.OrderBy) != len(t.Key) {
		return fmt.Errorf("ORDER BY of a keyed table has %d columns, the key %d", len(t.OrderBy), len(t.Key))
	}
	if t.ShardsAuto == (t.Shards != 0) || t.Shards < 0 || t.Shards > MaxShards {
		return fmt.Errorf("shards %d, auto %v", t.Shards, t.ShardsAuto)
	}
	if t.Generation == 0 {
		return fmt.Errorf("generation 0")
	}
	return nil
}
