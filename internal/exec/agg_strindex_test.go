package exec_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// TestGroupByStringManyValues groups by a STRING column whose values pass
// the small index's bound (maxSmallGroups) midway, in several batches,
// with NULLs, the empty string and values of every length up to 20 bytes
// (several 8-byte words, and prefixes of one another), against counts
// and sums kept in Go.
func TestGroupByStringManyValues(t *testing.T) {
	for _, distinct := range []int{7, 1500} {
		t.Run(fmt.Sprint(distinct), func(t *testing.T) {
			cat := catalog.New()
			i64, str := types.Of(types.Int64), types.Of(types.String)
			tb, _, err := cat.CreateTable(catalog.TableSpec{Name: "g", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{
				{Name: "s", Type: str}, {Name: "x", Type: i64}}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			f := &fakeSource{Cat: cat, Newest: 2, Rows: map[catalog.TableID][]fakeRow{}}
			rng := rand.New(rand.NewPCG(1, uint64(distinct)))
			vals := make([]string, distinct)
			for i := range vals {
				vals[i] = strings.Repeat("ab", 11)[:i%21] + fmt.Sprint(i/21)
			}
			vals[0] = ""
			// Values of one length that differ in one byte only, at
			// every position: keys of up to 8 bytes are told apart by
			// their hash alone.
			for i := 1; i < len(vals) && i < 7*8; i++ {
				n, at := 1+i/7, i%7
				b := []byte(strings.Repeat("x", n))
				b[min(at, n-1)] = byte('a' + i%5)
				vals[i] = string(b)
			}
			count := map[string]int64{}
			sum := map[string]int64{}
			for i := range 6000 {
				r := fakeRow{Commit: 2, Vals: map[catalog.ColumnID]types.Value{}}
				x := int64(rng.IntN(100))
				r.Vals[tb.Columns[1].ID] = types.NewInt64(x)
				k := "NULL"
				if i%97 == 5 {
					r.Vals[tb.Columns[0].ID] = types.Null(str)
				} else {
					// The first rows meet the values in order, so that
					// every one enters before the bound is passed.
					v := vals[i%distinct]
					if i >= distinct {
						v = vals[rng.IntN(distinct)]
					}
					r.Vals[tb.Columns[0].ID] = types.NewString(v)
					k = "'" + v + "'"
				}
				count[k]++
				sum[k] += x
				f.Rows[tb.ID] = append(f.Rows[tb.ID], r)
			}
			got, err := query(t, f, "SELECT '''' || s || '''', count(*), sum(x) FROM g GROUP BY s")
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for k, c := range count {
				want = append(want, fmt.Sprintf("%s %d %d", k, c, sum[k]))
			}
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			sort.Strings(lines)
			sort.Strings(want)
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got %d groups, want %d:\n%s", len(lines), len(want), got)
			}
		})
	}
}
