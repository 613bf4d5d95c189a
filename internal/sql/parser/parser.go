package parser

import (
	"fmt"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/scanner"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
)

// maxDepth bounds the nesting of expressions and queries (invariant 2).
// PostgreSQL's own limit comes from its stack size; 1000 is far beyond any
// statement a person or a generator writes.
const maxDepth = 1000

// Parse parses exactly one statement; a trailing semicolon is allowed.
func Parse(sql string) (ast.Stmt, error) {
	stmts, err := parse(sql, true)
	if err != nil {
		return nil, err
	}
	return stmts[0], nil
}

// ParseAll parses a script of statements separated by semicolons. Empty
// statements (";;") are skipped. Each statement's Pos and End give its
// byte range, without the semicolon, so a caller can run or echo them one
// at a time.
func ParseAll(sql string) ([]ast.Stmt, error) {
	stmts, err := parse(sql, false)
	if err != nil {
		return nil, err
	}
	return stmts, nil
}

// ParseExpr parses a single scalar expression, as a DEFAULT clause stored
// in the catalog is read back.
func ParseExpr(sql string) (e ast.Expr, err error) {
	p := newParser(sql)
	defer p.recover(&err)
	p.next()
	e = p.expr()
	if p.tok != token.EOF {
		p.errorExpected("end of expression")
	}
	return e, nil
}

func parse(sql string, one bool) (stmts []ast.Stmt, err error) {
	p := newParser(sql)
	defer p.recover(&err)
	p.next()
	for {
		for p.tok == token.SEMICOLON {
			p.next()
		}
		if p.tok == token.EOF {
			break
		}
		if one && len(stmts) == 1 {
			p.fail(p.syntaxError().WithDetail("expected one statement, found a second one"))
		}
		stmts = append(stmts, p.stmt())
		if p.tok != token.SEMICOLON && p.tok != token.EOF {
			p.errorExpected(`";" or end of input`)
		}
	}
	if one && len(stmts) == 0 {
		p.fail(p.syntaxError().WithDetail("expected a statement"))
	}
	return stmts, nil
}

// item is one scanned token.
type item struct {
	tok      token.Token
	pos, end int
	lit      string
}

// parser is the state of one parse.
type parser struct {
	src string
	sc  scanner.Scanner

	item           // the current token
	prevEnd int    // end of the previous token: the End of the node just parsed
	ahead   []item // tokens scanned beyond the current one, oldest first
	depth   int

	// relAsOf is the position of the first relation-level AS OF in the
	// query block being parsed, or -1 (invariant 4).
	relAsOf int

	// Slabs the rows and lone literals of VALUES lists are cut from: a
	// long list is thousands of them, one allocation each otherwise.
	rows  []ast.Row
	items []ast.Expr
	nums  []ast.NumberLit
	strs  []ast.StringLit

	// compact is set while the next VALUES list parsed is an INSERT's
	// own, whose rows of lone literals values keeps as ast.LitRows.
	compact bool
}

// noCompact turns compact VALUES rows off, for tests that compare the
// two forms; test-only, set before parsing (not safe to change while
// parses run).
var noCompact bool

// valuesSlab is how many elements a parser slab holds.
const valuesSlab = 256

// cut returns the address of a fresh zero element of slab, starting a
// new slab when it is full.
func cut[T any](slab *[]T) *T {
	if len(*slab) == cap(*slab) {
		*slab = make([]T, 0, valuesSlab)
	}
	*slab = (*slab)[:len(*slab)+1]
	return &(*slab)[len(*slab)-1]
}

// cutItems returns an empty slice with room for n items from the items
// slab, capped so that appending past n never writes into a neighbour's.
func (p *parser) cutItems(n int) []ast.Expr {
	if n == 0 || n > valuesSlab {
		return make([]ast.Expr, 0, n)
	}
	if cap(p.items)-len(p.items) < n {
		p.items = make([]ast.Expr, 0, valuesSlab)
	}
	s := len(p.items)
	p.items = p.items[:s+n]
	return p.items[s : s : s+n]
}

// bailout carries a syntax error from the point of failure to recover.
type bailout struct{ err *sqlerr.Error }

// newParser prepares a parse of sql; the caller reads the first token
// with next once its recover is deferred.
func newParser(sql string) *parser {
	p := &parser{src: sql, relAsOf: -1}
	p.sc.Init(sql)
	p.ahead = make([]item, 0, 4)
	return p
}

func (p *parser) recover(err *error) {
	if r := recover(); r != nil {
		b, ok := r.(bailout)
		if !ok {
			panic(r)
		}
		*err = b.err.WithSQL(p.src)
	}
}

func (p *parser) scan() item {
	tok, pos, end, lit := p.sc.Scan()
	return item{tok, pos, end, lit}
}

// next advances to the next token. Reaching a malformed token stops the
// parse with the scanner's error.
func (p *parser) next() {
	p.prevEnd = p.end
	if len(p.ahead) > 0 {
		p.item = p.ahead[0]
		copy(p.ahead, p.ahead[1:])
		p.ahead = p.ahead[:len(p.ahead)-1]
	} else {
		p.item = p.scan()
	}
	if p.tok == token.ILLEGAL {
		p.fail(p.sc.Err())
	}
}

// peek returns the token n places after the current one (n >= 1).
func (p *parser) peek(n int) token.Token {
	for len(p.ahead) < n {
		p.ahead = append(p.ahead, p.scan())
	}
	return p.ahead[n-1].tok
}

// peekLit returns the text of the token n places after the current one.
func (p *parser) peekLit(n int) string {
	p.peek(n)
	return p.ahead[n-1].lit
}

// got advances and reports true if the current token is tok.
func (p *parser) got(tok token.Token) bool {
	if p.tok == tok {
		p.next()
		return true
	}
	return false
}

// expect consumes tok or fails with "expected tok".
func (p *parser) expect(tok token.Token) int {
	pos := p.pos
	if p.tok != tok {
		p.errorExpected(describeToken(tok))
	}
	p.next()
	return pos
}

func describeToken(tok token.Token) string {
	if tok.IsOperator() {
		return `"` + tok.String() + `"`
	}
	return tok.String()
}

// text is the source text of the current token.
func (p *parser) text() string { return p.src[p.pos:p.end] }

// found describes the current token for an error's detail.
func (p *parser) found() string {
	if p.tok == token.EOF {
		return "end of input"
	}
	return fmt.Sprintf("%q", p.text())
}

func (p *parser) fail(err *sqlerr.Error) {
	panic(bailout{err})
}

// syntaxError is `syntax error at or near "tok"` at the current token.
func (p *parser) syntaxError() *sqlerr.Error {
	if p.tok == token.EOF {
		return sqlerr.Syntax(p.pos, "", "")
	}
	return sqlerr.Syntax(p.pos, p.text(), "")
}

// errorExpected fails at the current token with the detail "expected
// what, found …".
func (p *parser) errorExpected(what string) {
	p.fail(p.syntaxError().WithDetail("expected %s, found %s", what, p.found()))
}

// failHere fails at the current token with `syntax error at or near
// "tok": why`, for errors whose reason must show in the one-line message.
func (p *parser) failHere(format string, args ...any) {
	p.fail(p.syntaxErrorWhy(fmt.Sprintf(format, args...)))
}

// syntaxErrorWhy is syntaxError with a reason appended to the message.
func (p *parser) syntaxErrorWhy(why string) *sqlerr.Error {
	e := p.syntaxError()
	e.Message += ": " + why
	return e
}

// failAt fails with a message of its own at a byte position.
func (p *parser) failAt(pos int, format string, args ...any) {
	p.fail(sqlerr.New(sqlerr.CodeSyntax, format, args...).WithPos(pos))
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(sqlerr.New(sqlerr.CodeProgramLimitExceeded, "statement is nested too deeply (more than %d levels)", maxDepth).WithPos(p.pos))
	}
}

func (p *parser) leave() { p.depth-- }

// span returns the span from start to the end of the last consumed token.
func (p *parser) span(start int) ast.Span { return ast.Span{Start: start, Stop: p.prevEnd} }

// isIdent reports whether the current token can be an identifier: a plain
// or quoted name, or a non-reserved keyword.
func (p *parser) isIdent() bool {
	return p.tok == token.IDENT || p.tok.IsKeyword() && !p.tok.IsReserved()
}

// ident parses an identifier; what names it in the error.
func (p *parser) ident(what string) *ast.Ident {
	if !p.isIdent() {
		if p.tok.IsReserved() {
			p.fail(p.syntaxError().WithDetail("expected %s, found reserved word %s", what, p.found()).
				WithHint("a reserved word is a name only when double-quoted: %q", p.lit))
		}
		p.errorExpected(what)
	}
	id := &ast.Ident{Span: ast.Span{Start: p.pos, Stop: p.end}, Name: p.lit}
	p.next()
	return id
}

// groupName parses the name of an existing attribute group, where the
// group every keyed table has may be written default unquoted (R4.4), as
// the SPEC names it, though DEFAULT is a reserved word.
func (p *parser) groupName() *ast.Ident {
	if p.tok == token.DEFAULT {
		id := &ast.Ident{Span: ast.Span{Start: p.pos, Stop: p.end}, Name: "default"}
		p.next()
		return id
	}
	return p.ident("an attribute group name")
}

// label parses a name after AS, where PostgreSQL accepts any word,
// reserved ones included.
func (p *parser) label(what string) *ast.Ident {
	if p.tok.IsKeyword() {
		id := &ast.Ident{Span: ast.Span{Start: p.pos, Stop: p.end}, Name: p.lit}
		p.next()
		return id
	}
	return p.ident(what)
}

// identList parses ident, ident, ….
func (p *parser) identList(what string) []*ast.Ident {
	list := []*ast.Ident{p.ident(what)}
	for p.got(token.COMMA) {
		list = append(list, p.ident(what))
	}
	return list
}

// parenIdents parses ( ident, … ).
func (p *parser) parenIdents(what string) []*ast.Ident {
	p.expect(token.LPAREN)
	list := p.identList(what)
	p.expect(token.RPAREN)
	return list
}

// objectName parses name or schema.name.
func (p *parser) objectName(what string) *ast.ObjectName {
	start := p.pos
	first := p.ident(what)
	n := &ast.ObjectName{Name: first.Name}
	if p.got(token.DOT) {
		n.Schema = n.Name
		n.Name = p.ident(what).Name
	}
	n.Span = p.span(start)
	return n
}

// wordIs reports whether the current token is the unquoted word w (lower
// case), keyword or not: for words that matter in one place only, such as
// APPEND after MODE.
func (p *parser) wordIs(w string) bool {
	return (p.tok == token.IDENT && p.pos < len(p.src) && p.src[p.pos] != '"' || p.tok.IsKeyword()) && p.lit == w
}

// stmt parses one statement.
func (p *parser) stmt() ast.Stmt {
	switch p.tok {
	case token.WITH:
		return p.withStmt()
	case token.SELECT, token.VALUES, token.LPAREN:
		return p.selectStmt()
	case token.INSERT, token.UPSERT:
		return p.insert()
	case token.UPDATE:
		return p.update()
	case token.DELETE:
		return p.delete()
	case token.CREATE:
		return p.create()
	case token.ALTER:
		return p.alter()
	case token.DROP:
		return p.drop()
	case token.BEGIN, token.START, token.COMMIT, token.END, token.ROLLBACK:
		return p.transaction()
	case token.EXPLAIN:
		return p.explain()
	case token.SHOW:
		return p.show()
	case token.DESCRIBE, token.DESC:
		return p.describe()
	case token.SET:
		return p.set()
	case token.RESET:
		return p.reset()
	case token.IDENT:
		// CHECKPOINT is a word here, not a keyword: a table or column
		// may still be called checkpoint.
		if p.wordIs("checkpoint") {
			start := p.pos
			p.next()
			return &ast.CheckpointStmt{Span: p.span(start)}
		}
		if p.wordIs("savepoint") || p.wordIs("release") {
			return p.savepoint()
		}
	case token.SYNC:
		start := p.pos
		p.next()
		p.expect(token.TRANSFORMATIONS)
		return &ast.SyncTransformationsStmt{Span: p.span(start)}
	}
	p.errorExpected("a statement (SELECT, INSERT, CREATE TABLE, …)")
	return nil
}
