package session

import (
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

var (
	strType  = types.Of(types.String)
	boolType = types.Of(types.Bool)
)

func rowsResult(cols []Column, rows [][]types.Value) *Result {
	return &Result{Tag: "SHOW", Columns: cols, Rows: rows, RowsAffected: int64(len(rows))}
}

func (st *statement) showTables() (*Result, error) {
	defer st.release()
	var rows [][]types.Value
	cat := st.snapshot().Catalog()
	for _, t := range cat.Tables() {
		rows = append(rows, []types.Value{types.NewString(t.Name), types.NewString(t.Mode.String())})
	}
	// Views are relations beside the tables, listed after them as MySQL's
	// SHOW FULL TABLES lists them with their kind.
	for _, v := range cat.Views() {
		rows = append(rows, []types.Value{types.NewString(v.Name), types.NewString("view")})
	}
	return rowsResult([]Column{{"name", strType}, {"mode", strType}}, rows), nil
}

func (st *statement) lookupTable(name *ast.ObjectName) (*catalog.Table, error) {
	t, ok := st.snapshot().Catalog().Table(name.Name)
	if !ok || (name.Schema != "" && name.Schema != "public") {
		full := name.Name
		if name.Schema != "" {
			full = name.Schema + "." + name.Name
		}
		return nil, sqlerr.UndefinedTable(name.Pos(), full)
	}
	return t, nil
}

// lookupView returns the view name names, if it names one.
func (st *statement) lookupView(name *ast.ObjectName) (*catalog.View, bool) {
	if name.Schema != "" && name.Schema != "public" {
		return nil, false
	}
	return st.snapshot().Catalog().View(name.Name)
}

// CreateViewSQL returns the CREATE VIEW statement that re-creates v: its
// column names and its query as stored.
func CreateViewSQL(v *catalog.View) string {
	cols := make([]string, len(v.Columns))
	for i, c := range v.Columns {
		cols[i] = ast.FormatIdent(c)
	}
	return "CREATE VIEW " + ast.FormatIdent(v.Name) + " (" + strings.Join(cols, ", ") + ") AS\n" + v.Select
}

// describe lists a table's columns: name, type, nullable, default, key and
// attribute group (R13.4).
func (st *statement) describe(n *ast.DescribeStmt) (*Result, error) {
	defer st.release()
	cols := []Column{{"column", strType}, {"type", strType}, {"nullable", boolType}, {"default", strType},
		{"key", boolType}, {"attribute_group", strType}}
	var rows [][]types.Value
	if v, ok := st.lookupView(n.Table); ok {
		for i, c := range v.Columns {
			rows = append(rows, []types.Value{types.NewString(c), types.NewString(v.Types[i].String()),
				types.NewBool(true), types.Null(strType), types.NewBool(false), types.Null(strType)})
		}
		return rowsResult(cols, rows), nil
	}
	if sch := n.Table.Schema; sch != "" && sch != "public" {
		rc, err := st.systemColumns(n.Table)
		if err != nil {
			return nil, err
		}
		for _, c := range rc {
			rows = append(rows, []types.Value{types.NewString(c.Name), types.NewString(c.Type.String()),
				types.NewBool(true), types.Null(strType), types.NewBool(false), types.Null(strType)})
		}
		return rowsResult(cols, rows), nil
	}
	t, err := st.lookupTable(n.Table)
	if err != nil {
		return nil, err
	}
	for _, c := range t.Columns {
		def := types.Null(strType)
		if c.Default != nil {
			def = types.NewString(c.Default.SQL)
		}
		group := types.Null(strType)
		if g, ok := t.GroupByID(c.Group); ok {
			group = types.NewString(g.Name)
		}
		rows = append(rows, []types.Value{types.NewString(c.Name), types.NewString(c.Type.String()),
			types.NewBool(c.Nullable), def, types.NewBool(t.IsKey(c.ID)), group})
	}
	return rowsResult(cols, rows), nil
}

// systemColumns returns the columns of a system relation (system.commits,
// pg_catalog.pg_class) as a query of it returns them.
func (st *statement) systemColumns(name *ast.ObjectName) ([]Column, error) {
	sel := &ast.SelectStmt{Span: name.Span, Body: &ast.SelectBlock{Span: name.Span,
		Items: []*ast.SelectItem{{Span: name.Span, Expr: &ast.StarExpr{Span: name.Span}}},
		From:  []ast.TableExpr{&ast.TableRef{Span: name.Span, Name: name}}},
		Limit: &ast.NumberLit{Span: name.Span, Text: "0"}}
	cols, _, err := st.rows(sel)
	return cols, err
}

func (st *statement) showCreate(n *ast.ShowCreateTableStmt) (*Result, error) {
	defer st.release()
	if sch := n.Table.Schema; sch != "" && sch != "public" {
		if _, err := st.systemColumns(n.Table); err != nil {
			return nil, err
		}
		return nil, sqlerr.New("42809", "%s.%s is a system relation, which no CREATE TABLE makes", sch, n.Table.Name).
			WithPos(n.Table.Pos()).WithHint("DESCRIBE %s.%s lists its columns", sch, n.Table.Name)
	}
	if v, ok := st.lookupView(n.Table); ok {
		return rowsResult([]Column{{"table", strType}, {"create_table", strType}},
			[][]types.Value{{types.NewString(v.Name), types.NewString(CreateViewSQL(v))}}), nil
	}
	t, err := st.lookupTable(n.Table)
	if err != nil {
		return nil, err
	}
	text := CreateTableSQL(t)
	return rowsResult([]Column{{"table", strType}, {"create_table", strType}},
		[][]types.Value{{types.NewString(t.Name), types.NewString(text)}}), nil
}

func names(t *catalog.Table, ids []catalog.ColumnID) string {
	parts := t.Names(ids)
	for i, p := range parts {
		parts[i] = ast.FormatIdent(p)
	}
	return strings.Join(parts, ", ")
}

// CreateTableSQL returns a CREATE TABLE statement that creates a table
// with t's current definition: columns (type, nullability, DEFAULT as
// written, named codecs), key, attribute groups and their ordering, mode,
// layout and non-default policies. Ids and commits are not part of a
// definition, and dropped columns are gone.
func CreateTableSQL(t *catalog.Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(ast.FormatIdent(t.Name))
	b.WriteString(" (\n")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  ")
		b.WriteString(ast.FormatIdent(c.Name))
		b.WriteByte(' ')
		b.WriteString(c.Type.String())
		if c.Nullable {
			b.WriteString(" NULL")
		} else {
			b.WriteString(" NOT NULL")
		}
		if c.Default != nil {
			b.WriteString(" DEFAULT ")
			if c.Default.SQL != "" {
				b.WriteString(c.Default.SQL)
			} else if c.Default.Null {
				b.WriteString("NULL")
			} else {
				b.WriteString(ast.FormatString(c.Default.Value))
			}
		}
		if c.CodecNamed {
			b.WriteString(" CODEC(" + c.Codec + ")")
		}
	}
	if len(t.Key) > 0 {
		b.WriteString(",\n  PRIMARY KEY (" + names(t, t.Key) + ")")
	}
	var dflt *catalog.Group
	for _, g := range t.Groups {
		if g.ID == catalog.DefaultGroup {
			dflt = g
			continue
		}
		b.WriteString(",\n  ATTRIBUTE GROUP " + ast.FormatIdent(g.Name) + " (" + names(t, g.Columns) + ")")
		orderingSQL(&b, t, g)
	}
	b.WriteString(")\nMODE " + strings.ToUpper(t.Mode.String()))
	if dflt != nil {
		orderingSQL(&b, t, dflt)
	}
	switch {
	case len(t.ShardBy) > 0:
		b.WriteString("\nSHARD BY (" + names(t, t.ShardBy) + ")")
		shardsSQL(&b, t)
	case t.ShardsAuto || t.Shards > 1:
		shardsSQL(&b, t)
	}
	if len(t.OrderBy) > 0 && !sameIDs(t.OrderBy, t.Key) {
		b.WriteString("\nORDER BY (" + names(t, t.OrderBy) + ")")
	}
	var pols []string
	for _, r := range catalog.Roles() {
		if p := t.Policies.Of(r); p != catalog.DefaultPolicyName {
			pols = append(pols, ast.FormatIdent(p))
		}
	}
	if len(pols) > 0 {
		b.WriteString("\nPOLICY " + strings.Join(pols, ", "))
	}
	return b.String()
}

func orderingSQL(b *strings.Builder, t *catalog.Table, g *catalog.Group) {
	if len(g.ValidBy) > 0 {
		b.WriteString(" VALID BY (" + names(t, g.ValidBy) + ")")
	}
	if len(g.RevisionBy) > 0 {
		b.WriteString(" REVISION BY (" + names(t, g.RevisionBy) + ")")
	}
}

func shardsSQL(b *strings.Builder, t *catalog.Table) {
	if t.ShardsAuto {
		b.WriteString(" SHARDS AUTO")
		return
	}
	b.WriteString(" SHARDS ")
	b.WriteString(itoa(t.Shards))
}

func itoa(n int) string {
	return string(types.AppendText(nil, types.NewInt64(int64(n))))
}

func sameIDs(a, b []catalog.ColumnID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
