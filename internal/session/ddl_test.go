package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/system"
	"github.com/strata-db/strata/internal/types"
)

// definition is what a table's definition is, without ids and commits.
func definition(t *catalog.Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s key=%v order=%v shard=%v/%d/%v pol=%+v\n", t.Name, t.Mode, t.Names(t.Key), t.Names(t.OrderBy),
		t.Names(t.ShardBy), t.Shards, t.ShardsAuto, t.Policies)
	for _, c := range t.Columns {
		def := "-"
		if c.Default != nil {
			def = c.Default.Value + "/" + fmt.Sprint(c.Default.Null)
		}
		fmt.Fprintf(&b, "  %s %s null=%v def=%s codec=%s named=%v group=%d\n", c.Name, c.Type, c.Nullable, def, c.Codec, c.CodecNamed, c.Group)
	}
	for _, g := range t.Groups {
		fmt.Fprintf(&b, "  group %s %v valid=%v rev=%v\n", g.Name, t.Names(g.Columns), t.Names(g.ValidBy), t.Names(g.RevisionBy))
	}
	return b.String()
}

func TestShowCreateTableRecreates(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE POLICY keep FOR RETENTION (history = INTERVAL '1 hour')`)
	h.ok(`CREATE POLICY big FOR COMPACTION (target_part_bytes = '256MB')`)
	stmts := []string{
		`CREATE TABLE balances (chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
		  amount UINT256 NULL, updated_at DATETIME64(3, 'UTC') NULL, balance_index UINT128 NULL, balance_version UINT64 NULL,
		  transfer_count UINT64 NULL, last_transfer_at DATETIME64(3, 'UTC') NULL, activity_index UINT128 NULL,
		  PRIMARY KEY (chain_id, address, token),
		  ATTRIBUTE GROUP holding (amount, updated_at, balance_index, balance_version) VALID BY (balance_index) REVISION BY (balance_version),
		  ATTRIBUTE GROUP activity (transfer_count, last_transfer_at, activity_index) VALID BY (activity_index))
		MODE VERSIONED SHARD BY (address) SHARDS AUTO ORDER BY (chain_id, address, token)`,
		`CREATE TABLE "Odd Name" (k INT64 NOT NULL, "select" STRING DEFAULT 'it''s', v DECIMAL(10,2) DEFAULT 1.5 CODEC(ZSTD(3)),
		  at DATETIME64(6) DEFAULT '2026-01-01 00:00:00', PRIMARY KEY (k)) MODE UPSERT VALID BY (at) POLICY keep, big`,
		`CREATE TABLE ev (ts DATETIME64(3, 'UTC') NOT NULL, what STRING CODEC(LZ4), n INT32 CODEC(DELTA, ZSTD(5))) MODE APPEND SHARDS 4 ORDER BY (ts)`,
		`CREATE TABLE kv (a INT64 NOT NULL, b STRING NOT NULL, v BOOL, PRIMARY KEY (b, a)) SHARD BY (a) SHARDS 3`,
	}
	for _, s := range stmts {
		h.ok(s)
	}
	h.ok(`ALTER TABLE kv ADD COLUMN w INT64 DEFAULT 7, ADD ATTRIBUTE GROUP labels (l STRING NULL, li INT64 NULL) VALID BY (li)`)
	fresh := newHarness(t)
	fresh.ok(`CREATE POLICY keep FOR RETENTION (history = INTERVAL '1 hour')`)
	fresh.ok(`CREATE POLICY big FOR COMPACTION (target_part_bytes = '256MB')`)
	for _, name := range []string{"balances", "Odd Name", "ev", "kv"} {
		res := h.ok(`SHOW CREATE TABLE "` + name + `"`)
		text := res.Rows[0][1].Str()
		if _, err := fresh.run(text); err != nil {
			t.Fatalf("SHOW CREATE TABLE %s gave SQL that does not run: %v\n%s", name, err, text)
		}
		a, _ := h.eng.Catalog().Table(name)
		b, _ := fresh.eng.Catalog().Table(name)
		if da, db := definition(a), definition(b); da != db {
			t.Errorf("%s re-created differently:\n%s\nfrom\n%s\nwant\n%s", name, text, db, da)
		}
	}
}

func TestDDLErrorsAndNoops(t *testing.T) {
	h := newHarness(t)
	h.fails(`CREATE TABLE bad2 (a INT64)`, "42P16", "PRIMARY KEY", "MODE APPEND")
	h.fails(`CREATE TABLE bad1 (a INT64 NOT NULL, PRIMARY KEY (a)) MODE APPEND`, "42P16")
	h.fails(`CREATE TABLE t (a NOSUCHTYPE NOT NULL, PRIMARY KEY (a))`, "42704", "NOSUCHTYPE")
	h.fails(`CREATE TABLE t (a INT64 NOT NULL, b UINT8 DEFAULT 300, PRIMARY KEY (a))`, "42804", "b")
	h.fails(`CREATE TABLE t (a INT64 NOT NULL UNIQUE, PRIMARY KEY (a))`, "0A000", "UNIQUE")
	h.ok(`CREATE TABLE t (a INT64 NOT NULL, b INT64, PRIMARY KEY (a))`)
	h.fails(`CREATE TABLE t (a INT64 NOT NULL, PRIMARY KEY (a))`, "42P07", "t")
	before := h.eng.LastCommit()
	h.ok(`CREATE TABLE IF NOT EXISTS t (a INT64 NOT NULL, PRIMARY KEY (a))`)
	h.ok(`DROP TABLE IF EXISTS nosuch`)
	h.ok(`DROP INDEX IF EXISTS nosuch`)
	if after := h.eng.LastCommit(); after != before {
		t.Errorf("no-op DDL took commits %d..%d", before, after)
	}
	h.fails(`ALTER TABLE nosuch ADD COLUMN c INT64`, "42P01", "nosuch")
	h.fails(`ALTER TABLE t ALTER COLUMN nosuch SET DEFAULT 1`, "42703", "nosuch")
	// an ALTER of several actions is atomic
	h.fails(`ALTER TABLE t ADD COLUMN c INT64, DROP COLUMN a`, "", "a")
	if tab, _ := h.eng.Catalog().Table("t"); len(tab.Columns) != 2 {
		t.Errorf("a failed ALTER left %d columns", len(tab.Columns))
	}
	h.ok(`ALTER TABLE t ADD COLUMN c INT64 DEFAULT 7, RENAME COLUMN b TO bb, RENAME TO t2`)
	tab, ok := h.eng.Catalog().Table("t2")
	if !ok || tab.Columns[1].Name != "bb" || tab.Columns[2].Introduced == nil || tab.Columns[2].Introduced.Value != "7" {
		t.Fatalf("ALTER with several actions: %+v", tab)
	}
	h.fails(`CREATE POLICY p FOR NOSUCHROLE (history = INTERVAL '1 hour')`, "", "nosuchrole")
	h.fails(`CREATE POLICY p FOR RETENTION (nosuch = 1)`, "", "nosuch")
	h.fails(`CREATE TRANSFORMATION x INTO t2 AS SELECT 1`, "0A000", "without FROM")
	h.ok(`SYNC TRANSFORMATIONS`)
	h.ok(`CREATE INDEX i ON t2 (bb)`)
	h.ok(`DROP TABLE t2`)
	if _, ok := h.eng.Catalog().Index("i"); ok {
		t.Errorf("DROP TABLE left its index")
	}
}

func TestUsers(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE USER alice WITH PASSWORD 's3cret'`)
	u, ok := h.eng.Catalog().User("alice")
	if !ok || !strings.HasPrefix(u.Verifier, "SCRAM-SHA-256$4096:") || strings.Contains(u.Verifier, "s3cret") {
		t.Fatalf("verifier %q", u.Verifier)
	}
	if !ScramCheck(u.Verifier, "s3cret") || ScramCheck(u.Verifier, "wrong") {
		t.Errorf("ScramCheck does not tell the password from a wrong one")
	}
	h.ok(`ALTER USER alice PASSWORD 'other'`)
	u, _ = h.eng.Catalog().User("alice")
	if !ScramCheck(u.Verifier, "other") {
		t.Errorf("ALTER USER did not replace the verifier")
	}
	h.fails(`CREATE USER alice`, "42710", "alice")
	h.ok(`DROP USER alice`)
	h.fails(`DROP USER alice`, "42704", "alice")
}

// RFC 7677's test vector: password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==,
// 4096 iterations; the server signature of the RFC's exchange must come out
// of the verifier's ServerKey, and the client's proof must check against its
// StoredKey.
func TestScramVector(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := scramVerifierWith("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	_, keys, _ := strings.Cut(strings.TrimPrefix(v, "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ=="), "$")
	storedText, serverText, _ := strings.Cut(keys, ":")
	stored, _ := base64.StdEncoding.DecodeString(storedText)
	server, _ := base64.StdEncoding.DecodeString(serverText)
	auth := "n=user,r=rOprNGfwEbeRWgbNEkqO," +
		"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096," +
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	if got := base64.StdEncoding.EncodeToString(hmacSHA256(server, auth)); got != "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" {
		t.Errorf("server signature %s (verifier %s)", got, v)
	}
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	sig := hmacSHA256(stored, auth)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	if sum := sha256.Sum256(clientKey); !bytes.Equal(sum[:], stored) {
		t.Errorf("the RFC's client proof does not check against StoredKey")
	}
}

func TestSettings(t *testing.T) {
	h := newHarness(t)
	for _, s := range []string{`SET client_encoding = 'UTF8'`, `SET DateStyle = ISO`, `SET TIME ZONE 'UTC'`,
		`SET search_path = public, "$user"`, `SET application_name = 'psql'`, `SET extra_float_digits = 3`,
		`SET statement_timeout = '5s'`, `SET myapp.flag = on`} {
		h.ok(s)
	}
	if r := h.ok(`SHOW application_name`); r.Rows[0][0].Str() != "psql" || r.Columns[0].Name != "application_name" {
		t.Errorf("SHOW application_name: %+v", r.Rows)
	}
	if r := h.ok(`SHOW search_path`); r.Rows[0][0].Str() != "public, $user" {
		t.Errorf("SHOW search_path: %q", r.Rows[0][0].Str())
	}
	if d := h.s.settings.timeout(); d.String() != "5s" {
		t.Errorf("statement_timeout = %v", d)
	}
	h.ok(`RESET statement_timeout`)
	if d := h.s.settings.timeout(); d != 0 {
		t.Errorf("after RESET statement_timeout = %v", d)
	}
	h.fails(`SET nosuch = 1`, "42704", "nosuch")
	h.fails(`SET statement_timeout = 'soon'`, "22023")
	h.fails(`SET server_version = '1'`, "55P02")
	h.ok(`BEGIN`)
	h.ok(`SET LOCAL application_name = 'inner'`)
	h.ok(`COMMIT`)
	if v, _ := h.s.Setting("application_name"); v != "psql" {
		t.Errorf("SET LOCAL outlived its transaction: %q", v)
	}
	if r := h.ok(`SHOW ALL`); len(r.Rows) < 10 {
		t.Errorf("SHOW ALL returned %d rows", len(r.Rows))
	}
}

// TestTimeZoneSetting: TimeZone takes the zone names DATETIME64 takes, UTC
// and LOCAL silently; another zone is recorded with a warning that
// DATETIME64 values keep their column's zone (R2.4); an unknown name is
// 22023, as in PostgreSQL.
func TestTimeZoneSetting(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct{ sql, show, warn string }{
		{`SET TIME ZONE 'UTC'`, "UTC", ""},
		{`SET TIME ZONE 'Etc/UTC'`, "Etc/UTC", ""},
		{`SET TIME ZONE 'Europe/London'`, "Europe/London", "TimeZone is set to Europe/London"},
		{`SET TIME ZONE 'america/new_york'`, "America/New_York", "TimeZone is set to America/New_York"},
		{`SET TimeZone = 'Europe/Berlin'`, "Europe/Berlin", "TimeZone is set to Europe/Berlin"},
		{`SET TIME ZONE LOCAL`, "UTC", ""},
		{`SET TIME ZONE -5`, "-5", "TimeZone is set to -5"},
		{`SET TIME ZONE 0`, "0", ""},
	} {
		r := h.ok(c.sql)
		if v, _ := h.s.Setting("TimeZone"); v != c.show {
			t.Errorf("%s: TimeZone %q, want %q", c.sql, v, c.show)
		}
		switch {
		case c.warn == "" && len(r.Notices) != 0:
			t.Errorf("%s: unexpected notices %+v", c.sql, r.Notices)
		case c.warn != "" && (len(r.Notices) != 1 || !strings.HasPrefix(r.Notices[0].Message, c.warn) || r.Notices[0].Code != "01000"):
			t.Errorf("%s: notices %+v, want one starting %q", c.sql, r.Notices, c.warn)
		}
	}
	h.fails(`SET TIME ZONE 'Foo/Bar'`, "22023", "TimeZone")
	if v, _ := h.s.Setting("TimeZone"); v != "0" {
		t.Errorf("a refused SET changed TimeZone to %q", v)
	}
}

func TestDescribeAndShowTables(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE TABLE acct (id INT64 NOT NULL, bal INT64 DEFAULT 0, bal_idx INT64, note STRING, PRIMARY KEY (id),
		ATTRIBUTE GROUP money (bal, bal_idx) VALID BY (bal_idx)) MODE VERSIONED`)
	h.ok(`CREATE TABLE ev (x INT64) MODE APPEND`)
	r := h.ok(`DESCRIBE acct`)
	var got []string
	for _, row := range r.Rows {
		var parts []string
		for _, v := range row {
			if v.IsNull() {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(types.AppendText(nil, v)))
			}
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{"id INT64 false NULL true NULL", "bal INT64 true 0 false money", "bal_idx INT64 true NULL false money",
		"note STRING true NULL false default"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DESCRIBE acct:\n got %q\nwant %q", got, want)
	}
	if r := h.ok(`SHOW TABLES`); len(r.Rows) != 2 || r.Rows[0][0].Str() != "acct" || r.Rows[1][1].Str() != "append" {
		t.Errorf("SHOW TABLES: %v", r.Rows)
	}
	h.fails(`DESCRIBE nosuch`, "42P01", "nosuch")
}

func TestSystemTables(t *testing.T) {
	h := newHarness(t)
	h.ok(`CREATE POLICY keep_1h FOR RETENTION (history = INTERVAL '1 hour')`)
	h.ok(`CREATE TABLE p (k INT64 NOT NULL, v INT64 CODEC(ZSTD(3)), w STRING, PRIMARY KEY (k)) MODE VERSIONED POLICY keep_1h`)
	h.ok(`CREATE INDEX p_w ON p (w) SCOPE HISTORY`)
	h.ok(`INSERT INTO p VALUES (1, 10, 'a'), (2, 20, 'b')`)
	snap := h.eng.Snapshot()
	defer snap.Release()
	rows := func(name string) []string {
		tab, ok := system.Lookup(name)
		if !ok {
			t.Fatalf("no system.%s", name)
		}
		b, err := tab.Rows(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Cols) != len(tab.Columns) {
			t.Fatalf("system.%s: %d vectors for %d columns", name, len(b.Cols), len(tab.Columns))
		}
		var out []string
		for i := 0; i < b.Rows; i++ {
			var parts []string
			for _, v := range b.Row(nil, i) {
				if v.IsNull() {
					parts = append(parts, "NULL")
				} else {
					parts = append(parts, string(types.AppendText(nil, v)))
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
		return out
	}
	check := func(name string, want ...string) {
		t.Helper()
		got := rows(name)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("system.%s:\n got %q\nwant %q", name, got, want)
		}
	}
	check("tables", "p|versioned|1|k|2|k|false|k|2|1")
	check("columns", "p|k|1|INT64|false|NULL|NULL|2|true|DELTA, ZSTD(1)", "p|v|2|INT64|true|NULL|default|2|false|ZSTD(3)",
		"p|w|3|STRING|true|NULL|default|2|false|ZSTD(1)")
	check("attribute_groups", "p|default|NULL|NULL|NULL|v, w|2")
	check("indexes", "p_w|p|w|history|NULL|3")
	check("users")
	check("transformations")
	commits := rows("commits")
	if len(commits) != 4 || !strings.HasSuffix(commits[3], "|write|p|2") || !strings.HasPrefix(commits[0], "1|") {
		t.Errorf("system.commits: %q", commits)
	}
	plans := rows("table_storage_plans")
	if len(plans) != 4 || !strings.HasPrefix(plans[2], "p|retention|keep_1h|history = INTERVAL '1 hour'|") {
		t.Errorf("system.table_storage_plans: %q", plans)
	}
	if codecs := rows("table_column_codecs"); len(codecs) != 3 || !strings.HasPrefix(codecs[1], "p|v|INT64|ZSTD(3)|") {
		t.Errorf("system.table_column_codecs: %q", codecs)
	}
	if pol := rows("policies"); len(pol) != 5 {
		t.Errorf("system.policies: %q", pol)
	}
	if sh := rows("shards"); len(sh) == 0 {
		t.Errorf("system.shards is empty")
	}
	rows("parts")
}

// TestNoTransactionWarnings: COMMIT, ROLLBACK and SET LOCAL outside a
// transaction succeed with PostgreSQL's 25P01 warning; inside one they do
// not warn.
func TestNoTransactionWarnings(t *testing.T) {
	h := newHarness(t)
	for sql, msg := range map[string]string{
		"COMMIT":                           "there is no transaction in progress",
		"ROLLBACK":                         "there is no transaction in progress",
		"SET LOCAL application_name = 'x'": "SET LOCAL can only be used in transaction blocks",
	} {
		r := h.ok(sql)
		if len(r.Notices) != 1 || r.Notices[0].Code != "25P01" || r.Notices[0].Message != msg {
			t.Errorf("%s: notices %+v, want 25P01 %q", sql, r.Notices, msg)
		}
	}
	h.ok("BEGIN")
	if r := h.ok("SET LOCAL application_name = 'x'"); len(r.Notices) != 0 {
		t.Errorf("SET LOCAL in a transaction: notices %+v", r.Notices)
	}
	if r := h.ok("COMMIT"); len(r.Notices) != 0 {
		t.Errorf("COMMIT of a transaction: notices %+v", r.Notices)
	}
}
