package logictest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Dialect says which of the two script formats a file is written in (see the
// package comment for the differences).
type Dialect int

const (
	// DialectAuto picks the dialect from the file name: ".test" is Classic,
	// anything else (".slt") is Conformance.
	DialectAuto Dialect = iota
	// Conformance is the project's dialect (../shared/conformance/README.md):
	// one row per expected line, values joined by a single space.
	Conformance
	// Classic is SQLite's sqllogictest dialect: one value per expected line,
	// MD5 hashes of long results, skipif/onlyif, labels, hash-threshold.
	Classic
)

// String names the dialect as reports print it.
func (d Dialect) String() string {
	switch d {
	case Conformance:
		return "conformance"
	case Classic:
		return "classic"
	}
	return "auto"
}

// DialectOf returns the dialect a file's name implies (DialectAuto's rule).
func DialectOf(path string) Dialect {
	if strings.EqualFold(filepath.Ext(path), ".test") {
		return Classic
	}
	return Conformance
}

// Kind is the type of a record.
type Kind int

const (
	// KindStatement is `statement ok` or `statement error [regex]`.
	KindStatement Kind = iota + 1
	// KindQuery is `query <types> [sort] [label]` with expected output.
	KindQuery
	// KindRestart closes the database and opens it again on the same directory.
	KindRestart
	// KindHashThreshold is `hash-threshold N`: how many values a completed
	// result may list before it is written as a hash (doc.go, Comparison).
	KindHashThreshold
	// KindHalt stops the script (classic).
	KindHalt
)

// String names the kind as it is written in scripts.
func (k Kind) String() string {
	switch k {
	case KindStatement:
		return "statement"
	case KindQuery:
		return "query"
	case KindRestart:
		return "restart"
	case KindHashThreshold:
		return "hash-threshold"
	case KindHalt:
		return "halt"
	}
	return "unknown"
}

// SortMode is how a query's values are ordered before comparison.
type SortMode int

const (
	// NoSort compares values in the order the engine returned them.
	NoSort SortMode = iota
	// RowSort sorts rows (column by column, byte-wise) before comparing.
	RowSort
	// ValueSort sorts every value on its own, ignoring row boundaries.
	ValueSort
)

// Condition is one `skipif <engine>` or `onlyif <engine>` line in front of
// a record.
type Condition struct {
	// Skip is set for skipif, clear for onlyif.
	Skip bool
	// Engine is the name as written; it is matched case-insensitively.
	Engine string
}

// Record is one unit of a script.
type Record struct {
	Kind Kind
	// Line is the 1-based line of the record's command line (after any
	// skipif/onlyif lines), the line failures are reported at.
	Line int
	// Conditions are the skipif/onlyif lines in front of the record.
	Conditions []Condition
	// SQL is the statement text, its lines joined by "\n", comment lines
	// removed (statements and queries only).
	SQL string

	// ExpectError is set for `statement error`.
	ExpectError bool
	// ErrorPattern is the regex after `statement error`, as written ("" when
	// bare: any error passes); Error is it compiled, case-insensitive.
	ErrorPattern string
	Error        *regexp.Regexp

	// Types holds one letter per result column (I, T, R, B).
	Types string
	// Sort is the query's sort mode.
	Sort SortMode
	// Label names a result that must equal every other result with the same
	// label (classic); "" for none.
	Label string
	// Expected holds the lines after `----`, as written.
	Expected []string
	// ExpectedLine is the line of the first expected line (or of `----`).
	ExpectedLine int
	// SepLine is the line of `----` (0 when the query has none), EndLine the
	// record's last non-comment line: the span Complete replaces.
	SepLine int
	EndLine int
	// Hashed is set when Expected is the single line `N values hashing to H`;
	// HashCount and Hash hold N and H.
	Hashed    bool
	HashCount int
	Hash      string

	// Threshold is the argument of hash-threshold.
	Threshold int
}

// Script is a parsed file.
type Script struct {
	// Path is the file's path as given, used in every report.
	Path string
	// Dialect is the dialect the file was parsed in (never DialectAuto).
	Dialect Dialect
	// Records are the file's records in order, directives included.
	Records []Record
}

// ParseError is a malformed record; it prints as "path:line: message".
type ParseError struct {
	Path string
	// Line is the 1-based line the problem is on.
	Line int
	// Msg says what is wrong, without the position.
	Msg string
}

// Error prints the position the way compilers do, so editors can jump to it.
func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

// ParseFile reads and parses the script at path; DialectAuto picks the
// dialect from the file name.
func ParseFile(path string, d Dialect) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("logictest: %w", err)
	}
	return Parse(path, data, d)
}

var hashLine = regexp.MustCompile(`^(\d+) values hashing to ([0-9a-f]{32})$`)

// line is one non-comment line of a script: its text (trailing "\r" removed,
// whitespace-only lines made empty) and its 1-based number.
type line struct {
	text string
	num  int
}

// splitLines applies the upstream line rules (doc.go, invariant 1): "\r\n" and
// "\n" both end a line, a line of only whitespace is blank, and a line whose
// first byte is '#' is a comment that is dropped wherever it appears.
func splitLines(data []byte) []line {
	out := make([]line, 0, bytes.Count(data, []byte{'\n'})+1)
	num := 0
	for len(data) > 0 {
		num++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		if len(raw) > 0 && raw[0] == '#' {
			continue
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			out = append(out, line{num: num})
			continue
		}
		out = append(out, line{text: string(raw), num: num})
	}
	return out
}

// Parse parses a script held in memory. path is used for DialectAuto and in
// error messages. It returns the first malformed record as a *ParseError.
func Parse(path string, data []byte, d Dialect) (*Script, error) {
	if d == DialectAuto {
		d = DialectOf(path)
	}
	s := &Script{Path: path, Dialect: d}
	lines := splitLines(data)
	for i := 0; i < len(lines); {
		if lines[i].text == "" {
			i++
			continue
		}
		j := i
		for j < len(lines) && lines[j].text != "" {
			j++
		}
		rec, err := parseRecord(path, lines[i:j])
		if err != nil {
			return nil, err
		}
		s.Records = append(s.Records, rec)
		i = j
	}
	return s, nil
}

// parseRecord parses one block of consecutive non-blank lines.
func parseRecord(path string, block []line) (Record, error) {
	var rec Record
	last := block[len(block)-1]
	fail := func(l line, format string, args ...any) (Record, error) {
		return Record{}, &ParseError{Path: path, Line: l.num, Msg: fmt.Sprintf(format, args...)}
	}
	for len(block) > 0 {
		f := strings.Fields(block[0].text)
		if f[0] != "skipif" && f[0] != "onlyif" {
			break
		}
		if len(f) < 2 {
			return fail(block[0], "%s needs an engine name", f[0])
		}
		rec.Conditions = append(rec.Conditions, Condition{Skip: f[0] == "skipif", Engine: f[1]})
		block = block[1:]
	}
	if len(block) == 0 {
		return fail(last, "skipif/onlyif at the end of the file without a record")
	}
	head := block[0]
	f := strings.Fields(head.text)
	rec.Line = head.num
	rec.EndLine = last.num
	body := block[1:]
	switch f[0] {
	case "statement":
		rec.Kind = KindStatement
		if len(f) < 2 || (f[1] != "ok" && f[1] != "error") {
			return fail(head, "statement must be followed by ok or error, found %q", head.text)
		}
		if f[1] == "error" {
			rec.ExpectError = true
			rest := strings.TrimSpace(head.text[strings.Index(head.text, "error")+len("error"):])
			if rest != "" {
				re, err := regexp.Compile("(?i)" + rest)
				if err != nil {
					return fail(head, "bad error regex %q: %v", rest, err)
				}
				rec.ErrorPattern, rec.Error = rest, re
			}
		} else if len(f) > 2 {
			return fail(head, "unexpected text after statement ok: %q", strings.Join(f[2:], " "))
		}
		if len(body) == 0 {
			return fail(head, "statement without SQL")
		}
		rec.SQL = joinLines(body)
	case "query":
		rec.Kind = KindQuery
		if len(f) < 2 {
			return fail(head, "query needs a type string")
		}
		if strings.Trim(f[1], "ITRB") != "" {
			return fail(head, "unknown type letter in %q (want I, T, R or B)", f[1])
		}
		rec.Types = f[1]
		if len(f) > 2 {
			switch f[2] {
			case "nosort":
				rec.Sort = NoSort
			case "rowsort":
				rec.Sort = RowSort
			case "valuesort":
				rec.Sort = ValueSort
			default:
				return fail(head, "unknown sort mode %q", f[2])
			}
		}
		if len(f) > 3 {
			rec.Label = f[3]
		}
		if len(f) > 4 {
			return fail(head, "unexpected text after the label: %q", strings.Join(f[4:], " "))
		}
		sep := len(body)
		for k, l := range body {
			if l.text == "----" {
				sep = k
				break
			}
		}
		if sep == 0 {
			return fail(head, "query without SQL")
		}
		rec.SQL = joinLines(body[:sep])
		if sep < len(body) {
			rec.ExpectedLine = body[sep].num
			rec.SepLine = body[sep].num
			exp := body[sep+1:]
			if len(exp) > 0 {
				rec.ExpectedLine = exp[0].num
			}
			rec.Expected = make([]string, len(exp))
			for k, l := range exp {
				rec.Expected[k] = l.text
			}
			if len(exp) == 1 {
				if m := hashLine.FindStringSubmatch(exp[0].text); m != nil {
					n, err := strconv.Atoi(m[1])
					if err != nil {
						return fail(exp[0], "bad value count in %q", exp[0].text)
					}
					rec.Hashed, rec.HashCount, rec.Hash = true, n, m[2]
				}
			}
		}
	case "restart":
		rec.Kind = KindRestart
		if len(f) > 1 || len(body) > 0 {
			return fail(head, "restart stands alone on its line, in its own record")
		}
	case "halt":
		rec.Kind = KindHalt
		if len(body) > 0 {
			return fail(head, "halt stands alone in its record")
		}
	case "hash-threshold":
		rec.Kind = KindHashThreshold
		if len(f) != 2 {
			return fail(head, "hash-threshold needs one number")
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return fail(head, "hash-threshold needs a non-negative number, found %q", f[1])
		}
		rec.Threshold = n
	default:
		return fail(head, "unknown record type %q", f[0])
	}
	return rec, nil
}

func joinLines(ls []line) string {
	if len(ls) == 1 {
		return ls[0].text
	}
	var b strings.Builder
	for k, l := range ls {
		if k > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.text)
	}
	return b.String()
}
