package ast

import "strings"

// selectStmt prints a query on one line, also when it is nested in one
// printed clause by clause.
func (p *printer) selectStmt(s *SelectStmt) {
	lines := p.lines
	p.lines = false
	p.query(s)
	p.lines = lines
}

// query prints s, clause by clause when p.lines is set.
func (p *printer) query(s *SelectStmt) {
	if p.lines {
		p.str(" ")
		lines := p.lines
		p.lines = false
		p.with(s.With)
		p.lines = lines
		if s.With != nil {
			p.str("\n")
		}
	} else if s.With != nil {
		p.with(s.With)
		p.str(" ")
	}
	p.body(s.Body, 0)
	if len(s.OrderBy) > 0 {
		p.clause("  ", "ORDER BY ")
		p.orderItems(s.OrderBy)
	}
	if s.AsOf != nil {
		p.clause("  ", "")
		p.asOf(s.AsOf)
	}
	if s.Limit != nil {
		p.clause(" ", "LIMIT ")
		p.expr(s.Limit, 0)
	}
	if s.Offset != nil {
		p.clause(" ", "OFFSET ")
		p.expr(s.Offset, 0)
	}
	for _, l := range s.Locking {
		p.clause(" ", l.String())
		for i, n := range l.Of {
			if i == 0 {
				p.str(" OF ")
			} else {
				p.str(", ")
			}
			p.objectName(n)
		}
		switch l.Wait {
		case LockNoWait:
			p.str(" NOWAIT")
		case LockSkipLocked:
			p.str(" SKIP LOCKED")
		}
	}
}

func (p *printer) orderItems(list []*OrderItem) {
	for i, o := range list {
		if i > 0 {
			p.str(", ")
		}
		p.orderItem(o)
	}
}

func (p *printer) orderItem(o *OrderItem) {
	p.expr(o.Expr, 0)
	if o.Desc {
		p.str(" DESC")
	}
	switch o.Nulls {
	case NullsFirst:
		p.str(" NULLS FIRST")
	case NullsLast:
		p.str(" NULLS LAST")
	}
}

// setOpPrec is how tightly a query body binds: INTERSECT over UNION and
// EXCEPT, anything else is an operand.
func setOpPrec(b QueryBody) int {
	if s, ok := b.(*SetOp); ok {
		if s.Op == Intersect {
			return 2
		}
		return 1
	}
	return 3
}

// body prints a query body, parenthesised if it binds looser than min.
func (p *printer) body(b QueryBody, min int) {
	if setOpPrec(b) < min {
		p.str("(")
		p.body(b, 0)
		p.str(")")
		return
	}
	switch b := b.(type) {
	case *SelectBlock:
		p.selectBlock(b)
	case *SetOp:
		prec := setOpPrec(b)
		p.body(b.Left, prec)
		op := [...]string{Union: "UNION", Intersect: "INTERSECT", Except: "EXCEPT"}[b.Op]
		if b.All {
			op += " ALL"
		}
		if p.lines {
			p.str("\n" + op + "\n")
		} else {
			p.str(" " + op + " ")
		}
		p.body(b.Right, prec+1)
	case *Values:
		p.str("VALUES ")
		for i, r := range b.AllRows() {
			if i > 0 {
				p.str(", ")
			}
			p.str("(")
			p.exprs(r.Items)
			p.str(")")
		}
	case *ParenSelect:
		p.str("(")
		p.selectStmt(b.Select)
		p.str(")")
	}
}

func (p *printer) selectBlock(s *SelectBlock) {
	if p.lines && p.b.Len() > 0 && !strings.HasSuffix(p.b.String(), " ") {
		p.str(" ")
	}
	p.str("SELECT ")
	if s.Distinct {
		p.str("DISTINCT ")
	}
	if len(s.DistinctOn) > 0 {
		p.str("ON (")
		p.exprs(s.DistinctOn)
		p.str(") ")
	}
	for i, it := range s.Items {
		if i > 0 {
			p.str(",")
			p.clause("    ", "")
		}
		p.selectItem(it)
	}
	if len(s.From) > 0 {
		p.clause("   ", "FROM ")
		for i, t := range s.From {
			if i > 0 {
				p.str(", ")
			}
			p.table(t)
		}
	}
	if s.Where != nil {
		p.clause("  ", "WHERE ")
		p.expr(s.Where, 0)
	}
	if len(s.GroupBy) > 0 {
		p.clause("  ", "GROUP BY ")
		p.exprs(s.GroupBy)
	}
	if s.Having != nil {
		p.clause(" ", "HAVING ")
		p.expr(s.Having, 0)
	}
	p.windowDefs(s.Windows)
}

func (p *printer) selectItem(it *SelectItem) {
	p.expr(it.Expr, 0)
	if it.Alias != nil {
		p.str(" AS ")
		p.ident(it.Alias.Name)
	}
}

func (p *printer) alias(a *Alias) {
	if a == nil {
		return
	}
	p.str(" AS ")
	p.ident(a.Name.Name)
	if len(a.Columns) > 0 {
		p.str(" ")
		p.parenIdents(a.Columns)
	}
}

func (p *printer) tableAsOf(a *AsOf) {
	if a != nil {
		p.str(" ")
		p.asOf(a)
	}
}

func (p *printer) table(t TableExpr) {
	switch t := t.(type) {
	case *TableRef:
		p.objectName(t.Name)
		p.tableAsOf(t.AsOf)
		p.alias(t.Alias)
	case *TableFunc:
		if t.Lateral {
			p.str("LATERAL ")
		}
		p.objectName(t.Name)
		p.str("(")
		p.exprs(t.Args)
		p.str(")")
		p.tableAsOf(t.AsOf)
		p.alias(t.Alias)
	case *DerivedTable:
		if t.Lateral {
			p.str("LATERAL ")
		}
		p.str("(")
		p.selectStmt(t.Query)
		p.str(")")
		p.alias(t.Alias)
	case *ParenTable:
		p.str("(")
		p.table(t.Inner)
		p.str(")")
		p.alias(t.Alias)
	case *JoinExpr:
		p.table(t.Left)
		p.str(" ")
		if t.Natural {
			p.str("NATURAL ")
		}
		switch t.Kind {
		case JoinInner:
			p.str("JOIN ")
		case JoinLeft:
			p.str("LEFT JOIN ")
		case JoinRight:
			p.str("RIGHT JOIN ")
		case JoinFull:
			p.str("FULL JOIN ")
		case JoinCross:
			p.str("CROSS JOIN ")
		}
		// Joins associate to the left, so a parsed join's right side is
		// never a bare join (written parentheses are a ParenTable); a tree
		// built by hand that has one gets parentheses to keep its meaning.
		if _, ok := t.Right.(*JoinExpr); ok {
			p.str("(")
			p.table(t.Right)
			p.str(")")
		} else {
			p.table(t.Right)
		}
		if t.On != nil {
			p.str(" ON ")
			p.expr(t.On, 0)
		}
		if t.Using != nil {
			p.str(" USING ")
			p.parenIdents(t.Using)
		}
	}
}

// with prints WITH [RECURSIVE] definitions; nothing for nil.
func (p *printer) with(w *With) {
	if w == nil {
		return
	}
	p.str("WITH ")
	if w.Recursive {
		p.str("RECURSIVE ")
	}
	for i, c := range w.CTEs {
		if i > 0 {
			p.str(", ")
		}
		p.ident(c.Name.Name)
		if len(c.Columns) > 0 {
			p.str(" ")
			p.parenIdents(c.Columns)
		}
		switch c.Materialized {
		case MaterializeAlways:
			p.str(" AS MATERIALIZED (")
		case MaterializeNever:
			p.str(" AS NOT MATERIALIZED (")
		default:
			p.str(" AS (")
		}
		if c.Write != nil {
			p.stmt(c.Write)
		} else {
			p.selectStmt(c.Query)
		}
		p.str(")")
	}
}
