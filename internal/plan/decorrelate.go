package plan

import (
	"github.com/strata-db/strata/internal/expr"
)

// decorrelate turns WHERE (and HAVING) conjuncts EXISTS (q), NOT EXISTS (q)
// and x IN (q) whose subquery q is correlated through at least one
// equality (inner = outer) into a semi or anti hash join of the filtered
// input with q's rows, keyed on those equalities (and x = q's column for
// IN), q's other conditions on outer values becoming the join's residual
// condition: q runs once per statement instead of once per distinct outer
// value.
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
	case *Window:
		x.In = decorrelate(x.In, env)
	case *TopN:
		x.In = decorrelate(x.In, env)
	case *Limit:
		x.In = decorrelate(x.In, env)
	case *Distinct:
		x.In = decorrelate(x.In, env)
	case *Join:
		x.L, x.R = decorrelate(x.L, env), decorrelate(x.R, env)
	case *Lateral:
		x.L = decorrelate(x.L, env)
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
	var lk, rk, residual []expr.Expr
	// outerOnly reports whether every outer reference of e is a slot whose
	// value the filtered input computes, so e can be checked on the join's
	// pairs with the slots read from the input's columns.
	outerOnly := func(e expr.Expr) bool {
		ok := true
		expr.Walk(e, func(x expr.Expr) bool {
			if o, isOuter := x.(*expr.Outer); isOuter && (o.Slot >= len(s.Corr) || !covered(s.Corr[o.Slot], outer)) {
				ok = false
			}
			return ok
		})
		return ok
	}
	// split separates a filter's conjuncts into correlation equalities
	// (appended to lk/rk), other conditions on outer values (appended to
	// residual, checked on each candidate pair) and the rest; ok is false
	// when an outer reference cannot be moved to the join.
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
			if cmp, isCmp := c.(*expr.Cmp); isCmp && cmp.Op == expr.EQ && cmp.L.Type() == cmp.R.Type() {
				o, iside := cmp.L, cmp.R
				if _, isOuter := o.(*expr.Outer); !isOuter {
					o, iside = cmp.R, cmp.L
				}
				slot, isOuter := o.(*expr.Outer)
				if isOuter && !hasOuter(iside) && usesCols(iside) && covered(iside, inner) &&
					slot.Slot < len(s.Corr) && covered(s.Corr[slot.Slot], outer) {
					lk, rk = append(lk, s.Corr[slot.Slot]), append(rk, iside)
					continue
				}
			}
			if !covered(c, inner) || !outerOnly(c) {
				return nil, false
			}
			residual = append(residual, c)
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
	for i, c := range residual {
		residual[i] = substOuter(c, s.Corr)
	}
	return &Join{Kind: kind, L: in, R: r, LeftKeys: lk, RightKeys: rk, Cond: and(residual)}
}

// substOuter replaces every Outer slot of e with the enclosing query's
// expression for it, in place: a subquery condition moved onto a join
// reads the outer values from the join's left side. (Where a slot is also
// a join key the expression is shared; both are resolved against layouts
// in which the left side's columns come first, so alike.)
func substOuter(e expr.Expr, corr []expr.Expr) expr.Expr {
	if o, ok := e.(*expr.Outer); ok {
		return corr[o.Slot]
	}
	for _, k := range expr.Children(e) {
		*k = substOuter(*k, corr)
	}
	return e
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
