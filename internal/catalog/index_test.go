package catalog

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

func TestIndexes(t *testing.T) {
	c := New()
	noErr(t, e3(c.CreatePolicy(policy("tiered", "storage", "object_store", str("s3://b/p")), 1)))
	p := kvSpec("p")
	p.Mode = ModeVersioned
	p.Columns = append(p.Columns, col("w", types.String))
	mustCreate(t, c, p, 2)
	mustCreate(t, c, kvSpec("u"), 2)
	ix, created, err := c.CreateIndex(IndexSpec{Name: "p_w", Table: "p", Columns: []string{"w"}, Scope: "HISTORY"}, 3)
	if err != nil || !created || ix.Scope != ScopeHistory || ix.CreatedCommit != 3 {
		t.Fatalf("p_w: %+v %v %v", ix, created, err)
	}
	v := noErrIx(t)(c.CreateIndex(IndexSpec{Name: "p_v", Table: "p", Columns: []string{"v", "w"}, Policy: "tiered"}, 4))
	if v.Scope != ScopeCurrent || v.Policy != "tiered" || v.ID <= ix.ID {
		t.Fatalf("p_v: %+v", v)
	}
	noErrIx(t)(c.CreateIndex(IndexSpec{Name: "p_both", Table: "p", Columns: []string{"v"}, Scope: "both"}, 4))
	noErrIx(t)(c.CreateIndex(IndexSpec{Name: "u_v", Table: "u", Columns: []string{"v"}, Scope: "current"}, 4))
	var names []string
	for _, x := range c.Indexes("p") {
		names = append(names, x.Name+"/"+x.Scope.String())
	}
	if !slices.Equal(names, []string{"p_both/both", "p_v/current", "p_w/history"}) {
		t.Errorf("Indexes(p) = %v", names)
	}
	if len(c.AllIndexes()) != 4 || len(c.Indexes("nosuch")) != 0 {
		t.Errorf("AllIndexes %d", len(c.AllIndexes()))
	}
	// Columns are held by id: a rename follows.
	tab := noErrT(t)(c.RenameColumn(RenameColumnSpec{Table: "p", Old: "w", New: "word"}, 5))
	if got := tab.Names(must1(c.Index("p_w")).Columns); !slices.Equal(got, []string{"word"}) {
		t.Errorf("index columns after rename: %v", got)
	}
	same := IndexSpec{Name: "p_w", Table: "u", Columns: []string{"k"}, IfNotExists: true}
	if got, created, err := c.CreateIndex(same, 6); err != nil || created || got.Table != ix.Table {
		t.Errorf("IF NOT EXISTS: %v %v %v", got, created, err)
	}
	cases := []struct {
		name          string
		spec          IndexSpec
		code, pattern string
	}{
		{"duplicate", IndexSpec{Name: "p_w", Table: "p", Columns: []string{"v"}}, CodeDuplicateObject, `index p_w already exists`},
		{"no table", IndexSpec{Name: "x", Table: "nosuch", Columns: []string{"v"}}, CodeUndefinedTable, `cannot create index x: table nosuch does not exist`},
		{"no column", IndexSpec{Name: "x", Table: "p", Columns: []string{"zz"}}, CodeUndefinedColumn, `index x of table p names column zz, which does not exist`},
		{"column twice", IndexSpec{Name: "x", Table: "p", Columns: []string{"v", "v"}}, CodeDuplicateColumn, `names column v twice`},
		{"no columns", IndexSpec{Name: "x", Table: "p"}, CodeInvalidTableDef, `index x names no columns`},
		{"bad scope", IndexSpec{Name: "p_bad", Table: "p", Columns: []string{"v"}, Scope: "sideways"}, CodeInvalidParameter,
			`unknown index scope SIDEWAYS for index p_bad`},
		{"history of upsert", IndexSpec{Name: "x", Table: "u", Columns: []string{"v"}, Scope: "history"}, CodeInvalidTableDef,
			`index x cannot have SCOPE HISTORY: table u is MODE UPSERT and keeps no history`},
		{"no policy", IndexSpec{Name: "x", Table: "p", Columns: []string{"v"}, Policy: "nosuch"}, CodeUndefinedObject, `policy nosuch of index x does not exist`},
		{"empty name", IndexSpec{Table: "p", Columns: []string{"v"}}, CodeInvalidName, `index name cannot be empty`},
	}
	for _, tc := range cases {
		_, _, err := c.CreateIndex(tc.spec, 7)
		wantErr(t, err, tc.code, tc.pattern)
	}
	if dropped, err := c.DropIndex("p_w", false, 8); !dropped || err != nil {
		t.Fatalf("drop: %v %v", dropped, err)
	}
	_, err = c.DropIndex("p_w", false, 8)
	wantErr(t, err, CodeUndefinedObject, `index p_w does not exist`)
	if dropped, err := c.DropIndex("p_w", true, 8); dropped || err != nil {
		t.Fatalf("drop if exists: %v %v", dropped, err)
	}
	// An index id is never reused.
	again := noErrIx(t)(c.CreateIndex(IndexSpec{Name: "p_w", Table: "p", Columns: []string{"word"}}, 9))
	for _, x := range c.AllIndexes() {
		if x != again && x.ID == again.ID {
			t.Fatalf("index id %d reused", x.ID)
		}
	}
	for _, s := range []string{"", "current", "HISTORY", "Both"} {
		if _, ok := ParseScope(s); !ok {
			t.Errorf("scope %q", s)
		}
	}
}

func noErrIx(t *testing.T) func(*Index, bool, error) *Index {
	return func(ix *Index, _ bool, err error) *Index {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
}
