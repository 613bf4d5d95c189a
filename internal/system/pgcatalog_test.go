package system_test

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/strata-db/strata"
)

// The captured queries of psql 15 (testdata/psql15/*.sql) and the BI and
// driver probes (testdata/probes.sql) run embedded through a strata.Session
// against the table psql's were captured with; testdata/pgcatalog holds what
// each statement returns. Each .sql file also quotes PostgreSQL's answer to
// the same queries, so a difference in columns or row shape shows next to
// it. Regenerate with -rewrite after checking the difference is intended.

//go:embed testdata
var testdata embed.FS

const setup = `CREATE TABLE balances (account STRING, amount UINT256 NOT NULL, at DATETIME64(6, 'UTC'),
	n INT64 DEFAULT 0, PRIMARY KEY (account));
CREATE INDEX bal_at ON balances (at);
UPSERT INTO balances VALUES ('alice', 5, '2026-01-01 00:00:00', 1)`

func TestPGCatalogQueries(t *testing.T) {
	ctx := context.Background()
	db, err := strata.Open(t.TempDir(), strata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := db.NewSession()
	if _, err := s.Exec(ctx, setup); err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, "SELECT oid FROM pg_class WHERE relname = 'balances'")
	if err != nil || len(r.Rows) != 1 {
		t.Fatalf("balances' oid: %v %v", r, err)
	}
	oid := r.Rows[0][0].String()
	r, err = s.Run(ctx, "SELECT oid FROM pg_class WHERE relname = 'bal_at'")
	if err != nil || len(r.Rows) != 1 {
		t.Fatalf("bal_at's oid: %v %v", r, err)
	}
	indexOID := r.Rows[0][0].String()
	datadriven.RunTest(t, "testdata/pgcatalog", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "run" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		var file string
		d.ScanArgs(t, "file", &file)
		src, err := testdata.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		// psql put the table's and the index's oids in as literals; ours
		// differ.
		sql := strings.ReplaceAll(string(src), "'16384'", "'"+oid+"'")
		sql = strings.ReplaceAll(sql, "'16392'", "'"+indexOID+"'")
		var b strings.Builder
		for _, st := range strata.SplitStatements(sql) {
			text := strings.TrimSpace(st.SQL)
			if text == "" {
				continue
			}
			fmt.Fprintf(&b, "> %s\n", firstLine(text))
			res, err := s.Run(ctx, text)
			if err != nil {
				fmt.Fprintf(&b, "ERROR: %v\n", err)
				continue
			}
			printResult(&b, res)
		}
		return b.String()
	})
}

// firstLine is the statement's first line, enough to find it in the file.
func firstLine(s string) string {
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			if len(l) > 100 {
				l = l[:100] + "…"
			}
			return l
		}
	}
	return ""
}

func printResult(b *strings.Builder, r *strata.Result) {
	if len(r.Columns) == 0 {
		fmt.Fprintf(b, "%s\n", r.Tag)
		return
	}
	names := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		names[i] = c.Name
	}
	fmt.Fprintf(b, "%s\n", strings.Join(names, " | "))
	for _, row := range r.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = v.String()
			if !v.IsNull() {
				vals[i] = strconv.Quote(vals[i])
			}
		}
		fmt.Fprintf(b, "%s\n", strings.Join(vals, " | "))
	}
	fmt.Fprintf(b, "(%d rows)\n", len(r.Rows))
}

// BenchmarkPsqlList is psql's \dt (the query lists every table and calls
// pg_table_is_visible on each) and \d t's column query, on a catalog of
// 300 tables with a primary key and an index each.
func BenchmarkPsqlList(b *testing.B) {
	ctx := context.Background()
	db, err := strata.Open(b.TempDir(), strata.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := db.NewSession()
	for i := range 300 {
		if _, err := s.Exec(ctx, fmt.Sprintf("CREATE TABLE t%d (k INT64, v STRING, PRIMARY KEY (k)); CREATE INDEX t%d_v ON t%d (v)", i, i, i)); err != nil {
			b.Fatal(err)
		}
	}
	dt, err := testdata.ReadFile("testdata/psql15/dt.sql")
	if err != nil {
		b.Fatal(err)
	}
	cols := `SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull
FROM pg_catalog.pg_attribute a WHERE a.attrelid = 't150'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`
	for _, q := range []struct{ name, sql string }{{"dt", string(dt)}, {"columns", cols}} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Run(ctx, q.sql); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
