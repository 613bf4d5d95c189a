package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/chzyer/readline"
)

// cell is one printed value: its canonical text, or NULL.
type cell struct {
	text string
	null bool
}

// column is one result column as the shell prints it.
type column struct {
	name, typ string
}

// result is one statement's outcome in the shell's own terms, so that the
// formatters can be driven by tests without a database.
type result struct {
	tag     string
	columns []column // empty: the statement returns no rows
	rows    [][]cell
	// notices are the statement's warnings, printed on the error stream
	// before its result, as errors are ("WARNING: …", "HINT: …").
	notices []string
}

// stmtError is a failed statement in the shell's own terms. line and column
// (1-based, column in characters) are relative to the statement text; 0 when
// the error has no position.
type stmtError struct {
	message, detail, hint string
	line, column          int
}

// format names an output format of --format.
type format string

const (
	formatTable format = "table"
	formatCSV   format = "csv"
	formatTSV   format = "tsv"
	formatJSON  format = "json"
	formatJSONL format = "jsonl"
)

// parseFormat checks a --format value.
func parseFormat(s string) (format, error) {
	switch f := format(strings.ToLower(s)); f {
	case formatTable, formatCSV, formatTSV, formatJSON, formatJSONL:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q: want table, csv, tsv, json or jsonl", s)
}

// writeResult prints r in format f. Statements without a result set print
// their command tag in table format and nothing in csv, tsv and json, whose
// readers expect data only; jsonl always prints one object.
func writeResult(w io.Writer, f format, r *result) error {
	switch f {
	case formatCSV:
		return writeCSV(w, r)
	case formatTSV:
		return writeTSV(w, r)
	case formatJSON:
		return writeJSON(w, r)
	case formatJSONL:
		return writeJSONLine(w, r)
	}
	return writeTable(w, r)
}

// width is the number of terminal cells s takes: wide (East Asian) runes
// count two, combining marks none.
func width(s string) int {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] < ' ' {
			ascii = false
			break
		}
	}
	if ascii {
		return len(s) // the common case, without the Unicode tables
	}
	n := 0
	for _, r := range s {
		n += readline.Runes{}.Width(r)
	}
	return n
}

// numeric reports whether a column type is printed right-aligned, as psql
// aligns numbers.
func numeric(typ string) bool {
	t := strings.ToUpper(typ)
	for _, p := range []string{"INT", "UINT", "FLOAT", "DECIMAL"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// writeTable prints r the way psql's aligned format does: names centred,
// numbers right-aligned, NULL shown as NULL and a "(n rows)" footer followed
// by an empty line. A statement without rows prints its tag.
func writeTable(w io.Writer, r *result) error {
	if len(r.columns) == 0 {
		_, err := fmt.Fprintln(w, r.tag)
		return err
	}
	widths := make([]int, len(r.columns))
	right := make([]bool, len(r.columns))
	for j, c := range r.columns {
		widths[j] = width(c.name)
		right[j] = numeric(c.typ)
	}
	// A value holding newlines takes one table line per line of text, with
	// psql's "+" in the border after each line that continues.
	cellLines := make([][]string, len(r.columns))
	for _, row := range r.rows {
		for j := range widths {
			for l := range strings.SplitSeq(display(row[j]), "\n") {
				widths[j] = max(widths[j], width(l))
			}
		}
	}
	var b strings.Builder
	for j, c := range r.columns {
		if j > 0 {
			b.WriteByte('|')
		}
		pad := widths[j] - width(c.name)
		b.WriteByte(' ')
		b.WriteString(strings.Repeat(" ", pad/2))
		b.WriteString(c.name)
		b.WriteString(strings.Repeat(" ", pad-pad/2))
		b.WriteByte(' ')
	}
	b.WriteByte('\n')
	for j := range r.columns {
		if j > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strings.Repeat("-", widths[j]+2))
	}
	b.WriteByte('\n')
	last := len(r.columns) - 1
	for _, row := range r.rows {
		height := 1
		for j := range r.columns {
			s := display(row[j])
			if strings.IndexByte(s, '\n') < 0 {
				cellLines[j] = append(cellLines[j][:0], s)
			} else {
				cellLines[j] = strings.Split(s, "\n")
			}
			height = max(height, len(cellLines[j]))
		}
		for k := range height {
			for j := range r.columns {
				if j > 0 {
					b.WriteByte('|')
				}
				s := ""
				if k < len(cellLines[j]) {
					s = cellLines[j][k]
				}
				more := k < len(cellLines[j])-1
				pad := strings.Repeat(" ", widths[j]-width(s))
				b.WriteByte(' ')
				switch {
				case right[j]:
					b.WriteString(pad)
					b.WriteString(s)
				case j < last || more:
					b.WriteString(s)
					b.WriteString(pad)
				default:
					b.WriteString(s)
				}
				switch {
				case more:
					b.WriteByte('+')
				case j < last:
					b.WriteByte(' ')
				}
			}
			b.WriteByte('\n')
		}
	}
	if len(r.rows) == 1 {
		b.WriteString("(1 row)\n\n")
	} else {
		fmt.Fprintf(&b, "(%d rows)\n\n", len(r.rows))
	}
	// A write with RETURNING prints its rows and then its own tag, as psql
	// does: the rows alone would hide how many rows the statement accepted.
	if writeTag(r.tag) {
		b.WriteString(r.tag)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTag reports whether tag is a write statement's, whose rows come from
// RETURNING.
func writeTag(tag string) bool {
	for _, p := range []string{"INSERT ", "UPSERT ", "UPDATE ", "DELETE "} {
		if strings.HasPrefix(tag, p) {
			return true
		}
	}
	return false
}

// displayEscaper escapes the control characters that would break a table's
// columns; newlines are kept and split into lines by writeTable.
var displayEscaper = strings.NewReplacer("\r", `\r`, "\t", `\t`)

// display is a cell's text in a table: NULL for NULL, tabs and carriage
// returns escaped.
func display(c cell) string {
	if c.null {
		return "NULL"
	}
	if !strings.ContainsAny(c.text, "\r\t") {
		return c.text
	}
	return displayEscaper.Replace(c.text)
}

// writeCSV prints a header and one record per row (RFC 4180); NULL is an
// empty field, as psql --csv prints it.
func writeCSV(w io.Writer, r *result) error {
	if len(r.columns) == 0 {
		return nil
	}
	cw := csv.NewWriter(w)
	rec := make([]string, len(r.columns))
	for j, c := range r.columns {
		rec[j] = c.name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for _, row := range r.rows {
		for j := range rec {
			rec[j] = row[j].text
			if row[j].null {
				rec[j] = ""
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// tsvEscaper escapes the characters that would break a tab-separated line,
// as PostgreSQL's COPY text format does.
var tsvEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// writeTSV prints a header and one tab-separated line per row; NULL is \N.
func writeTSV(w io.Writer, r *result) error {
	if len(r.columns) == 0 {
		return nil
	}
	var b strings.Builder
	for j, c := range r.columns {
		if j > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(tsvEscaper.Replace(c.name))
	}
	b.WriteByte('\n')
	for _, row := range r.rows {
		for j, v := range row {
			if j > 0 {
				b.WriteByte('\t')
			}
			if v.null {
				b.WriteString(`\N`)
			} else {
				b.WriteString(tsvEscaper.Replace(v.text))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, everything
// else (HTML characters, non-ASCII text) as it is.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
		i++
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// writeJSONCell appends a value: a JSON string of its canonical text, or null.
func writeJSONCell(b *strings.Builder, c cell) {
	if c.null {
		b.WriteString("null")
		return
	}
	writeJSONString(b, c.text)
}

// writeJSON prints a result set as one JSON array of objects keyed by column
// name, values as strings of their canonical text and NULL as null.
func writeJSON(w io.Writer, r *result) error {
	if len(r.columns) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("[")
	for i, row := range r.rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  {")
		for j, c := range r.columns {
			if j > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, c.name)
			b.WriteByte(':')
			writeJSONCell(&b, row[j])
		}
		b.WriteByte('}')
	}
	if len(r.rows) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSONLine prints one statement's result as one line:
// {"ok":true,"tag":…,"columns":[…],"types":[…],"rows":[[…]]}. Other tools
// parse this; its shape must not change.
func writeJSONLine(w io.Writer, r *result) error {
	var b strings.Builder
	b.WriteString(`{"ok":true,"tag":`)
	writeJSONString(&b, r.tag)
	b.WriteString(`,"columns":[`)
	for j, c := range r.columns {
		if j > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, c.name)
	}
	b.WriteString(`],"types":[`)
	for j, c := range r.columns {
		if j > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, c.typ)
	}
	b.WriteString(`],"rows":[`)
	for i, row := range r.rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j, v := range row {
			if j > 0 {
				b.WriteByte(',')
			}
			writeJSONCell(&b, v)
		}
		b.WriteByte(']')
	}
	b.WriteString("]}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeJSONLError prints a failed statement as one line:
// {"ok":false,"error":…,"line":L,"column":C}, line and column relative to
// the whole input (0 when the error has no position).
func writeJSONLError(w io.Writer, message string, line, col int) error {
	var b strings.Builder
	b.WriteString(`{"ok":false,"error":`)
	writeJSONString(&b, message)
	fmt.Fprintf(&b, `,"line":%d,"column":%d}`+"\n", line, col)
	_, err := io.WriteString(w, b.String())
	return err
}

// formatError renders a failed statement for people, as psql does:
//
//	ERROR: message
//	LINE 2:   WHERE nope = 1
//	                ^
//	DETAIL: …
//	HINT: …
//
// sql is the statement text the error positions refer to. Tabs before the
// position are copied into the caret's indentation so the caret stays under
// its character on any tab width.
func formatError(sql string, e *stmtError) string {
	var b strings.Builder
	b.WriteString("ERROR: ")
	b.WriteString(e.message)
	b.WriteByte('\n')
	lines := strings.Split(sql, "\n")
	if e.line >= 1 && e.line <= len(lines) && e.column >= 1 {
		text := strings.TrimRight(lines[e.line-1], "\r")
		prefix := fmt.Sprintf("LINE %d: ", e.line)
		b.WriteString(prefix)
		b.WriteString(text)
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", len(prefix)))
		n := 0
		for _, r := range text {
			if n == e.column-1 {
				break
			}
			n++
			if r == '\t' {
				b.WriteByte('\t')
			} else {
				b.WriteString(strings.Repeat(" ", readline.Runes{}.Width(r)))
			}
		}
		b.WriteString("^\n")
	}
	if e.detail != "" {
		b.WriteString("DETAIL: " + e.detail + "\n")
	}
	if e.hint != "" {
		b.WriteString("HINT: " + e.hint + "\n")
	}
	return b.String()
}
