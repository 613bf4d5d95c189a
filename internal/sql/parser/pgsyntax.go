package parser

import (
	"strings"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
)

// The PostgreSQL syntax that psql and the drivers put in their catalog
// queries (docs/pg-catalog.md). Each form becomes a node the binder
// already knows, so that nothing downstream needs a special case:
//
//	x ~ y, x !~ y, x ~* y, x !~* y   textregexeq(x, y), textregexne, texticregexeq, texticregexne
//	x OPERATOR(pg_catalog.op) y      x op y
//	x COLLATE "C" / pg_catalog.default  x (only the byte-order collations exist)
//	x::regclass, ::regtype, …        regclass(x), regtype(x), … (PostgreSQL's own function forms)
//	x::pg_catalog.text, ::oid, ::name, ::int2, ::int4   the Strata type of that name
//	x::int2[] (any array type)        x::TEXT: arrays are their text form
//	current_user, session_user, current_catalog, current_schema
//	                                  the function call of that name
//	ARRAY(query)                      array((query)): the text form of a one-column
//	                                  result of at most one row (docs/pg-catalog.md)
//	a[i]                              array_element(a, i): element i (from 1) of an array's text form
//	x = ANY(a), x <> ALL(a) for an array a that is not a query
//	                                  anyarray_op('=', x, a), anyarray_op('<>', x, a, TRUE)

// regexFuncs names the function each regular-expression operator is, as in
// PostgreSQL's pg_operator (oprcode).
var regexFuncs = map[token.Token]string{
	token.REGEX: "textregexeq", token.NREGEX: "textregexne",
	token.IREGEX: "texticregexeq", token.NIREGEX: "texticregexne",
}

// isRegex reports whether t is one of the regular-expression operators.
func isRegex(t token.Token) bool { _, ok := regexFuncs[t]; return ok }

// atOperatorSyntax reports whether the current token starts OPERATOR(…).
func (p *parser) atOperatorSyntax() bool {
	return p.tok == token.IDENT && p.wordIs("operator") && p.peek(1) == token.LPAREN
}

// operatorSyntax parses OPERATOR ( [schema .] op ) and returns op. Only the
// pg_catalog schema exists, so any other schema is an unknown operator.
func (p *parser) operatorSyntax() token.Token {
	start := p.pos
	p.next()
	p.expect(token.LPAREN)
	if p.isIdent() {
		schema := p.lit
		p.next()
		p.expect(token.DOT)
		if schema != "pg_catalog" {
			p.fail(sqlerr.New(codeInvalidSchema, "schema %q does not exist", schema).WithPos(start))
		}
	}
	op := p.tok
	if !isCompare(op) && !isRegex(op) && ast.BinaryPrec(op) == 0 || op == token.AND || op == token.OR {
		p.errorExpected("an operator inside OPERATOR(…)")
	}
	p.next()
	p.expect(token.RPAREN)
	return op
}

// regexCall is x op y for a regular-expression operator op.
func regexCall(span ast.Span, op token.Token, x, y ast.Expr) ast.Expr {
	return &ast.FuncCall{Span: span, Name: regexFuncs[op], Args: []ast.Expr{x, y}}
}

// binaryOp builds x op y for an operator read inside OPERATOR(…) or as a
// regular-expression operator (at the level of concatExpr).
func binaryOp(span ast.Span, op token.Token, x, y ast.Expr) ast.Expr {
	if isRegex(op) {
		return regexCall(span, op, x, y)
	}
	return &ast.BinaryExpr{Span: span, Op: op, L: x, R: y}
}

// collations are the collations that exist: Strata compares text by its
// bytes, which is what PostgreSQL's C and POSIX collations do, and its
// database default is C.
var collations = map[string]bool{"default": true, "c": true, "posix": true, "ucs_basic": true}

// atCollate reports whether the current token is COLLATE followed by a
// collation name (COLLATE is not a Strata keyword, so a select-list alias
// named collate stays one when no name follows).
func (p *parser) atCollate() bool {
	if !p.wordIs("collate") {
		return false
	}
	switch p.peek(1) {
	case token.IDENT, token.DEFAULT:
		return true
	}
	return false
}

// collate parses COLLATE [schema .] name after x and returns x: every
// collation Strata accepts orders text the same way.
func (p *parser) collate(x ast.Expr) ast.Expr {
	p.next()
	start := p.pos
	name := p.lit
	p.next()
	if p.got(token.DOT) {
		if name != "pg_catalog" {
			p.fail(sqlerr.New(codeInvalidSchema, "schema %q does not exist", name).WithPos(start))
		}
		if p.tok != token.IDENT && p.tok != token.DEFAULT {
			p.errorExpected("a collation name")
		}
		name = p.lit
		p.next()
	}
	if !collations[strings.ToLower(name)] {
		p.fail(sqlerr.New(sqlerr.CodeUndefinedObject, "collation %q does not exist", name).WithPos(start).
			WithHint("Strata compares text by its bytes: the collations are default, C, POSIX and ucs_basic"))
	}
	return x
}

// regTypes are PostgreSQL's object-identifier alias types. A cast to one
// becomes a call of the function of that name, which PostgreSQL also has:
// regclass('t') is 't'::regclass.
var regTypes = map[string]bool{"REGCLASS": true, "REGTYPE": true, "REGNAMESPACE": true, "REGPROC": true,
	"REGPROCEDURE": true, "REGROLE": true, "REGOPER": true}

// pgTypeNames maps PostgreSQL type names Strata does not spell that way to
// Strata's. INT8 and FLOAT8 are only PostgreSQL's when written
// pg_catalog.int8: unqualified, INT8 is Strata's one-byte integer (R2.1).
var pgTypeNames = map[string]string{"OID": "UINT32", "NAME": "TEXT", "INT2": "SMALLINT", "INT4": "INT",
	"BPCHAR": "TEXT", "CHAR": "TEXT", "XID": "UINT32", "CID": "UINT32", "REGCONFIG": "UINT32"}

var pgQualifiedTypeNames = map[string]string{"INT8": "BIGINT", "FLOAT8": "DOUBLE PRECISION", "FLOAT4": "REAL",
	"BOOL": "BOOL", "TEXT": "TEXT", "VARCHAR": "TEXT", "NUMERIC": "NUMERIC", "TIMESTAMPTZ": "TIMESTAMPTZ",
	"DATE": "DATE", "BYTEA": "BYTEA", "UUID": "UUID"}

// castTarget parses the type after :: or AS in a cast, with an optional
// pg_catalog. qualifier, and returns the cast of x: a CastExpr, or the call
// of a reg* function.
func (p *parser) castTarget(start int, x ast.Expr, colons bool) ast.Expr {
	qualified := false
	if p.wordIs("pg_catalog") && p.peek(1) == token.DOT {
		p.next()
		p.next()
		qualified = true
	}
	t := p.typeName()
	if p.tok == token.LBRACK {
		// An array is its PostgreSQL text form ({a,b}) here, so a cast to
		// an array type is a cast to text (docs/pg-catalog.md).
		p.next()
		p.expect(token.RBRACK)
		t = &ast.TypeName{Span: p.span(t.Pos()), Name: "TEXT"}
	}
	if regTypes[t.Name] && len(t.Params) == 0 {
		return &ast.FuncCall{Span: p.span(start), Name: strings.ToLower(t.Name), Args: []ast.Expr{x}}
	}
	if n, ok := pgTypeNames[t.Name]; ok && (t.Name != "CHAR" || qualified) && len(t.Params) == 0 {
		t.Name = n
	} else if n, ok := pgQualifiedTypeNames[t.Name]; ok && qualified {
		t.Name = n
	}
	return &ast.CastExpr{Span: p.span(start), X: x, Type: t, Colons: colons}
}

// atValueFunction reports whether the current token is one of
// ast.ValueFunctions, unquoted and not followed by "(" or ".".
func (p *parser) atValueFunction() bool {
	if p.tok != token.IDENT || p.pos < len(p.src) && p.src[p.pos] == '"' || !ast.ValueFunctions[p.lit] {
		return false
	}
	next := p.peek(1)
	return next != token.LPAREN && next != token.DOT
}

// valueFunction parses one of ast.ValueFunctions as a call.
func (p *parser) valueFunction() ast.Expr {
	start := p.pos
	name := p.lit
	p.next()
	return &ast.FuncCall{Span: p.span(start), Name: name}
}

// codeInvalidSchema is SQLSTATE invalid_schema_name.
const codeInvalidSchema = "3F000"

// atArraySubquery reports whether the current token starts ARRAY(query).
func (p *parser) atArraySubquery() bool {
	if !p.wordIs("array") || p.tok != token.IDENT || p.peek(1) != token.LPAREN {
		return false
	}
	switch p.peek(2) {
	case token.SELECT, token.WITH, token.VALUES:
		return true
	}
	return false
}

// arraySubquery parses ARRAY(query).
func (p *parser) arraySubquery() ast.Expr {
	start := p.pos
	p.next()
	sub := p.parenExpr()
	return &ast.FuncCall{Span: p.span(start), Name: "array", Args: []ast.Expr{sub}}
}

// anyArray parses the ( array ) after x op ANY or x op ALL when what follows
// is not a query: the array is an expression of PostgreSQL's array text
// form.
func (p *parser) anyArray(start, opPos int, x ast.Expr, op token.Token, all bool) ast.Expr {
	if op != token.EQ && op != token.NE {
		p.fail(sqlerr.NotSupported(opPos, "only = and <> may be applied to ANY or ALL of an array"))
	}
	litPos := p.pos
	a := p.expr()
	p.expect(token.RPAREN)
	args := []ast.Expr{&ast.StringLit{Span: ast.Span{Start: litPos, Stop: litPos}, Value: op.String()}, x, a}
	if all {
		args = append(args, &ast.BoolLit{Span: ast.Span{Start: litPos, Stop: litPos}, Value: true})
	}
	return &ast.FuncCall{Span: p.span(start), Name: "anyarray_op", Args: args}
}

// subscript parses [i] after an array expression a. Slices (a[i:j]) are not
// supported.
func (p *parser) subscript(start int, a ast.Expr) ast.Expr {
	p.next()
	i := p.expr()
	if p.tok == token.COLON {
		p.fail(sqlerr.NotSupported(p.pos, "array slices are not supported"))
	}
	p.expect(token.RBRACK)
	return &ast.FuncCall{Span: p.span(start), Name: "array_element", Args: []ast.Expr{a, i}}
}
