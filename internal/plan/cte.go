package plan

import (
	"slices"
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/types"
)

// CTE is a WITH query computed once for the statement (PostgreSQL's
// materialized CTE): exec runs Root the first time one of its CTEScan
// nodes starts, keeps the rows (counted against the memory limit), and
// every CTEScan reads them. Root is optimized on its own, as a subquery's
// plan is, and reads no column of an enclosing query.
type CTE struct {
	Name string
	Root Node
	// AsOf is the commit the definition was bound at (0: the statement's
	// snapshot): a reference with an AS OF of its own reads a
	// materialization of its own, since AS OF reaches into the definition
	// (R6.2).
	AsOf uint64
}

// CTEScan reads the rows of a materialized WITH query: Cols are this
// reference's columns, one per column of CTE.Root, in order.
type CTEScan struct {
	CTE   *CTE
	Alias string
	Cols  []ColRef
}

// Output implements Node.
func (n *CTEScan) Output() []ColRef { return n.Cols }

// Inputs implements Node: none; the definition is not part of the tree of
// any one reference (Explain shows it once, above them).
func (n *CTEScan) Inputs() []Node { return nil }

// cteDef is the EXPLAIN line of a materialized WITH query, "CTE name",
// with its plan below it.
type cteDef struct{ c *CTE }

func (n *cteDef) Output() []ColRef { return n.c.Root.Output() }
func (n *cteDef) Inputs() []Node   { return []Node{n.c.Root} }

func describeCTEScan(n *CTEScan) string {
	var sb strings.Builder
	sb.WriteString("CTE Scan " + n.CTE.Name)
	if n.Alias != "" && n.Alias != n.CTE.Name {
		sb.WriteString(" AS " + n.Alias)
	}
	sb.WriteString(" columns=[" + strings.Join(colNames(n.Cols), ", ") + "]")
	return sb.String()
}

// ctesOf lists the materialized WITH queries the tree rooted at n reads,
// each once, a definition before the ones that read it... in the order
// PostgreSQL's EXPLAIN lists them: by first reference, those a definition
// reads after it.
func ctesOf(n Node) []*CTE {
	var out []*CTE
	seen := map[*CTE]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if s, ok := n.(*CTEScan); ok && !seen[s.CTE] {
			seen[s.CTE] = true
			out = append(out, s.CTE)
			walk(s.CTE.Root)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(n)
	return out
}

// matKey names one materialization: a definition as bound at one AS OF.
type matKey struct {
	def    *ast.CTE
	commit uint64
}

// materialized is a WITH query bound once for the statement.
type materialized struct {
	node  *CTE
	names []string
}

// countRefs counts the references to WITH definition def in the query
// that declares it (scope: the SelectStmt, or the statement whose WITH
// it is, with that WITH as extra): FROM items that name it, outside its
// own definition. A nested query whose WITH defines the same name hides
// it, and its references are not counted (they may also read ours through
// the nested WITH's earlier definitions; those are then missed, which only
// leaves the definition inlined, as before materialization existed).
func countRefs(def *ast.CTE, scope, extra ast.Node) int {
	name := def.Name.Name
	n := 0
	for _, s := range [2]ast.Node{scope, extra} {
		if s == nil || s == ast.Node((*ast.With)(nil)) {
			continue
		}
		ast.Inspect(s, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.CTE:
				return x != def
			case *ast.SelectStmt:
				if x.With != nil && s != ast.Node(x) {
					for _, c := range x.With.CTEs {
						if c.Name.Name == name {
							return false
						}
					}
				}
			case *ast.TableRef:
				if x.Name.Schema == "" && x.Name.Name == name {
					n++
				}
			}
			return true
		})
	}
	return n
}

// readsWork reports whether the tree rooted at n reads the work table of
// a WITH RECURSIVE query outside it: a definition bound inside a
// recursive term that reads the term's rows changes every round and
// cannot be computed once. (A recursive definition's own work table is
// its own business.)
func readsWork(n Node) bool {
	own := map[*Recursive]bool{}
	var walk func(n Node) bool
	walk = func(n Node) bool {
		switch x := n.(type) {
		case *Recursive:
			own[x] = true
		case *WorkTable:
			if !own[x.Rec] {
				return true
			}
		}
		for _, in := range n.Inputs() {
			if walk(in) {
				return true
			}
		}
		return false
	}
	return walk(n)
}

// cteRef binds a reference to the WITH definition def, declared in env,
// from the FROM clause whose scope is sc, at the AS OF inh. As in
// PostgreSQL, a definition is computed once for the statement when it is
// written AS MATERIALIZED, referenced more than once, or calls a volatile
// function (random(), set_config()); a recursive one referenced more than
// once too. Otherwise, or when written AS NOT MATERIALIZED, it is inlined:
// bound afresh at the reference, so filters reach into it. A definition
// that reads a column of the query around its WITH (a WITH inside a
// correlated subquery) is always inlined: its rows depend on the outer
// row.
func (b *binder) cteRef(def *ast.CTE, env *cteEnv, sc *scope, inh *asOf, alias string) (Node, []string, error) {
	recursive := env.recursive && readsItself(def)
	bind := func(outer *scope) (Node, []string, error) {
		if recursive {
			return b.bindRecursive(def, env, outer, inh)
		}
		return b.queryAsOf(def.Query, outer, env.parentOf(def), inh)
	}
	outer := env.outerFor(sc)
	if def.Materialized == ast.MaterializeNever && !recursive {
		return bind(outer)
	}
	key := matKey{def: def}
	if inh != nil {
		key.commit = inh.commit
	}
	if m := b.mats[key]; m != nil {
		return b.cteScan(m, alias), slices.Clone(m.names), nil
	}
	vol := b.volatiles
	n, names, err := bind(nil)
	if err != nil {
		if outer == nil {
			return nil, nil, err
		}
		// It may read the outer query's columns: bound where it is
		// referenced, as before (and any error is reported from there).
		return bind(outer)
	}
	if def.Materialized != ast.MaterializeAlways && env.refs <= 1 && b.volatiles == vol || readsWork(n) {
		return n, names, nil
	}
	out := n.Output()
	ts := make([]types.Type, len(out))
	for i, c := range out {
		ts[i] = c.T
		if ts[i].Kind == types.Unknown {
			// An untyped literal's column is text, as in PostgreSQL.
			ts[i] = types.Of(types.String)
		}
	}
	names = slices.Clone(names)
	for i, c := range def.Columns {
		if i < len(names) {
			names[i] = c.Name
		}
	}
	m := &materialized{node: &CTE{Name: def.Name.Name, Root: optimize(b.castOutputs(n, ts), b.env), AsOf: key.commit}, names: names}
	if b.mats == nil {
		b.mats = map[matKey]*materialized{}
	}
	b.mats[key] = m
	return b.cteScan(m, alias), slices.Clone(names), nil
}

// cteScan is one reference to a materialized WITH query: fresh column
// ids, the definition's names and types.
func (b *binder) cteScan(m *materialized, alias string) *CTEScan {
	s := &CTEScan{CTE: m.node, Alias: alias}
	for i, c := range m.node.Root.Output() {
		s.Cols = append(s.Cols, b.newCol(m.names[i], c.T))
	}
	return s
}
