package plan

import (
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// SQLSTATEs of binder errors sqlerr does not name, as PostgreSQL reports
// them.
const (
	codeDuplicateAlias         = "42712" // duplicate_alias
	codeInvalidRecursion       = "42P19" // invalid_recursive_reference
	codeInvalidColumnReference = "42P10" // invalid_column_reference
)

// readsItself reports whether a WITH definition names itself in a FROM
// clause (a name an inner WITH redefines still counts: PostgreSQL
// resolves it the same way only when it is not shadowed, and such a query
// is refused below rather than misread).
func readsItself(def *ast.CTE) bool {
	found := false
	ast.Inspect(def.Query, func(n ast.Node) bool {
		if t, ok := n.(*ast.TableRef); ok && t.Name.Schema == "" && t.Name.Name == def.Name.Name {
			found = true
		}
		return !found
	})
	return found
}

// bindRecursive binds a WITH RECURSIVE definition that reads itself. It
// must be `non-recursive term UNION [ALL] recursive term`, as in
// PostgreSQL: the first term is bound without the definition in sight, its
// columns (renamed by the definition's column list) are the query's, and
// the second term reads the rows the round before added through a
// WorkTable; its columns are cast to the first term's types. parent is
// the scope of the query around the WITH, whose columns both terms may read.
func (b *binder) bindRecursive(def *ast.CTE, env *cteEnv, parent *scope, inh *asOf) (Node, []string, error) {
	name := def.Name.Name
	q := def.Query
	u, ok := q.Body.(*ast.SetOp)
	if !ok || u.Op != ast.Union || q.With != nil || len(q.OrderBy) > 0 || q.Limit != nil || q.Offset != nil {
		return nil, nil, sqlerr.New(codeInvalidRecursion, "recursive query %q does not have the form non-recursive-term UNION [ALL] recursive-term", name).WithPos(def.Pos()).WithToken(name)
	}
	if q.AsOf != nil {
		a, err := b.resolveAsOf(q.AsOf)
		if err != nil {
			return nil, nil, err
		}
		inh = a
	}
	b.working[def] = nil
	defer delete(b.working, def)
	init, names, err := b.body(u.Left, parent, env, inh)
	if err != nil {
		return nil, nil, err
	}
	for i, c := range def.Columns {
		if i < len(names) {
			names[i] = c.Name
		}
	}
	rec := &Recursive{Name: name, All: u.All}
	ts := make([]types.Type, len(init.Output()))
	for i, c := range init.Output() {
		ts[i] = c.T
		if ts[i].Kind == types.Unknown {
			ts[i] = types.Of(types.String)
		}
		rec.Cols = append(rec.Cols, b.newCol(names[i], ts[i]))
	}
	b.working[def] = rec
	step, _, err := b.body(u.Right, parent, env, inh)
	if err != nil {
		return nil, nil, err
	}
	so := step.Output()
	if len(so) != len(ts) {
		return nil, nil, sqlerr.New(sqlerr.CodeSyntax, "each UNION query must have the same number of columns").WithPos(u.Pos())
	}
	for i, c := range so {
		if _, ok := types.Common(ts[i], c.T); !ok {
			return nil, nil, sqlerr.New(sqlerr.CodeDatatypeMismatch, "recursive query %q column %d has type %s in non-recursive term but type %s overall", name, i+1, ts[i], c.T).WithPos(u.Pos())
		}
	}
	if !reachesWork(step, rec) {
		return nil, nil, sqlerr.New(codeInvalidRecursion, "recursive reference to query %q must be in the FROM of its recursive term, not in a subquery", name).WithPos(u.Right.Pos()).WithToken(name)
	}
	rec.Init = optimize(b.castOutputs(init, ts), b.env)
	rec.Step = optimize(b.castOutputs(step, ts), b.env)
	return rec, names, nil
}

// workTable is a reference to the recursive query rec from its recursive
// term: fresh column ids, rec's names and types.
func (b *binder) workTable(rec *Recursive) (Node, []string) {
	w := &WorkTable{Rec: rec}
	names := make([]string, len(rec.Cols))
	for i, c := range rec.Cols {
		w.Cols = append(w.Cols, b.newCol(c.Name, c.T))
		names[i] = c.Name
	}
	return w, names
}

// reachesWork reports whether n's tree (not its subqueries' plans) holds a
// WorkTable of rec: the executor feeds the work table to the recursive
// term's own operators, so a reference only inside a subquery expression
// would not see it.
func reachesWork(n Node, rec *Recursive) bool {
	if w, ok := n.(*WorkTable); ok {
		return w.Rec == rec
	}
	for _, in := range n.Inputs() {
		if reachesWork(in, rec) {
			return true
		}
	}
	return false
}
