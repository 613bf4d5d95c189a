package catalog

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/types"
)

func interval(text string) Value { return Value{Kind: ValueInterval, Text: text} }
func str(text string) Value      { return Value{Kind: ValueString, Text: text} }
func integer(n int64) Value      { return Value{Kind: ValueInteger, Int: n} }
func ident(text string) Value    { return Value{Kind: ValueIdent, Text: text} }
func list(vs ...Value) Value     { return Value{Kind: ValueList, List: vs} }

func policy(name, role string, kv ...any) PolicySpec {
	p := PolicySpec{Name: name, Role: role}
	for i := 0; i < len(kv); i += 2 {
		p.Settings = append(p.Settings, SettingSpec{Key: kv[i].(string), Value: kv[i+1].(Value)})
	}
	return p
}

// TestSpecPolicies creates R9.2's five examples and reads their meaning back.
func TestSpecPolicies(t *testing.T) {
	c := New()
	specs := []PolicySpec{
		policy("keep_90d", "RETENTION", "history", interval("90 days")),
		policy("events_30d", "retention", "rows", interval("30 days"), "by", ident("event_time")),
		policy("tiered", "STORAGE", "object_store", str("s3://bucket/prefix"), "move_after", interval("7 days")),
		policy("merge_big", "COMPACTION", "target_part_bytes", str("256MB"), "max_parts_per_shard", integer(8)),
		policy("two_disks", "PLACEMENT", "volumes", list(str("/mnt/a"), str("/mnt/b")), "replicas", integer(1)),
	}
	for i, s := range specs {
		p, created, err := c.CreatePolicy(s, uint64(i+1))
		if err != nil || !created {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if p.CreatedCommit != uint64(i+1) {
			t.Errorf("%s created at %d", p.Name, p.CreatedCommit)
		}
	}
	check := func(name string, f func(p *Policy) bool) {
		t.Helper()
		p, ok := c.Policy(name)
		if !ok || !f(p) {
			t.Errorf("policy %s: %+v", name, p)
		}
	}
	check("keep_90d", func(p *Policy) bool {
		d, ok := p.Duration("history")
		return ok && d == 90*24*time.Hour && p.Role == RoleRetention
	})
	check("events_30d", func(p *Policy) bool {
		by, ok := p.Text("by")
		d, _ := p.Duration("rows")
		return ok && by == "event_time" && d == 30*24*time.Hour
	})
	check("tiered", func(p *Policy) bool {
		u, _ := p.Text("object_store")
		d, _ := p.Duration("move_after")
		return u == "s3://bucket/prefix" && d == 7*24*time.Hour && p.Role == RoleStorage
	})
	check("merge_big", func(p *Policy) bool {
		b, _ := p.Int("target_part_bytes")
		n, _ := p.Int("max_parts_per_shard")
		return b == 256<<20 && n == 8
	})
	check("two_disks", func(p *Policy) bool {
		v, _ := p.List("volumes")
		r, _ := p.Int("replicas")
		return slices.Equal(v, []string{"/mnt/a", "/mnt/b"}) && r == 1
	})
	if p, _ := c.Policy("tiered"); p.SettingsText() != "object_store = 's3://bucket/prefix', move_after = INTERVAL '7 days'" {
		t.Errorf("settings text %q", p.SettingsText())
	}
	if p, _ := c.Policy("two_disks"); p.SettingsText() != "volumes = ('/mnt/a', '/mnt/b'), replicas = 1" {
		t.Errorf("settings text %q", p.SettingsText())
	}
	names := []string{}
	for _, p := range c.Policies() {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"events_30d", "keep_90d", "merge_big", "tiered", "two_disks"}) {
		t.Errorf("Policies() = %v", names)
	}
	// A single string is a one-entry volume list; sizes may be integers.
	noErr(t, e3(c.CreatePolicy(policy("one_disk", "placement", "volumes", str("/mnt/c")), 9)))
	noErr(t, e3(c.CreatePolicy(policy("merge_n", "compaction", "target_part_bytes", integer(1000)), 9)))
	if p, _ := c.Policy("one_disk"); !slices.Equal(must1(p.List("volumes")), []string{"/mnt/c"}) {
		t.Error("one-string volumes")
	}
}

func must1[T any](v T, _ bool) T { return v }

func TestPolicyErrors(t *testing.T) {
	c := New()
	noErr(t, e3(c.CreatePolicy(policy("keep_1h", "retention", "history", interval("1 hour")), 1)))
	cases := []struct {
		name          string
		spec          PolicySpec
		code, pattern string
	}{
		{"unknown key", policy("bad1", "retention", "nosuch", integer(1)), CodeInvalidParameter,
			`unknown setting nosuch for retention policy bad1; its settings are history, rows, by`},
		{"unknown role", policy("bad2", "NOSUCHROLE", "history", interval("1 hour")), CodeInvalidParameter,
			`unknown policy role nosuchrole for policy bad2`},
		{"duplicate", policy("keep_1h", "retention", "history", interval("2 hours")), CodeDuplicateObject, `policy keep_1h already exists`},
		{"named default", policy("default", "retention"), CodeReservedName, `default is reserved`},
		{"empty name", policy("", "retention"), CodeInvalidName, `policy name cannot be empty`},
		{"key twice", policy("p", "retention", "history", interval("1 hour"), "history", interval("2 hours")), CodeInvalidParameter, `setting history of policy p is given twice`},
		{"interval as integer", policy("p", "retention", "history", integer(1)), CodeInvalidParameter,
			`setting history of policy p must be an INTERVAL such as INTERVAL '90 days', not 1`},
		{"bad interval", policy("p", "storage", "move_after", interval("7 fortnights")), CodeInvalidParameter, `move_after .*unknown unit "fortnights"`},
		{"by as integer", policy("p", "retention", "rows", interval("1 day"), "by", integer(3)), CodeInvalidParameter, `setting by of policy p must be a column name, not 3`},
		{"by without rows", policy("p", "retention", "by", ident("ts")), CodeInvalidParameter, `by of policy p .*needs rows`},
		{"url scheme", policy("p", "storage", "object_store", str("ftp://x")), CodeInvalidParameter, `object_store of policy p must be a URL.*s3, gs, azblob, file`},
		{"url kind", policy("p", "storage", "object_store", ident("x")), CodeInvalidParameter, `object_store of policy p must be a URL`},
		{"size text", policy("p", "compaction", "target_part_bytes", str("big")), CodeInvalidParameter, `target_part_bytes of policy p must be a size.*whole number`},
		{"size unit", policy("p", "compaction", "target_part_bytes", str("3 parsecs")), CodeInvalidParameter, `unknown unit`},
		{"size zero", policy("p", "compaction", "target_part_bytes", integer(0)), CodeInvalidParameter, `must be positive`},
		{"size interval", policy("p", "compaction", "target_part_bytes", interval("1 day")), CodeInvalidParameter, `target_part_bytes of policy p must be a size`},
		{"count zero", policy("p", "compaction", "max_parts_per_shard", integer(0)), CodeInvalidParameter, `max_parts_per_shard of policy p must be a positive integer, not 0`},
		{"count string", policy("p", "placement", "replicas", str("2")), CodeInvalidParameter, `replicas of policy p must be a positive integer, not '2'`},
		{"volumes integer", policy("p", "placement", "volumes", integer(2)), CodeInvalidParameter, `volumes of policy p must be a list of strings`},
		{"volumes mixed", policy("p", "placement", "volumes", list(str("/a"), integer(2))), CodeInvalidParameter, `every entry must be a non-empty string`},
		{"volumes twice", policy("p", "placement", "volumes", list(str("/a"), str("/a"))), CodeInvalidParameter, `'/a' is listed twice`},
		{"replicas on one node", policy("p", "placement", "volumes", str("/a"), "replicas", integer(2)), CodeFeatureNotSupported, `replicas = 2 of policy p: this server is a single node`},
		{"volumes empty", policy("p", "placement", "volumes", list()), CodeInvalidParameter, `the list is empty`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.CreatePolicy(tc.spec, 2)
			wantErr(t, err, tc.code, tc.pattern)
		})
	}
	s := policy("keep_1h", "storage")
	s.IfNotExists = true
	if p, created, err := c.CreatePolicy(s, 2); err != nil || created || p.Role != RoleRetention {
		t.Errorf("IF NOT EXISTS: %v %v %v", p, created, err)
	}
}

// TestPolicyBinding follows policies.slt: binding checks the policy can
// serve the table, one policy per role, and bound policies stay.
func TestPolicyBinding(t *testing.T) {
	c := New()
	noErr(t, e3(c.CreatePolicy(policy("keep_1h", "retention", "history", interval("1 hour")), 1)))
	p := kvSpec("p")
	p.Mode = ModeVersioned
	p.Columns = append(p.Columns, col("w", types.String))
	p.Policies = []string{"keep_1h"}
	tab := mustCreate(t, c, p, 2)
	want := Bindings{Placement: "default", Storage: "default", Retention: "keep_1h", Compaction: "default"}
	if tab.Policies != want {
		t.Fatalf("bindings %+v", tab.Policies)
	}
	if got := c.Bound(tab, RoleRetention); got.Name != "keep_1h" {
		t.Errorf("Bound retention = %s", got.Name)
	}
	if got := c.Bound(tab, RoleStorage); got.Name != "default" || len(got.Settings) != 0 {
		t.Errorf("Bound storage = %+v", got)
	}
	noErr(t, e3(c.CreatePolicy(policy("ev30", "retention", "rows", interval("30 days"), "by", ident("event_time")), 3)))
	_, _, err := c.CreateTable(TableSpec{Name: "q", Columns: []ColumnSpec{col("k", types.Int64, notNull)}, PrimaryKey: []string{"k"}, Policies: []string{"ev30"}}, 4)
	wantErr(t, err, CodeUndefinedColumn, `retention policy ev30 expires rows by column event_time, which table q does not have`)
	_, _, err = c.CreateTable(TableSpec{Name: "q", Mode: ModeAppend, Columns: []ColumnSpec{col("event_time", types.String)}, Policies: []string{"ev30"}}, 4)
	wantErr(t, err, CodeDatatypeMismatch, `event_time of table q, which has type STRING; it must be DATETIME64 or DATE`)
	mustCreate(t, c, TableSpec{Name: "events", Mode: ModeAppend, Columns: []ColumnSpec{typed("event_time", dt3, notNull), col("what", types.String)}, Policies: []string{"ev30"}}, 4)
	mustCreate(t, c, TableSpec{Name: "days", Mode: ModeAppend, Columns: []ColumnSpec{col("event_time", types.Date)}, Policies: []string{"ev30"}}, 4)
	_, _, err = c.CreateTable(TableSpec{Name: "two", Mode: ModeAppend, Columns: []ColumnSpec{typed("event_time", dt3)}, Policies: []string{"keep_1h", "ev30"}}, 4)
	wantErr(t, err, CodeInvalidParameter, `table two is given two retention policies, keep_1h and ev30`)

	noErr(t, e3(c.CreatePolicy(policy("merge_big", "compaction", "target_part_bytes", str("256MB"), "max_parts_per_shard", integer(8)), 5)))
	tab = noErrT(t)(c.SetPolicy(SetPolicySpec{Table: "p", Policies: []string{"merge_big"}}, 6))
	want.Compaction = "merge_big"
	if tab.Policies != want || tab.Generation != 2 {
		t.Fatalf("after SET POLICY: %+v gen %d", tab.Policies, tab.Generation)
	}
	_, err = c.SetPolicy(SetPolicySpec{Table: "p", Policies: []string{"ev30"}}, 7)
	wantErr(t, err, CodeUndefinedColumn, `event_time, which table p does not have`)
	_, err = c.SetPolicy(SetPolicySpec{Table: "p", Policies: []string{"nosuch"}}, 7)
	wantErr(t, err, CodeUndefinedObject, `policy nosuch does not exist`)
	_, err = c.SetPolicy(SetPolicySpec{Table: "p"}, 7)
	wantErr(t, err, CodeInvalidTableDef, `names no policy`)
	_, err = c.SetPolicy(SetPolicySpec{Table: "nosuch", Policies: []string{"merge_big"}}, 7)
	wantErr(t, err, CodeUndefinedTable, `table nosuch does not exist`)

	// DROP POLICY: a bound one names a table that uses it.
	_, err = c.DropPolicy("keep_1h", false, 8)
	wantErr(t, err, CodeDependentObjects, `policy keep_1h is bound to table p`)
	_, err = c.DropPolicy("default", false, 8)
	wantErr(t, err, CodeDependentObjects, `built-in policy default cannot be dropped`)
	_, err = c.DropPolicy("nosuch", false, 8)
	wantErr(t, err, CodeUndefinedObject, `policy nosuch does not exist`)
	if dropped, err := c.DropPolicy("nosuch", true, 8); dropped || err != nil {
		t.Errorf("IF EXISTS: %v %v", dropped, err)
	}
	noErr(t, e3(c.CreatePolicy(policy("tiered", "storage", "object_store", str("file:///tmp/x")), 9)))
	noErr(t, e3(c.CreateIndex(IndexSpec{Name: "p_w", Table: "p", Columns: []string{"w"}, Policy: "tiered"}, 9)))
	_, err = c.DropPolicy("tiered", false, 10)
	wantErr(t, err, CodeDependentObjects, `policy tiered is bound to index p_w`)
	noErr(t, e2(c.DropIndex("p_w", false, 10)))
	if dropped, err := c.DropPolicy("tiered", false, 10); !dropped || err != nil {
		t.Fatalf("drop unbound: %v %v", dropped, err)
	}
	if _, ok := c.Policy("tiered"); ok {
		t.Fatal("tiered still there")
	}
}

func TestParseInterval(t *testing.T) {
	day := 24 * time.Hour
	good := map[string]time.Duration{
		"90 days": 90 * day, "1 hour": time.Hour, "2 hours": 2 * time.Hour, "30 days": 30 * day, "7 days": 7 * day,
		"15 minutes": 15 * time.Minute, "1 week": 7 * day, "1 day 12 hours": 36 * time.Hour, "90d": 90 * day,
		"  10 SECONDS ": 10 * time.Second, "1 month": 30 * day, "2 years": 730 * day, "500 ms": 500 * time.Millisecond,
		"1 min": time.Minute, "3 hrs": 3 * time.Hour, "1 s": time.Second, "5m": 5 * time.Minute,
	}
	for text, want := range good {
		if got, err := ParseInterval(text); err != nil || got != want {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	bad := map[string]string{
		"": "empty", "days": "not a whole number", "1.5 hours": "not a whole number", "-1 day": "not a whole number",
		"3 fortnights": "unknown unit", "1": "unknown unit", "0 days": "longer than zero",
		"99999999999999 weeks": "too long", "1 day 1": "unknown unit",
	}
	for text, pattern := range bad {
		if _, err := ParseInterval(text); err == nil || !matches(err.Error(), pattern) {
			t.Errorf("ParseInterval(%q): %v, want /%s/", text, err, pattern)
		}
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"256MB": 256 << 20, "1GiB": 1 << 30, "512 kB": 512 << 10, "4096": 4096, "10B": 10, "2 TB": 2 << 40, "1mib": 1 << 20, "3G": 3 << 30,
	}
	for text, want := range good {
		if got, err := ParseSize(text); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", text, got, err, want)
		}
	}
	for _, text := range []string{"", "MB", "1.5GB", "-1MB", "12 parsecs", "99999999999 TB"} {
		if _, err := ParseSize(text); err == nil {
			t.Errorf("ParseSize(%q) accepted", text)
		}
	}
}

func TestRolesAndValues(t *testing.T) {
	for _, r := range Roles() {
		if got, ok := ParseRole(r.String()); !ok || got != r {
			t.Errorf("role %s does not round-trip", r)
		}
	}
	if _, ok := ParseRole("sideways"); ok {
		t.Error("an unknown role parsed")
	}
	if got := (Value{Kind: ValueString, Text: "it's"}).String(); got != "'it''s'" {
		t.Errorf("quoted string %s", got)
	}
}
