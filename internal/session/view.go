package session

import (
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// viewSpec binds a CREATE VIEW's query on the statement's snapshot, which
// checks it as a SELECT would be checked, and turns it into the catalog's
// spec: the output columns (renamed by the column list) and what the query
// reads. The query is stored as the printer writes it, which parses back
// to the same tree.
func (st *statement) viewSpec(n *ast.CreateViewStmt) (catalog.ViewSpec, error) {
	if n.Name.Schema != "" && n.Name.Schema != "public" {
		return catalog.ViewSpec{}, sqlerr.New("3F000", "schema %q does not exist: views live in public", n.Name.Schema).WithPos(n.Name.Pos())
	}
	p, deps, err := plan.BuildView(n.Query, planEnv(st.env()))
	if err != nil {
		return catalog.ViewSpec{}, err
	}
	cols := p.Columns()
	if len(n.Columns) > len(cols) {
		return catalog.ViewSpec{}, sqlerr.New(sqlerr.CodeSyntax, "CREATE VIEW specifies more column names than columns").WithPos(n.Columns[len(cols)].Pos())
	}
	spec := catalog.ViewSpec{Name: n.Name.Name, Select: ast.Format(n.Query), OrReplace: n.OrReplace, Views: deps.Views, Reads: deps.Reads}
	for i, c := range cols {
		name, t := c.Name, c.Type
		if i < len(n.Columns) {
			name = n.Columns[i].Name
		}
		if t.Kind == types.Unknown {
			// An untyped NULL or literal: PostgreSQL makes such a view
			// column text.
			t = types.Of(types.String)
		}
		spec.Columns = append(spec.Columns, name)
		spec.Types = append(spec.Types, t)
	}
	for _, t := range deps.Tables {
		spec.Sources = append(spec.Sources, t.Name)
	}
	return spec, nil
}
