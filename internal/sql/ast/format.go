package ast

import (
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/sql/token"
)

// Format returns n as canonical SQL: keywords in upper case, identifiers
// quoted only when they must be, one space between tokens, clauses in a
// fixed order. Parsing the result gives a tree Equal to n (invariant 2).
func Format(n Node) string {
	var p printer
	p.node(n)
	return p.b.String()
}

// String is Format, under the name fmt-style callers look for.
func String(n Node) string { return Format(n) }

// FormatIdent returns name as it must be written in SQL: bare when it is a
// plain lower-case word that is not a reserved keyword, double-quoted
// otherwise.
func FormatIdent(name string) string {
	if isBareIdent(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// FormatString returns s as a SQL string literal.
func FormatString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func isBareIdent(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', c == '_', c >= 0x80:
		case '0' <= c && c <= '9', c == '$':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	// LATERAL is no keyword of the scanner's, but before a relation it is
	// read as one (PostgreSQL reserves it).
	return !token.Lookup(name).IsReserved() && name != "lateral"
}

// FormatView returns a view's query laid out as PostgreSQL's
// pg_get_viewdef lays it out: each clause of the outermost query on a line
// of its own, indented so the keywords end in one column (" SELECT",
// "   FROM", "  WHERE"), one select item per line, set operators on lines
// of their own. Nested queries stay on one line. Like Format's, the text
// parses back to a tree Equal to s.
func FormatView(s *SelectStmt) string {
	p := printer{lines: true}
	p.query(s)
	return p.b.String()
}

// printer accumulates SQL text.
type printer struct {
	b strings.Builder
	// lines breaks the clauses of the query being printed onto lines of
	// their own (FormatView); a nested query clears it.
	lines bool
}

// clause starts clause keyword kw: on a new line, indented by pad, when
// the printer breaks lines, else after a space.
func (p *printer) clause(pad, kw string) {
	if p.lines {
		p.str("\n" + pad + kw)
		return
	}
	p.str(" " + kw)
}

func (p *printer) str(s string)      { p.b.WriteString(s) }
func (p *printer) ident(name string) { p.b.WriteString(FormatIdent(name)) }

func (p *printer) idents(list []*Ident) {
	for i, id := range list {
		if i > 0 {
			p.str(", ")
		}
		p.ident(id.Name)
	}
}

func (p *printer) parenIdents(list []*Ident) {
	p.str("(")
	p.idents(list)
	p.str(")")
}

func (p *printer) objectName(n *ObjectName) {
	if n.Schema != "" {
		p.ident(n.Schema)
		p.str(".")
	}
	p.ident(n.Name)
}

func (p *printer) typeName(t *TypeName) {
	if isBareTypeName(t.Name) {
		p.str(t.Name)
	} else {
		p.ident(t.Name)
	}
	if len(t.Params) > 0 {
		p.str("(")
		for i, prm := range t.Params {
			if i > 0 {
				p.str(", ")
			}
			if prm.IsStr {
				p.str(FormatString(prm.Str))
			} else {
				p.str(strconv.FormatInt(prm.Int, 10))
			}
		}
		p.str(")")
	}
}

// isBareTypeName reports whether a type name can be printed unquoted: one
// upper-case word that is not reserved, or DOUBLE PRECISION, the one
// two-word name the parser reads.
func isBareTypeName(name string) bool {
	if name == "DOUBLE PRECISION" {
		return true
	}
	if name == "" || name != strings.ToUpper(name) {
		return false
	}
	return isBareIdent(strings.ToLower(name))
}

func (p *printer) node(n Node) {
	switch n := n.(type) {
	case Stmt:
		p.stmt(n)
	case Expr:
		p.expr(n, 0)
	case QueryBody:
		p.body(n, 0)
	case TableExpr:
		p.table(n)
	case AlterCmd:
		p.alterCmd(n)
	case *TypeName:
		p.typeName(n)
	case *Ident:
		p.ident(n.Name)
	case *ObjectName:
		p.objectName(n)
	case *ColumnDef:
		p.columnDef(n)
	case *AsOf:
		p.asOf(n)
	case *OrderItem:
		p.orderItem(n)
	case *SelectItem:
		p.selectItem(n)
	case nil:
	default:
		p.str("/* unprintable node */")
	}
}

func (p *printer) exprs(list []Expr) {
	for i, e := range list {
		if i > 0 {
			p.str(", ")
		}
		p.expr(e, 0)
	}
}

func (p *printer) asOf(a *AsOf) {
	if a.Kind == AsOfTimestamp {
		p.str("AS OF TIMESTAMP ")
	} else {
		p.str("AS OF COMMIT ")
	}
	p.expr(a.Expr, 0)
}
