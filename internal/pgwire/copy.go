package pgwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sql/scanner"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// COPY is a statement of the wire protocol more than of SQL: its data
// travels in CopyData messages, so the server reads it here rather than in
// the parser. Supported:
//
//	COPY t [(c, …)] FROM STDIN [[WITH] (FORMAT text|csv, HEADER [bool], DELIMITER 'x', NULL 'x', QUOTE 'x', ESCAPE 'x')]
//	COPY t [(c, …)] TO STDOUT [options]
//	COPY (query) TO STDOUT [options]
//
// and the pre-9.0 spellings (WITH CSV HEADER DELIMITER AS ',' NULL AS '').
// COPY FROM checks every value against its column's type first, so a bad
// row fails the COPY with its line number and nothing is written, and then
// writes all rows as ONE INSERT: one statement, one commit (R5.1).
// Values are held as a tree of string literals until then: a COPY's rows
// are in memory once, as they would be in one INSERT … VALUES.

// copyStmt is a parsed COPY.
type copyStmt struct {
	table   string   // for COPY t …
	columns []string // nil: every column
	query   string   // for COPY (query) TO STDOUT
	from    bool
	csv     bool
	binary  bool // FROM only: PostgreSQL's binary COPY format (pgx's CopyFrom)
	header  bool
	delim   byte // 0 until given: tab for text, comma for CSV
	null    string
	quote   byte
	escape  byte
}

// copyParser walks the tokens of a COPY statement.
type copyParser struct {
	sc  scanner.Scanner
	src string
	tok token.Token
	pos int
	end int
	lit string
}

func (p *copyParser) next() { p.tok, p.pos, p.end, p.lit = p.sc.Scan() }

func (p *copyParser) word() string {
	if p.tok == token.IDENT || p.tok.IsKeyword() {
		return p.lit
	}
	return ""
}

func (p *copyParser) errorf(format string, args ...any) error {
	if e := p.sc.Err(); e != nil {
		return e
	}
	return sqlerr.New(sqlerr.CodeSyntax, format, args...).WithPos(p.pos)
}

// parseCopy parses sql when it is a COPY statement; ok is false for any
// other statement.
func parseCopy(sql string) (cs *copyStmt, ok bool, err error) {
	p := &copyParser{src: sql}
	p.sc.Init(sql)
	p.next()
	if p.word() != "copy" {
		return nil, false, nil
	}
	p.next()
	cs = &copyStmt{null: `\N`, quote: '"'}
	if p.tok == token.LPAREN {
		depth, start := 1, p.end
		for depth > 0 {
			p.next()
			switch p.tok {
			case token.LPAREN:
				depth++
			case token.RPAREN:
				depth--
			case token.EOF, token.ILLEGAL:
				return nil, true, p.errorf("syntax error at end of input: unclosed ( in COPY")
			}
		}
		cs.query = strings.TrimSpace(sql[start:p.pos])
		p.next()
	} else {
		name := p.word()
		if name == "" {
			return nil, true, p.errorf("syntax error at or near %q: COPY wants a table name or (query)", sql[p.pos:p.end])
		}
		p.next()
		if p.tok == token.DOT {
			// schema.table: the one schema is public.
			p.next()
			if name = p.word(); name == "" {
				return nil, true, p.errorf("syntax error: table name expected after '.'")
			}
			p.next()
		}
		cs.table = name
		if p.tok == token.LPAREN {
			for {
				p.next()
				col := p.word()
				if col == "" {
					return nil, true, p.errorf("syntax error: column name expected")
				}
				cs.columns = append(cs.columns, col)
				p.next()
				if p.tok == token.RPAREN {
					break
				}
				if p.tok != token.COMMA {
					return nil, true, p.errorf("syntax error: , or ) expected in the column list")
				}
			}
			p.next()
		}
	}
	switch p.word() {
	case "from":
		cs.from = true
	case "to":
	default:
		return nil, true, p.errorf("syntax error: COPY wants FROM STDIN or TO STDOUT")
	}
	if cs.from && cs.query != "" {
		return nil, true, p.errorf("COPY FROM does not take a query: name a table")
	}
	p.next()
	switch w := p.word(); {
	case cs.from && w == "stdin", !cs.from && w == "stdout":
	case w == "program" || p.tok == token.STRING:
		return nil, true, sqlerr.New("0A000", "COPY to or from a file or program is not supported: use STDIN or STDOUT").WithPos(p.pos)
	default:
		return nil, true, p.errorf("syntax error: COPY wants FROM STDIN or TO STDOUT")
	}
	p.next()
	if p.word() == "with" {
		p.next()
	}
	nullSet := false
	if p.tok == token.LPAREN {
		for {
			p.next()
			opt := p.word()
			if opt == "" {
				return nil, true, p.errorf("syntax error: COPY option expected")
			}
			p.next()
			if err := cs.option(p, opt, &nullSet); err != nil {
				return nil, true, err
			}
			if p.tok == token.RPAREN {
				p.next()
				break
			}
			if p.tok != token.COMMA {
				return nil, true, p.errorf("syntax error: , or ) expected in the COPY options")
			}
		}
	} else {
		for p.word() != "" {
			opt := p.word()
			p.next()
			if p.word() == "as" {
				p.next()
			}
			if err := cs.option(p, opt, &nullSet); err != nil {
				return nil, true, err
			}
		}
	}
	if p.tok == token.SEMICOLON {
		p.next()
	}
	if p.tok != token.EOF {
		return nil, true, p.errorf("syntax error at or near %q", sql[p.pos:p.end])
	}
	if cs.csv && !nullSet {
		cs.null = ""
	}
	if cs.binary && (!cs.from || cs.csv || cs.header) {
		return nil, true, sqlerr.New("0A000", "COPY format binary is supported for FROM STDIN only, without CSV or HEADER")
	}
	if cs.delim == 0 {
		cs.delim = '\t'
		if cs.csv {
			cs.delim = ','
		}
	}
	if cs.csv && cs.escape == 0 {
		cs.escape = cs.quote
	}
	if cs.delim == '\n' || cs.delim == '\r' || cs.delim == '\\' && !cs.csv {
		return nil, true, sqlerr.New("22023", "COPY delimiter cannot be newline, carriage return or backslash")
	}
	return cs, true, nil
}

// option reads one COPY option whose name the parser just passed.
func (cs *copyStmt) option(p *copyParser, opt string, nullSet *bool) error {
	str := func() (string, error) {
		if p.tok != token.STRING {
			return "", p.errorf("COPY %s wants a string", opt)
		}
		s := p.lit
		p.next()
		return s, nil
	}
	char := func() (byte, error) {
		s, err := str()
		if err != nil {
			return 0, err
		}
		if len(s) != 1 {
			return 0, sqlerr.New("22023", "COPY %s must be a single one-byte character", opt)
		}
		return s[0], nil
	}
	var err error
	switch opt {
	case "format":
		switch f := p.word(); f {
		case "text", "csv":
			cs.csv = f == "csv"
		case "binary":
			cs.binary = true
		default:
			return p.errorf("COPY format %q not recognized", p.lit)
		}
		p.next()
	case "csv":
		cs.csv = true
	case "binary":
		cs.binary = true
	case "header":
		cs.header = true
		switch w := p.word(); w {
		case "true", "on":
			p.next()
		case "false", "off":
			cs.header = false
			p.next()
		case "match":
			p.next()
		}
		if p.tok == token.NUMBER {
			cs.header = p.lit != "0"
			p.next()
		}
	case "delimiter":
		cs.delim, err = char()
	case "null":
		cs.null, err = str()
		*nullSet = true
	case "quote":
		cs.quote, err = char()
	case "escape":
		cs.escape, err = char()
	default:
		return p.errorf("option %q not recognized", opt)
	}
	return err
}

// runCopy runs a parsed COPY.
func (c *conn) runCopy(cs *copyStmt) error {
	if c.sess.TxStatus() == 'E' {
		// Refused before any CopyInResponse, as PostgreSQL does: the
		// client sends no data into a failed transaction.
		return sqlerr.New("25P02", "current transaction is aborted, commands ignored until end of transaction block")
	}
	if cs.from {
		return c.copyFrom(cs)
	}
	return c.copyTo(cs)
}

// copyColumns resolves the table and the listed columns of cs.
func (c *conn) copyColumns(cs *copyStmt) ([]*catalog.Column, error) {
	t, ok := c.srv.eng.Catalog().Table(cs.table)
	if !ok {
		return nil, sqlerr.New(sqlerr.CodeUndefinedTable, "relation %q does not exist", cs.table)
	}
	if cs.columns == nil {
		return t.Columns, nil
	}
	cols := make([]*catalog.Column, len(cs.columns))
	for i, name := range cs.columns {
		for _, col := range t.Columns {
			if col.Name == name {
				cols[i] = col
			}
		}
		if cols[i] == nil {
			return nil, sqlerr.New("42703", "column %q of relation %q does not exist", name, cs.table)
		}
		for _, prev := range cs.columns[:i] {
			if prev == name {
				return nil, sqlerr.New("42701", "column %q specified more than once", name)
			}
		}
	}
	return cols, nil
}

// copyFrom receives the rows of COPY … FROM STDIN, checks them all, then
// writes them as one INSERT.
func (c *conn) copyFrom(cs *copyStmt) error {
	cols, err := c.copyColumns(cs)
	if err != nil {
		return err
	}
	formats := make([]uint16, len(cols))
	c.be.Send(&pgproto3.CopyInResponse{OverallFormat: 0, ColumnFormatCodes: formats})
	if err := c.flush(); err != nil {
		return err
	}
	r := &copyReader{cs: cs, cols: cols}
	var firstErr error
	for {
		msg, err := c.be.Receive()
		if err != nil {
			// The client went away mid-COPY (PostgreSQL's 08006 wording);
			// nothing is written, and the query loop sees the same end.
			return sqlerr.New("08006", "unexpected EOF on client connection during COPY from stdin: %v", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if firstErr == nil {
				if cs.binary {
					r.buf = append(r.buf, m.Data...)
				} else {
					firstErr = r.feed(m.Data, false)
				}
			}
			continue
		case *pgproto3.CopyDone:
			if firstErr == nil {
				if cs.binary {
					firstErr = r.binaryRows()
				} else {
					firstErr = r.feed(nil, true)
				}
			}
		case *pgproto3.CopyFail:
			firstErr = sqlerr.New("57014", "COPY from stdin failed: %s", m.Message)
		case *pgproto3.Flush, *pgproto3.Sync:
			continue
		default:
			return sqlerr.New("08P01", "unexpected message type %T during COPY from stdin", msg)
		}
		break
	}
	if firstErr != nil {
		return firstErr
	}
	if len(r.rows) == 0 {
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY 0")})
		return nil
	}
	// The rows become one INSERT built as a tree, not as text to parse:
	// every value a string literal, which the insert casts to its column
	// exactly as it casts a literal written in SQL.
	ins := &ast.InsertStmt{Table: &ast.ObjectName{Name: cs.table},
		Source: &ast.SelectStmt{Body: &ast.Values{Rows: r.rows}}}
	for _, col := range cols {
		ins.Columns = append(ins.Columns, &ast.Ident{Name: col.Name})
	}
	res, err := c.run(ins, "", nil)
	if err != nil {
		// Positions would refer to SQL nobody wrote: keep the message.
		e := toSQLErr(err, "")
		return sqlerr.New(e.Code, "%s", e.Message).WithDetail("%s", e.Detail).WithHint("%s", e.Hint)
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "COPY %d", res.RowsAffected)})
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// copyReader cuts COPY data into records (CopyData messages may split or
// join lines anywhere), parses fields, checks each against its column and
// appends the row to the INSERT being built.
type copyReader struct {
	cs     *copyStmt
	cols   []*catalog.Column
	buf    []byte
	line   int // records read so far, the header included
	rows   []*ast.Row
	ended  bool // saw the \. end marker
	fields []copyField
}

type copyField struct {
	text string
	null bool
}

func (r *copyReader) feed(data []byte, eof bool) error {
	r.buf = append(r.buf, data...)
	for !r.ended {
		n := r.recordEnd(eof)
		if n < 0 {
			break
		}
		rec := r.buf[:n]
		r.buf = r.buf[n:]
		if len(r.buf) > 0 && r.buf[0] == '\n' {
			r.buf = r.buf[1:]
		}
		rec = bytes.TrimSuffix(rec, []byte{'\r'})
		r.line++
		if err := r.record(rec); err != nil {
			return err
		}
	}
	if eof && len(r.buf) > 0 && !r.ended {
		return sqlerr.New("22P04", "COPY %s, line %d: unterminated CSV quoted field", r.cs.table, r.line+1)
	}
	return nil
}

// recordEnd returns the length of the first complete record in buf (up to
// its newline), or -1 when there is none yet. In CSV a newline inside
// quotes belongs to the field. At eof a final record without a newline
// counts.
func (r *copyReader) recordEnd(eof bool) int {
	if !r.cs.csv {
		if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
			return i
		}
		if eof && len(r.buf) > 0 {
			return len(r.buf)
		}
		return -1
	}
	in := false
	q, esc := r.cs.quote, r.cs.escape
	for i := 0; i < len(r.buf); i++ {
		c := r.buf[i]
		switch {
		case in && c == esc && esc != q && i+1 < len(r.buf) && r.buf[i+1] == q:
			i++
		case c == q:
			in = !in
		case c == '\n' && !in:
			return i
		}
	}
	if eof && len(r.buf) > 0 && !in {
		return len(r.buf)
	}
	return -1
}

// record handles one record.
func (r *copyReader) record(rec []byte) error {
	if r.line == 1 && r.cs.header {
		return nil
	}
	if string(rec) == `\.` {
		r.ended = true
		return nil
	}
	var err error
	if r.cs.csv {
		r.fields, err = r.csvFields(rec)
	} else {
		r.fields, err = r.textFields(rec)
	}
	if err != nil {
		return err
	}
	if len(r.fields) < len(r.cols) {
		return r.errorf(len(r.fields), "missing data for column %q", r.cols[len(r.fields)].Name)
	}
	if len(r.fields) > len(r.cols) {
		return r.errorf(-1, "extra data after last expected column")
	}
	items := make([]ast.Expr, len(r.fields))
	for i, f := range r.fields {
		col := r.cols[i]
		if f.null {
			if !col.Nullable {
				return r.errorf(i, "null value in column %q violates not-null constraint", col.Name)
			}
			items[i] = &ast.NullLit{}
			continue
		}
		if _, err := types.ParseText(col.Type, f.text); err != nil {
			return r.errorf(i, "%v", err)
		}
		items[i] = &ast.StringLit{Value: f.text}
	}
	r.rows = append(r.rows, &ast.Row{Items: items})
	return nil
}

// binarySignature opens PostgreSQL's binary COPY stream.
const binarySignature = "PGCOPY\n\xff\r\n\x00"

// binaryRows parses a whole binary COPY stream: the signature, flags and
// header extension, then per tuple a field count and each field as a
// length (-1 for NULL) and the value in its column's binary format, until
// the -1 trailer (or the end of the data). Each value is decoded by its column's wire type and
// becomes a literal of its text, offset included for a DATETIME64.
func (r *copyReader) binaryRows() error {
	b := r.buf
	bad := func(format string, args ...any) error {
		return sqlerr.New("22P04", "COPY %s, row %d: %s", r.cs.table, r.line, fmt.Sprintf(format, args...))
	}
	if len(b) < len(binarySignature)+8 || string(b[:len(binarySignature)]) != binarySignature {
		return sqlerr.New("22P04", "COPY file signature not recognized")
	}
	b = b[len(binarySignature):]
	if binary.BigEndian.Uint32(b)&(1<<16) != 0 {
		return sqlerr.New("0A000", "COPY binary with OIDs is not supported")
	}
	ext := int(binary.BigEndian.Uint32(b[4:]))
	b = b[8:]
	if ext < 0 || ext > len(b) {
		return sqlerr.New("22P04", "invalid COPY file header")
	}
	b = b[ext:]
	for {
		if len(b) == 0 {
			break // the trailer is optional, as in PostgreSQL
		}
		if len(b) < 2 {
			return sqlerr.New("22P04", "unexpected EOF in COPY data")
		}
		n := int(int16(binary.BigEndian.Uint16(b)))
		b = b[2:]
		if n == -1 {
			break
		}
		r.line++
		if n != len(r.cols) {
			return bad("row has %d fields, expected %d", n, len(r.cols))
		}
		items := make([]ast.Expr, n)
		for i, col := range r.cols {
			if len(b) < 4 {
				return bad("unexpected EOF")
			}
			size := int(int32(binary.BigEndian.Uint32(b)))
			b = b[4:]
			if size == -1 {
				if !col.Nullable {
					return sqlerr.New("23502", "COPY %s, row %d, column %s: null value in column %q violates not-null constraint", r.cs.table, r.line, col.Name, col.Name)
				}
				items[i] = &ast.NullLit{}
				continue
			}
			if size < 0 || size > len(b) {
				return bad("field of %d bytes", size)
			}
			v, err := decodeParam(wireType(col.Type).oid, 1, b[:size])
			b = b[size:]
			if err == nil && v.Kind() != types.String {
				v, err = types.Cast(v, col.Type)
			}
			if err == nil && v.Kind() == types.String && col.Type.Kind != types.String {
				_, err = types.ParseText(col.Type, v.Str())
			}
			if err != nil {
				return sqlerr.New(sqlerr.CodeInvalidText, "COPY %s, row %d, column %s: %v", r.cs.table, r.line, col.Name, err)
			}
			if v.Kind() == types.String {
				items[i] = &ast.StringLit{Value: v.Str()}
			} else {
				items[i] = &ast.StringLit{Value: string(appendText(nil, v))}
			}
		}
		r.rows = append(r.rows, &ast.Row{Items: items})
	}
	return nil
}

// errorf is a data error of the current record, naming its line and, when
// col ≥ 0, its column, as PostgreSQL's COPY context does.
func (r *copyReader) errorf(col int, format string, args ...any) error {
	where := fmt.Sprintf("COPY %s, line %d", r.cs.table, r.line)
	if col >= 0 && col < len(r.cols) {
		where += fmt.Sprintf(", column %s", r.cols[col].Name)
	}
	code := "22P04"
	msg := fmt.Sprintf(format, args...)
	if strings.Contains(msg, "not-null") {
		code = "23502"
	} else if col >= 0 && col < len(r.fields) {
		code = sqlerr.CodeInvalidText
	}
	return sqlerr.New(code, "%s: %s", where, msg)
}

// textFields splits a text-format record: fields between delimiters,
// backslash escapes decoded, the NULL string (unescaped) as NULL.
func (r *copyReader) textFields(rec []byte) ([]copyField, error) {
	out := r.fields[:0]
	d := r.cs.delim
	var b strings.Builder
	raw := 0 // start of the current field in rec, to compare with NULL
	for i := 0; i <= len(rec); i++ {
		if i == len(rec) || rec[i] == d {
			text := b.String()
			out = append(out, copyField{text: text, null: string(rec[raw:i]) == r.cs.null})
			b.Reset()
			raw = i + 1
			continue
		}
		c := rec[i]
		if c != '\\' || i+1 == len(rec) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := rec[i]; e {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(rec) && isHex(rec[i+1]) {
				i++
				v = v*16 + hexVal(rec[i])
				n++
			}
			if n == 0 {
				b.WriteByte('x')
			} else {
				b.WriteByte(byte(v))
			}
		default:
			if e >= '0' && e <= '7' {
				v := int(e - '0')
				for n := 1; n < 3 && i+1 < len(rec) && rec[i+1] >= '0' && rec[i+1] <= '7'; n++ {
					i++
					v = v*8 + int(rec[i]-'0')
				}
				b.WriteByte(byte(v))
			} else {
				b.WriteByte(e)
			}
		}
	}
	return out, nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

// csvFields splits a CSV record: quoted fields may hold the delimiter,
// newlines and doubled quotes; an unquoted field equal to the NULL string
// is NULL, a quoted one never is.
func (r *copyReader) csvFields(rec []byte) ([]copyField, error) {
	out := r.fields[:0]
	d, q, esc := r.cs.delim, r.cs.quote, r.cs.escape
	var b strings.Builder
	i := 0
	for {
		b.Reset()
		quoted := false
		start := i
		for i < len(rec) && rec[i] != d {
			c := rec[i]
			if c != q {
				b.WriteByte(c)
				i++
				continue
			}
			quoted = true
			i++
			for {
				if i >= len(rec) {
					return nil, r.errorf(-1, "unterminated CSV quoted field")
				}
				c := rec[i]
				if c == esc && i+1 < len(rec) && rec[i+1] == q {
					b.WriteByte(q)
					i += 2
					continue
				}
				if c == q {
					i++
					break
				}
				b.WriteByte(c)
				i++
			}
		}
		raw := string(rec[start:i])
		out = append(out, copyField{text: b.String(), null: !quoted && raw == r.cs.null})
		if i >= len(rec) {
			return out, nil
		}
		i++ // the delimiter
	}
}

// copyTo sends the rows of a table or a query as CopyData, one message per
// row.
func (c *conn) copyTo(cs *copyStmt) error {
	query := cs.query
	if query == "" {
		cols, err := c.copyColumns(cs)
		if err != nil {
			return err
		}
		var b strings.Builder
		b.WriteString("SELECT ")
		for i, col := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(col.Name))
		}
		b.WriteString(" FROM ")
		b.WriteString(quoteIdent(cs.table))
		query = b.String()
	}
	stmt, err := parser.Parse(query)
	if err != nil {
		return err
	}
	out := &copyOut{c: c, cs: cs}
	res, err := c.runTo(stmt, query, nil, out)
	if err == nil && !out.started {
		// Rows the statement returned whole rather than streamed.
		if res.Columns == nil {
			return sqlerr.New("0A000", "COPY (query) TO STDOUT needs a query that returns rows")
		}
		if err = out.Start(res.Columns); err == nil {
			for _, row := range res.Rows {
				if err = out.put(row); err != nil {
					break
				}
			}
		}
	}
	c.finishRows()
	if err != nil {
		return err
	}
	c.be.Send(&pgproto3.CopyDone{})
	c.be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "COPY %d", out.n)})
	return nil
}

// copyOut is the sink of COPY … TO STDOUT: CopyOutResponse when the
// columns are known, then a CopyData message per row, encoded into c.rows
// and written every rowChunk bytes as DataRows are (stream.go).
type copyOut struct {
	c       *conn
	cs      *copyStmt
	started bool
	n       int
	row     []types.Value
	val     []byte
}

func (o *copyOut) Start(cols []session.Column) error {
	o.started = true
	o.c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, len(cols))})
	if o.cs.header {
		names := make([]types.Value, len(cols))
		for i, col := range cols {
			names[i] = types.NewString(col.Name)
		}
		o.line(names)
	}
	return nil
}

func (o *copyOut) Batch(b *types.Batch) error {
	for i := 0; i < b.Rows; i++ {
		o.row = b.RowView(o.row[:0], i)
		if err := o.put(o.row); err != nil {
			return err
		}
	}
	return nil
}

// put encodes one row and writes the lines encoded so far every rowChunk
// bytes.
func (o *copyOut) put(row []types.Value) error {
	o.line(row)
	o.n++
	var err error
	o.c.rows, err = o.c.spill(o.c.rows)
	return err
}

// line appends row as one CopyData message of a line in the COPY's format.
func (o *copyOut) line(row []types.Value) {
	buf, cs := o.c.rows, o.cs
	start := len(buf)
	buf = append(buf, 'd', 0, 0, 0, 0)
	for i, v := range row {
		if i > 0 {
			buf = append(buf, cs.delim)
		}
		if v.IsNull() {
			buf = append(buf, cs.null...)
			continue
		}
		o.val = appendText(o.val[:0], v)
		buf = cs.appendField(buf, o.val)
	}
	buf = append(buf, '\n')
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	o.c.rows = buf
}

// appendField appends one non-NULL value escaped for the format: text
// escapes backslash, newline, carriage return, tab and the delimiter; CSV
// quotes a value holding the delimiter, the quote, a newline, or equal to
// the NULL string.
func (cs *copyStmt) appendField(dst, v []byte) []byte {
	if !cs.csv {
		for _, c := range v {
			switch c {
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				if c == cs.delim {
					dst = append(dst, '\\')
				}
				dst = append(dst, c)
			}
		}
		return dst
	}
	need := string(v) == cs.null || bytes.IndexByte(v, cs.delim) >= 0 || bytes.IndexByte(v, cs.quote) >= 0 ||
		bytes.ContainsAny(v, "\r\n")
	if !need {
		return append(dst, v...)
	}
	dst = append(dst, cs.quote)
	for _, c := range v {
		if c == cs.quote || c == cs.escape {
			dst = append(dst, cs.escape)
		}
		dst = append(dst, c)
	}
	return append(dst, cs.quote)
}
