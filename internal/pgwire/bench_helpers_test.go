package pgwire

import (
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/types"
)

// discardConn is a conn whose messages go nowhere.
func discardConn() *conn {
	return &conn{be: pgproto3.NewBackend(nil, io.Discard), w: io.Discard}
}

// benchResult is a result of n rows: INT64, UINT256, DATETIME64(3), STRING.
func benchResult(tb testing.TB, n int) *session.Result {
	ts := types.Type{Kind: types.DateTime64, Precision: 3}
	res := &session.Result{Columns: []session.Column{
		{Name: "k", Type: types.Of(types.Int64)}, {Name: "amount", Type: types.Of(types.Uint256)},
		{Name: "at", Type: ts}, {Name: "name", Type: types.Of(types.String)},
	}}
	for i := 0; i < n; i++ {
		amount, err := types.ParseText(types.Of(types.Uint256), fmt.Sprintf("%d000000000000000000000", i))
		if err != nil {
			tb.Fatal(err)
		}
		at, err := types.ParseText(ts, fmt.Sprintf("2024-01-01 00:00:%02d.%03d", i%60, i%1000))
		if err != nil {
			tb.Fatal(err)
		}
		res.Rows = append(res.Rows, []types.Value{types.NewInt64(int64(i)), amount, at, types.NewString(fmt.Sprintf("name %d", i))})
	}
	return res
}
