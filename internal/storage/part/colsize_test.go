package part

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/vfs"
)

// TestColumnBytes is a measuring tool, not a check: with
// STRATA_PART_DIR=<data dir>/parts it opens every part there and prints,
// per part kind and per Parquet column, the compressed bytes on disk and
// the bytes per row, so a change of encoding can be weighed column by
// column (docs/benchmarks.md, "Bytes on disk"). Without the variable it
// is skipped.
func TestColumnBytes(t *testing.T) {
	dir := os.Getenv("STRATA_PART_DIR")
	if dir == "" {
		t.Skip("set STRATA_PART_DIR to a data directory's parts/ to measure its columns")
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.part"))
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ kind, col string }
	comp := map[key]int64{}
	rows := map[string]uint64{}
	files := map[string]int64{}
	for _, name := range names {
		r, err := Open(vfs.OS{}, name)
		if err != nil {
			t.Fatal(err)
		}
		kind := r.Meta().Kind.String()
		rows[kind] += r.Meta().Rows
		files[kind] += r.size
		md := r.file.Metadata()
		var cols int64
		for _, rg := range md.RowGroups {
			for _, cc := range rg.Columns {
				col := strings.Join(cc.MetaData.PathInSchema, ".")
				comp[key{kind, col}] += cc.MetaData.TotalCompressedSize
				cols += cc.MetaData.TotalCompressedSize
			}
		}
		comp[key{kind, "(footer, filter, page index)"}] += r.size - cols
		r.Close()
	}
	keys := make([]key, 0, len(comp))
	for k := range comp {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].kind != keys[j].kind {
			return keys[i].kind < keys[j].kind
		}
		return comp[keys[i]] > comp[keys[j]]
	})
	var b strings.Builder
	last := ""
	for _, k := range keys {
		if k.kind != last {
			fmt.Fprintf(&b, "%s: %d rows, %d bytes, %.2f bytes/row\n", k.kind, rows[k.kind], files[k.kind], float64(files[k.kind])/float64(max(rows[k.kind], 1)))
			last = k.kind
		}
		fmt.Fprintf(&b, "  %-30s %12d  %6.2f B/row\n", k.col, comp[k], float64(comp[k])/float64(max(rows[k.kind], 1)))
	}
	t.Log("\n" + b.String())
}
