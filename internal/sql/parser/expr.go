package parser

import (
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
)

// Expressions, loosest binding first, with PostgreSQL's precedence (the
// levels are ast.Prec*):
//
//	expr    = and {OR and}
//	and     = not {AND not}
//	not     = NOT not | is
//	is      = cmp {IS [NOT] (NULL|TRUE|FALSE|UNKNOWN|DISTINCT FROM cmp)}
//	cmp     = pred {(= <> < <= > >= | OPERATOR(op)) (pred | ANY|SOME|ALL (query))}
//	pred    = concat [[NOT] (BETWEEN … | IN (…) | LIKE … | ILIKE …)]
//	concat  = prefix {(|| | & | '|' | # | << | >> | ~ | !~ | ~* | !~*) prefix}
//	prefix  = ~ prefix | add
//	add     = mul {(+|-) mul}
//	mul     = pow {(*|/|%) pow}
//	pow     = unary {^ unary}
//	unary   = (+|-) unary | postfix
//	postfix = primary {:: type}

func (p *parser) expr() ast.Expr {
	p.enter()
	defer p.leave()
	start := p.pos
	x := p.andExpr()
	for p.tok == token.OR {
		p.next()
		y := p.andExpr()
		x = &ast.BinaryExpr{Span: p.span(start), Op: token.OR, L: x, R: y}
	}
	return x
}

func (p *parser) andExpr() ast.Expr {
	start := p.pos
	x := p.notExpr()
	for p.tok == token.AND {
		p.next()
		y := p.notExpr()
		x = &ast.BinaryExpr{Span: p.span(start), Op: token.AND, L: x, R: y}
	}
	return x
}

func (p *parser) notExpr() ast.Expr {
	if p.tok == token.NOT {
		p.enter()
		defer p.leave()
		start := p.pos
		p.next()
		x := p.notExpr()
		return &ast.UnaryExpr{Span: p.span(start), Op: token.NOT, X: x}
	}
	return p.isExpr()
}

func (p *parser) isExpr() ast.Expr {
	start := p.pos
	x := p.cmpExpr()
	for p.tok == token.IS {
		p.next()
		e := &ast.IsExpr{X: x, Not: p.got(token.NOT)}
		switch p.tok {
		case token.NULL:
			e.Kind = ast.IsNull
		case token.TRUE:
			e.Kind = ast.IsTrue
		case token.FALSE:
			e.Kind = ast.IsFalse
		case token.UNKNOWN:
			e.Kind = ast.IsUnknown
		case token.DISTINCT:
			p.next()
			p.expect(token.FROM)
			e.Kind = ast.IsDistinctFrom
			e.From = p.cmpExpr()
			e.Span = p.span(start)
			x = e
			continue
		default:
			p.errorExpected("NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS")
		}
		p.next()
		e.Span = p.span(start)
		x = e
	}
	return x
}

func isCompare(t token.Token) bool {
	switch t {
	case token.EQ, token.NE, token.LT, token.LE, token.GT, token.GE:
		return true
	}
	return false
}

func (p *parser) cmpExpr() ast.Expr {
	start := p.pos
	x := p.predExpr()
	for isCompare(p.tok) || p.atOperatorSyntax() {
		op, opPos := p.tok, p.pos
		if p.atOperatorSyntax() {
			op = p.operatorSyntax()
		} else {
			p.next()
		}
		if !isCompare(op) {
			y := p.predExpr()
			x = binaryOp(p.span(start), op, x, y)
			continue
		}
		if (p.tok == token.ANY || p.tok == token.SOME || p.tok == token.ALL) && p.peek(1) == token.LPAREN {
			all := p.tok == token.ALL
			p.next()
			p.next()
			if !p.startsQuery() {
				x = p.anyArray(start, opPos, x, op, all)
				continue
			}
			q := p.selectStmt()
			p.expect(token.RPAREN)
			x = &ast.QuantifiedExpr{Span: p.span(start), X: x, Op: op, All: all, Query: q}
			continue
		}
		y := p.predExpr()
		x = &ast.BinaryExpr{Span: p.span(start), Op: op, L: x, R: y}
	}
	return x
}

// predExpr parses the BETWEEN, IN and LIKE predicates. They do not chain
// (PostgreSQL makes them non-associative).
func (p *parser) predExpr() ast.Expr {
	start := p.pos
	x := p.concatExpr()
	not := false
	if p.tok == token.NOT {
		switch p.peek(1) {
		case token.BETWEEN, token.IN, token.LIKE, token.ILIKE:
			p.next()
			not = true
		default:
			return x
		}
	}
	switch p.tok {
	case token.BETWEEN:
		p.next()
		e := &ast.BetweenExpr{X: x, Not: not, Symmetric: p.got(token.SYMMETRIC)}
		e.Lo = p.concatExpr()
		p.expect(token.AND)
		e.Hi = p.concatExpr()
		e.Span = p.span(start)
		return e
	case token.IN:
		p.next()
		e := &ast.InExpr{X: x, Not: not}
		p.expect(token.LPAREN)
		if p.startsQuery() {
			e.Query = p.selectStmt()
		} else {
			e.List = p.exprList()
		}
		p.expect(token.RPAREN)
		e.Span = p.span(start)
		return e
	case token.LIKE, token.ILIKE:
		e := &ast.LikeExpr{X: x, Not: not, ILike: p.tok == token.ILIKE}
		p.next()
		e.Pattern = p.concatExpr()
		if p.got(token.ESCAPE) {
			e.Escape = p.concatExpr()
		}
		e.Span = p.span(start)
		return e
	}
	return x
}

// binaryLevel parses operand {op operand} for the operators of one
// precedence level.
func (p *parser) binaryLevel(operand func() ast.Expr, prec int) ast.Expr {
	start := p.pos
	x := operand()
	for ast.BinaryPrec(p.tok) == prec {
		op := p.tok
		p.next()
		y := operand()
		x = &ast.BinaryExpr{Span: p.span(start), Op: op, L: x, R: y}
	}
	return x
}

// concatExpr parses the level of PostgreSQL's "any other operator",
// left-associative: || & | # << >> and the regular-expression matches ~
// !~ ~* !~* (as textregexeq(x, y) …), so 'a' || 'b' ~ 'ab' matches the
// concatenation and a = b ~ c compares a with the match.
func (p *parser) concatExpr() ast.Expr {
	start := p.pos
	x := p.prefixExpr()
	for ast.BinaryPrec(p.tok) == ast.PrecConcat || isRegex(p.tok) {
		op := p.tok
		p.next()
		y := p.prefixExpr()
		x = binaryOp(p.span(start), op, x, y)
	}
	return x
}

func (p *parser) addExpr() ast.Expr { return p.binaryLevel(p.mulExpr, ast.PrecAdd) }
func (p *parser) mulExpr() ast.Expr { return p.binaryLevel(p.powExpr, ast.PrecMul) }
func (p *parser) powExpr() ast.Expr { return p.binaryLevel(p.unaryExpr, ast.PrecPow) }

// prefixExpr parses PostgreSQL's prefix ~ (bitwise NOT). Like its other
// operators it binds looser than arithmetic: ~1 + 2 is ~(1 + 2), and
// ~1 & 2 is (~1) & 2.
func (p *parser) prefixExpr() ast.Expr {
	if p.tok != token.REGEX {
		return p.addExpr()
	}
	p.enter()
	defer p.leave()
	start := p.pos
	p.next()
	x := p.prefixExpr()
	return &ast.UnaryExpr{Span: p.span(start), Op: token.REGEX, X: x}
}

func (p *parser) unaryExpr() ast.Expr {
	if p.tok == token.MINUS || p.tok == token.PLUS {
		p.enter()
		defer p.leave()
		start, op := p.pos, p.tok
		p.next()
		x := p.unaryExpr()
		return &ast.UnaryExpr{Span: p.span(start), Op: op, X: x}
	}
	start := p.pos
	x := p.primary()
	for p.tok == token.TYPECAST || p.tok == token.LBRACK || p.atCollate() {
		if p.tok == token.LBRACK {
			x = p.subscript(start, x)
			continue
		}
		if p.tok != token.TYPECAST {
			x = p.collate(x)
			continue
		}
		p.next()
		x = p.castTarget(start, x, true)
	}
	return x
}

func (p *parser) exprList() []ast.Expr {
	list := []ast.Expr{p.expr()}
	for p.got(token.COMMA) {
		list = append(list, p.expr())
	}
	return list
}

// startsQuery reports whether the current token begins a query, as after
// "(" in IN (…), EXISTS (…) or a scalar subquery.
func (p *parser) startsQuery() bool {
	switch p.tok {
	case token.SELECT, token.WITH, token.VALUES:
		return true
	}
	return false
}

func (p *parser) primary() ast.Expr {
	start, end := p.pos, p.end
	sp := ast.Span{Start: start, Stop: end}
	switch p.tok {
	case token.NUMBER:
		e := &ast.NumberLit{Span: sp, Text: p.lit}
		p.next()
		return e
	case token.STRING:
		e := &ast.StringLit{Span: sp, Value: p.lit}
		p.next()
		return e
	case token.PARAM:
		n, err := strconv.Atoi(p.lit)
		if err != nil || n < 1 || n > 65535 {
			p.failAt(start, "parameter number %s out of range (1 to 65535)", p.text())
		}
		p.next()
		return &ast.Param{Span: sp, Index: n}
	case token.TRUE, token.FALSE:
		e := &ast.BoolLit{Span: sp, Value: p.tok == token.TRUE}
		p.next()
		return e
	case token.NULL:
		p.next()
		return &ast.NullLit{Span: sp}
	case token.LPAREN:
		return p.parenExpr()
	case token.CASE:
		return p.caseExpr()
	case token.CAST:
		p.next()
		p.expect(token.LPAREN)
		x := p.expr()
		p.expect(token.AS)
		c := p.castTarget(start, x, false)
		p.expect(token.RPAREN)
		switch c := c.(type) {
		case *ast.CastExpr:
			c.Span = p.span(start)
		case *ast.FuncCall:
			c.Span = p.span(start)
		}
		return c
	case token.EXISTS:
		p.next()
		p.expect(token.LPAREN)
		if !p.startsQuery() {
			p.errorExpected("a query after EXISTS (")
		}
		q := p.selectStmt()
		p.expect(token.RPAREN)
		return &ast.ExistsExpr{Span: p.span(start), Query: q}
	case token.INTERVAL:
		if p.peek(1) == token.STRING {
			p.next()
			v := p.lit
			p.next()
			return p.intervalField(&ast.IntervalLit{Value: v}, start)
		}
	case token.LEFT, token.RIGHT:
		// left(s, n) and right(s, n) are functions although the words are
		// reserved for joins.
		if p.peek(1) == token.LPAREN {
			name := p.lit
			p.next()
			return p.funcCall(start, "", name)
		}
	}
	if p.atValueFunction() {
		return p.valueFunction()
	}
	if p.atArraySubquery() {
		return p.arraySubquery()
	}
	if p.isIdent() {
		return p.nameExpr()
	}
	p.errorExpected("an expression")
	return nil
}

// parenExpr parses ( expr ), a row ( expr, expr … ) or a scalar subquery.
func (p *parser) parenExpr() ast.Expr {
	p.enter()
	defer p.leave()
	start := p.pos
	p.next()
	if p.startsQuery() {
		q := p.selectStmt()
		p.expect(token.RPAREN)
		return &ast.SubqueryExpr{Span: p.span(start), Query: q}
	}
	x := p.expr()
	if p.tok == token.COMMA {
		items := []ast.Expr{x}
		for p.got(token.COMMA) {
			items = append(items, p.expr())
		}
		p.expect(token.RPAREN)
		return &ast.TupleExpr{Span: p.span(start), Items: items}
	}
	p.expect(token.RPAREN)
	return &ast.ParenExpr{Span: p.span(start), X: x}
}

func (p *parser) caseExpr() ast.Expr {
	start := p.pos
	p.next()
	e := &ast.CaseExpr{}
	if p.tok != token.WHEN {
		e.Operand = p.expr()
	}
	if p.tok != token.WHEN {
		p.errorExpected("WHEN")
	}
	for p.tok == token.WHEN {
		wstart := p.pos
		p.next()
		cond := p.expr()
		p.expect(token.THEN)
		res := p.expr()
		e.Whens = append(e.Whens, &ast.When{Span: p.span(wstart), Cond: cond, Result: res})
	}
	if p.got(token.ELSE) {
		e.Else = p.expr()
	}
	p.expect(token.END)
	e.Span = p.span(start)
	return e
}

// nameExpr parses what starts with a name: a column reference a, t.a,
// s.t.a, a star t.*, a function call f(…), or a typed literal DATE '…'.
func (p *parser) nameExpr() ast.Expr {
	start, firstEnd := p.pos, p.end
	parts := []string{p.lit}
	p.next()
	if p.tok == token.STRING {
		name := strings.ToUpper(parts[0])
		v := p.lit
		p.next()
		if name == "INTERVAL" {
			return p.intervalField(&ast.IntervalLit{Value: v}, start)
		}
		t := &ast.TypeName{Span: ast.Span{Start: start, Stop: firstEnd}, Name: name}
		return &ast.TypedLit{Span: p.span(start), Type: t, Value: v}
	}
	for p.tok == token.DOT {
		p.next()
		if p.tok == token.MUL {
			p.next()
			if len(parts) > 2 {
				p.failAt(start, "improper qualified name (too many dotted names)")
			}
			s := &ast.StarExpr{Span: p.span(start), Table: parts[len(parts)-1]}
			if len(parts) == 2 {
				s.Schema = parts[0]
			}
			return s
		}
		parts = append(parts, p.label("a name after \".\"").Name)
	}
	if p.tok == token.LPAREN {
		switch len(parts) {
		case 1:
			return p.funcCall(start, "", parts[0])
		case 2:
			return p.funcCall(start, parts[0], parts[1])
		}
		p.failAt(start, "improper qualified name (too many dotted names)")
	}
	c := &ast.ColumnRef{Span: p.span(start)}
	switch len(parts) {
	case 1:
		c.Name = parts[0]
	case 2:
		c.Table, c.Name = parts[0], parts[1]
	case 3:
		c.Schema, c.Table, c.Name = parts[0], parts[1], parts[2]
	default:
		p.failAt(start, "improper qualified name (too many dotted names)")
	}
	return c
}

// trimArgs parses the SQL standard's TRIM([BOTH | LEADING | TRAILING]
// [chars] FROM s) and TRIM([BOTH | LEADING | TRAILING] [FROM] s [, chars])
// into btrim, ltrim or rtrim(s[, chars]), as PostgreSQL rewrites them.
// LEADING and TRAILING are no keywords of ours: followed by ")" or "," such
// a word is a column.
func (p *parser) trimArgs(f *ast.FuncCall) {
	f.Name = "btrim"
	if p.tok == token.BOTH {
		p.next()
	} else if p.tok == token.IDENT && p.peek(1) != token.RPAREN && p.peek(1) != token.COMMA {
		switch strings.ToLower(p.lit) {
		case "leading":
			f.Name = "ltrim"
			p.next()
		case "trailing":
			f.Name = "rtrim"
			p.next()
		}
	}
	if p.got(token.FROM) {
		f.Args = p.exprList()
		return
	}
	first := p.expr()
	if p.got(token.FROM) {
		f.Args = []ast.Expr{p.expr(), first}
		return
	}
	f.Args = []ast.Expr{first}
	for p.got(token.COMMA) {
		f.Args = append(f.Args, p.expr())
	}
}

// substringArgs parses the SQL standard's SUBSTRING(s FROM a FOR b),
// SUBSTRING(s FROM a), SUBSTRING(s FOR b) and OVERLAY(s PLACING r FROM a
// [FOR b]) into substring(s, a, b), substring(s, a), substring(s, 1, b)
// and overlay(s, r, a[, b]), as PostgreSQL does; the plain argument list
// is read too. PLACING is no keyword of ours: after an argument, the word
// can be nothing else.
func (p *parser) substringArgs(f *ast.FuncCall) {
	first := p.expr()
	f.Args = []ast.Expr{first}
	if f.Name == "overlay" && p.tok == token.IDENT && strings.EqualFold(p.lit, "placing") {
		p.next()
		f.Args = append(f.Args, p.expr())
		p.expect(token.FROM)
		f.Args = append(f.Args, p.expr())
		if p.got(token.FOR) {
			f.Args = append(f.Args, p.expr())
		}
		return
	}
	switch {
	case f.Name == "substring" && p.got(token.FROM):
		f.Args = append(f.Args, p.expr())
		if p.got(token.FOR) {
			f.Args = append(f.Args, p.expr())
		}
		return
	case f.Name == "substring" && p.tok == token.FOR:
		one := &ast.NumberLit{Span: ast.Span{Start: p.pos, Stop: p.end}, Text: "1"}
		p.next()
		f.Args = append(f.Args, one, p.expr())
		return
	}
	for p.got(token.COMMA) {
		f.Args = append(f.Args, p.expr())
	}
}

// funcCall parses the argument list of name( … ); the current token is "(".
// EXTRACT(field FROM x) becomes extract('field', x), the form PostgreSQL
// itself rewrites it to, so the printer needs no special case.
func (p *parser) funcCall(start int, schema, name string) ast.Expr {
	p.enter()
	defer p.leave()
	p.expect(token.LPAREN)
	f := &ast.FuncCall{Schema: schema, Name: name}
	switch {
	case schema == "" && name == "extract" && p.isIdent() && p.peek(1) == token.FROM:
		field := &ast.StringLit{Span: ast.Span{Start: p.pos, Stop: p.end}, Value: p.lit}
		p.next()
		p.next()
		f.Args = []ast.Expr{field, p.expr()}
	case schema == "" && name == "trim" && p.tok != token.RPAREN:
		p.trimArgs(f)
	case schema == "" && name == "position" && p.tok != token.RPAREN:
		// POSITION(a IN b) is strpos(b, a); its operands cannot be IN
		// predicates themselves (PostgreSQL's b_expr).
		a := p.concatExpr()
		p.expect(token.IN)
		f.Name, f.Args = "strpos", []ast.Expr{p.concatExpr(), a}
	case schema == "" && (name == "substring" || name == "overlay") && p.tok != token.RPAREN:
		p.substringArgs(f)
	case p.tok == token.MUL:
		p.next()
		f.Star = true
	case p.tok == token.RPAREN:
	default:
		if p.got(token.DISTINCT) {
			f.Distinct = true
		} else {
			p.got(token.ALL)
		}
		f.Args = p.exprList()
		if p.tok == token.ORDER {
			p.next()
			p.expect(token.BY)
			f.OrderBy = p.orderItems()
		}
	}
	p.expect(token.RPAREN)
	// ordered-set aggregate(…) WITHIN GROUP (ORDER BY …): WITHIN is no
	// keyword of ours; followed by GROUP it can be nothing else.
	if p.tok == token.IDENT && strings.EqualFold(p.lit, "within") && p.peek(1) == token.GROUP {
		if len(f.OrderBy) > 0 {
			p.failHere("cannot use multiple ORDER BY clauses with WITHIN GROUP")
		}
		if f.Distinct {
			p.failHere("cannot use DISTINCT with WITHIN GROUP")
		}
		p.next()
		p.next()
		p.expect(token.LPAREN)
		p.expect(token.ORDER)
		p.expect(token.BY)
		f.OrderBy = p.orderItems()
		f.WithinGroup = true
		p.expect(token.RPAREN)
	}
	// agg(…) FILTER (WHERE cond): FILTER is no keyword of ours, so it is
	// recognised only followed by "( WHERE", where no alias can be.
	if p.tok == token.IDENT && strings.EqualFold(p.lit, "filter") && p.peek(1) == token.LPAREN && p.peek(2) == token.WHERE {
		p.next()
		p.next()
		p.next()
		f.Filter = p.expr()
		p.expect(token.RPAREN)
	}
	if p.atOver() {
		f.Over = p.over()
	}
	f.Span = p.span(start)
	return f
}

// typeName parses a column type: a name (DOUBLE PRECISION is the one
// two-word name) with optional parameters, integers or strings.
func (p *parser) typeName() *ast.TypeName {
	start := p.pos
	if !p.isIdent() {
		p.errorExpected("a type name")
	}
	t := &ast.TypeName{Name: strings.ToUpper(p.lit)}
	p.next()
	if t.Name == "DOUBLE" && p.tok == token.PRECISION {
		p.next()
		t.Name = "DOUBLE PRECISION"
	}
	if p.got(token.LPAREN) {
		for {
			switch p.tok {
			case token.NUMBER:
				v, err := strconv.ParseInt(p.lit, 10, 64)
				if err != nil {
					p.failAt(p.pos, "type parameter %s is not an integer in range", p.text())
				}
				t.Params = append(t.Params, ast.TypeParam{Int: v})
			case token.STRING:
				t.Params = append(t.Params, ast.TypeParam{Str: p.lit, IsStr: true})
			default:
				p.errorExpected("a type parameter (an integer or a string)")
			}
			p.next()
			if !p.got(token.COMMA) {
				break
			}
		}
		p.expect(token.RPAREN)
	}
	if t.Name == "TIMESTAMP" && p.peek(1) == token.TIME && p.peek(2) == token.ZONE {
		// PostgreSQL's spellings: TIMESTAMP [(p)] WITH TIME ZONE is
		// timestamptz, WITHOUT TIME ZONE the plain one.
		switch {
		case p.tok == token.WITH:
			t.Name = "TIMESTAMPTZ"
		case p.isIdent() && strings.EqualFold(p.lit, "WITHOUT"):
		default:
			t.Span = p.span(start)
			return t
		}
		p.next()
		p.next()
		p.next()
	}
	t.Span = p.span(start)
	return t
}

// intervalField parses the qualifier that may follow INTERVAL '…' (YEAR,
// MONTH, DAY, HOUR, MINUTE or SECOND, as in INTERVAL '5' MINUTE) and sets
// the literal's span. The word is taken as the qualifier, not an alias, as
// PostgreSQL does.
func (p *parser) intervalField(e *ast.IntervalLit, start int) ast.Expr {
	if p.isIdent() && p.src[p.pos] != '"' {
		switch w := strings.ToUpper(p.lit); w {
		case "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND":
			e.Field = w
			p.next()
		}
	}
	e.Span = p.span(start)
	return e
}
