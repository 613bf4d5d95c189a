// Package scanner turns SQL text into tokens for the parser.
//
// The scanner is a single forward pass over the input with no backtracking
// beyond one byte of lookahead, so it is linear in the input's length. It
// folds unquoted identifiers and keywords to lower case (ASCII only, as
// PostgreSQL does), keeps "quoted" identifiers exactly, decodes string
// literals (a doubled quote stands for one; backslash escapes in E'…' strings), keeps number
// literals as their text (the binder decides their type; 2^256-1 has 78
// digits and must arrive intact), and skips -- line comments and nested
// /* block */ comments. A malformed token (an unterminated string, quoted
// identifier or comment, a stray character) yields token.ILLEGAL and an
// *sqlerr.Error, available from Err, positioned at the token's start.
package scanner

import (
	"strings"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/sqlerr"
)

// Scanner holds the scanning state. The zero value scans the empty string;
// use Init to start on a text.
type Scanner struct {
	src string
	off int
	err *sqlerr.Error
}

// Init prepares s to scan src from its first byte.
func (s *Scanner) Init(src string) {
	s.src, s.off, s.err = src, 0, nil
}

// Err returns the error of the last ILLEGAL token, or nil.
func (s *Scanner) Err() *sqlerr.Error { return s.err }

// Offset returns the byte offset at which the next Scan starts looking.
func (s *Scanner) Offset() int { return s.off }

// Scan returns the next token: its kind, its byte range [pos, end) in the
// source, and its literal value. The value is the folded name for IDENT and
// keywords, the decoded text for STRING, the digits as written for NUMBER,
// and the number after '$' for PARAM; it is "" for operators and EOF.
func (s *Scanner) Scan() (tok token.Token, pos, end int, lit string) {
	if s.err != nil {
		return token.ILLEGAL, s.err.Pos, s.err.Pos, ""
	}
	if !s.skipSpaceAndComments() {
		return token.ILLEGAL, s.err.Pos, len(s.src), ""
	}
	pos = s.off
	if pos >= len(s.src) {
		return token.EOF, pos, pos, ""
	}
	c := s.src[pos]
	switch {
	case isIdentStart(c):
		if (c == 'e' || c == 'E') && pos+1 < len(s.src) && s.src[pos+1] == '\'' {
			s.off++
			return s.scanString(pos, true)
		}
		return s.scanWord(pos)
	case isDigit(c) || c == '.' && pos+1 < len(s.src) && isDigit(s.src[pos+1]):
		return s.scanNumber(pos)
	case c == '\'':
		return s.scanString(pos, false)
	case c == '"':
		return s.scanQuotedIdent(pos)
	case c == '$' && pos+1 < len(s.src) && isDigit(s.src[pos+1]):
		s.off++
		for s.off < len(s.src) && isDigit(s.src[s.off]) {
			s.off++
		}
		return token.PARAM, pos, s.off, s.src[pos+1 : s.off]
	case c == '$':
		if tok, end, val, ok := s.scanDollar(pos); ok {
			return tok, pos, end, val
		}
	}
	s.off++
	tok = token.ILLEGAL
	next := byte(0)
	if s.off < len(s.src) {
		next = s.src[s.off]
	}
	two := func(t token.Token) token.Token { s.off++; return t }
	switch c {
	case '(':
		tok = token.LPAREN
	case ')':
		tok = token.RPAREN
	case '[':
		tok = token.LBRACK
	case ']':
		tok = token.RBRACK
	case ',':
		tok = token.COMMA
	case ';':
		tok = token.SEMICOLON
	case '.':
		tok = token.DOT
	case '+':
		tok = token.PLUS
	case '-':
		tok = token.MINUS
	case '*':
		tok = token.MUL
	case '/':
		tok = token.DIV
	case '%':
		tok = token.MOD
	case '^':
		tok = token.CARET
	case '=':
		tok = token.EQ
	case ':':
		tok = token.COLON
		if next == ':' {
			tok = two(token.TYPECAST)
		}
	case '<':
		tok = token.LT
		switch next {
		case '=':
			tok = two(token.LE)
		case '>':
			tok = two(token.NE)
		case '<':
			tok = two(token.SHL)
		}
	case '>':
		tok = token.GT
		switch next {
		case '=':
			tok = two(token.GE)
		case '>':
			tok = two(token.SHR)
		}
	case '&':
		tok = token.AMP
	case '#':
		tok = token.HASH
	case '!':
		switch {
		case next == '=':
			tok = two(token.NE)
		case next == '~' && s.off+1 < len(s.src) && s.src[s.off+1] == '*':
			s.off += 2
			tok = token.NIREGEX
		case next == '~':
			tok = two(token.NREGEX)
		}
	case '~':
		tok = token.REGEX
		if next == '*' {
			tok = two(token.IREGEX)
		}
	case '|':
		tok = token.BAR
		if next == '|' {
			tok = two(token.CONCAT)
		}
	}
	if tok == token.ILLEGAL {
		_, size := utf8.DecodeRuneInString(s.src[pos:])
		s.off = pos + size
		s.err = sqlerr.Syntax(pos, s.src[pos:s.off], "")
		return token.ILLEGAL, pos, s.off, ""
	}
	return tok, pos, s.off, ""
}

// skipSpaceAndComments advances past white space and comments. It reports
// false, with s.err set, for an unterminated block comment.
func (s *Scanner) skipSpaceAndComments() bool {
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			s.off++
		case c == '-' && s.off+1 < len(s.src) && s.src[s.off+1] == '-':
			nl := strings.IndexByte(s.src[s.off:], '\n')
			if nl < 0 {
				s.off = len(s.src)
			} else {
				s.off += nl + 1
			}
		case c == '/' && s.off+1 < len(s.src) && s.src[s.off+1] == '*':
			if !s.skipBlockComment() {
				return false
			}
		default:
			return true
		}
	}
	return true
}

// skipBlockComment skips a /* … */ comment, which nests as in PostgreSQL:
// /* a /* b */ c */ is one comment.
func (s *Scanner) skipBlockComment() bool {
	start := s.off
	depth := 0
	for s.off+1 < len(s.src) {
		switch {
		case s.src[s.off] == '/' && s.src[s.off+1] == '*':
			depth++
			s.off += 2
		case s.src[s.off] == '*' && s.src[s.off+1] == '/':
			depth--
			s.off += 2
			if depth == 0 {
				return true
			}
		default:
			s.off++
		}
	}
	s.off = len(s.src)
	s.err = sqlerr.Syntax(start, clip(s.src[start:]), "unterminated /* comment")
	return false
}

// scanWord scans an unquoted identifier or keyword starting at pos.
func (s *Scanner) scanWord(pos int) (token.Token, int, int, string) {
	s.off = pos
	lower := true
	for s.off < len(s.src) && isIdentPart(s.src[s.off]) {
		if c := s.src[s.off]; 'A' <= c && c <= 'Z' {
			lower = false
		}
		s.off++
	}
	word := s.src[pos:s.off]
	if !lower {
		word = foldASCII(word)
	}
	return token.Lookup(word), pos, s.off, word
}

// scanQuotedIdent scans "…" with "" standing for one quote.
func (s *Scanner) scanQuotedIdent(pos int) (token.Token, int, int, string) {
	s.off = pos + 1
	var b strings.Builder
	for {
		i := strings.IndexByte(s.src[s.off:], '"')
		if i < 0 {
			s.off = len(s.src)
			s.err = sqlerr.Syntax(pos, clip(s.src[pos:]), "unterminated quoted identifier")
			return token.ILLEGAL, pos, s.off, ""
		}
		b.WriteString(s.src[s.off : s.off+i])
		s.off += i + 1
		if s.off < len(s.src) && s.src[s.off] == '"' {
			b.WriteByte('"')
			s.off++
			continue
		}
		break
	}
	if b.Len() == 0 {
		s.err = sqlerr.Syntax(pos, s.src[pos:s.off], "zero-length delimited identifier")
		return token.ILLEGAL, pos, s.off, ""
	}
	return token.IDENT, pos, s.off, b.String()
}

// scanDollar scans PostgreSQL's dollar-quoted string at pos: $$text$$ or
// $tag$text$tag$, the text taken verbatim (no escapes, no doubled quotes).
// ok is false when no tag starts there (a lone '$'), and the caller goes
// on as for any other character.
func (s *Scanner) scanDollar(pos int) (token.Token, int, string, bool) {
	j := pos + 1
	if j < len(s.src) && s.src[j] != '$' {
		if !isIdentStart(s.src[j]) {
			return 0, 0, "", false
		}
		for j < len(s.src) && (isIdentStart(s.src[j]) || isDigit(s.src[j])) {
			j++
		}
	}
	if j >= len(s.src) || s.src[j] != '$' {
		return 0, 0, "", false
	}
	tag := s.src[pos : j+1]
	body := j + 1
	k := strings.Index(s.src[body:], tag)
	if k < 0 {
		s.off = len(s.src)
		s.err = sqlerr.Syntax(pos, clip(s.src[pos:]), "unterminated dollar-quoted string")
		return token.ILLEGAL, s.off, "", true
	}
	s.off = body + k + len(tag)
	tok, _, end, v := s.checkText(pos, s.src[body:body+k])
	return tok, end, v, true
}

// scanString scans a string literal whose opening quote is at s.off; pos is
// where the token starts (before an E prefix). escapes enables backslash
// escapes (E'…').
func (s *Scanner) scanString(pos int, escapes bool) (token.Token, int, int, string) {
	s.off++ // opening quote
	start := s.off
	// Fast path: no quote doubling and no escapes, the value is a substring.
	if i := strings.IndexByte(s.src[start:], '\''); i >= 0 && !escapes {
		if j := start + i + 1; j >= len(s.src) || s.src[j] != '\'' {
			s.off = j
			return s.checkText(pos, s.src[start:j-1])
		}
	}
	var b strings.Builder
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == '\'':
			if s.off+1 < len(s.src) && s.src[s.off+1] == '\'' {
				b.WriteByte('\'')
				s.off += 2
				continue
			}
			s.off++
			return s.checkText(pos, b.String())
		case c == '\\' && escapes:
			if !s.scanEscape(&b, pos) {
				return token.ILLEGAL, pos, s.off, ""
			}
		default:
			b.WriteByte(c)
			s.off++
		}
	}
	s.err = sqlerr.Syntax(pos, clip(s.src[pos:]), "unterminated quoted string")
	return token.ILLEGAL, pos, s.off, ""
}

// checkText returns a string literal's token, or an error for a value
// that is not UTF-8 text (raw bytes in the statement, or an escape such
// as E'\xff' or E'\0' that makes one): a STRING holds UTF-8 text without
// NUL, as PostgreSQL's text does.
func (s *Scanner) checkText(pos int, v string) (token.Token, int, int, string) {
	if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		s.err = sqlerr.New(sqlerr.CodeUntranslatable, "invalid byte sequence for encoding \"UTF8\" in a string literal").WithPos(pos)
		return token.ILLEGAL, pos, s.off, ""
	}
	return token.STRING, pos, s.off, v
}

// scanEscape decodes one backslash escape of an E'…' string at s.off.
func (s *Scanner) scanEscape(b *strings.Builder, pos int) bool {
	s.off++ // backslash
	if s.off >= len(s.src) {
		return true // the unterminated-string error follows
	}
	c := s.src[s.off]
	s.off++
	switch c {
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
	case 'x':
		v, n := s.digits(16, 2)
		if n == 0 {
			b.WriteByte('x')
			return true
		}
		b.WriteByte(byte(v))
	case 'u', 'U':
		want := 4
		if c == 'U' {
			want = 8
		}
		at := s.off - 2
		v, n := s.digits(16, want)
		if n != want || v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
			s.err = sqlerr.Syntax(at, s.src[at:s.off], "invalid Unicode escape value")
			return false
		}
		b.WriteRune(rune(v))
	default:
		if '0' <= c && c <= '7' {
			s.off--
			v, _ := s.digits(8, 3)
			b.WriteByte(byte(v))
			return true
		}
		b.WriteByte(c) // \\, \' and any other character stand for themselves
	}
	return true
}

// digits reads up to max digits in base (8 or 16) and returns their value
// and how many it read.
func (s *Scanner) digits(base, limit int) (v, n int) {
	for n < limit && s.off < len(s.src) {
		d := digitVal(s.src[s.off])
		if d >= base {
			break
		}
		v = v*base + d
		s.off++
		n++
	}
	return v, n
}

// scanNumber scans digits [. digits] [e [+-] digits]. A letter right after
// a number ("123abc") is an error, as in PostgreSQL, rather than a number
// followed by an alias.
func (s *Scanner) scanNumber(pos int) (token.Token, int, int, string) {
	s.off = pos
	for s.off < len(s.src) && isDigit(s.src[s.off]) {
		s.off++
	}
	if s.off < len(s.src) && s.src[s.off] == '.' && !(s.off+1 < len(s.src) && s.src[s.off+1] == '.') {
		s.off++
		for s.off < len(s.src) && isDigit(s.src[s.off]) {
			s.off++
		}
	}
	if s.off < len(s.src) && (s.src[s.off] == 'e' || s.src[s.off] == 'E') {
		j := s.off + 1
		if j < len(s.src) && (s.src[j] == '+' || s.src[j] == '-') {
			j++
		}
		if j < len(s.src) && isDigit(s.src[j]) {
			for j < len(s.src) && isDigit(s.src[j]) {
				j++
			}
			s.off = j
		}
	}
	if s.off < len(s.src) && isIdentStart(s.src[s.off]) {
		end := s.off
		for end < len(s.src) && isIdentPart(s.src[end]) {
			end++
		}
		s.err = sqlerr.Syntax(pos, s.src[pos:end], "trailing junk after numeric literal")
		s.off = end
		return token.ILLEGAL, pos, end, ""
	}
	return token.NUMBER, pos, s.off, s.src[pos:s.off]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isIdentStart accepts ASCII letters, '_' and any byte of a multi-byte
// UTF-8 character, so that names in any script are identifiers.
func isIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// foldASCII lower-cases the ASCII letters of s.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// clip shortens the token kept in an error about a runaway token (an
// unterminated string may swallow the rest of a large script).
func clip(s string) string {
	const limit = 120
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
