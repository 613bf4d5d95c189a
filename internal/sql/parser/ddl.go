package parser

import (
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
)

// create dispatches CREATE TABLE, [UNIQUE] INDEX, POLICY, TRANSFORMATION
// and USER.
func (p *parser) create() ast.Stmt {
	start := p.pos
	p.expect(token.CREATE)
	if p.tok == token.OR || p.wordIs("view") {
		return p.createView(start)
	}
	switch p.tok {
	case token.TABLE:
		return p.createTable(start)
	case token.INDEX, token.UNIQUE:
		return p.createIndex(start)
	case token.POLICY:
		return p.createPolicy(start)
	case token.TRANSFORMATION:
		return p.createTransformation(start)
	case token.USER:
		p.next()
		s := &ast.CreateUserStmt{Name: p.ident("a user name")}
		if p.tok == token.WITH || p.tok == token.PASSWORD {
			s.Password, s.HasPassword = p.password(), true
		}
		s.Span = p.span(start)
		return s
	}
	p.errorExpected("TABLE, VIEW, INDEX, POLICY, TRANSFORMATION or USER after CREATE")
	return nil
}

// password parses [WITH] PASSWORD 'secret'.
func (p *parser) password() string {
	p.got(token.WITH)
	p.expect(token.PASSWORD)
	if p.tok != token.STRING {
		p.errorExpected("a password string")
	}
	pw := p.lit
	p.next()
	return pw
}

func (p *parser) ifNotExists() bool {
	if p.tok == token.IF {
		p.next()
		p.expect(token.NOT)
		p.expect(token.EXISTS)
		return true
	}
	return false
}

func (p *parser) ifExists() bool {
	if p.tok == token.IF {
		p.next()
		p.expect(token.EXISTS)
		return true
	}
	return false
}

// createTable parses CREATE TABLE [IF NOT EXISTS] name (elements) and the
// clauses after the parenthesis, in any order, each at most once.
func (p *parser) createTable(start int) ast.Stmt {
	p.expect(token.TABLE)
	s := &ast.CreateTableStmt{IfNotExists: p.ifNotExists(), Name: p.objectName("a table name")}
	p.expect(token.LPAREN)
	for {
		p.tableElement(s)
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	seen := map[token.Token]bool{}
	once := func() {
		if seen[p.tok] {
			p.failHere("%s is given more than once", p.tok)
		}
		seen[p.tok] = true
	}
	for {
		switch p.tok {
		case token.MODE:
			once()
			p.next()
			switch {
			case p.wordIs("append"):
				s.Mode = ast.ModeAppend
			case p.wordIs("upsert"):
				s.Mode = ast.ModeUpsert
			case p.wordIs("versioned"):
				s.Mode = ast.ModeVersioned
			default:
				p.errorExpected("APPEND, UPSERT or VERSIONED after MODE")
			}
			p.next()
		case token.VALID:
			once()
			s.ValidBy = p.byList(token.VALID)
		case token.REVISION:
			once()
			s.RevisionBy = p.byList(token.REVISION)
		case token.SHARD:
			once()
			s.ShardBy = p.byList(token.SHARD)
		case token.SHARDS:
			once()
			s.Shards = p.shards()
		case token.ORDER:
			once()
			s.OrderBy = p.byList(token.ORDER)
		case token.POLICY:
			once()
			p.next()
			s.Policies = p.identList("a policy name")
		default:
			s.Span = p.span(start)
			return s
		}
	}
}

// byList parses KW BY (cols), for VALID BY, REVISION BY, SHARD BY and
// ORDER BY.
func (p *parser) byList(kw token.Token) []*ast.Ident {
	p.expect(kw)
	p.expect(token.BY)
	return p.parenIdents("a column name")
}

// shards parses SHARDS n | SHARDS AUTO (SPEC R11.1).
func (p *parser) shards() *ast.ShardCount {
	start := p.pos
	p.expect(token.SHARDS)
	c := &ast.ShardCount{}
	switch p.tok {
	case token.AUTO:
		c.Auto = true
	case token.NUMBER:
		n, err := strconv.ParseInt(p.lit, 10, 64)
		if err != nil || n < 1 {
			p.failAt(p.pos, "SHARDS must be a positive integer or AUTO, not %s", p.text())
		}
		c.N = n
	default:
		p.errorExpected("a number or AUTO after SHARDS")
	}
	p.next()
	c.Span = p.span(start)
	return c
}

// tableElement parses one element of CREATE TABLE's list: a column, a
// PRIMARY KEY or UNIQUE constraint, or an attribute group.
func (p *parser) tableElement(s *ast.CreateTableStmt) {
	switch {
	case p.tok == token.PRIMARY:
		if s.PrimaryKey != nil {
			p.failHere("multiple primary keys for table %q are not allowed", s.Name.Name)
		}
		p.next()
		p.expect(token.KEY)
		s.PrimaryKey = p.parenIdents("a key column name")
	case p.tok == token.UNIQUE:
		p.next()
		s.Uniques = append(s.Uniques, p.parenIdents("a column name"))
	case p.tok == token.ATTRIBUTE && p.peek(1) == token.GROUP:
		s.Groups = append(s.Groups, p.attributeGroup(false))
	default:
		s.Columns = append(s.Columns, p.columnDef())
	}
}

// attributeGroup parses ATTRIBUTE GROUP name (…) [VALID BY (…)] [REVISION
// BY (…)]. With defs the list holds column definitions (ALTER TABLE … ADD
// ATTRIBUTE GROUP, R4.5), otherwise names of the table's columns (R4.1).
func (p *parser) attributeGroup(defs bool) *ast.AttributeGroupDef {
	start := p.pos
	p.expect(token.ATTRIBUTE)
	p.expect(token.GROUP)
	g := &ast.AttributeGroupDef{Name: p.ident("an attribute group name")}
	p.expect(token.LPAREN)
	if defs {
		for {
			g.ColumnDefs = append(g.ColumnDefs, p.columnDef())
			if !p.got(token.COMMA) {
				break
			}
		}
	} else {
		g.Columns = p.identList("a column name")
	}
	p.expect(token.RPAREN)
	for p.tok == token.VALID || p.tok == token.REVISION {
		if p.tok == token.VALID {
			if g.ValidBy != nil {
				p.failHere("VALID BY is given more than once")
			}
			g.ValidBy = p.byList(token.VALID)
		} else {
			if g.RevisionBy != nil {
				p.failHere("REVISION BY is given more than once")
			}
			g.RevisionBy = p.byList(token.REVISION)
		}
	}
	g.Span = p.span(start)
	return g
}

// columnDef parses name type [NULL | NOT NULL] [DEFAULT e] [PRIMARY KEY]
// [UNIQUE] [CODEC(…)], the constraints in any order.
func (p *parser) columnDef() *ast.ColumnDef {
	start := p.pos
	c := &ast.ColumnDef{Name: p.ident("a column name")}
	c.Type = p.typeName()
	for {
		switch p.tok {
		case token.NULL, token.NOT:
			pos, want := p.pos, ast.Nullable
			if p.got(token.NOT) {
				want = ast.NotNullable
			}
			p.expect(token.NULL)
			if c.Null != ast.NullDefault && c.Null != want {
				p.failAt(pos, "conflicting NULL/NOT NULL declarations for column %q", c.Name.Name)
			}
			c.Null = want
		case token.DEFAULT:
			if c.Default != nil {
				p.failAt(p.pos, "multiple default values specified for column %q", c.Name.Name)
			}
			p.next()
			c.Default = p.expr()
		case token.PRIMARY:
			p.next()
			p.expect(token.KEY)
			c.PrimaryKey = true
		case token.UNIQUE:
			p.next()
			c.Unique = true
		case token.CODEC:
			if c.Codecs != nil {
				p.failAt(p.pos, "multiple CODEC clauses specified for column %q", c.Name.Name)
			}
			p.next()
			c.Codecs = p.codecs()
		default:
			c.Span = p.span(start)
			return c
		}
	}
}

// codecs parses (codec [, codec]) where codec is NAME or NAME(level)
// (SPEC R11.3).
func (p *parser) codecs() []*ast.Codec {
	p.expect(token.LPAREN)
	var list []*ast.Codec
	for {
		start := p.pos
		if !p.isIdent() {
			p.errorExpected("a codec name (NONE, LZ4, ZSTD, DELTA)")
		}
		k := &ast.Codec{Name: strings.ToUpper(p.lit)}
		p.next()
		if p.got(token.LPAREN) {
			if p.tok != token.NUMBER {
				p.errorExpected("a codec level")
			}
			n, err := strconv.ParseInt(p.lit, 10, 64)
			if err != nil {
				p.failAt(p.pos, "codec level %s is not an integer in range", p.text())
			}
			k.Level, k.HasLevel = n, true
			p.next()
			p.expect(token.RPAREN)
		}
		k.Span = p.span(start)
		list = append(list, k)
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	return list
}

// createIndex parses CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON t
// (cols) [SCOPE CURRENT|HISTORY|BOTH] [POLICY p, …] (SPEC R10.1).
func (p *parser) createIndex(start int) ast.Stmt {
	s := &ast.CreateIndexStmt{Unique: p.got(token.UNIQUE)}
	p.expect(token.INDEX)
	s.IfNotExists = p.ifNotExists()
	s.Name = p.ident("an index name")
	p.expect(token.ON)
	s.Table = p.objectName("a table name")
	p.expect(token.LPAREN)
	for {
		cstart := p.pos
		c := &ast.IndexColumn{Name: p.ident("a column name")}
		if p.got(token.DESC) {
			c.Desc = true
		} else {
			p.got(token.ASC)
		}
		c.Span = p.span(cstart)
		s.Columns = append(s.Columns, c)
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	for {
		switch p.tok {
		case token.SCOPE:
			if s.Scope != ast.ScopeDefault {
				p.failHere("SCOPE is given more than once")
			}
			p.next()
			switch p.tok {
			case token.CURRENT:
				s.Scope = ast.ScopeCurrent
			case token.HISTORY:
				s.Scope = ast.ScopeHistory
			case token.BOTH:
				s.Scope = ast.ScopeBoth
			default:
				p.errorExpected("CURRENT, HISTORY or BOTH after SCOPE")
			}
			p.next()
		case token.POLICY:
			if s.Policies != nil {
				p.failHere("POLICY is given more than once")
			}
			p.next()
			s.Policies = p.identList("a policy name")
		default:
			s.Span = p.span(start)
			return s
		}
	}
}

// createPolicy parses CREATE POLICY name FOR role (key = value, …) (SPEC
// R9.2). The role stays the word written; the catalog checks it.
func (p *parser) createPolicy(start int) ast.Stmt {
	p.expect(token.POLICY)
	s := &ast.CreatePolicyStmt{Name: p.ident("a policy name")}
	p.expect(token.FOR)
	s.Role = p.ident("a policy role (PLACEMENT, STORAGE, RETENTION or COMPACTION)")
	p.expect(token.LPAREN)
	for {
		sstart := p.pos
		st := &ast.PolicySetting{Key: p.label("a setting name")}
		p.expect(token.EQ)
		st.Value = p.policyValue()
		st.Span = p.span(sstart)
		s.Settings = append(s.Settings, st)
		if !p.got(token.COMMA) {
			break
		}
	}
	p.expect(token.RPAREN)
	s.Span = p.span(start)
	return s
}

// policyValue parses a setting's value: a parenthesised list (always a
// TupleExpr, even of one item) or an expression.
func (p *parser) policyValue() ast.Expr {
	if p.tok != token.LPAREN {
		return p.expr()
	}
	start := p.pos
	p.next()
	t := &ast.TupleExpr{Items: p.exprList()}
	p.expect(token.RPAREN)
	t.Span = p.span(start)
	return t
}

// createView parses CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name
// [(column, …)] AS query. VIEW is not a reserved word: it matters here
// and after DROP only.
func (p *parser) createView(start int) ast.Stmt {
	s := &ast.CreateViewStmt{}
	if p.got(token.OR) {
		if !p.wordIs("replace") {
			p.errorExpected("REPLACE after CREATE OR")
		}
		p.next()
		s.OrReplace = true
	}
	if !p.wordIs("view") {
		p.errorExpected("VIEW")
	}
	p.next()
	s.IfNotExists = p.ifNotExists()
	s.Name = p.objectName("a view name")
	if p.got(token.LPAREN) {
		for {
			s.Columns = append(s.Columns, p.ident("a column name"))
			if !p.got(token.COMMA) {
				break
			}
		}
		p.expect(token.RPAREN)
	}
	p.expect(token.AS)
	if !p.startsQuery() && p.tok != token.LPAREN {
		p.errorExpected("a query after AS")
	}
	s.Query = p.selectStmt()
	s.Span = p.span(start)
	return s
}

// createTransformation parses CREATE TRANSFORMATION name INTO t [ATTRIBUTE
// GROUP g] AS query (SPEC R12.1).
func (p *parser) createTransformation(start int) ast.Stmt {
	p.expect(token.TRANSFORMATION)
	s := &ast.CreateTransformationStmt{Name: p.ident("a transformation name")}
	p.expect(token.INTO)
	s.Target = p.objectName("a table name")
	if p.tok == token.ATTRIBUTE {
		p.next()
		p.expect(token.GROUP)
		s.Group = p.groupName()
	}
	p.expect(token.AS)
	if !p.startsQuery() && p.tok != token.LPAREN {
		p.errorExpected("a query after AS")
	}
	s.Query = p.selectStmt()
	s.Span = p.span(start)
	return s
}

// alter parses ALTER TABLE t cmd, … and ALTER USER.
func (p *parser) alter() ast.Stmt {
	start := p.pos
	p.expect(token.ALTER)
	if p.got(token.USER) {
		s := &ast.AlterUserStmt{Name: p.ident("a user name")}
		s.Password = p.password()
		s.Span = p.span(start)
		return s
	}
	p.expect(token.TABLE)
	s := &ast.AlterTableStmt{Table: p.objectName("a table name")}
	for {
		s.Cmds = append(s.Cmds, p.alterCmd())
		if !p.got(token.COMMA) {
			break
		}
	}
	s.Span = p.span(start)
	return s
}

func (p *parser) alterCmd() ast.AlterCmd {
	start := p.pos
	switch p.tok {
	case token.ADD:
		p.next()
		if p.tok == token.ATTRIBUTE && p.peek(1) == token.GROUP {
			g := p.attributeGroup(true)
			return &ast.AddGroup{Span: p.span(start), Group: g}
		}
		p.got(token.COLUMN)
		c := &ast.AddColumn{Column: p.columnDef()}
		if p.got(token.TO) {
			p.expect(token.ATTRIBUTE)
			p.expect(token.GROUP)
			c.Group = p.groupName()
		}
		c.Span = p.span(start)
		return c
	case token.DROP:
		p.next()
		p.got(token.COLUMN)
		c := &ast.DropColumn{IfExists: p.ifExists(), Name: p.ident("a column name")}
		c.Span = p.span(start)
		return c
	case token.RENAME:
		p.next()
		if p.got(token.TO) {
			return &ast.RenameTable{New: p.ident("a table name"), Span: p.span(start)}
		}
		p.got(token.COLUMN)
		c := &ast.RenameColumn{Old: p.ident("a column name")}
		p.expect(token.TO)
		c.New = p.ident("a column name")
		c.Span = p.span(start)
		return c
	case token.ALTER:
		p.next()
		p.got(token.COLUMN)
		col := p.ident("a column name")
		switch p.tok {
		case token.SET:
			p.next()
			if p.got(token.DATA) {
				p.expect(token.TYPE)
				t := p.typeName()
				return &ast.AlterColumnType{Span: p.span(start), Column: col, Type: t}
			}
			p.expect(token.DEFAULT)
			e := p.expr()
			return &ast.SetDefault{Span: p.span(start), Column: col, Expr: e}
		case token.DROP:
			p.next()
			p.expect(token.DEFAULT)
			return &ast.DropDefault{Span: p.span(start), Column: col}
		case token.TYPE:
			p.next()
			t := p.typeName()
			return &ast.AlterColumnType{Span: p.span(start), Column: col, Type: t}
		}
		p.errorExpected("SET DEFAULT, DROP DEFAULT, TYPE or SET DATA TYPE")
	case token.SET:
		p.next()
		p.expect(token.POLICY)
		list := p.identList("a policy name")
		return &ast.SetPolicy{Span: p.span(start), Policies: list}
	}
	p.errorExpected("ADD, DROP, RENAME, ALTER COLUMN or SET POLICY")
	return nil
}

// drop parses DROP TABLE|INDEX|POLICY|TRANSFORMATION|USER [IF EXISTS]
// name, ….
func (p *parser) drop() ast.Stmt {
	start := p.pos
	p.expect(token.DROP)
	s := &ast.DropStmt{}
	switch p.tok {
	case token.TABLE:
		s.Kind = ast.ObjTable
	case token.INDEX:
		s.Kind = ast.ObjIndex
	case token.POLICY:
		s.Kind = ast.ObjPolicy
	case token.TRANSFORMATION:
		s.Kind = ast.ObjTransformation
	case token.USER:
		s.Kind = ast.ObjUser
	default:
		if !p.wordIs("view") {
			p.errorExpected("TABLE, VIEW, INDEX, POLICY, TRANSFORMATION or USER after DROP")
		}
		s.Kind = ast.ObjView
	}
	p.next()
	s.IfExists = p.ifExists()
	for {
		s.Names = append(s.Names, p.objectName("a name"))
		if !p.got(token.COMMA) {
			break
		}
	}
	s.Span = p.span(start)
	return s
}
