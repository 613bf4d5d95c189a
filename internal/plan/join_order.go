package plan

import "github.com/strata-db/strata/internal/expr"

// orderJoins rewrites a Filter over a tree of condition-less inner joins
// (FROM a, b, c WHERE …) into a left-deep join order in which each next
// relation is connected to the ones before it by a WHERE conjunct, so that
// pushFilters turns those conjuncts into hash-join keys instead of leaving
// a cross product. Relations no conjunct connects keep their FROM order.
func orderJoins(n Node, env *Env) Node {
	switch x := n.(type) {
	case *Filter:
		x.In = orderJoins(x.In, env)
		j, ok := x.In.(*Join)
		if !ok || !crossOnly(j) {
			return x
		}
		var leaves []Node
		flattenCross(j, &leaves)
		if len(leaves) < 3 {
			return x
		}
		conds := conjuncts(x.Cond)
		set := idsOf(leaves[0])
		tree := leaves[0]
		rest := leaves[1:]
		for len(rest) > 0 {
			pick := 0
			for i, l := range rest {
				if connects(conds, set, idsOf(l)) {
					pick = i
					break
				}
			}
			l := rest[pick]
			rest = append(rest[:pick:pick], rest[pick+1:]...)
			for id := range idsOf(l) {
				set[id] = true
			}
			tree = &Join{Kind: JoinInner, L: tree, R: l}
		}
		x.In = tree
		return x
	}
	for _, in := range n.Inputs() {
		orderJoins(in, env)
	}
	return n
}

func crossOnly(j *Join) bool {
	if j.Kind != JoinInner || j.Cond != nil {
		return false
	}
	for _, s := range []Node{j.L, j.R} {
		if c, ok := s.(*Join); ok && !crossOnly(c) {
			return false
		}
	}
	return true
}

func flattenCross(n Node, out *[]Node) {
	if j, ok := n.(*Join); ok && j.Kind == JoinInner && j.Cond == nil {
		flattenCross(j.L, out)
		flattenCross(j.R, out)
		return
	}
	*out = append(*out, n)
}

// connects reports whether some conjunct reads both a column of set and a
// column of leaf, and nothing outside them.
func connects(conds []expr.Expr, set, leaf map[int]bool) bool {
	for _, c := range conds {
		inSet, inLeaf, outside := false, false, false
		expr.ColumnIDs(c, func(id int) {
			switch {
			case set[id]:
				inSet = true
			case leaf[id]:
				inLeaf = true
			default:
				outside = true
			}
		})
		if inSet && inLeaf && !outside {
			return true
		}
	}
	return false
}
