package ast

import (
	"strconv"

	"github.com/strata-db/strata/internal/sql/token"
)

// Operator precedence, loosest first, as PostgreSQL's grammar has it. The
// parser and the printer agree on these levels; the printer adds
// parentheses only where a child binds looser than its position needs,
// which never happens for a parsed tree (parentheses are ParenExpr nodes).
const (
	PrecOr      = 1
	PrecAnd     = 2
	PrecNot     = 3
	PrecIs      = 4
	PrecCompare = 5
	PrecPred    = 6 // BETWEEN, IN, LIKE, ILIKE
	PrecConcat  = 7 // || and PostgreSQL's other operators: & | # << >>, prefix ~
	PrecAdd     = 8
	PrecMul     = 9
	PrecPow     = 10
	PrecUnary   = 11
	PrecCast    = 12
	PrecPrimary = 13
)

// BinaryPrec returns the precedence of a binary operator token, 0 if op is
// not one.
func BinaryPrec(op token.Token) int {
	switch op {
	case token.OR:
		return PrecOr
	case token.AND:
		return PrecAnd
	case token.EQ, token.NE, token.LT, token.LE, token.GT, token.GE:
		return PrecCompare
	case token.CONCAT, token.AMP, token.BAR, token.HASH, token.SHL, token.SHR:
		return PrecConcat
	case token.PLUS, token.MINUS:
		return PrecAdd
	case token.MUL, token.DIV, token.MOD:
		return PrecMul
	case token.CARET:
		return PrecPow
	}
	return 0
}

// exprPrec returns how tightly e binds when printed.
func exprPrec(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		return BinaryPrec(e.Op)
	case *UnaryExpr:
		if e.Op == token.NOT {
			return PrecNot
		}
		// A prefix ~ prints its operand at PrecAdd (below), so it needs
		// no parentheses as an operand of a binary operator.
		return PrecUnary
	case *IsExpr:
		return PrecIs
	case *QuantifiedExpr:
		return PrecCompare
	case *BetweenExpr, *InExpr, *LikeExpr:
		return PrecPred
	case *CastExpr:
		if e.Colons {
			return PrecCast
		}
	case *TypedLit, *IntervalLit:
		// TIMESTAMP '…' is a primary, but printing it as a cast operand or
		// after a unary minus is still unambiguous.
	}
	return PrecPrimary
}

// expr prints e, in parentheses if it binds looser than min.
func (p *printer) expr(e Expr, min int) {
	if e == nil {
		return
	}
	if exprPrec(e) < min {
		p.str("(")
		p.expr(e, 0)
		p.str(")")
		return
	}
	switch e := e.(type) {
	case *ColumnRef:
		if e.Schema != "" {
			p.ident(e.Schema)
			p.str(".")
		}
		if e.Table != "" {
			p.ident(e.Table)
			p.str(".")
		}
		p.ident(e.Name)
	case *StarExpr:
		if e.Schema != "" {
			p.ident(e.Schema)
			p.str(".")
		}
		if e.Table != "" {
			p.ident(e.Table)
			p.str(".")
		}
		p.str("*")
	case *NumberLit:
		p.str(e.Text)
	case *StringLit:
		p.str(FormatString(e.Value))
	case *BoolLit:
		if e.Value {
			p.str("TRUE")
		} else {
			p.str("FALSE")
		}
	case *NullLit:
		p.str("NULL")
	case *DefaultExpr:
		p.str("DEFAULT")
	case *Param:
		p.str("$" + strconv.Itoa(e.Index))
	case *TypedLit:
		p.typeName(e.Type)
		p.str(" " + FormatString(e.Value))
	case *IntervalLit:
		p.str("INTERVAL " + FormatString(e.Value))
		if e.Field != "" {
			p.str(" " + e.Field)
		}
	case *UnaryExpr:
		p.unary(e)
	case *BinaryExpr:
		prec := BinaryPrec(e.Op)
		p.expr(e.L, prec)
		p.str(" " + e.Op.String() + " ")
		p.expr(e.R, prec+1)
	case *IsExpr:
		p.expr(e.X, PrecIs)
		p.str(" IS ")
		if e.Not {
			p.str("NOT ")
		}
		switch e.Kind {
		case IsNull:
			p.str("NULL")
		case IsTrue:
			p.str("TRUE")
		case IsFalse:
			p.str("FALSE")
		case IsUnknown:
			p.str("UNKNOWN")
		case IsDistinctFrom:
			p.str("DISTINCT FROM ")
			p.expr(e.From, PrecCompare)
		}
	case *BetweenExpr:
		p.expr(e.X, PrecConcat)
		p.not(e.Not)
		p.str(" BETWEEN ")
		if e.Symmetric {
			p.str("SYMMETRIC ")
		}
		p.expr(e.Lo, PrecConcat)
		p.str(" AND ")
		p.expr(e.Hi, PrecConcat)
	case *InExpr:
		p.expr(e.X, PrecConcat)
		p.not(e.Not)
		p.str(" IN (")
		if e.Query != nil {
			p.selectStmt(e.Query)
		} else {
			p.exprs(e.List)
		}
		p.str(")")
	case *LikeExpr:
		p.expr(e.X, PrecConcat)
		p.not(e.Not)
		if e.ILike {
			p.str(" ILIKE ")
		} else {
			p.str(" LIKE ")
		}
		p.expr(e.Pattern, PrecConcat)
		if e.Escape != nil {
			p.str(" ESCAPE ")
			p.expr(e.Escape, PrecConcat)
		}
	case *CastExpr:
		if e.Colons {
			p.expr(e.X, PrecCast)
			p.str("::")
			p.typeName(e.Type)
			return
		}
		p.str("CAST(")
		p.expr(e.X, 0)
		p.str(" AS ")
		p.typeName(e.Type)
		p.str(")")
	case *CaseExpr:
		p.str("CASE")
		if e.Operand != nil {
			p.str(" ")
			p.expr(e.Operand, 0)
		}
		for _, w := range e.Whens {
			p.str(" WHEN ")
			p.expr(w.Cond, 0)
			p.str(" THEN ")
			p.expr(w.Result, 0)
		}
		if e.Else != nil {
			p.str(" ELSE ")
			p.expr(e.Else, 0)
		}
		p.str(" END")
	case *QuantifiedExpr:
		p.expr(e.X, PrecCompare)
		p.str(" " + e.Op.String() + " ")
		if e.All {
			p.str("ALL (")
		} else {
			p.str("ANY (")
		}
		p.selectStmt(e.Query)
		p.str(")")
	case *ExistsExpr:
		p.str("EXISTS (")
		p.selectStmt(e.Query)
		p.str(")")
	case *SubqueryExpr:
		p.str("(")
		p.selectStmt(e.Query)
		p.str(")")
	case *FuncCall:
		if e.Schema == "" && ValueFunctions[e.Name] && len(e.Args) == 0 && !e.Star && !e.Distinct &&
			e.Filter == nil && e.Over == nil && len(e.OrderBy) == 0 {
			// current_date, current_user, …: as the SQL standard writes
			// them (PostgreSQL refuses current_date()).
			p.str(e.Name)
			return
		}
		if e.Schema != "" {
			p.ident(e.Schema)
			p.str(".")
		}
		if e.Schema == "" && (e.Name == "rollup" || e.Name == "cube") {
			// Bare, they would read back as GROUP BY's constructs.
			p.str(`"` + e.Name + `"`)
		} else {
			p.ident(e.Name)
		}
		p.str("(")
		if e.Star {
			p.str("*")
		} else {
			if e.Distinct {
				p.str("DISTINCT ")
			}
			p.exprs(e.Args)
		}
		if len(e.OrderBy) > 0 && !e.WithinGroup {
			p.str(" ORDER BY ")
			p.orderItems(e.OrderBy)
		}
		p.str(")")
		if len(e.OrderBy) > 0 && e.WithinGroup {
			p.str(" WITHIN GROUP (ORDER BY ")
			p.orderItems(e.OrderBy)
			p.str(")")
		}
		if e.Filter != nil {
			p.str(" FILTER (WHERE ")
			p.expr(e.Filter, 0)
			p.str(")")
		}
		if e.Over != nil {
			p.over(e.Over)
		}
	case *ParenExpr:
		p.str("(")
		p.expr(e.X, 0)
		p.str(")")
	case *TupleExpr:
		p.str("(")
		p.exprs(e.Items)
		p.str(")")
	case *GroupingSet:
		p.str([...]string{"GROUPING SETS (", "ROLLUP (", "CUBE (", "("}[e.Kind])
		p.exprs(e.Items)
		p.str(")")
	default:
		p.str("/* unprintable expression */")
	}
}

func (p *printer) not(not bool) {
	if not {
		p.str(" NOT")
	}
}

// unary prints a prefix operator. A minus before an operand that itself
// prints with a leading minus gets a space, so "- -1" does not become the
// comment "--1".
func (p *printer) unary(e *UnaryExpr) {
	if e.Op == token.NOT {
		p.str("NOT ")
		p.expr(e.X, PrecNot)
		return
	}
	if e.Op == token.REGEX {
		// PostgreSQL's prefix ~ (bitwise NOT) takes everything that binds
		// tighter than its other operators: ~1 + 2 is ~(1 + 2).
		p.str("~")
		if inner, ok := e.X.(*UnaryExpr); ok && inner.Op == token.REGEX {
			p.str(" ")
			p.unary(inner)
			return
		}
		p.expr(e.X, PrecAdd)
		return
	}
	p.str(e.Op.String())
	if inner, ok := e.X.(*UnaryExpr); ok && inner.Op != token.NOT {
		p.str(" ")
	}
	p.expr(e.X, PrecUnary)
}
