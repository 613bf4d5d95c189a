// Package sqlgen generates random SQL statements for robustness tests: a
// small grammar over the dialect of Strata (DDL in every mode, INSERT and
// UPSERT with duplicate and late versions, UPDATE, DELETE, AS OF,
// versions(), joins, aggregates, casts to every type, overflowing
// arithmetic, NULLs, names that do not exist, transactions).
//
// It exists because hand-written tests only reach the combinations their
// authors thought of; a generator that knows the schema it created reaches
// the planner, executor and storage with statements that mostly make sense
// and sometimes do not, which is where crashes and internal errors hide.
// Statements are not guaranteed to be valid: the caller reports each
// outcome (Result) so the generator's idea of the schema follows the
// database's.
package sqlgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Types are the column types the generator uses: every type of R2.1, some
// in more than one width or precision.
var Types = []string{
	"INT8", "INT16", "INT32", "INT64", "INT128", "INT256",
	"UINT8", "UINT16", "UINT32", "UINT64", "UINT128", "UINT256",
	"FLOAT32", "FLOAT64", "DECIMAL(10,2)", "DECIMAL(76,10)", "DECIMAL(5,0)",
	"BOOL", "STRING", "VARCHAR(3)", "BYTES", "DATE", "DATETIME64(3, 'UTC')",
	"DATETIME64(9)", "DATETIME", "TIMESTAMP", "UUID",
}

// column is one column of a table the generator believes exists.
type column struct {
	name, typ string
}

// table is what the generator believes about one table.
type table struct {
	name  string
	mode  string // APPEND, UPSERT or VERSIONED
	cols  []column
	group string // attribute group name, "" if none
	valid string // its VALID BY column, "" if none
}

// Gen generates statements. It is not safe for concurrent use.
type Gen struct {
	rng     *rand.Rand
	tables  []*table
	pending *table // a CREATE whose outcome is not yet reported
	dropped string // a DROP whose outcome is not yet reported
	seq     int
	commits int // statements reported successful: a bound for AS OF
	last    string
	inTx    bool // a BEGIN succeeded and no COMMIT or ROLLBACK since
	failed  bool // a statement failed inside that transaction
}

// New returns a generator seeded for reproducible sequences.
func New(seed uint64) *Gen {
	return &Gen{rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

// Result tells the generator whether the last statement succeeded, so
// that a CREATE or DROP changes the schema it generates against.
func (g *Gen) Result(err error) {
	switch {
	case err == nil && (strings.HasPrefix(g.last, "BEGIN") || strings.HasPrefix(g.last, "START")):
		g.inTx, g.failed = true, false
	case g.last == "COMMIT" || g.last == "ROLLBACK":
		g.inTx, g.failed = false, false
	case err != nil && g.inTx:
		g.failed = true
	}
	if err == nil {
		g.commits++
		if g.pending != nil {
			g.tables = append(g.tables, g.pending)
		}
		if g.dropped != "" {
			for i, t := range g.tables {
				if t.name == g.dropped {
					g.tables = append(g.tables[:i], g.tables[i+1:]...)
					break
				}
			}
		}
	}
	g.pending, g.dropped = nil, ""
}

func (g *Gen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *Gen) chance(n int) bool { return g.rng.IntN(n) == 0 }

// Next returns the next statement.
func (g *Gen) Next() string {
	g.last = g.next()
	return g.last
}

func (g *Gen) next() string {
	g.pending, g.dropped = nil, ""
	// A failed transaction accepts only its end; an open one ends soon, so
	// most statements run in autocommit.
	if g.inTx && (g.failed && g.chance(2) || g.chance(6)) {
		return g.pick("COMMIT", "ROLLBACK")
	}
	if len(g.tables) == 0 || g.chance(12) {
		return g.create()
	}
	switch g.rng.IntN(21) {
	case 0:
		return g.drop()
	case 1:
		return g.alter()
	case 2, 3, 4, 5:
		return g.write()
	case 6:
		return g.update()
	case 7:
		return g.delete()
	case 8:
		return g.pick("BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION READ ONLY", "SAVEPOINT s")
	case 9:
		return g.scalarSelect()
	case 10, 11:
		return g.join()
	case 12:
		return g.versions()
	case 14:
		return g.composite()
	case 13:
		return g.pick("SHOW TABLES", "SELECT * FROM nosuch", "SELECT nosuch FROM "+g.table().name,
			`SELECT "weird""name" FROM `+g.table().name, "SELECT FROM", "INSERT INTO", "SELECT 1 +",
			"CREATE TABLE select (a INT64)", "DROP TABLE nosuch", "SELECT * FROM "+g.table().name+" AS OF COMMIT 99999999999",
			"SELECT * FROM "+g.table().name+" AS OF TIMESTAMP 'nope'", "SELECT * FROM pg_catalog.pg_class LIMIT 3",
			"SELECT count(*) FROM information_schema.columns")
	default:
		return g.query()
	}
}

func (g *Gen) table() *table {
	if len(g.tables) == 0 {
		return &table{name: "nosuch", mode: "UPSERT", cols: []column{{"k", "INT64"}}}
	}
	return g.tables[g.rng.IntN(len(g.tables))]
}

func (g *Gen) create() string {
	g.seq++
	t := &table{name: fmt.Sprintf("t%d", g.seq%8), mode: g.pick("UPSERT", "VERSIONED", "APPEND")}
	n := 1 + g.rng.IntN(5)
	t.cols = append(t.cols, column{"k", g.pick("INT64", "INT32", "UINT64", "STRING", "UINT256", "DATE", "UUID")})
	for i := 0; i < n; i++ {
		t.cols = append(t.cols, column{fmt.Sprintf("c%d", i), Types[g.rng.IntN(len(Types))]})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s%s (", g.pick("", "", "", "IF NOT EXISTS "), t.name)
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " " + c.typ)
		if i > 0 && g.chance(5) {
			b.WriteString(g.pick(" NOT NULL", " NULL", " DEFAULT 0", " DEFAULT NULL", " DEFAULT 'x'"))
		}
	}
	if t.mode != "APPEND" || g.chance(10) {
		b.WriteString(", PRIMARY KEY (k)")
	}
	if t.mode != "APPEND" && g.chance(2) {
		t.group, t.valid = "g", "v"
		t.cols = append(t.cols, column{"gv", "INT64"}, column{"v", g.pick("INT64", "UINT32", "DATE", "DATETIME64(3, 'UTC')")})
		fmt.Fprintf(&b, ", ATTRIBUTE GROUP g (gv INT64 NULL, v %s NULL) VALID BY (v)", t.cols[len(t.cols)-1].typ)
	}
	fmt.Fprintf(&b, ") MODE %s", t.mode)
	if g.chance(4) {
		fmt.Fprintf(&b, " SHARD BY (k) SHARDS %s", g.pick("1", "4", "AUTO", "0", "-1"))
	}
	g.pending = t
	return b.String()
}

func (g *Gen) drop() string {
	t := g.table()
	g.dropped = t.name
	return "DROP TABLE " + g.pick("", "IF EXISTS ") + t.name
}

func (g *Gen) alter() string {
	t := g.table()
	switch g.rng.IntN(4) {
	case 0:
		c := column{fmt.Sprintf("a%d", g.rng.IntN(100)), Types[g.rng.IntN(len(Types))]}
		// Assumed added: a failure only makes later statements name a
		// missing column, which is itself worth generating.
		t.cols = append(t.cols, c)
		return fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", t.name, c.name, c.typ)
	case 1:
		return fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", t.name, t.cols[g.rng.IntN(len(t.cols))].name)
	case 2:
		return fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", t.name, t.cols[g.rng.IntN(len(t.cols))].name, "r")
	default:
		return fmt.Sprintf("ALTER TABLE %s SET POLICY %s", t.name, g.pick("keep", "latest", "nonsense"))
	}
}

// Literal returns a literal for typ: usually in range, sometimes a boundary,
// an overflow, a malformed text or NULL.
func (g *Gen) Literal(typ string) string {
	if g.chance(8) {
		return "NULL"
	}
	if g.chance(15) {
		return g.pick("'nope'", "-1", "340282366920938463463374607431768211456",
			"115792089237316195423570985008687907853269984665640564039457584007913129639936",
			"1e400", "'2024-02-30'", "''", "'\\x'", "TRUE", "1.5", "-0", "'NaN'", "'Infinity'")
	}
	t := strings.ToUpper(typ)
	switch {
	case strings.HasPrefix(t, "UINT"):
		return g.pick("0", "1", "7", "255", "65535", "4294967295", "18446744073709551615",
			"340282366920938463463374607431768211455", fmt.Sprint(g.rng.IntN(1000)))
	case strings.HasPrefix(t, "INT"):
		return g.pick("0", "-1", "1", "127", "-128", "32767", "-2147483648", "9223372036854775807",
			"-9223372036854775808", fmt.Sprint(g.rng.IntN(2000)-1000))
	case strings.HasPrefix(t, "FLOAT"):
		return g.pick("0.5", "-1e30", "3.4e38", "1e-45", "'NaN'", "'-Infinity'", fmt.Sprint(g.rng.Float64()*100))
	case strings.HasPrefix(t, "DECIMAL"):
		return g.pick("0", "12345678.99", "-0.01", "99999", "1e-10", "123456789012345678901234567890.5", fmt.Sprintf("%d.%02d", g.rng.IntN(1000), g.rng.IntN(100)))
	case t == "BOOL":
		return g.pick("TRUE", "FALSE", "'t'", "'yes'", "0")
	case t == "STRING" || strings.HasPrefix(t, "VARCHAR"):
		return g.pick("'a'", "'it''s'", "'日本語'", "'abcd'", "''", fmt.Sprintf("'s%d'", g.rng.IntN(50)))
	case t == "BYTES":
		return g.pick("'\\x00ff'", "'abc'", "'\\xzz'", "''")
	case t == "DATE":
		return g.pick("'2024-01-01'", "'1970-01-01'", "'9999-12-31'", "'0001-01-01'", fmt.Sprintf("'2024-%02d-%02d'", 1+g.rng.IntN(12), 1+g.rng.IntN(28)))
	case strings.HasPrefix(t, "DATETIME") || t == "TIMESTAMP":
		return g.pick("'2024-01-01 00:00:00'", "'2024-01-01 12:05:00.123'", "'1900-01-01 00:00:00'",
			"'2262-04-12 00:00:00'", "'2024-01-01T00:00:00.123456789Z'", fmt.Sprintf("'2024-06-%02d 10:00:00'", 1+g.rng.IntN(28)))
	case t == "UUID":
		return g.pick("'00000000-0000-0000-0000-000000000000'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'not-a-uuid'")
	}
	return "0"
}

func (g *Gen) write() string {
	t := g.table()
	verb := g.pick("INSERT", "UPSERT")
	cols := t.cols
	if g.chance(3) && len(cols) > 1 {
		cols = cols[:1+g.rng.IntN(len(cols))]
		if t.valid != "" && g.chance(2) {
			cols = append(cols, column{"v", t.cols[len(t.cols)-1].typ})
		}
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s INTO %s (%s) VALUES ", verb, t.name, strings.Join(names, ", "))
	rows := 1 + g.rng.IntN(4)
	key := g.Literal(cols[0].typ)
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for i, c := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			switch {
			case i == 0 && g.chance(2):
				b.WriteString(key) // a duplicate key in one statement
			case c.name == "v" && g.chance(2):
				// late and duplicate versions of the VALID BY column
				b.WriteString(g.pick("1", "2", "1", "'2024-01-01'", "0"))
			default:
				b.WriteString(g.Literal(c.typ))
			}
		}
		b.WriteString(")")
	}
	if t.group != "" && g.chance(3) {
		b.WriteString(" ATTRIBUTE GROUP " + g.pick("g", "nosuch"))
	}
	if g.chance(10) {
		fmt.Fprintf(&b, " ON CONFLICT (k) DO NOTHING")
	}
	return b.String()
}

func (g *Gen) update() string {
	t := g.table()
	c := t.cols[g.rng.IntN(len(t.cols))]
	return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", t.name, c.name, g.expr(t, c.typ), g.pred(t))
}

func (g *Gen) delete() string {
	t := g.table()
	if g.chance(5) {
		return "DELETE FROM " + t.name
	}
	return fmt.Sprintf("DELETE FROM %s WHERE %s", t.name, g.pred(t))
}

// expr is a value expression over t's columns for a target of type typ.
func (g *Gen) expr(t *table, typ string) string {
	c := t.cols[g.rng.IntN(len(t.cols))]
	switch g.rng.IntN(8) {
	case 0:
		return c.name
	case 1:
		return fmt.Sprintf("%s + %s", c.name, g.Literal(c.typ))
	case 2:
		return fmt.Sprintf("CAST(%s AS %s)", c.name, typ)
	case 3:
		return fmt.Sprintf("COALESCE(%s, %s)", c.name, g.Literal(c.typ))
	case 4:
		return fmt.Sprintf("%s * %s", c.name, g.pick("2", "-1", "0", "9223372036854775807"))
	case 5:
		return fmt.Sprintf("CASE WHEN %s THEN %s ELSE NULL END", g.pred(t), g.Literal(typ))
	default:
		return g.Literal(typ)
	}
}

// pred is a boolean expression over t's columns.
func (g *Gen) pred(t *table) string {
	c := t.cols[g.rng.IntN(len(t.cols))]
	switch g.rng.IntN(8) {
	case 0:
		return c.name + " IS NULL"
	case 1:
		return c.name + " IS NOT NULL"
	case 2:
		return fmt.Sprintf("%s IN (%s, %s, NULL)", c.name, g.Literal(c.typ), g.Literal(c.typ))
	case 3:
		return fmt.Sprintf("%s BETWEEN %s AND %s", c.name, g.Literal(c.typ), g.Literal(c.typ))
	case 4:
		return fmt.Sprintf("(%s) AND NOT (%s)", g.pred(t), g.pred(t))
	case 5:
		return fmt.Sprintf("%s %s %s", c.name, g.pick("=", "<>", "<", ">=", "LIKE"), g.Literal("STRING"))
	default:
		return fmt.Sprintf("%s %s %s", c.name, g.pick("=", "<>", "<", "<=", ">", ">="), g.Literal(c.typ))
	}
}

func (g *Gen) asOf() string {
	switch g.rng.IntN(6) {
	case 0:
		return fmt.Sprintf(" AS OF COMMIT %d", g.rng.IntN(g.commits+2))
	case 1:
		return " AS OF TIMESTAMP " + g.pick("'2000-01-01 00:00:00'", "'2999-01-01 00:00:00'", "now()")
	}
	return ""
}

func (g *Gen) query() string {
	t := g.table()
	var b strings.Builder
	agg := g.chance(2)
	c := t.cols[g.rng.IntN(len(t.cols))]
	b.WriteString("SELECT ")
	if agg {
		fmt.Fprintf(&b, "%s, %s(%s), count(*)", c.name, g.pick("sum", "min", "max", "avg", "count", "sum"), t.cols[g.rng.IntN(len(t.cols))].name)
	} else if g.chance(3) {
		b.WriteString("*")
	} else {
		fmt.Fprintf(&b, "%s, %s", c.name, g.expr(t, Types[g.rng.IntN(len(Types))]))
	}
	if g.chance(3) {
		b.WriteString(", " + g.window(t, c, agg))
	}
	fmt.Fprintf(&b, " FROM %s%s", t.name, g.asOf())
	if g.chance(2) {
		b.WriteString(" WHERE " + g.pred(t))
	}
	if agg {
		fmt.Fprintf(&b, " GROUP BY %s", c.name)
		if g.chance(3) {
			b.WriteString(" HAVING count(*) > 1")
		}
	}
	if g.chance(2) {
		fmt.Fprintf(&b, " ORDER BY 1 %s", g.pick("", "DESC", "NULLS FIRST"))
	}
	if g.chance(2) {
		fmt.Fprintf(&b, " LIMIT %s", g.pick("0", "1", "3", "-1", "18446744073709551616"))
	}
	return b.String()
}

// window is a window function call over t: over a grouped query (agg)
// its arguments and keys are the group column c or count(*). Some frames
// do not fit every column type (RANGE offsets need a number): mistakes
// the binder must report, not crash on.
func (g *Gen) window(t *table, c column, agg bool) string {
	col := func() string {
		if agg {
			return g.pick(c.name, "count(*)")
		}
		return t.cols[g.rng.IntN(len(t.cols))].name
	}
	x := col()
	fn := g.pick("row_number()", "rank()", "dense_rank()", "percent_rank()", "cume_dist()", "ntile(3)",
		"lag("+x+")", "lead("+x+", 2, "+x+")", "first_value("+x+")", "last_value("+x+")", "nth_value("+x+", 2)",
		"count(*)", "count("+x+")", "sum("+x+")", "avg("+x+")", "min("+x+")", "max("+x+")")
	var spec []string
	if g.chance(2) {
		spec = append(spec, "PARTITION BY "+col())
	}
	if g.chance(3) != g.chance(4) {
		spec = append(spec, "ORDER BY "+col()+g.pick("", " DESC", " NULLS FIRST"))
	}
	if g.chance(2) {
		spec = append(spec, g.pick("ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING", "ROWS UNBOUNDED PRECEDING",
			"RANGE BETWEEN 1 PRECEDING AND CURRENT ROW", "GROUPS BETWEEN CURRENT ROW AND 2 FOLLOWING EXCLUDE TIES",
			"ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW", "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"))
	}
	return fn + " OVER (" + strings.Join(spec, " ") + ")"
}

func (g *Gen) join() string {
	a, b := g.table(), g.table()
	kind := g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN")
	on := ""
	if kind != "CROSS JOIN" {
		on = " ON x.k = y.k"
		if g.chance(3) {
			on = fmt.Sprintf(" ON x.%s = y.%s", a.cols[g.rng.IntN(len(a.cols))].name, b.cols[g.rng.IntN(len(b.cols))].name)
		}
	}
	sel := "count(*)"
	if g.chance(2) {
		sel = fmt.Sprintf("x.k, y.%s", b.cols[g.rng.IntN(len(b.cols))].name)
	}
	q := fmt.Sprintf("SELECT %s FROM %s AS x%s %s %s AS y%s", sel, a.name, g.asOf(), kind, b.name, on)
	if g.chance(3) {
		q += fmt.Sprintf(" WHERE y.k IN (SELECT k FROM %s)", g.table().name)
	}
	if g.chance(3) {
		q += " ORDER BY 1 LIMIT 5"
	}
	return q
}

func (g *Gen) versions() string {
	t := g.table()
	q := fmt.Sprintf("SELECT * FROM versions(%s)%s", t.name, g.asOf())
	if g.chance(2) {
		q += " WHERE " + g.pred(t)
	}
	return q
}

// scalarSelect is a SELECT without a table: casts of literals to every
// type, overflowing arithmetic and functions on NULL.
func (g *Gen) scalarSelect() string {
	from := Types[g.rng.IntN(len(Types))]
	to := Types[g.rng.IntN(len(Types))]
	switch g.rng.IntN(5) {
	case 0:
		return fmt.Sprintf("SELECT CAST(%s AS %s)", g.Literal(from), to)
	case 1:
		return fmt.Sprintf("SELECT CAST(CAST(%s AS %s) AS %s)", g.Literal(from), from, to)
	case 2:
		return "SELECT " + g.pick("9223372036854775807 + 1", "-(-9223372036854775808)", "CAST(255 AS UINT8) + CAST(1 AS UINT8)",
			"1 / 0", "1 % 0", "CAST(-1 AS UINT64)", "2147483647 * 2147483647 * 2147483647 * 2147483647 * 2147483647",
			"CAST(1e300 AS FLOAT32)", "CAST('1e400' AS FLOAT64)", "abs(-9223372036854775808)", "CAST(99999.999 AS DECIMAL(5,2))",
			"CAST(115792089237316195423570985008687907853269984665640564039457584007913129639935 AS UINT256) + 1",
			"CAST(0 AS UINT256) - 1", "-CAST(0 AS UINT128)", "CAST('2024-01-01' AS DATE) + 100000000")
	case 3:
		return fmt.Sprintf("SELECT %s(%s)", g.pick("length", "upper", "abs", "coalesce", "nullif", "round", "lower", "substring"), g.Literal(from))
	default:
		return fmt.Sprintf("SELECT %s %s %s", g.Literal(from), g.pick("+", "-", "*", "/", "=", "<", "||", "AND"), g.Literal(to))
	}
}

// composite is a statement built from others: INSERT … SELECT between
// tables of different schemas, set operations, subqueries in the select
// list, DISTINCT, EXPLAIN ANALYZE of a query, an UPDATE of the key.
func (g *Gen) composite() string {
	a, b := g.table(), g.table()
	switch g.rng.IntN(7) {
	case 0:
		return fmt.Sprintf("%s INTO %s SELECT * FROM %s%s", g.pick("INSERT", "UPSERT"), a.name, b.name, g.asOf())
	case 1:
		return fmt.Sprintf("SELECT k FROM %s %s SELECT k FROM %s ORDER BY 1", a.name, g.pick("UNION", "UNION ALL", "EXCEPT", "INTERSECT"), b.name)
	case 2:
		return fmt.Sprintf("SELECT k, (SELECT max(k) FROM %s) FROM %s WHERE %s", b.name, a.name, g.pred(a))
	case 3:
		c := a.cols[g.rng.IntN(len(a.cols))]
		return fmt.Sprintf("SELECT DISTINCT %s FROM %s ORDER BY %s %s", c.name, a.name, c.name, g.pick("ASC", "DESC NULLS LAST"))
	case 4:
		return "EXPLAIN ANALYZE " + g.query()
	case 5:
		return fmt.Sprintf("UPDATE %s SET k = %s WHERE %s", a.name, g.Literal(a.cols[0].typ), g.pred(a))
	default:
		return fmt.Sprintf("SELECT * FROM %s WHERE k IN (SELECT k FROM %s%s) %s EXISTS (SELECT 1 FROM %s WHERE %s.k = %s.k)",
			a.name, b.name, g.asOf(), g.pick("AND", "OR", "AND NOT"), b.name, b.name, a.name)
	}
}
