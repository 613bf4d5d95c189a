package parser

import (
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
)

// withStmt parses a statement that starts with WITH: a query, or, as in
// PostgreSQL, an INSERT, UPSERT, UPDATE or DELETE whose queries (source,
// WHERE, SET values, RETURNING) all see the definitions.
func (p *parser) withStmt() ast.Stmt {
	p.enter()
	defer p.leave()
	start := p.pos
	w := p.with()
	switch p.tok {
	case token.INSERT, token.UPSERT:
		s := p.insert().(*ast.InsertStmt)
		s.With, s.Span.Start = w, start
		return s
	case token.UPDATE:
		s := p.update().(*ast.UpdateStmt)
		s.With, s.Span.Start = w, start
		return s
	case token.DELETE:
		s := p.delete().(*ast.DeleteStmt)
		s.With, s.Span.Start = w, start
		return s
	}
	outerAsOf := p.relAsOf
	p.relAsOf = -1
	defer func() { p.relAsOf = outerAsOf }()
	return p.selectRest(start, w)
}

// insert parses INSERT INTO | UPSERT INTO t [AS alias] [(cols)] source
// [ATTRIBUTE GROUP g] (SPEC R4.3, R5.2).
func (p *parser) insert() ast.Stmt {
	start := p.pos
	s := &ast.InsertStmt{Upsert: p.tok == token.UPSERT}
	p.next()
	p.expect(token.INTO)
	s.Table = p.objectName("a table name")
	// As in PostgreSQL, INSERT's alias needs AS: a bare word there could
	// be meant as the source.
	if p.got(token.AS) {
		s.Alias = p.ident("an alias")
	}
	// "(" opens the column list unless a query follows it: INSERT INTO t
	// (SELECT …) is a parenthesised source.
	if p.tok == token.LPAREN {
		switch p.peek(1) {
		case token.SELECT, token.WITH, token.VALUES, token.LPAREN:
		default:
			s.Columns = p.parenIdents("a column name")
		}
	}
	switch p.tok {
	case token.SELECT, token.WITH, token.VALUES, token.LPAREN:
		// The rows of the statement's own VALUES list may be kept compact
		// (ast.Values.Lits); values clears the flag as it starts.
		p.compact = p.tok == token.VALUES && !noCompact
		s.Source = p.selectStmt()
		p.compact = false
	default:
		p.errorExpected("VALUES or a query")
	}
	if p.tok == token.ATTRIBUTE {
		p.next()
		p.expect(token.GROUP)
		s.Group = p.groupName()
	}
	if p.tok == token.ON {
		s.OnConflict = p.onConflict()
	}
	s.Returning = p.returning()
	s.Span = p.span(start)
	return s
}

// onConflict parses ON CONFLICT [(c, …) | ON CONSTRAINT name] DO NOTHING |
// DO UPDATE SET c = e, … [WHERE …], PostgreSQL's clause; CONFLICT,
// CONSTRAINT, DO and NOTHING are words here, not keywords.
func (p *parser) onConflict() *ast.OnConflict {
	start := p.pos
	p.expect(token.ON)
	if !p.wordIs("conflict") {
		p.errorExpected("CONFLICT")
		return nil
	}
	p.next()
	c := &ast.OnConflict{}
	switch {
	case p.tok == token.LPAREN:
		c.Target = p.parenIdents("a column name")
	case p.tok == token.ON:
		p.next()
		if !p.wordIs("constraint") {
			p.errorExpected("CONSTRAINT")
			return nil
		}
		p.next()
		c.Constraint = p.ident("a constraint name")
	}
	if !p.wordIs("do") {
		p.errorExpected("DO")
		return nil
	}
	p.next()
	switch {
	case p.wordIs("nothing"):
		p.next()
	case p.tok == token.UPDATE:
		p.next()
		c.Update = true
		p.expect(token.SET)
		c.Sets = p.setList()
		if p.got(token.WHERE) {
			c.Where = p.expr()
		}
	default:
		p.errorExpected("NOTHING or UPDATE")
		return nil
	}
	c.Span = p.span(start)
	return c
}

// setList parses the c = e, … of a SET.
func (p *parser) setList() []*ast.SetClause {
	var list []*ast.SetClause
	for {
		cstart := p.pos
		c := &ast.SetClause{Column: p.ident("a column name")}
		p.expect(token.EQ)
		c.Value = p.valueItem()
		c.Span = p.span(cstart)
		list = append(list, c)
		if !p.got(token.COMMA) {
			return list
		}
	}
}

// update parses UPDATE t [[AS] a] SET c = e, … [WHERE …] (SPEC R5.3).
func (p *parser) update() ast.Stmt {
	start := p.pos
	p.expect(token.UPDATE)
	s := &ast.UpdateStmt{Table: p.objectName("a table name"), Alias: p.dmlAlias()}
	p.expect(token.SET)
	s.Sets = p.setList()
	if p.got(token.FROM) {
		s.From = p.tableList()
	}
	if p.got(token.WHERE) {
		s.Where = p.expr()
	}
	s.Returning = p.returning()
	s.Span = p.span(start)
	return s
}

// tableList parses the comma-separated FROM items of UPDATE … FROM and
// DELETE … USING.
func (p *parser) tableList() []ast.TableExpr {
	list := []ast.TableExpr{p.tableExpr()}
	for p.got(token.COMMA) {
		list = append(list, p.tableExpr())
	}
	return list
}

// delete parses DELETE FROM t [[AS] a] [USING …] [WHERE …] (SPEC R5.4).
func (p *parser) delete() ast.Stmt {
	start := p.pos
	p.expect(token.DELETE)
	p.expect(token.FROM)
	s := &ast.DeleteStmt{Table: p.objectName("a table name"), Alias: p.dmlAlias()}
	if p.got(token.USING) {
		s.Using = p.tableList()
	}
	if p.got(token.WHERE) {
		s.Where = p.expr()
	}
	s.Returning = p.returning()
	s.Span = p.span(start)
	return s
}

// dmlAlias parses the optional alias of UPDATE and DELETE's table.
func (p *parser) dmlAlias() *ast.Ident {
	if p.got(token.AS) {
		return p.ident("an alias")
	}
	if p.tok == token.IDENT {
		return p.ident("an alias")
	}
	return nil
}

// returning parses an optional RETURNING list, whose items are those of a
// select list.
func (p *parser) returning() []*ast.SelectItem {
	if !p.got(token.RETURNING) {
		return nil
	}
	list := []*ast.SelectItem{p.selectItem()}
	for p.got(token.COMMA) {
		list = append(list, p.selectItem())
	}
	return list
}
