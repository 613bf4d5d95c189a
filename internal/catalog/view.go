package catalog

import (
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/strata-db/strata/internal/types"
)

// ViewSpec is CREATE [OR REPLACE] VIEW Name AS Select, as the session bound
// it: the query's output columns and what it reads.
type ViewSpec struct {
	Name string
	// Select is the query as the printer writes it (it parses back to the
	// same tree), kept to bind it again at every use.
	Select string
	// Columns and Types are the view's output columns, after the column
	// list of CREATE VIEW v (a, b) renamed the first ones.
	Columns []string
	Types   []types.Type
	// Sources are the tables the query reads, directly or through other
	// views; Views are the views it names itself.
	Sources []string
	Views   []string
	// Reads are the source columns the query refers to (every column of a
	// table read with *).
	Reads []ColumnRef
	// OrReplace replaces a view of that name, which must keep the old
	// view's columns, in order, as the first ones (as PostgreSQL requires).
	OrReplace bool
}

// View is a named query. It stores the query's text and binds it again at
// every use, so a view reads its tables under their current schema (R6.5)
// and at the commit its reader asks for (R6.2). The tables and columns it
// reads cannot be dropped, renamed or retyped while it exists, because the
// text names them.
type View struct {
	Name    string
	Select  string
	Columns []string
	Types   []types.Type
	Sources []TableID
	Views   []string
	Reads   []ColumnKey
	// CreatedCommit is the commit of the CREATE (or the latest OR REPLACE).
	CreatedCommit uint64
	// parsed caches Select as the planner parsed it (SetParsed), so a
	// reference to the view parses its text once, not at every use. A
	// View is never changed once its catalog is published, and every DDL
	// works on a clone, which starts without the cache: CREATE OR
	// REPLACE, DROP and any other schema change leave the old tree
	// behind with the old catalog. Only the parse is cached; the tree is
	// bound afresh at every reference (R6.2, R6.5).
	parsed atomic.Value
}

// Parsed returns what SetParsed stored, or nil.
func (v *View) Parsed() any { return v.parsed.Load() }

// SetParsed keeps x, the parsed form of Select, for Parsed. Callers store
// one type only (package plan's *ast.SelectStmt), which must not be
// changed afterwards: concurrent statements share it.
func (v *View) SetParsed(x any) { v.parsed.Store(x) }

func (v *View) clone() *View {
	return &View{Name: v.Name, Select: v.Select, Columns: slices.Clone(v.Columns), Types: slices.Clone(v.Types),
		Sources: slices.Clone(v.Sources), Views: slices.Clone(v.Views), Reads: slices.Clone(v.Reads),
		CreatedCommit: v.CreatedCommit}
}

// View returns the view of that name.
func (c *Catalog) View(name string) (*View, bool) {
	v, ok := c.views[name]
	return v, ok
}

// Views returns every view, sorted by name.
func (c *Catalog) Views() []*View {
	out := make([]*View, 0, len(c.views))
	for _, v := range c.views {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CreateView checks and adds a view, or replaces one with OrReplace. Views
// and tables share one namespace, as in PostgreSQL. created is false when
// an existing view was replaced.
func (c *Catalog) CreateView(spec ViewSpec, commit uint64) (created bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	if err := checkName("view", spec.Name); err != nil {
		return false, err
	}
	if _, ok := c.tableNames[spec.Name]; ok {
		return false, errorf(CodeDuplicateTable, "relation %s already exists: it is a table", spec.Name)
	}
	if _, ok := c.views[spec.Name]; !ok {
		if err := c.relationFree(spec.Name, false); err != nil {
			return false, err
		}
	}
	if len(spec.Columns) == 0 || len(spec.Columns) != len(spec.Types) {
		return false, errorf(CodeInvalidTableDef, "view %s must have at least one column", spec.Name)
	}
	for i, name := range spec.Columns {
		if slices.Contains(spec.Columns[:i], name) {
			return false, errorf(CodeDuplicateColumn, "column %s specified more than once in view %s", name, spec.Name)
		}
	}
	old, exists := c.views[spec.Name]
	if exists && !spec.OrReplace {
		return false, errorf(CodeDuplicateTable, "relation %s already exists", spec.Name)
	}
	if exists {
		if len(spec.Columns) < len(old.Columns) {
			return false, errorf(CodeInvalidTableDef, "cannot drop columns from view %s", spec.Name)
		}
		for i, name := range old.Columns {
			if spec.Columns[i] != name {
				return false, errorf(CodeInvalidTableDef, "cannot change name of view column %s to %s", name, spec.Columns[i])
			}
			if spec.Types[i] != old.Types[i] {
				return false, errorf(CodeInvalidTableDef, "cannot change data type of view column %s from %s to %s", name, old.Types[i], spec.Types[i])
			}
		}
	}
	v := &View{Name: spec.Name, Select: spec.Select, Columns: slices.Clone(spec.Columns), Types: slices.Clone(spec.Types),
		Views: slices.Clone(spec.Views), CreatedCommit: commit}
	for _, name := range spec.Sources {
		t, ok := c.Table(name)
		if !ok {
			return false, errorf(CodeUndefinedTable, "table %s does not exist", name)
		}
		if !slices.Contains(v.Sources, t.ID) {
			v.Sources = append(v.Sources, t.ID)
		}
	}
	for _, name := range spec.Views {
		if _, ok := c.views[name]; !ok {
			return false, errorf(CodeUndefinedTable, "view %s does not exist", name)
		}
		if name == spec.Name || c.viewReads(name, spec.Name) {
			return false, errorf(CodeInvalidObjectDef, "view %s would read itself through view %s", spec.Name, name)
		}
	}
	for _, r := range spec.Reads {
		t, ok := c.Table(r.Table)
		if !ok {
			return false, errorf(CodeUndefinedTable, "table %s does not exist", r.Table)
		}
		col, ok := t.Column(r.Column)
		if !ok {
			return false, errorf(CodeUndefinedColumn, "column %s of table %s does not exist", r.Column, r.Table)
		}
		if k := (ColumnKey{Table: t.ID, Column: col.ID}); !slices.Contains(v.Reads, k) {
			v.Reads = append(v.Reads, k)
		}
	}
	c.views[v.Name] = v
	c.commit = commit
	return !exists, nil
}

// viewReads reports whether view from reads view target, directly or
// through other views.
func (c *Catalog) viewReads(from, target string) bool {
	seen := map[string]bool{}
	var walk func(name string) bool
	walk = func(name string) bool {
		if seen[name] {
			return false
		}
		seen[name] = true
		v, ok := c.views[name]
		if !ok {
			return false
		}
		for _, w := range v.Views {
			if w == target || walk(w) {
				return true
			}
		}
		return false
	}
	return walk(from)
}

// DropView removes a view no other view reads. Without ifExists an unknown
// view is an error; with it, dropped is false.
func (c *Catalog) DropView(name string, ifExists bool, commit uint64) (dropped bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	if _, ok := c.views[name]; !ok {
		if ifExists {
			return false, nil
		}
		if _, isTable := c.tableNames[name]; isTable {
			return false, errorf(CodeFeatureNotSupported, "%s is a table, not a view: use DROP TABLE", name)
		}
		return false, errorf(CodeUndefinedTable, "view %s does not exist", name)
	}
	if users := c.viewsReadingView(name); len(users) > 0 {
		return false, errorf(CodeDependentObjects, "cannot drop view %s because %s %s on it; drop %s first",
			name, plural(users, "view"), plural(users, "depends"), strings.Join(users, ", "))
	}
	delete(c.views, name)
	c.commit = commit
	return true, nil
}

// viewsReadingView names the views that read view name directly.
func (c *Catalog) viewsReadingView(name string) []string {
	var out []string
	for _, v := range c.Views() {
		if slices.Contains(v.Views, name) {
			out = append(out, v.Name)
		}
	}
	return out
}

// viewsReadingTable names the views that read table id.
func (c *Catalog) viewsReadingTable(id TableID) []string {
	var out []string
	for _, v := range c.Views() {
		if slices.Contains(v.Sources, id) {
			out = append(out, v.Name)
		}
	}
	return out
}

// viewReadingColumn names a view that reads column k, or "".
func (c *Catalog) viewReadingColumn(k ColumnKey) string {
	for _, v := range c.Views() {
		if slices.Contains(v.Reads, k) {
			return v.Name
		}
	}
	return ""
}

// checkViews verifies that every view's sources, reads and views exist.
func (c *Catalog) checkViews() error {
	for name, v := range c.views {
		if v.Name != name || len(v.Columns) == 0 || len(v.Columns) != len(v.Types) {
			return errorf(CodeInvalidTableDef, "catalog: view %q is malformed", name)
		}
		if _, ok := c.tableNames[name]; ok {
			return errorf(CodeDuplicateTable, "catalog: view %s has the name of a table", name)
		}
		for _, id := range v.Sources {
			if _, ok := c.tables[id]; !ok {
				return errorf(CodeUndefinedTable, "catalog: view %s reads table id %d, which does not exist", name, id)
			}
		}
		for _, r := range v.Reads {
			t, ok := c.tables[r.Table]
			if !ok || !slices.Contains(v.Sources, r.Table) {
				return errorf(CodeUndefinedTable, "catalog: view %s reads a column of table id %d, not one of its sources", name, r.Table)
			}
			if _, ok := t.ColumnByID(r.Column); !ok {
				return errorf(CodeUndefinedColumn, "catalog: view %s reads column id %d, which table %s lacks", name, r.Column, t.Name)
			}
		}
		for _, w := range v.Views {
			if _, ok := c.views[w]; !ok || w == name {
				return errorf(CodeUndefinedTable, "catalog: view %s reads view %s, which does not exist", name, w)
			}
		}
	}
	return nil
}

// plural renders "view a" or "views a, b" (word "view"), and "depends" or
// "depend" (word "depends") for the names.
func plural(names []string, word string) string {
	switch word {
	case "depends":
		if len(names) > 1 {
			return "depend"
		}
		return "depends"
	case "reads":
		if len(names) > 1 {
			return "read"
		}
		return "reads"
	}
	if len(names) > 1 {
		return word + "s " + strings.Join(names, ", ")
	}
	return word + " " + names[0]
}
