package catalog

import (
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// bigCatalog has n tables of 20 columns each, in two named groups.
func bigCatalog(b *testing.B, n int) *Catalog {
	c := New()
	for i := range n {
		spec := TableSpec{Name: fmt.Sprint("t", i), Mode: ModeVersioned, PrimaryKey: []string{"k"},
			Groups: []GroupSpec{{Name: "g1", Columns: []string{"c1", "c2", "c3"}, ValidBy: []string{"c1"}}, {Name: "g2", Columns: []string{"c4", "c5"}}}}
		spec.Columns = append(spec.Columns, ColumnSpec{Name: "k", Type: types.Of(types.Int64), NotNull: true})
		for j := 1; j < 20; j++ {
			spec.Columns = append(spec.Columns, ColumnSpec{Name: fmt.Sprint("c", j), Type: types.Of(types.Int64)})
		}
		if _, _, err := c.CreateTable(spec, uint64(i+1)); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

func BenchmarkClone1000(b *testing.B) {
	c := bigCatalog(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		c.Clone()
	}
}

func BenchmarkEncode1000(b *testing.B) {
	c := bigCatalog(b, 1000)
	data, _ := c.Encode()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode1000(b *testing.B) {
	data, _ := bigCatalog(b, 1000).Encode()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddColumn is one ALTER on a large catalog: only the altered
// table is copied.
func BenchmarkAddColumn(b *testing.B) {
	c := bigCatalog(b, 1000)
	commit := uint64(2000)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := c.AddColumn(AddColumnSpec{Table: "t7", Column: ColumnSpec{Name: fmt.Sprint("n", i), Type: types.Of(types.String)}}, commit); err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 { // keep the table from growing without bound
			b.StopTimer()
			c = bigCatalog(b, 1000)
			b.StartTimer()
		}
	}
}

// BenchmarkColumnLookup is the binder's name lookup in a 20-column table.
func BenchmarkColumnLookup(b *testing.B) {
	c := bigCatalog(b, 1)
	t, _ := c.Table("t0")
	for b.Loop() {
		if _, ok := t.Column("c19"); !ok {
			b.Fatal("missing")
		}
	}
}
