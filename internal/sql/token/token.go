// Package token defines the lexical tokens of Strata's SQL dialect and the
// keyword table, as go/token does for Go.
//
// Positions are plain byte offsets (int) into the statement text; the
// package has no FileSet because a SQL statement is one string. Keywords are
// recognised case-insensitively. Most keywords are non-reserved and may also
// be used as identifiers (a column named commit, mode or timestamp); the
// reserved ones (SELECT, FROM, GROUP, …) must be double-quoted to be used so,
// as in PostgreSQL.
package token

// Token is a lexical token: a literal class, an operator or a keyword.
type Token uint8

// The tokens. Keywords sit between keywordBeg and keywordEnd, sorted.
const (
	// ILLEGAL is a scanning error; the scanner records what was wrong.
	ILLEGAL Token = iota
	// EOF is the end of the input.
	EOF

	literalBeg
	IDENT  // name or "Quoted Name"
	NUMBER // 123, 1.5, 1e10 (text kept as written)
	STRING // 'text', E'text'
	PARAM  // $1
	literalEnd

	operatorBeg
	LPAREN    // (
	RPAREN    // )
	LBRACK    // [
	RBRACK    // ]
	COMMA     // ,
	SEMICOLON // ;
	DOT       // .
	COLON     // :
	PLUS      // +
	MINUS     // -
	MUL       // *
	DIV       // /
	MOD       // %
	CARET     // ^
	EQ        // =
	NE        // <> or !=
	LT        // <
	LE        // <=
	GT        // >
	GE        // >=
	CONCAT    // ||
	TYPECAST  // ::
	// The POSIX regular-expression match operators of PostgreSQL, which
	// psql's \d and the drivers' catalog queries use.
	REGEX   // ~
	NREGEX  // !~
	IREGEX  // ~*
	NIREGEX // !~*
	// The bitwise operators of PostgreSQL's integer types; ~ (REGEX) is
	// also its bitwise NOT when it is a prefix.
	AMP  // &
	BAR  // |
	HASH // #
	SHL  // <<
	SHR  // >>
	operatorEnd

	keywordBeg
	ADD
	ALL
	ALTER
	ANALYZE
	AND
	ANY
	AS
	ASC
	ATTRIBUTE
	AUTO
	BEGIN
	BETWEEN
	BOTH
	BY
	CASE
	CAST
	CODEC
	COLUMN
	COMMIT
	CREATE
	CROSS
	CURRENT
	DATA
	DEFAULT
	DELETE
	DESC
	DESCRIBE
	DISTINCT
	DROP
	ELSE
	END
	ESCAPE
	EXCEPT
	EXISTS
	EXPLAIN
	FALSE
	FETCH
	FIRST
	FOR
	FROM
	FULL
	GROUP
	HAVING
	HISTORY
	IF
	ILIKE
	IN
	INDEX
	INNER
	INSERT
	INTERSECT
	INTERVAL
	INTO
	IS
	JOIN
	KEY
	LAST
	LEFT
	LIKE
	LIMIT
	LOCAL
	MODE
	NATURAL
	NEXT
	NOT
	NULL
	NULLS
	OF
	OFFSET
	ON
	ONLY
	OR
	ORDER
	OUTER
	PASSWORD
	POLICY
	PRECISION
	PRIMARY
	RECURSIVE
	RENAME
	RESET
	RETURNING
	REVISION
	RIGHT
	ROLLBACK
	ROW
	ROWS
	SCOPE
	SELECT
	SESSION
	SET
	SHARD
	SHARDS
	SHOW
	SOME
	START
	SYMMETRIC
	SYNC
	TABLE
	TABLES
	THEN
	TIME
	TIMESTAMP
	TO
	TRANSACTION
	TRANSFORMATION
	TRANSFORMATIONS
	TRUE
	TYPE
	UNION
	UNIQUE
	UNKNOWN
	UPDATE
	UPSERT
	USER
	USING
	VALID
	VALUES
	WHEN
	WHERE
	WINDOW
	WITH
	WORK
	ZONE
	keywordEnd
)

var operators = [...]string{
	ILLEGAL: "ILLEGAL", EOF: "EOF",
	IDENT: "identifier", NUMBER: "number", STRING: "string", PARAM: "parameter",
	LPAREN: "(", RPAREN: ")", LBRACK: "[", RBRACK: "]", COMMA: ",", SEMICOLON: ";",
	DOT: ".", COLON: ":", PLUS: "+", MINUS: "-", MUL: "*", DIV: "/", MOD: "%",
	CARET: "^", EQ: "=", NE: "<>", LT: "<", LE: "<=", GT: ">", GE: ">=",
	CONCAT: "||", TYPECAST: "::", REGEX: "~", NREGEX: "!~", IREGEX: "~*", NIREGEX: "!~*",
	AMP: "&", BAR: "|", HASH: "#", SHL: "<<", SHR: ">>",
}

// keywordNames holds the upper-case spelling of each keyword, in the order
// of the constants above.
var keywordNames = [keywordEnd - keywordBeg - 1]string{
	"ADD", "ALL", "ALTER", "ANALYZE", "AND", "ANY", "AS", "ASC", "ATTRIBUTE", "AUTO",
	"BEGIN", "BETWEEN", "BOTH", "BY", "CASE", "CAST", "CODEC", "COLUMN",
	"COMMIT", "CREATE", "CROSS", "CURRENT", "DATA", "DEFAULT", "DELETE",
	"DESC", "DESCRIBE", "DISTINCT", "DROP", "ELSE", "END", "ESCAPE",
	"EXCEPT", "EXISTS", "EXPLAIN", "FALSE", "FETCH", "FIRST", "FOR", "FROM",
	"FULL", "GROUP", "HAVING", "HISTORY", "IF", "ILIKE", "IN", "INDEX",
	"INNER", "INSERT", "INTERSECT", "INTERVAL", "INTO", "IS", "JOIN", "KEY",
	"LAST", "LEFT", "LIKE", "LIMIT", "LOCAL", "MODE", "NATURAL", "NEXT",
	"NOT", "NULL", "NULLS", "OF", "OFFSET", "ON", "ONLY", "OR", "ORDER",
	"OUTER", "PASSWORD", "POLICY", "PRECISION", "PRIMARY", "RECURSIVE",
	"RENAME", "RESET", "RETURNING", "REVISION", "RIGHT", "ROLLBACK", "ROW", "ROWS",
	"SCOPE", "SELECT", "SESSION", "SET", "SHARD", "SHARDS", "SHOW", "SOME", "START",
	"SYMMETRIC", "SYNC", "TABLE", "TABLES", "THEN", "TIME", "TIMESTAMP",
	"TO", "TRANSACTION", "TRANSFORMATION", "TRANSFORMATIONS", "TRUE", "TYPE",
	"UNION", "UNIQUE", "UNKNOWN", "UPDATE", "UPSERT", "USER", "USING",
	"VALID", "VALUES", "WHEN", "WHERE", "WINDOW", "WITH", "WORK", "ZONE",
}

// reserved lists the keywords that cannot be used as unquoted identifiers:
// PostgreSQL's reserved words among ours, plus the join words it also keeps
// from being table or column names.
var reserved = map[Token]bool{
	ALL: true, AND: true, ANY: true, AS: true, ASC: true, BETWEEN: true, BOTH: true, CASE: true,
	CAST: true, CREATE: true, CROSS: true, DEFAULT: true, DESC: true,
	DISTINCT: true, ELSE: true, END: true, EXCEPT: true, EXISTS: true,
	FALSE: true, FETCH: true, FOR: true, FROM: true, FULL: true, GROUP: true,
	HAVING: true, ILIKE: true, IN: true, INNER: true, INTERSECT: true,
	INTO: true, IS: true, JOIN: true, LEFT: true, LIKE: true, LIMIT: true,
	NATURAL: true, NOT: true, NULL: true, OFFSET: true, ON: true, OR: true,
	ORDER: true, OUTER: true, PRIMARY: true, RETURNING: true, RIGHT: true, SELECT: true, SOME: true,
	THEN: true, TRUE: true, UNION: true, UNIQUE: true, USING: true,
	WHEN: true, WHERE: true, WINDOW: true, WITH: true,
}

var keywords map[string]Token

func init() {
	keywords = make(map[string]Token, len(keywordNames))
	for i, name := range keywordNames {
		keywords[toLower(name)] = keywordBeg + 1 + Token(i)
	}
}

// String returns the token's spelling: the operator, the upper-case keyword,
// or the name of a literal class ("identifier", "number", …).
func (t Token) String() string {
	switch {
	case t.IsKeyword():
		return keywordNames[t-keywordBeg-1]
	case int(t) < len(operators) && operators[t] != "":
		return operators[t]
	}
	return "token(" + string(rune('0'+t/100%10)) + string(rune('0'+t/10%10)) + string(rune('0'+t%10)) + ")"
}

// IsLiteral reports whether t is an identifier, number, string or parameter.
func (t Token) IsLiteral() bool { return t > literalBeg && t < literalEnd }

// IsOperator reports whether t is punctuation or an operator.
func (t Token) IsOperator() bool { return t > operatorBeg && t < operatorEnd }

// IsKeyword reports whether t is a keyword.
func (t Token) IsKeyword() bool { return t > keywordBeg && t < keywordEnd }

// IsReserved reports whether t is a reserved keyword, which cannot stand
// for an identifier unless double-quoted.
func (t Token) IsReserved() bool { return reserved[t] }

// Lookup maps a lower-case word to its keyword token, or IDENT when the word
// is not a keyword. The scanner folds words before calling it, which makes
// keywords case-insensitive.
func Lookup(lower string) Token {
	if t, ok := keywords[lower]; ok {
		return t
	}
	return IDENT
}

// Keywords returns every keyword token, in alphabetical order.
func Keywords() []Token {
	out := make([]Token, 0, len(keywordNames))
	for t := keywordBeg + 1; t < keywordEnd; t++ {
		out = append(out, t)
	}
	return out
}

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
