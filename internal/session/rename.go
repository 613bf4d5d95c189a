package session

import (
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
)

// renameTableIn rewrites the stored query of a view or transformation
// (ast.Format text) for ALTER TABLE old RENAME TO nw: each reference to
// table old reads nw instead, under its old name as alias when it had
// none, so that every column the query qualifies by the table's name
// (old.x) still resolves. PostgreSQL's views follow a rename because they
// hold the table's OID; Strata's hold the query text, which this keeps
// true (R12.3: a transformation keeps running across ALTER TABLE on its
// source).
func renameTableIn(query, old, nw string) (string, error) {
	stmt, err := parser.Parse(query)
	if err != nil {
		return "", err
	}
	var fail error
	ast.Inspect(stmt, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CTE:
			if x != nil && x.Name != nil && x.Name.Name == old {
				// A WITH query of that name hides the table where it is
				// in scope; telling those references apart is not worth
				// it for a query no one writes.
				fail = fmt.Errorf("it has a WITH query named %s", old)
			}
		case *ast.TableRef:
			if x == nil || x.Name == nil || x.Name.Name != old || x.Name.Schema != "" && x.Name.Schema != "public" {
				return true
			}
			x.Name.Name, x.Name.Schema = nw, ""
			if x.Alias == nil {
				x.Alias = &ast.Alias{Name: &ast.Ident{Name: old}}
			}
		case *ast.TableFunc:
			// versions(t): the table is the first argument.
			if x != nil && x.Name != nil && strings.EqualFold(x.Name.Name, "versions") && len(x.Args) > 0 {
				if ref, ok := x.Args[0].(*ast.ColumnRef); ok && ref.Table == "" && ref.Name == old {
					ref.Name = nw
				}
			}
		}
		return fail == nil
	})
	if fail != nil {
		return "", fail
	}
	out := ast.Format(stmt)
	if _, err := parser.Parse(out); err != nil {
		return "", fmt.Errorf("the rewritten query does not parse: %w", err)
	}
	return out, nil
}
