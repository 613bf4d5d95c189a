package pgwire

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestPsqlViewQueries replays, over the wire, the catalog queries psql 15
// sends for \dv and \d+ on a view (testdata/psql15_view.sql), and checks
// what psql prints from them: the view is listed as a view, its columns
// with their types, its definition, and no rules besides its query.
func TestPsqlViewQueries(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	for _, s := range []string{
		"CREATE TABLE bal (k STRING NOT NULL, amount INT64, PRIMARY KEY (k))",
		"CREATE VIEW bv AS SELECT k, sum(amount) AS total FROM bal GROUP BY k",
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile("testdata/psql15_view.sql")
	if err != nil {
		t.Fatal(err)
	}
	var oid string
	var answers [][][]string
	for _, q := range strings.Split(string(data), "-- end\n") {
		if strings.TrimSpace(q) == "" {
			continue
		}
		q = strings.ReplaceAll(q, ":oid", oid)
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s\n%v", q, err)
		}
		var got [][]string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			row := make([]string, len(vals))
			for i, v := range vals {
				if v == nil {
					row[i] = "NULL"
				} else {
					row[i] = strings.TrimSpace(strings.ReplaceAll(toString(v), "\n", " "))
				}
			}
			got = append(got, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s\n%v", q, err)
		}
		if len(answers) == 1 && len(got) == 1 {
			oid = got[0][0] // the lookup by name: every later query names the oid
		}
		answers = append(answers, got)
	}
	if len(answers) != 6 {
		t.Fatalf("%d queries answered, want 6", len(answers))
	}
	want := []string{
		"public bv view strata", // \dv
		oid + " public bv",      // \d+ bv: the name lookup
		"0 v false true false false false false false NULL 0  p n NULL", // relkind v, relhasrules
		"k text NULL false NULL   x NULL|total numeric(38,0) NULL false NULL   m NULL",
		// pg_get_viewdef's lines (" SELECT k,\n    sum(…", as PostgreSQL
		// lays them out), newlines shown as spaces
		"SELECT k,     sum(amount) AS total    FROM bal   GROUP BY k;",
		"", // no rules but its own
	}
	for i, w := range want {
		var lines []string
		for _, r := range answers[i] {
			lines = append(lines, strings.Join(r, " "))
		}
		if g := strings.Join(lines, "|"); g != w {
			t.Errorf("query %d:\n got  %q\n want %q", i+1, g, w)
		}
	}
	if oid == "" {
		t.Fatal("the view's oid was not found")
	}
}

func toString(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}
