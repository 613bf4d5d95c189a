package exec_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// newFake builds emp(id, name, dept, salary, bonus) and dept(code, title)
// as basics.slt has them, plus a versioned t(k, v) with history.
func newFake(t *testing.T) *fakeSource {
	cat := catalog.New()
	i64, str := types.Of(types.Int64), types.Of(types.String)
	mk := func(spec catalog.TableSpec, commit uint64) *catalog.Table {
		tb, _, err := cat.CreateTable(spec, commit)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	emp := mk(catalog.TableSpec{Name: "emp", Columns: []catalog.ColumnSpec{
		{Name: "id", Type: i64, NotNull: true, PrimaryKey: true}, {Name: "name", Type: str},
		{Name: "dept", Type: str}, {Name: "salary", Type: i64}, {Name: "bonus", Type: i64}}}, 1)
	dept := mk(catalog.TableSpec{Name: "dept", Columns: []catalog.ColumnSpec{
		{Name: "code", Type: str, NotNull: true, PrimaryKey: true}, {Name: "title", Type: str}}}, 2)
	tt := mk(catalog.TableSpec{Name: "t", Mode: catalog.ModeVersioned, Columns: []catalog.ColumnSpec{
		{Name: "k", Type: i64, NotNull: true, PrimaryKey: true}, {Name: "v", Type: i64}}}, 3)
	f := &fakeSource{Cat: cat, Newest: 6, Rows: map[catalog.TableID][]fakeRow{}}
	null := types.Null(i64)
	s := func(x string) types.Value { return types.NewString(x) }
	n := types.NewInt64
	add := func(tb *catalog.Table, commit uint64, vals ...types.Value) {
		r := fakeRow{Commit: commit, Vals: map[catalog.ColumnID]types.Value{}}
		for i, c := range tb.Columns {
			r.Vals[c.ID] = vals[i]
		}
		f.Rows[tb.ID] = append(f.Rows[tb.ID], r)
	}
	add(emp, 4, n(1), s("ann"), s("eng"), n(100), n(10))
	add(emp, 4, n(2), s("bob"), s("eng"), n(80), null)
	add(emp, 4, n(3), s("cid"), s("ops"), n(70), n(5))
	add(emp, 4, n(4), s("dee"), s("ops"), n(90), null)
	add(emp, 4, n(5), s("eve"), types.Null(str), n(60), n(0))
	add(emp, 4, n(6), s("fay"), s("sales"), null, n(7))
	add(dept, 4, s("eng"), s("Engineering"))
	add(dept, 4, s("ops"), s("Operations"))
	add(dept, 4, s("hr"), s("Human Resources"))
	add(tt, 5, n(1), n(10))
	add(tt, 6, n(2), n(20))
	return f
}

// checkQueries runs each case's query on f and compares its rendered rows
// (query) with the case's want.
func checkQueries(t *testing.T, f *fakeSource, cases []struct{ sql, want string }) {
	t.Helper()
	for _, c := range cases {
		got, err := query(t, f, c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.sql, got, c.want)
		}
	}
}

func query(t *testing.T, f *fakeSource, sql string) (string, error) {
	t.Helper()
	stmt, err := parser.Parse(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	env := &plan.Env{Source: f, Now: time.Unix(0, 0)}
	p, err := plan.Build(stmt, env)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	err = exec.Run(context.Background(), p, env, func(b *types.Batch) error {
		for i := range b.Rows {
			for j, c := range b.Cols {
				if j > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(c.Get(i).String())
			}
			sb.WriteByte('\n')
		}
		return nil
	})
	return sb.String(), err
}

func TestQueries(t *testing.T) {
	f := newFake(t)
	cases := []struct{ sql, want string }{
		{"SELECT 7 + 3 * 2, 7 / 2, -7 % 3", "13 3 -1\n"},
		{"SELECT NULL = NULL, NULL IS NULL, 1 + NULL", "NULL true NULL\n"},
		{"SELECT coalesce(NULL, 3), nullif(1, 1), upper('ab') || 'c'", "3 NULL ABc\n"},
		{"SELECT count(*), count(bonus), sum(bonus) FROM emp", "6 4 22\n"},
		{"SELECT count(*) FROM emp WHERE id NOT IN (1, NULL)", "0\n"},
		{"SELECT name FROM emp WHERE name LIKE '_o_'", "bob\n"},
		{"SELECT id FROM emp WHERE salary NOT BETWEEN 70 AND 90 ORDER BY id", "1\n5\n"},
		{"SELECT dept, count(*) FROM emp GROUP BY dept HAVING count(*) > 1 ORDER BY dept", "eng 2\nops 2\n"},
		{"SELECT count(DISTINCT dept), count(dept) FROM emp", "3 5\n"},
		{"SELECT name, salary FROM emp ORDER BY salary DESC LIMIT 2", "fay NULL\nann 100\n"},
		{"SELECT id FROM emp ORDER BY id LIMIT 2 OFFSET 3", "4\n5\n"},
		{"SELECT e.name, d.title FROM emp e JOIN dept d ON e.dept = d.code ORDER BY e.name", "ann Engineering\nbob Engineering\ncid Operations\ndee Operations\n"},
		{"SELECT d.code, count(e.id) FROM emp e RIGHT JOIN dept d ON e.dept = d.code GROUP BY d.code ORDER BY d.code", "eng 2\nhr 0\nops 2\n"},
		{"SELECT count(*) FROM emp, dept WHERE emp.dept = dept.code", "4\n"},
		{"SELECT dept FROM emp EXCEPT SELECT code FROM dept ORDER BY 1", "sales\nNULL\n"},
		{"SELECT count(*) FROM (SELECT dept FROM emp UNION SELECT dept FROM emp) AS u", "4\n"},
		{"SELECT name FROM emp WHERE salary = (SELECT max(salary) FROM emp)", "ann\n"},
		{"SELECT code FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e WHERE e.dept = d.code)", "hr\n"},
		{"SELECT name, (SELECT count(*) FROM emp e2 WHERE e2.dept = e.dept) FROM emp e ORDER BY id", "ann 2\nbob 2\ncid 2\ndee 2\neve 0\nfay 1\n"},
		{"WITH big AS (SELECT * FROM emp WHERE salary > 75) SELECT count(*) FROM big", "3\n"},
		{"SELECT k, v FROM t AS OF COMMIT 5", "1 10\n"},
		{"SELECT count(*) FROM t", "2\n"},
		{"WITH old AS (SELECT k FROM t) SELECT count(*) FROM old AS OF COMMIT 5", "1\n"},
		{"SELECT k FROM t WHERE k IN (SELECT k FROM t) AS OF COMMIT 5", "1\n"},
		{"SELECT k, _commit FROM t ORDER BY k", "1 5\n2 6\n"},
		{"SELECT 'a_c' LIKE 'a!_c' ESCAPE '!', 'abc' LIKE 'a!_c' ESCAPE '!', 'ABC' ILIKE 'a%'", "true false true\n"},
		{"SELECT substring('hello', 2, 3), greatest(1, 5, 3), least(2, NULL, 1), length('naïve')", "ell 5 1 5\n"},
		{"SELECT CAST('115792089237316195423570985008687907853269984665640564039457584007913129639935' AS UINT256) - 1", "115792089237316195423570985008687907853269984665640564039457584007913129639934\n"},
		{"SELECT 7.0 / 2, round(2.5), abs(-5)", "3.500000 3 5\n"},
		{"SELECT round(2.345, 2), round(1.2, 3), round(CAST(9.99 AS DECIMAL(3,2)), 1), trunc(42.4382, 2), floor(2.5)", "2.35 1.200 10.0 42.43 2\n"},
		{"SELECT round(123.456, -1), round(-155.5, -1), trunc(199.9, -2), floor(-101.5)", "120 -160 100 -102\n"},
		{"SELECT name FROM emp ORDER BY salary DESC NULLS LAST, id LIMIT 2 OFFSET 1", "dee\nbob\n"},
		{"SELECT dept, (SELECT count(*) FROM emp i WHERE i.dept = o.dept) FROM emp o GROUP BY dept ORDER BY dept", "eng 2\nops 2\nsales 1\nNULL 0\n"},
		{"SELECT dept FROM emp GROUP BY dept HAVING sum(salary) > 150 AND max(bonus) > 5 ORDER BY dept", "eng\n"},
		{"SELECT code FROM dept d WHERE EXISTS (SELECT 1 FROM emp e WHERE e.dept = d.code AND e.salary > 85) ORDER BY code", "eng\nops\n"},
		{"SELECT date_trunc('hour', TIMESTAMP '2026-10-01 12:34:56'), extract(minute FROM TIMESTAMP '2026-10-01 12:34:56')", "2026-10-01 12:00:00.000000 34\n"},
		{"SELECT dept FROM emp INTERSECT ALL SELECT dept FROM emp WHERE id < 4 ORDER BY 1", "eng\neng\nops\n"},
		{"SELECT id FROM emp WHERE dept IS DISTINCT FROM 'eng' ORDER BY id DESC NULLS FIRST LIMIT 2", "6\n5\n"},
		{"SELECT e.name, d.code FROM emp e FULL JOIN dept d ON e.dept = d.code WHERE d.code = 'hr' OR e.id = 5 ORDER BY 1", "eve NULL\nNULL hr\n"},
		{"SELECT a.name, b.name FROM emp a JOIN emp b ON a.dept = b.dept AND a.id < b.id ORDER BY a.name", "ann bob\ncid dee\n"},
		{"SELECT max_by(name, salary), bool_or(salary > 95), any_value(dept) FROM emp WHERE dept = 'eng'", "ann true eng\n"},
		{"VALUES (1, 'a'), (2, NULL) ORDER BY 1 DESC", "2 NULL\n1 a\n"},
		{"SELECT CASE WHEN id > 100 THEN 1 / 0 ELSE id END FROM emp WHERE id = 1", "1\n"},
	}
	checkQueries(t, f, cases)
}

func TestErrors(t *testing.T) {
	f := newFake(t)
	cases := []struct{ sql, want string }{
		{"SELECT nope FROM emp", `column "nope" does not exist`},
		{"SELECT * FROM s", `relation "s" does not exist`},
		{"SELECT code FROM emp, dept d2, dept", `ambiguous`},
		{"SELECT 1 / 0", "division by zero"},
		{"SELECT (SELECT id FROM emp) + 1", "more than one row"},
		{"SELECT * FROM t AS OF COMMIT 0", "AS OF COMMIT must be a positive integer, got 0"},
		{"SELECT * FROM t AS OF COMMIT 99", "commit 99 is later than the newest commit 6"},
		{"SELECT * FROM t AS OF COMMIT NULL", "positive integer"},
		{"SELECT * FROM t AS OF COMMIT 'abc'", "positive integer"},
		{"SELECT * FROM emp AS OF COMMIT 2", "table emp is an upsert table and keeps no history; AS OF needs MODE VERSIONED"},
		{"SELECT * FROM versions(emp)", "versions() needs MODE VERSIONED"},
		{"SELECT name, count(*) FROM emp", "GROUP BY"},
		{"SELECT 9223372036854775807 + id FROM emp", "INT64 overflow"},
		{"SELECT CAST('abc' AS INT64)", "INT64"},
		{"SELECT sum(x) FROM (VALUES (CAST('115792089237316195423570985008687907853269984665640564039457584007913129639935' AS UINT256)), (CAST(1 AS UINT256))) AS v (x)", "overflow"},
	}
	for _, c := range cases {
		_, err := query(t, f, c.sql)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want %q", c.sql, err, c.want)
		}
	}
}

// TestMemLimit checks that every buffering operator fails over its memory
// limit with SQLSTATE 53200 instead of growing without bound (issue 4).
func TestMemLimit(t *testing.T) {
	f := newFake(t)
	for _, sql := range []string{
		"SELECT * FROM emp ORDER BY name",
		"SELECT * FROM emp ORDER BY name LIMIT 5",
		"SELECT name, count(*) FROM emp GROUP BY name",
		"SELECT dept, count(*) FROM emp GROUP BY dept",
		"SELECT DISTINCT name FROM emp",
		"SELECT e.name FROM emp e JOIN emp d ON e.id = d.id",
		"SELECT name FROM emp e WHERE EXISTS (SELECT 1 FROM emp d WHERE d.id = e.id)",
		// a recursion that never ends stops at the limit, not at the
		// machine's memory
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
	} {
		stmt, _ := parser.Parse(sql)
		env := &plan.Env{Source: f, MemLimit: 64}
		p, err := plan.Build(stmt, env)
		if err != nil {
			t.Fatal(err)
		}
		err = exec.Run(context.Background(), p, env, func(*types.Batch) error { return nil })
		se, ok := sqlerr.As(err)
		if !ok || se.Code != exec.CodeOutOfMemory || !strings.Contains(err.Error(), "memory limit") {
			t.Errorf("%s: got %v, want a memory limit error (53200)", sql, err)
		}
	}
}

func TestExplain(t *testing.T) {
	f := newFake(t)
	got, err := query(t, f, "EXPLAIN SELECT e.name FROM emp e JOIN dept d ON e.dept = d.code WHERE e.salary > 70 AS OF COMMIT 5")
	if err == nil {
		t.Fatalf("AS OF on an upsert table should fail, got %s", got)
	}
	got, err = query(t, f, "EXPLAIN SELECT e.name FROM emp e JOIN dept d ON e.dept = d.code WHERE e.salary > 70")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HashJoin Inner on dept = code", "Scan emp AS e", "filter=salary > 70", "shards=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, got)
		}
	}
}

// TestExplainAnalyzeRecursive: a recursive term is built once per round;
// EXPLAIN ANALYZE adds the rounds up instead of showing the last one.
func TestExplainAnalyzeRecursive(t *testing.T) {
	f := newFake(t)
	got, err := query(t, f, "EXPLAIN ANALYZE WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT count(*) FROM r")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Recursive r All (rows=10 ", "Filter n < 10 (rows=9 ", "WorkTable r columns=[n] (rows=10 "} {
		if !strings.Contains(got, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, got)
		}
	}
}
