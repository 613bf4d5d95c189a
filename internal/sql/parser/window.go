package parser

import (
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
)

// codeWindowing is PostgreSQL's windowing_error, which it raises from its
// grammar for frames whose bounds are out of order.
const codeWindowing = "42P20"

// Window syntax. OVER, PARTITION, RANGE, GROUPS, PRECEDING, FOLLOWING,
// UNBOUNDED, EXCLUDE, TIES, OTHERS and NO are no keywords of ours (as in
// PostgreSQL, none of them is reserved), so they are matched as words
// where they can appear; only WINDOW is a reserved keyword.

// atOver reports whether the current token starts an OVER clause after a
// function call: the word over followed by "(" or a window name, where no
// alias can be (an alias "over" is followed by neither).
func (p *parser) atOver() bool {
	if !p.wordIs("over") {
		return false
	}
	t := p.peek(1)
	return t == token.LPAREN || t == token.IDENT || t.IsKeyword() && !t.IsReserved()
}

// over parses OVER (spec) or OVER name; the current token is OVER.
func (p *parser) over() *ast.WindowSpec {
	p.next()
	// The spec starts after OVER, at its name or "(", where PostgreSQL
	// places its errors.
	start := p.pos
	if p.tok != token.LPAREN {
		id := p.ident("a window name")
		return &ast.WindowSpec{Span: p.span(start), Name: id.Name}
	}
	p.next()
	w := p.windowSpec(start)
	p.expect(token.RPAREN)
	w.Span = p.span(start)
	return w
}

// windowClause parses WINDOW name AS (spec) [, …]; the current token is
// WINDOW.
func (p *parser) windowClause() []*ast.WindowDef {
	p.expect(token.WINDOW)
	var defs []*ast.WindowDef
	for {
		start := p.pos
		d := &ast.WindowDef{Name: p.ident("a window name")}
		p.expect(token.AS)
		sstart := p.expect(token.LPAREN)
		d.Spec = p.windowSpec(sstart)
		p.expect(token.RPAREN)
		d.Spec.Span = p.span(sstart)
		d.Span = p.span(start)
		defs = append(defs, d)
		if !p.got(token.COMMA) {
			return defs
		}
	}
}

// atFrameMode reports whether the current token is RANGE, ROWS or GROUPS.
func (p *parser) atFrameMode() bool {
	return p.tok == token.ROWS || p.wordIs("range") || p.wordIs("groups")
}

// windowSpec parses [existing name] [PARTITION BY …] [ORDER BY …] [frame]
// up to the closing parenthesis, which it leaves.
func (p *parser) windowSpec(start int) *ast.WindowSpec {
	p.enter()
	defer p.leave()
	w := &ast.WindowSpec{}
	if p.isIdent() && !p.atFrameMode() && !(p.wordIs("partition") && p.peek(1) == token.BY) {
		w.Ref = p.ident("a window name").Name
	}
	if p.wordIs("partition") {
		p.next()
		p.expect(token.BY)
		w.PartitionBy = p.exprList()
	}
	if p.tok == token.ORDER {
		p.next()
		p.expect(token.BY)
		w.OrderBy = p.orderItems()
	}
	if p.atFrameMode() {
		w.Frame = p.frame()
	}
	if p.tok != token.RPAREN {
		p.errorExpected(`PARTITION BY, ORDER BY, ROWS, RANGE, GROUPS or ")" in a window specification`)
	}
	w.Span = p.span(start)
	return w
}

// frame parses ROWS|RANGE|GROUPS bound, or … BETWEEN bound AND bound,
// and an optional EXCLUDE.
func (p *parser) frame() *ast.WindowFrame {
	start := p.pos
	f := &ast.WindowFrame{}
	switch {
	case p.tok == token.ROWS:
		f.Mode = ast.FrameRows
	case p.wordIs("groups"):
		f.Mode = ast.FrameGroups
	default:
		f.Mode = ast.FrameRange
	}
	p.next()
	if p.got(token.BETWEEN) {
		f.Start = p.frameBound()
		p.expect(token.AND)
		f.End = p.frameBound()
	} else {
		f.Start = p.frameBound()
	}
	p.checkFrame(f)
	if p.wordIs("exclude") {
		p.next()
		f.ExcludeSet = true
		switch {
		case p.tok == token.CURRENT:
			p.next()
			p.expect(token.ROW)
			f.Exclude = ast.ExcludeCurrentRow
		case p.tok == token.GROUP:
			p.next()
			f.Exclude = ast.ExcludeGroup
		case p.wordIs("ties"):
			p.next()
			f.Exclude = ast.ExcludeTies
		case p.wordIs("no"):
			p.next()
			if !p.wordIs("others") {
				p.errorExpected("OTHERS after EXCLUDE NO")
			}
			p.next()
			f.Exclude = ast.ExcludeNoOthers
		default:
			p.errorExpected("CURRENT ROW, GROUP, TIES or NO OTHERS after EXCLUDE")
		}
	}
	f.Span = p.span(start)
	return f
}

// frameBound parses UNBOUNDED PRECEDING|FOLLOWING, CURRENT ROW, or
// offset PRECEDING|FOLLOWING.
func (p *parser) frameBound() *ast.FrameBound {
	start := p.pos
	b := &ast.FrameBound{}
	switch {
	case p.wordIs("unbounded") && (p.peek(1) == token.IDENT):
		p.next()
		switch {
		case p.wordIs("preceding"):
			b.Kind = ast.UnboundedPreceding
		case p.wordIs("following"):
			b.Kind = ast.UnboundedFollowing
		default:
			p.errorExpected("PRECEDING or FOLLOWING after UNBOUNDED")
		}
		p.next()
	case p.tok == token.CURRENT:
		p.next()
		p.expect(token.ROW)
		b.Kind = ast.CurrentRow
	default:
		b.Offset = p.expr()
		switch {
		case p.wordIs("preceding"):
			b.Kind = ast.OffsetPreceding
		case p.wordIs("following"):
			b.Kind = ast.OffsetFollowing
		default:
			p.errorExpected("PRECEDING or FOLLOWING")
		}
		p.next()
	}
	b.Span = p.span(start)
	return b
}

// checkFrame refuses the bound orders PostgreSQL's grammar refuses, with
// its messages: a frame may not start after it ends.
func (p *parser) checkFrame(f *ast.WindowFrame) {
	fail := func(b *ast.FrameBound, msg string) {
		p.fail(sqlerr.New(codeWindowing, "%s", msg).WithPos(b.Pos()))
	}
	s := f.Start
	if s.Kind == ast.UnboundedFollowing {
		fail(s, "frame start cannot be UNBOUNDED FOLLOWING")
	}
	if f.End == nil {
		if s.Kind == ast.OffsetFollowing {
			fail(s, "frame starting from following row cannot end with current row")
		}
		return
	}
	e := f.End
	switch {
	case e.Kind == ast.UnboundedPreceding:
		fail(e, "frame end cannot be UNBOUNDED PRECEDING")
	case s.Kind == ast.CurrentRow && e.Kind == ast.OffsetPreceding:
		fail(e, "frame starting from current row cannot have preceding rows")
	case s.Kind == ast.OffsetFollowing && (e.Kind == ast.OffsetPreceding || e.Kind == ast.CurrentRow):
		fail(e, "frame starting from following row cannot have preceding rows")
	}
}
