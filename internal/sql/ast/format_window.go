package ast

// over prints a window call's OVER clause.
func (p *printer) over(w *WindowSpec) {
	p.str(" OVER ")
	if w.Name != "" {
		p.ident(w.Name)
		return
	}
	p.str("(")
	p.windowSpec(w)
	p.str(")")
}

// windowDefs prints a SELECT block's WINDOW clause.
func (p *printer) windowDefs(defs []*WindowDef) {
	if len(defs) == 0 {
		return
	}
	p.clause(" ", "WINDOW ")
	for i, d := range defs {
		if i > 0 {
			p.str(", ")
		}
		p.ident(d.Name.Name)
		p.str(" AS (")
		p.windowSpec(d.Spec)
		p.str(")")
	}
}

// windowSpec prints the inside of a window specification's parentheses.
func (p *printer) windowSpec(w *WindowSpec) {
	sep := ""
	if w.Ref != "" {
		p.ident(w.Ref)
		sep = " "
	}
	if len(w.PartitionBy) > 0 {
		p.str(sep + "PARTITION BY ")
		p.exprs(w.PartitionBy)
		sep = " "
	}
	if len(w.OrderBy) > 0 {
		p.str(sep + "ORDER BY ")
		for i, o := range w.OrderBy {
			if i > 0 {
				p.str(", ")
			}
			p.orderItem(o)
		}
		sep = " "
	}
	if f := w.Frame; f != nil {
		p.str(sep + [...]string{"RANGE ", "ROWS ", "GROUPS "}[f.Mode])
		if f.End != nil {
			p.str("BETWEEN ")
			p.frameBound(f.Start)
			p.str(" AND ")
			p.frameBound(f.End)
		} else {
			p.frameBound(f.Start)
		}
		if f.ExcludeSet {
			p.str([...]string{" EXCLUDE NO OTHERS", " EXCLUDE CURRENT ROW", " EXCLUDE GROUP", " EXCLUDE TIES"}[f.Exclude])
		}
	}
}

func (p *printer) frameBound(b *FrameBound) {
	switch b.Kind {
	case UnboundedPreceding:
		p.str("UNBOUNDED PRECEDING")
	case OffsetPreceding:
		p.expr(b.Offset, 0)
		p.str(" PRECEDING")
	case CurrentRow:
		p.str("CURRENT ROW")
	case OffsetFollowing:
		p.expr(b.Offset, 0)
		p.str(" FOLLOWING")
	case UnboundedFollowing:
		p.str("UNBOUNDED FOLLOWING")
	}
}

// inspectWindow visits the expressions of a window specification.
func inspectWindow(w *WindowSpec, f func(Node) bool) {
	if w == nil {
		return
	}
	for _, e := range w.PartitionBy {
		Inspect(e, f)
	}
	for _, o := range w.OrderBy {
		Inspect(o, f)
	}
	if fr := w.Frame; fr != nil {
		if fr.Start != nil {
			Inspect(fr.Start.Offset, f)
		}
		if fr.End != nil {
			Inspect(fr.End.Offset, f)
		}
	}
}
