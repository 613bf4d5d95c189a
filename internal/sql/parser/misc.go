package parser

import (
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
)

// transaction parses BEGIN [TRANSACTION|WORK], START TRANSACTION, COMMIT,
// END and ROLLBACK (each with an optional TRANSACTION or WORK).
func (p *parser) transaction() ast.Stmt {
	start := p.pos
	s := &ast.TransactionStmt{}
	switch p.tok {
	case token.BEGIN:
		s.Kind = ast.TxBegin
	case token.START:
		p.next()
		if p.tok != token.TRANSACTION {
			p.errorExpected("TRANSACTION after START")
		}
		s.Kind = ast.TxBegin
	case token.COMMIT, token.END:
		s.Kind = ast.TxCommit
	case token.ROLLBACK:
		s.Kind = ast.TxRollback
	}
	p.next()
	if p.tok == token.TRANSACTION || p.tok == token.WORK {
		p.next()
	}
	if s.Kind == ast.TxRollback && p.tok == token.TO {
		p.next()
		if p.wordIs("savepoint") {
			p.next()
		}
		s.Kind = ast.TxRollbackTo
		s.Name = p.ident("a savepoint name")
	}
	if s.Kind == ast.TxBegin && p.atTxMode() {
		s.Modes = p.txModes()
	}
	s.Span = p.span(start)
	return s
}

// savepoint parses SAVEPOINT name and RELEASE [SAVEPOINT] name, whose
// first words are words here, not keywords.
func (p *parser) savepoint() ast.Stmt {
	start := p.pos
	s := &ast.TransactionStmt{Kind: ast.TxSavepoint}
	if p.wordIs("release") {
		s.Kind = ast.TxRelease
		p.next()
		if p.wordIs("savepoint") {
			p.next()
		}
	} else {
		p.next()
	}
	s.Name = p.ident("a savepoint name")
	s.Span = p.span(start)
	return s
}

// atTxMode reports whether a transaction mode starts here: ISOLATION,
// READ, DEFERRABLE or NOT.
func (p *parser) atTxMode() bool {
	return p.wordIs("isolation") || p.wordIs("read") || p.wordIs("deferrable") || p.tok == token.NOT
}

// txModes parses PostgreSQL's transaction modes, separated by commas or
// spaces: ISOLATION LEVEL {SERIALIZABLE | REPEATABLE READ | READ COMMITTED
// | READ UNCOMMITTED}, READ WRITE | READ ONLY, [NOT] DEFERRABLE. A later
// mode of the same kind replaces an earlier one, as in PostgreSQL.
func (p *parser) txModes() *ast.TxModes {
	m := &ast.TxModes{}
	for {
		switch {
		case p.wordIs("isolation"):
			p.next()
			if !p.wordIs("level") {
				p.errorExpected("LEVEL after ISOLATION")
			}
			p.next()
			m.Isolation = p.isolationLevel()
		case p.wordIs("read"):
			p.next()
			switch {
			case p.tok == token.ONLY:
				m.Access = ast.TxOn
			case p.wordIs("write"):
				m.Access = ast.TxOff
			default:
				p.errorExpected("ONLY or WRITE after READ")
			}
			p.next()
		case p.wordIs("deferrable"):
			p.next()
			m.Deferrable = ast.TxOn
		case p.tok == token.NOT:
			p.next()
			if !p.wordIs("deferrable") {
				p.errorExpected("DEFERRABLE after NOT")
			}
			p.next()
			m.Deferrable = ast.TxOff
		default:
			p.errorExpected("a transaction mode (ISOLATION LEVEL …, READ WRITE, READ ONLY, [NOT] DEFERRABLE)")
		}
		if p.got(token.COMMA) || p.atTxMode() {
			continue
		}
		return m
	}
}

// isolationLevel parses the level after ISOLATION LEVEL.
func (p *parser) isolationLevel() string {
	switch {
	case p.wordIs("serializable"):
		p.next()
		return "serializable"
	case p.wordIs("repeatable"):
		p.next()
		if !p.wordIs("read") {
			p.errorExpected("READ after REPEATABLE")
		}
		p.next()
		return "repeatable read"
	case p.wordIs("read"):
		p.next()
		switch {
		case p.wordIs("committed"):
			p.next()
			return "read committed"
		case p.wordIs("uncommitted"):
			p.next()
			return "read uncommitted"
		}
		p.errorExpected("COMMITTED or UNCOMMITTED after READ")
	}
	p.errorExpected("an isolation level (SERIALIZABLE, REPEATABLE READ, READ COMMITTED, READ UNCOMMITTED)")
	return ""
}

// setTransaction parses, after SET, TRANSACTION modes and SESSION
// CHARACTERISTICS AS TRANSACTION modes.
func (p *parser) setTransaction(start int) ast.Stmt {
	s := &ast.SetTransactionStmt{}
	if p.tok == token.SESSION {
		p.next()
		if !p.wordIs("characteristics") {
			p.errorExpected("CHARACTERISTICS after SET SESSION")
		}
		p.next()
		p.expect(token.AS)
		s.Session = true
	}
	p.expect(token.TRANSACTION)
	s.Modes = *p.txModes()
	s.Span = p.span(start)
	return s
}

// explain parses EXPLAIN [ANALYZE] statement (SPEC R10.2).
func (p *parser) explain() ast.Stmt {
	start := p.pos
	p.expect(token.EXPLAIN)
	s := &ast.ExplainStmt{Analyze: p.got(token.ANALYZE)}
	if p.tok == token.EXPLAIN {
		p.errorExpected("a statement to explain")
	}
	s.Stmt = p.stmt()
	s.Span = p.span(start)
	return s
}

// show parses SHOW TABLES, SHOW CREATE TABLE t, SHOW ALL and SHOW name.
func (p *parser) show() ast.Stmt {
	start := p.pos
	p.expect(token.SHOW)
	switch p.tok {
	case token.TABLES:
		p.next()
		return &ast.ShowTablesStmt{Span: p.span(start)}
	case token.CREATE:
		p.next()
		p.expect(token.TABLE)
		t := p.objectName("a table name")
		return &ast.ShowCreateTableStmt{Span: p.span(start), Table: t}
	case token.ALL:
		p.next()
		return &ast.ShowStmt{Span: p.span(start), All: true}
	}
	name := p.settingName()
	return &ast.ShowStmt{Span: p.span(start), Name: name}
}

// describe parses DESCRIBE t and DESC t.
func (p *parser) describe() ast.Stmt {
	start := p.pos
	p.next()
	t := p.objectName("a table name")
	return &ast.DescribeStmt{Span: p.span(start), Table: t}
}

// settingName parses a run-time setting's name, dotted parts joined.
func (p *parser) settingName() string {
	if p.tok == token.TIME && p.peek(1) == token.ZONE {
		p.next()
		p.next()
		return "timezone"
	}
	parts := []string{p.ident("a setting name").Name}
	for p.got(token.DOT) {
		parts = append(parts, p.label("a setting name").Name)
	}
	return strings.Join(parts, ".")
}

// set parses SET [SESSION|LOCAL] name {=|TO} value[, …] | DEFAULT, and
// SET TIME ZONE value.
func (p *parser) set() ast.Stmt {
	start := p.pos
	p.expect(token.SET)
	if p.tok == token.TRANSACTION || p.tok == token.SESSION && p.peek(1) == token.IDENT && p.ahead[0].lit == "characteristics" && p.src[p.ahead[0].pos] != '"' {
		return p.setTransaction(start)
	}
	s := &ast.SetStmt{}
	if p.got(token.LOCAL) {
		s.Local = true
	} else if p.tok == token.SESSION && p.peek(1) != token.EQ && p.peek(1) != token.TO {
		p.next()
	}
	zone := p.tok == token.TIME && p.peek(1) == token.ZONE
	s.Name = p.settingName()
	if !zone && !p.got(token.EQ) && !p.got(token.TO) {
		p.errorExpected(`"=" or TO`)
	}
	if p.tok == token.DEFAULT {
		p.next()
		s.Default = true
	} else {
		s.Values = []ast.Expr{p.setValue()}
		for p.got(token.COMMA) {
			s.Values = append(s.Values, p.setValue())
		}
	}
	s.Span = p.span(start)
	return s
}

// setValue parses one value of SET: an expression, or a bare word even if
// it is reserved (SET enable_x = on), kept as a ColumnRef naming the word.
func (p *parser) setValue() ast.Expr {
	switch p.tok {
	case token.TRUE, token.FALSE, token.NULL, token.NOT, token.CASE, token.CAST, token.EXISTS:
		return p.expr()
	}
	if p.tok.IsReserved() {
		c := &ast.ColumnRef{Span: ast.Span{Start: p.pos, Stop: p.end}, Name: p.lit}
		p.next()
		return c
	}
	return p.expr()
}

// reset parses RESET name and RESET ALL.
func (p *parser) reset() ast.Stmt {
	start := p.pos
	p.expect(token.RESET)
	if p.got(token.ALL) {
		return &ast.ResetStmt{Span: p.span(start), All: true}
	}
	name := p.settingName()
	return &ast.ResetStmt{Span: p.span(start), Name: name}
}
