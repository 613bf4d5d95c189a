package exec

import (
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/types"
)

// The list aggregates: string_agg(value, separator) joins the non-NULL
// values with the separator given on each row after the first, and
// array_agg(value) builds PostgreSQL's array text form ({a,"b c",NULL}) of
// every value, NULLs included, the form pg_catalog code reads back with
// unnest and a[i]. Both keep the input order and are NULL over no rows.
// They accumulate into the state's buf, so a row appends bytes and
// allocates only when buf grows.

// stepList folds row i of the argument vectors into st.
func stepList(st *aggState, a plan.AggCall, vs []*types.Vector, i int) {
	if a.Fn == "array_agg" {
		if st.set {
			st.buf = append(st.buf, ',')
		}
		null := vs[0].IsNull(i)
		if null {
			st.buf = expr.AppendArrayElem(st.buf, "", true)
		} else {
			st.tmp = types.AppendText(st.tmp[:0], vs[0].Get(i))
			st.buf = expr.AppendArrayElem(st.buf, string(st.tmp), false)
		}
		st.set = true
		return
	}
	if vs[0].IsNull(i) {
		return
	}
	if st.set && !vs[1].IsNull(i) {
		st.buf = append(st.buf, vs[1].BytesAt(i)...)
	}
	st.buf = append(st.buf, vs[0].BytesAt(i)...)
	st.set = true
}

// listResult is a list aggregate's value for one group.
func listResult(st *aggState, a plan.AggCall) types.Value {
	if !st.set {
		return types.Null(a.T)
	}
	if a.Fn == "array_agg" {
		return types.NewString("{" + string(st.buf) + "}")
	}
	return types.NewString(string(st.buf))
}
