package plan

import (
	"errors"
	"strings"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
)

// LATERAL reuses the correlated subquery machinery: a LATERAL subquery (or
// a function in FROM whose arguments read an earlier FROM item) is bound
// as a subquery whose enclosing scope is the FROM items before it, so its
// references to them become Outer slots; the Lateral node runs that plan
// once per distinct tuple of those values over its left input's rows (the
// cache expr.Subquery keeps) and joins each left row with the rows it
// returned.

// Lateral joins each row of L with the rows Sub returns for it. Corr are
// the expressions over L's row (and the enclosing query's Outer values)
// that fill Sub's Outer slots; Cols are Sub's output as this query sees it.
// Kind is JoinInner or JoinLeft (a left row no Sub row matches on Cond is
// kept once, with NULLs).
type Lateral struct {
	Kind JoinKind
	L    Node
	Sub  *Plan
	Corr []expr.Expr
	Cols []ColRef
	Cond expr.Expr
	// Volatile marks a Sub that calls a function with an effect
	// (set_config): it runs for every left row, as PostgreSQL runs it,
	// instead of once per distinct tuple of Corr.
	Volatile bool
}

// Output implements Node. Before from or join gives it its left input
// (while the item is bound) it is the item's own columns.
func (n *Lateral) Output() []ColRef {
	if n.L == nil {
		return n.Cols
	}
	return append(append(make([]ColRef, 0, len(n.Cols)+8), n.L.Output()...), n.Cols...)
}

// Inputs implements Node: L, and Sub's tree so that EXPLAIN shows it
// (exec runs Sub per left row, not as a stream).
func (n *Lateral) Inputs() []Node { return []Node{n.L, n.Sub.Root} }

func (n *Lateral) String() string {
	corr := make([]string, len(n.Corr))
	for i, c := range n.Corr {
		corr[i] = c.String()
	}
	s := "Lateral " + n.Kind.String() + " per=[" + strings.Join(corr, ", ") + "]"
	if n.Cond != nil {
		s += " filter=" + n.Cond.String()
	}
	if n.Volatile {
		s += " volatile"
	}
	return s
}

// lateralScope is the scope a LATERAL item binds in: the FROM items
// before it (rels) seen as an enclosing query of the item, whose own
// enclosing query is still sc's.
func lateralScope(sc *scope, rels []*rel) *scope {
	return &scope{rels: rels, parent: sc.parent, corr: sc.corr, ctes: sc.ctes}
}

// lateralQuery binds a LATERAL (query). When it reads nothing of the items
// before it (nor of an enclosing query), it is an ordinary derived table.
func (b *binder) lateralQuery(x *ast.DerivedTable, sc *scope, inh *asOf) (Node, []string, error) {
	cl := &corrList{}
	vol := b.volatiles
	b.corrStack = append(b.corrStack, cl)
	n, names, err := b.queryAsOf(x.Query, lateralScope(sc, b.lateralRels), sc.ctes, inh)
	b.corrStack = b.corrStack[:len(b.corrStack)-1]
	if err != nil {
		return nil, nil, err
	}
	if len(cl.exprs) == 0 {
		return n, names, nil
	}
	return b.lateralNode(n, cl.exprs, b.volatiles > vol), names, nil
}

// lateralNode wraps the bound item n, which reads corr through its Outer
// slots, in a Lateral whose left input from or join sets.
func (b *binder) lateralNode(n Node, corr []expr.Expr, volatile bool) *Lateral {
	n = optimize(n, b.env)
	return &Lateral{Kind: JoinInner, Sub: &Plan{Root: n, Outer: len(corr)}, Corr: corr, Cols: n.Output(), Volatile: volatile}
}

// attachLateral makes n, when it is a Lateral not yet joined, the join of
// left with it; ok is false for any other n.
func attachLateral(n, left Node, kind JoinKind) (*Lateral, bool) {
	l, ok := n.(*Lateral)
	if !ok || l.L != nil {
		return nil, false
	}
	if left == nil {
		left = &Values{Rows: [][]expr.Expr{{}}}
	}
	l.L, l.Kind = left, kind
	return l, true
}

// lateralHint turns "missing FROM-clause entry" / "column does not exist"
// from a subquery in FROM without LATERAL into PostgreSQL's error when the
// name is one of the other FROM items of its query.
func lateralHint(err error, sc *scope) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.CodeUndefinedTable && se.Code != sqlerr.CodeUndefinedColumn || se.Token == "" {
		return err
	}
	for _, r := range sc.rels {
		if se.Code == sqlerr.CodeUndefinedTable && r.name == se.Token {
			return sqlerr.New(sqlerr.CodeUndefinedTable, "invalid reference to FROM-clause entry for table %q", se.Token).
				WithPos(se.Pos).WithToken(se.Token).
				WithHint("There is an entry for table %q, but it cannot be referenced from this part of the query.", se.Token)
		}
		for _, c := range r.cols {
			if se.Code == sqlerr.CodeUndefinedColumn && c.name == se.Token && !c.hidden && r.name != "" {
				return sqlerr.New(sqlerr.CodeUndefinedColumn, "column %q does not exist", se.Token).
					WithPos(se.Pos).WithToken(se.Token).
					WithHint("There is a column named %q in table %q, but it cannot be referenced from this part of the query.", se.Token, r.name)
			}
		}
	}
	return err
}

// fromState is where binding a FROM list stands: the node of the items
// before the current one (nil once a JOIN LATERAL has taken it), the
// scope and the index in its rels where the current item starts, and
// whether the current item took the node.
type fromState struct {
	node  Node
	sc    *scope
	start int
	taken bool
}

// takesFromItems reports whether the LATERAL join lat, in the join that
// starts at rels[start] of sc, reads a column its left side does not have:
// one of the FROM items before the join, which it must then join.
func (b *binder) takesFromItems(lat *Lateral, outer fromState, sc *scope, start int) bool {
	if outer.node == nil || outer.sc != sc || outer.start != start {
		return false
	}
	missing := false
	for _, c := range lat.Corr {
		expr.ColumnIDs(c, func(id int) {
			if !produces(lat.L, id) {
				missing = true
			}
		})
	}
	return missing
}
