package storage

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
)

// TestIndexCols: the columns each kind of part carries filters for follow
// the indexes' scopes (R10.1), and an index led by a key column, which
// no read goes through, costs no filter.
func TestIndexCols(t *testing.T) {
	h := (&harness{t: t}).start()
	h.create(balancesSpec())
	for _, ix := range []catalog.IndexSpec{
		{Name: "b_amount", Table: "balances", Columns: []string{"amount"}},
		{Name: "b_count", Table: "balances", Columns: []string{"transfer_count"}, Scope: "history"},
		{Name: "b_index", Table: "balances", Columns: []string{"balance_index"}, Scope: "both"},
		{Name: "b_addr", Table: "balances", Columns: []string{"address", "amount"}, Scope: "both"},
	} {
		h.ddl(func(c *catalog.Catalog, commit uint64) error {
			_, _, err := c.CreateIndex(ix, commit)
			return err
		})
	}
	tab := h.table("balances")
	id := func(name string) catalog.ColumnID {
		c, ok := tab.Column(name)
		if !ok {
			t.Fatalf("no column %s", name)
		}
		return c.ID
	}
	cols := h.e.indexCols(tab.ID)
	if cols == nil {
		t.Fatal("no index columns")
	}
	sorted := func(ids []catalog.ColumnID) []catalog.ColumnID { return slices.Sorted(slices.Values(ids)) }
	for _, tc := range []struct {
		kind part.Kind
		want []catalog.ColumnID
	}{
		{part.KindDelta, []catalog.ColumnID{id("amount"), id("balance_index")}},
		{part.KindCurrent, []catalog.ColumnID{id("amount"), id("balance_index")}},
		{part.KindHistory, []catalog.ColumnID{id("transfer_count"), id("balance_index")}},
	} {
		if got := sorted(cols(tc.kind)); !slices.Equal(got, sorted(tc.want)) {
			t.Errorf("kind %v: filters for %v, want %v", tc.kind, got, sorted(tc.want))
		}
	}
}
