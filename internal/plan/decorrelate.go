package plan

import (
	"github.com/strata-db/strata/internal/expr"
)

// decorrelate turns WHERE (and HAVING) conjuncts EXISTS (q), NOT EXISTS (q)
// and x IN (q) whose subquery q is correlated only through equalities
// (inner = outer) into a semi or anti hash join of the filtered input with
// q's rows, keyed on those equalities (and x = q's column for IN): q runs
// once per statement instead of once per distinct outer value.
//
// Only a q of the shape Project over Filters over one Scan is rewritten,
// so nothing between the correlation and the scan (an aggregate, a LIMIT,
// DISTINCT) changes meaning. NOT IN stays on the subquery path: its NULL
// semantics (any NULL in q, or x NULL over a non-empty q, gives NULL) are
// not an anti join's; an uncorrelated IN or EXISTS already runs q once
// there and probes a hash set. NULL keys never match in the hash join, as
// NULL = x is never true, so NOT EXISTS keeps outer rows with NULL keys.
func decorrelate(n Node, env *Env) Node {
	switch x := n.(type) {
	case *Filter:
		x.In = decorrelate(x.In, env)
		var rest []expr.Expr
		in := x.In
		for _, c := range conjuncts(x.Cond) {
			if j := semiJoin(in, c); j != nil {
				in = j
				continue
			}
			rest = append(rest, c)
		}
		if len(rest) == 0 {
			return in
		}
		x.In, x.Cond = in, and(rest)
		return x
	case *Project:
		x.In = decorrelate(x.In, env)
	case *Aggregate:
		x.In = decorrelate(x.In, env)
	case *Sort:
		x.In = decorrelate(x.In, env)
	case *TopN:
		x.In = decorrelate(x.In, env)
	case *Limit:
		x.In = decorrelate(x.In, env)
	case *Distinct:
		x.In = decorrelate(x.In, env)
	case *Join:
		x.L, x.R = decorrelate(x.L, env), decorrelate(x.R, env)
	case *SetOp:
		x.L, x.R = decorrelate(x.L, env), decorrelate(x.R, env)
	}
	return n
}

// semiJoin returns the join of in that replaces conjunct c, or nil when c
// is not a subquery this rewrite handles.
func semiJoin(in Node, c expr.Expr) *Join {
	kind := JoinSemi
	if nt, ok := c.(*expr.Not); ok {
		c, kind = nt.X, JoinAnti
	}
	s, ok := c.(*expr.Subquery)
	if !ok {
		return nil
	}
	switch {
	case s.Kind == expr.SubExists:
	case s.Kind == expr.SubIn && !s.Not && kind == JoinSemi:
	default:
		return nil
	}
	p, ok := s.Plan.(*Plan)
	if !ok || len(s.Corr) == 0 && s.Kind == expr.SubExists {
		// An uncorrelated EXISTS is one run and a constant: leave it.
		return nil
	}
	proj, ok := p.Root.(*Project)
	if !ok {
		return nil
	}
	// The chain under the projection: Filters down to one Scan.
	var filters []*Filter
	var scan *Scan
	for node := proj.In; scan == nil; {
		switch x := node.(type) {
		case *Filter:
			filters = append(filters, x)
			node = x.In
		case *Scan:
			scan = x
		default:
			return nil
		}
	}
	inner := idsOf(scan)
	outer := idsOf(in)
	var lk, rk []expr.Expr
	// split separates a filter's conjuncts into correlation equalities
	// (appended to lk/rk) and the rest; ok is false when an outer
	// reference appears anywhere else.
	split := func(e expr.Expr) (rest []expr.Expr, ok bool) {
		if e == nil {
			return nil, true
		}
		for _, c := range conjuncts(e) {
			if hasSubquery(c) {
				if hasOuter(c) {
					return nil, false
				}
				rest = append(rest, c)
				continue
			}
			if !hasOuter(c) {
				rest = append(rest, c)
				continue
			}
			cmp, isCmp := c.(*expr.Cmp)
			if !isCmp || cmp.Op != expr.EQ || cmp.L.Type() != cmp.R.Type() {
				return nil, false
			}
			o, iside := cmp.L, cmp.R
			if _, isOuter := o.(*expr.Outer); !isOuter {
				o, iside = cmp.R, cmp.L
			}
			slot, isOuter := o.(*expr.Outer)
			if !isOuter || hasOuter(iside) || !usesCols(iside) || !covered(iside, inner) ||
				slot.Slot >= len(s.Corr) || !covered(s.Corr[slot.Slot], outer) {
				return nil, false
			}
			lk, rk = append(lk, s.Corr[slot.Slot]), append(rk, iside)
		}
		return rest, true
	}
	rests := make([][]expr.Expr, len(filters))
	for i, f := range filters {
		r, ok := split(f.Cond)
		if !ok {
			return nil
		}
		rests[i] = r
	}
	scanRest, ok := split(scan.Filter)
	if !ok {
		return nil
	}
	if s.Kind == expr.SubIn {
		xs := s.Row
		if xs == nil {
			xs = []expr.Expr{s.X}
		}
		if len(proj.Exprs) != len(xs) {
			return nil
		}
		for i, x := range xs {
			v := proj.Exprs[i]
			if hasOuter(v) || hasSubquery(v) || v.Type() != x.Type() || !covered(x, outer) {
				return nil
			}
			lk, rk = append(lk, x), append(rk, v)
		}
	}
	for _, e := range proj.Exprs {
		if s.Kind == expr.SubIn && hasOuter(e) {
			return nil
		}
	}
	if len(lk) == 0 {
		return nil
	}
	// Every check passed: now rewrite the subquery's nodes in place (they
	// belong to this subquery only).
	var r Node = scan
	scan.Filter = and(scanRest)
	for i := len(filters) - 1; i >= 0; i-- {
		if len(rests[i]) > 0 {
			r = &Filter{In: r, Cond: and(rests[i])}
		}
	}
	return &Join{Kind: kind, L: in, R: r, LeftKeys: lk, RightKeys: rk}
}

// hasOuter reports whether e reads an enclosing query's value.
func hasOuter(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		switch x := x.(type) {
		case *expr.Outer:
			found = true
		case *expr.Subquery:
			for _, c := range x.Corr {
				if hasOuter(c) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}
