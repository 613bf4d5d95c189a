package parser

import (
	"slices"
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
)

// selectStmt parses a query:
//
//	[WITH …] body [ORDER BY …] [AS OF …] [LIMIT …] [OFFSET …] [FETCH …]
//
// where body is SELECT blocks, VALUES or parenthesised queries joined by
// set operations.
func (p *parser) selectStmt() *ast.SelectStmt {
	p.enter()
	defer p.leave()
	outerAsOf := p.relAsOf
	p.relAsOf = -1
	defer func() { p.relAsOf = outerAsOf }()

	start := p.pos
	var w *ast.With
	if p.tok == token.WITH {
		w = p.with()
	}
	return p.selectRest(start, w)
}

// selectRest parses the rest of a query that starts at start, after its
// WITH (nil when absent).
func (p *parser) selectRest(start int, w *ast.With) *ast.SelectStmt {
	s := &ast.SelectStmt{With: w}
	s.Body = p.setOps()
	if p.tok == token.ORDER {
		p.next()
		p.expect(token.BY)
		s.OrderBy = p.orderItems()
	}
	if p.isAsOf() {
		if p.relAsOf >= 0 {
			p.fail(p.syntaxErrorWhy("AS OF may appear once per query block").
				WithDetail("a relation of this query block already has its own AS OF").
				WithHint("write AS OF after each relation, or once after the query's clauses"))
		}
		s.AsOf = p.asOf()
		if p.isAsOf() {
			p.failHere("AS OF may appear once per query block")
		}
	}
	p.limitOffset(s)
	if p.isAsOf() {
		p.failHere("AS OF must come before LIMIT and OFFSET")
	}
	s.Span = p.span(start)
	return s
}

// isAsOf reports whether the current token starts AS OF COMMIT|TIMESTAMP.
// AS OF followed by anything else is still AS OF in the trailing position;
// asOf reports what it expected.
func (p *parser) isAsOf() bool {
	return p.tok == token.AS && p.peek(1) == token.OF
}

// isRelationAsOf is isAsOf for the position after a relation, where "AS
// of" could also be an alias named of.
func (p *parser) isRelationAsOf() bool {
	if !p.isAsOf() {
		return false
	}
	t := p.peek(2)
	return t == token.COMMIT || t == token.TIMESTAMP
}

// asOf parses AS OF COMMIT expr | AS OF TIMESTAMP expr.
func (p *parser) asOf() *ast.AsOf {
	start := p.pos
	p.expect(token.AS)
	p.expect(token.OF)
	a := &ast.AsOf{}
	switch p.tok {
	case token.COMMIT:
		a.Kind = ast.AsOfCommit
	case token.TIMESTAMP:
		a.Kind = ast.AsOfTimestamp
	default:
		p.errorExpected("COMMIT or TIMESTAMP after AS OF")
	}
	p.next()
	a.Expr = p.expr()
	a.Span = p.span(start)
	return a
}

func (p *parser) limitOffset(s *ast.SelectStmt) {
	for {
		switch p.tok {
		case token.FOR:
			// PostgreSQL takes the locking clauses before or after LIMIT
			// and OFFSET.
			s.Locking = append(s.Locking, p.locking())
		case token.LIMIT:
			if s.Limit != nil {
				p.failHere("multiple LIMIT clauses")
			}
			p.next()
			if p.tok == token.ALL {
				p.next()
				continue
			}
			s.Limit = p.expr()
			if p.tok == token.COMMA {
				p.fail(p.syntaxError().WithDetail("LIMIT #,# syntax is not supported").WithHint("use separate LIMIT and OFFSET clauses"))
			}
		case token.OFFSET:
			if s.Offset != nil {
				p.failHere("multiple OFFSET clauses")
			}
			p.next()
			s.Offset = p.expr()
			if p.tok == token.ROW || p.tok == token.ROWS {
				p.next()
			}
		case token.FETCH:
			if s.Limit != nil {
				p.failHere("multiple LIMIT clauses")
			}
			start := p.pos
			p.next()
			if !p.got(token.FIRST) {
				p.expect(token.NEXT)
			}
			if p.tok == token.ROW || p.tok == token.ROWS {
				s.Limit = &ast.NumberLit{Span: ast.Span{Start: start, Stop: p.pos}, Text: "1"}
			} else {
				s.Limit = p.unaryExpr()
			}
			if !p.got(token.ROW) {
				p.expect(token.ROWS)
			}
			p.expect(token.ONLY)
		default:
			return
		}
	}
}

func (p *parser) with() *ast.With {
	start := p.pos
	p.expect(token.WITH)
	w := &ast.With{Recursive: p.got(token.RECURSIVE)}
	for {
		cstart := p.pos
		c := &ast.CTE{Name: p.ident("a common table expression name")}
		if p.tok == token.LPAREN {
			c.Columns = p.parenIdents("a column name")
		}
		p.expect(token.AS)
		switch {
		case p.wordIs("materialized"):
			p.next()
			c.Materialized = ast.MaterializeAlways
		case p.tok == token.NOT:
			p.next()
			if !p.wordIs("materialized") {
				p.errorExpected("MATERIALIZED")
			}
			p.next()
			c.Materialized = ast.MaterializeNever
		}
		p.expect(token.LPAREN)
		switch p.tok {
		case token.INSERT, token.UPSERT:
			// PostgreSQL's data-modifying WITH.
			c.Write = p.insert()
		case token.UPDATE:
			c.Write = p.update()
		case token.DELETE:
			c.Write = p.delete()
		default:
			c.Query = p.selectStmt()
		}
		p.expect(token.RPAREN)
		c.Span = p.span(cstart)
		w.CTEs = append(w.CTEs, c)
		if !p.got(token.COMMA) {
			break
		}
	}
	w.Span = p.span(start)
	return w
}

// setOps parses UNION and EXCEPT, which bind looser than INTERSECT.
func (p *parser) setOps() ast.QueryBody {
	start := p.pos
	x := p.intersectTerm()
	for p.tok == token.UNION || p.tok == token.EXCEPT {
		op := ast.Union
		if p.tok == token.EXCEPT {
			op = ast.Except
		}
		p.next()
		all := p.setQuantifier()
		y := p.intersectTerm()
		x = &ast.SetOp{Span: p.span(start), Op: op, All: all, Left: x, Right: y}
	}
	return x
}

func (p *parser) intersectTerm() ast.QueryBody {
	start := p.pos
	x := p.queryPrimary()
	for p.tok == token.INTERSECT {
		p.next()
		all := p.setQuantifier()
		y := p.queryPrimary()
		x = &ast.SetOp{Span: p.span(start), Op: ast.Intersect, All: all, Left: x, Right: y}
	}
	return x
}

// setQuantifier parses the optional ALL or DISTINCT after a set operator.
func (p *parser) setQuantifier() bool {
	if p.got(token.ALL) {
		return true
	}
	p.got(token.DISTINCT)
	return false
}

func (p *parser) queryPrimary() ast.QueryBody {
	start := p.pos
	switch p.tok {
	case token.SELECT:
		return p.selectBlock()
	case token.VALUES:
		return p.values()
	case token.LPAREN:
		p.next()
		s := p.selectStmt()
		p.expect(token.RPAREN)
		return &ast.ParenSelect{Span: p.span(start), Select: s}
	}
	p.errorExpected("SELECT, VALUES or (")
	return nil
}

// values parses VALUES (…), (…). DEFAULT is accepted as a row item; the
// binder rejects it outside INSERT.
func (p *parser) values() *ast.Values {
	start := p.pos
	p.expect(token.VALUES)
	v := &ast.Values{}
	if p.compact {
		p.compact = false
		if p.literalRows(v) {
			v.Span = p.span(start)
			return v
		}
	}
	width := 0 // rows are usually all as wide as the first
	for {
		rstart := p.expect(token.LPAREN)
		r := cut(&p.rows)
		r.Items = p.cutItems(width)
		for {
			r.Items = append(r.Items, p.valueItem())
			if !p.got(token.COMMA) {
				break
			}
		}
		p.expect(token.RPAREN)
		r.Span = p.span(rstart)
		width = len(r.Items)
		v.Rows = append(v.Rows, r)
		if !p.got(token.COMMA) {
			break
		}
	}
	v.Span = p.span(start)
	return v
}

// literalRows reads the rows of a VALUES list whose rows are all lone
// number or string literals or NULLs, of one width, into v.Lits, and
// reports true when it read the whole list. At the first row that is anything else
// (an expression, a DEFAULT, a different width, a malformed token) it
// turns the rows read so far into v.Rows, the nodes the general loop
// would have built, puts the parser back at that row's "(" and reports
// false, for the general loop to go on from there: the rows it returns
// are always exactly those, so whatever follows sees no difference but
// the form (ast.Values.AllRows).
//
// Each row is read straight from the scanner, a token at a time, with
// none of the general loop's lookahead, nodes or slabs; it is what
// valueItem's shortcut does for one item, for the whole list.
func (p *parser) literalRows(v *ast.Values) bool {
	if p.tok != token.LPAREN || len(p.ahead) > 0 {
		return false
	}
	lits := &ast.LitRows{}
	for {
		// The current token is the row's "(": keep what it takes to
		// start the row again through the general loop.
		sc, it, prev := p.sc, p.item, p.prevEnd
		n := len(lits.Cells)
		// The token after the row's last item: its ")" when the row is
		// one to keep.
		var next token.Token
		var end int
		for {
			tok, pos, stop, lit := p.sc.Scan()
			k, ok := litKind(tok)
			// The general loop reads NULL through expr, which counts a
			// level of nesting: at the limit it fails there, so it must
			// be the one to read it.
			if !ok || k == ast.LitNull && p.depth >= maxDepth {
				break
			}
			if k == ast.LitNull {
				lit = ""
			}
			lits.Cells = append(lits.Cells, ast.Lit{Span: ast.Span{Start: pos, Stop: stop}, Kind: k, Text: lit})
			next, _, end, _ = p.sc.Scan()
			if next != token.COMMA {
				break
			}
		}
		w := len(lits.Cells) - n
		if next != token.RPAREN || w == 0 || len(lits.Rows) > 0 && w != lits.Width {
			// Not a row of lone literals, or not as wide as the first:
			// the general loop takes it from its "(".
			lits.Cells = lits.Cells[:n]
			p.sc, p.item, p.prevEnd = sc, it, prev
			v.Rows = (&ast.Values{Lits: lits}).AllRows()
			if len(lits.Rows) == 0 {
				v.Rows = nil
			}
			return false
		}
		lits.Width = w
		lits.Rows = append(lits.Rows, ast.Span{Start: it.pos, Stop: end})
		// What next does past the ")".
		p.prevEnd = end
		p.item = p.scan()
		if p.tok == token.ILLEGAL {
			p.fail(p.sc.Err())
		}
		if p.tok != token.COMMA {
			if cap(lits.Cells) > 2*len(lits.Cells)+64 {
				lits.Cells = slices.Clip(lits.Cells) // the room guessed was not used
			}
			v.Lits = lits
			return true
		}
		if len(lits.Rows) == 1 {
			// A second row follows: room for as many rows as the rest of
			// the text holds at the first row's length, up to
			// maxLitRows. Grown by appends from one row, the cells of a
			// long list were copied over and over (a 1 000-row UPSERT
			// parsed in 1.2 ms instead of 0.27); the text after the list
			// (a long comment, the rest of a script) can be far longer
			// than the list, hence the cap, past which appends grow it.
			rows := min(1+(len(p.src)-end)/(end-it.pos+1), maxLitRows)
			lits.Cells = slices.Grow(lits.Cells, rows*w)
			lits.Rows = slices.Grow(lits.Rows, rows)
		}
		p.next()
		if p.tok != token.LPAREN {
			// "VALUES (…), x": the general loop reports it, from the
			// row before the comma it cannot take either way.
			p.expect(token.LPAREN)
		}
	}
}

// maxLitRows bounds the rows literalRows makes room for when a list's
// second row starts: a bulk INSERT's batch of a thousand rows gets one
// allocation, a short list in a long text no more than this.
const maxLitRows = 1024

// litKind returns the kind of compact item (ast.Lit) a token is, if it is
// one.
func litKind(tok token.Token) (ast.LitKind, bool) {
	switch tok {
	case token.NUMBER:
		return ast.LitNumber, true
	case token.STRING:
		return ast.LitString, true
	case token.NULL:
		return ast.LitNull, true
	}
	return 0, false
}

// valueItem parses an expression or DEFAULT.
func (p *parser) valueItem() ast.Expr {
	if p.tok == token.DEFAULT {
		sp := ast.Span{Start: p.pos, Stop: p.end}
		p.next()
		return &ast.DefaultExpr{Span: sp}
	}
	// Nearly every item of a long VALUES list is a lone literal: one
	// followed by a comma or the closing parenthesis is all the precedence
	// levels of expr would return, so it skips their descent.
	if (p.tok == token.NUMBER || p.tok == token.STRING) && len(p.ahead) == 0 {
		// The token after the literal is scanned here rather than through
		// peek and next, which would queue it and copy it out again: two
		// copies of a token per value of a list of millions.
		nx := p.scan()
		if nx.tok == token.COMMA || nx.tok == token.RPAREN {
			// The node primary would return, cut from a slab.
			sp := ast.Span{Start: p.pos, Stop: p.end}
			var e ast.Expr
			if p.tok == token.NUMBER {
				n := cut(&p.nums)
				n.Span, n.Text = sp, p.lit
				e = n
			} else {
				s := cut(&p.strs)
				s.Span, s.Value = sp, p.lit
				e = s
			}
			// What next does, the token already in hand (a comma or a
			// parenthesis is never ILLEGAL).
			p.prevEnd = p.end
			p.item = nx
			return e
		}
		p.ahead = append(p.ahead, nx)
	}
	return p.expr()
}

func (p *parser) selectBlock() *ast.SelectBlock {
	start := p.pos
	p.expect(token.SELECT)
	b := &ast.SelectBlock{}
	if p.got(token.DISTINCT) {
		b.Distinct = true
		if p.got(token.ON) {
			p.expect(token.LPAREN)
			b.DistinctOn = p.exprList()
			p.expect(token.RPAREN)
		}
	} else {
		p.got(token.ALL)
	}
	for {
		b.Items = append(b.Items, p.selectItem())
		if !p.got(token.COMMA) {
			break
		}
	}
	if p.got(token.FROM) {
		for {
			b.From = append(b.From, p.tableExpr())
			if !p.got(token.COMMA) {
				break
			}
		}
	}
	if p.got(token.WHERE) {
		b.Where = p.expr()
	}
	if p.tok == token.GROUP {
		p.next()
		p.expect(token.BY)
		b.GroupBy = p.groupByList()
	}
	if p.got(token.HAVING) {
		b.Having = p.expr()
	}
	if p.tok == token.WINDOW {
		b.Windows = p.windowClause()
	}
	b.Span = p.span(start)
	return b
}

func (p *parser) selectItem() *ast.SelectItem {
	start := p.pos
	it := &ast.SelectItem{}
	if p.tok == token.MUL {
		p.next()
		it.Expr = &ast.StarExpr{Span: p.span(start)}
	} else {
		it.Expr = p.expr()
	}
	switch {
	case p.tok == token.AS && !p.isRelationAsOf():
		p.next()
		it.Alias = p.label("an alias")
	case p.tok == token.IDENT:
		it.Alias = p.ident("an alias")
	}
	it.Span = p.span(start)
	return it
}

func (p *parser) orderItems() []*ast.OrderItem {
	var list []*ast.OrderItem
	for {
		start := p.pos
		o := &ast.OrderItem{Expr: p.expr()}
		if p.got(token.DESC) {
			o.Desc = true
		} else {
			p.got(token.ASC)
		}
		if p.got(token.NULLS) {
			switch p.tok {
			case token.FIRST:
				o.Nulls = ast.NullsFirst
			case token.LAST:
				o.Nulls = ast.NullsLast
			default:
				p.errorExpected("FIRST or LAST after NULLS")
			}
			p.next()
		}
		o.Span = p.span(start)
		list = append(list, o)
		if !p.got(token.COMMA) {
			return list
		}
	}
}

// tableExpr parses a relation followed by any joins, left-associatively.
func (p *parser) tableExpr() ast.TableExpr {
	start := p.pos
	x := p.tablePrimary()
	for {
		j := &ast.JoinExpr{Left: x}
		if p.got(token.NATURAL) {
			j.Natural = true
		}
		switch p.tok {
		case token.JOIN:
			j.Kind = ast.JoinInner
		case token.INNER:
			p.next()
			j.Kind = ast.JoinInner
		case token.LEFT, token.RIGHT, token.FULL:
			j.Kind = map[token.Token]ast.JoinKind{token.LEFT: ast.JoinLeft, token.RIGHT: ast.JoinRight, token.FULL: ast.JoinFull}[p.tok]
			p.next()
			p.got(token.OUTER)
		case token.CROSS:
			if j.Natural {
				p.errorExpected("JOIN, INNER, LEFT, RIGHT or FULL after NATURAL")
			}
			p.next()
			j.Kind = ast.JoinCross
		default:
			if j.Natural {
				p.errorExpected("JOIN after NATURAL")
			}
			return x
		}
		p.expect(token.JOIN)
		j.Right = p.tablePrimary()
		if j.Kind != ast.JoinCross && !j.Natural {
			switch p.tok {
			case token.ON:
				p.next()
				j.On = p.expr()
			case token.USING:
				p.next()
				j.Using = p.parenIdents("a column name")
			default:
				p.errorExpected("ON or USING")
			}
		}
		j.Span = p.span(start)
		x = j
	}
}

// tablePrimary parses one relation: a table or table function with its
// alias and AS OF in either order, a derived table, or a parenthesised
// join.
func (p *parser) tablePrimary() ast.TableExpr {
	start := p.pos
	// LATERAL is no keyword of ours: unquoted and followed by "(" or a
	// name it can only be LATERAL (a table named lateral needs quotes, as
	// in PostgreSQL, where the word is reserved).
	if p.tok == token.IDENT && p.src[p.pos] != '"' && p.lit == "lateral" {
		if t := p.peek(1); t == token.LPAREN || t == token.IDENT || t.IsKeyword() && !t.IsReserved() {
			p.next()
			switch x := p.tablePrimary().(type) {
			case *ast.DerivedTable:
				x.Lateral, x.Span = true, p.span(start)
				return x
			case *ast.TableFunc:
				x.Lateral, x.Span = true, p.span(start)
				return x
			default:
				p.failAt(x.Pos(), "LATERAL must be followed by a subquery or a function call")
			}
		}
	}
	if p.tok == token.LPAREN {
		p.enter()
		defer p.leave()
		p.next()
		if p.startsQuery() || p.parenQueryAhead() {
			q := p.selectStmt()
			p.expect(token.RPAREN)
			d := &ast.DerivedTable{Query: q, Alias: p.optAlias()}
			d.Span = p.span(start)
			return d
		}
		inner := p.tableExpr()
		p.expect(token.RPAREN)
		t := &ast.ParenTable{Inner: inner, Alias: p.optAlias()}
		t.Span = p.span(start)
		return t
	}
	name := p.objectName("a table name")
	var args []ast.Expr
	isFunc := p.tok == token.LPAREN
	if isFunc {
		p.next()
		if p.tok != token.RPAREN {
			args = p.exprList()
		}
		p.expect(token.RPAREN)
	}
	var alias *ast.Alias
	var asOf *ast.AsOf
	for {
		if p.isRelationAsOf() {
			if asOf != nil {
				p.failHere("AS OF may appear once per relation")
			}
			if p.relAsOf < 0 {
				p.relAsOf = p.pos
			}
			asOf = p.asOf()
			continue
		}
		if alias == nil {
			if alias = p.optAlias(); alias != nil {
				continue
			}
		}
		break
	}
	// "t AS OF VERSION 2" reads as the alias "of" followed by junk; say
	// what AS OF expects instead.
	if alias != nil && alias.Name.Name == "of" && p.src[alias.Name.Pos()] != '"' &&
		(p.tok == token.IDENT || p.tok == token.NUMBER || p.tok == token.STRING) {
		p.errorExpected("COMMIT or TIMESTAMP after AS OF")
	}
	if isFunc {
		return &ast.TableFunc{Span: p.span(start), Name: name, Args: args, Alias: alias, AsOf: asOf}
	}
	return &ast.TableRef{Span: p.span(start), Name: name, Alias: alias, AsOf: asOf}
}

// optAlias parses [AS] name [(columns)] if present. Without AS only a
// plain identifier is an alias, so that keywords which may follow a
// relation (JOIN, WHERE, ATTRIBUTE GROUP …) are never taken for one.
func (p *parser) optAlias() *ast.Alias {
	start := p.pos
	var name *ast.Ident
	switch {
	case p.tok == token.AS && !p.isRelationAsOf():
		p.next()
		name = p.ident("an alias")
	case p.tok == token.IDENT:
		name = p.ident("an alias")
	default:
		return nil
	}
	a := &ast.Alias{Name: name}
	if p.tok == token.LPAREN {
		a.Columns = p.parenIdents("a column alias")
	}
	a.Span = p.span(start)
	return a
}

// groupByList parses GROUP BY's items: expressions and the grouping
// constructs ROLLUP (…), CUBE (…), GROUPING SETS (…) and ().
func (p *parser) groupByList() []ast.Expr {
	list := []ast.Expr{p.groupingItem()}
	for p.got(token.COMMA) {
		list = append(list, p.groupingItem())
	}
	return list
}

// groupingItem parses one GROUP BY item. ROLLUP, CUBE, GROUPING and SETS
// are no keywords of ours: written unquoted before "(" (GROUPING SETS
// before "(") they are the constructs, as in PostgreSQL, where a function
// of those names needs quotes here.
func (p *parser) groupingItem() ast.Expr {
	p.enter()
	defer p.leave()
	start := p.pos
	unquoted := p.tok == token.IDENT && p.src[p.pos] != '"'
	switch {
	case p.tok == token.LPAREN && p.peek(1) == token.RPAREN:
		p.next()
		p.next()
		return &ast.GroupingSet{Span: p.span(start), Kind: ast.EmptyGroupingSet}
	case unquoted && (strings.EqualFold(p.lit, "rollup") || strings.EqualFold(p.lit, "cube")) && p.peek(1) == token.LPAREN:
		kind := ast.Rollup
		if strings.EqualFold(p.lit, "cube") {
			kind = ast.Cube
		}
		p.next()
		p.next()
		items := p.exprList()
		p.expect(token.RPAREN)
		return &ast.GroupingSet{Span: p.span(start), Kind: kind, Items: items}
	case unquoted && strings.EqualFold(p.lit, "grouping") && p.peek(1) == token.IDENT && strings.EqualFold(p.peekLit(1), "sets"):
		p.next()
		p.next()
		p.expect(token.LPAREN)
		items := p.groupByList()
		p.expect(token.RPAREN)
		return &ast.GroupingSet{Span: p.span(start), Kind: ast.GroupingSets, Items: items}
	}
	return p.expr()
}

// parenQueryAhead reports, at a "(" inside a "(" in FROM, whether the
// outer parentheses hold a query whose first operand is parenthesised,
// ((SELECT …) UNION ALL SELECT …) AS q, rather than a table expression
// that starts with a derived table, ((SELECT …) AS x JOIN y ON …): the
// current parentheses must hold a query, and what follows them must
// continue one.
func (p *parser) parenQueryAhead() bool {
	if p.tok != token.LPAREN {
		return false
	}
	end, ok := p.parenQueryAt(0)
	return ok && continuesQuery(p.tokAt(end+1))
}

// parenQueryAt reports whether the parentheses opening at token i (0 is
// the current token) hold a query, and where they close: they do when a
// query starts right inside them, or when they hold parentheses that do,
// followed by what continues a query.
func (p *parser) parenQueryAt(i int) (end int, ok bool) {
	switch p.tokAt(i + 1) {
	case token.SELECT, token.WITH, token.VALUES:
	case token.LPAREN:
		inner, ok := p.parenQueryAt(i + 1)
		if !ok || !continuesQuery(p.tokAt(inner+1)) {
			return 0, false
		}
	default:
		return 0, false
	}
	depth := 0
	for j := i; ; j++ {
		switch p.tokAt(j) {
		case token.LPAREN:
			depth++
		case token.RPAREN:
			if depth--; depth == 0 {
				return j, true
			}
		case token.EOF:
			return 0, false
		}
	}
}

// continuesQuery reports whether tok, after a parenthesised query, goes on
// with it (a set operation, ORDER BY, LIMIT, OFFSET, FETCH) or closes the
// parentheses around it.
func continuesQuery(tok token.Token) bool {
	switch tok {
	case token.UNION, token.INTERSECT, token.EXCEPT, token.ORDER, token.LIMIT, token.OFFSET, token.FETCH, token.RPAREN:
		return true
	}
	return false
}

// tokAt returns the token i places from the current one (0: the current).
func (p *parser) tokAt(i int) token.Token {
	if i == 0 {
		return p.tok
	}
	return p.peek(i)
}

// locking parses FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
// [OF table, …] [NOWAIT | SKIP LOCKED].
func (p *parser) locking() *ast.Locking {
	start := p.expect(token.FOR)
	l := &ast.Locking{}
	switch {
	case p.got(token.UPDATE):
		l.Strength = ast.LockUpdate
	case p.got(token.KEY):
		p.expectWord("SHARE")
		l.Strength = ast.LockKeyShare
	case p.isWord("no"):
		p.next()
		p.expect(token.KEY)
		p.expect(token.UPDATE)
		l.Strength = ast.LockNoKeyUpdate
	case p.isWord("share"):
		p.next()
		l.Strength = ast.LockShare
	default:
		p.errorExpected("UPDATE, NO KEY UPDATE, SHARE or KEY SHARE after FOR")
	}
	if p.got(token.OF) {
		l.Of = append(l.Of, p.objectName("a table name"))
		for p.got(token.COMMA) {
			l.Of = append(l.Of, p.objectName("a table name"))
		}
	}
	switch {
	case p.isWord("nowait"):
		p.next()
		l.Wait = ast.LockNoWait
	case p.isWord("skip"):
		p.next()
		p.expectWord("LOCKED")
		l.Wait = ast.LockSkipLocked
	}
	l.Span = p.span(start)
	return l
}

// isWord reports whether the current token is the unreserved word w
// (any case), which the scanner gives as an identifier.
func (p *parser) isWord(w string) bool {
	return p.tok == token.IDENT && strings.EqualFold(p.lit, w)
}

// expectWord consumes the unreserved word w or fails naming it.
func (p *parser) expectWord(w string) {
	if !p.isWord(w) {
		p.errorExpected(w)
	}
	p.next()
}
