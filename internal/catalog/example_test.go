package catalog_test

import (
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// The engine's pattern: apply a DDL to a clone, publish the clone when the
// commit is durable; readers of the old catalog are not disturbed.
func Example() {
	published := catalog.New()
	next := published.Clone()
	_, _, err := next.CreateTable(catalog.TableSpec{
		Name: "kv",
		Columns: []catalog.ColumnSpec{
			{Name: "k", Type: types.Of(types.String), NotNull: true},
			{Name: "v", Type: types.Of(types.Int64), Codec: "ZSTD(3)"},
		},
		PrimaryKey: []string{"k"},
	}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	published = next

	kv, _ := published.Table("kv")
	for _, c := range kv.Columns {
		fmt.Println(c.Position, c.Name, c.Type, c.Nullable, c.Codec)
	}
	fmt.Println(kv.Mode, kv.Generation, kv.Groups[0].Name)

	_, _, err = published.Clone().CreateTable(catalog.TableSpec{
		Name: "bad2", Columns: []catalog.ColumnSpec{{Name: "a", Type: types.Of(types.Int64)}},
	}, 2)
	e := err.(*catalog.Error)
	fmt.Println(e.Code)
	// Output:
	// 1 k STRING false ZSTD(1)
	// 2 v INT64 true ZSTD(3)
	// upsert 1 default
	// 42P16
}
