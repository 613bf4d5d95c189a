package session

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/types"
)

// recordSink records what ExecuteTo hands it, and fails the batch after
// failAfter rows when set.
type recordSink struct {
	events    []string
	cols      []Column
	rows      []string
	failAfter int
}

func (r *recordSink) Start(cols []Column) error {
	r.events = append(r.events, "start")
	r.cols = cols
	return nil
}

func (r *recordSink) Batch(b *types.Batch) error {
	r.events = append(r.events, fmt.Sprintf("batch %d", b.Rows))
	var row []types.Value
	for i := 0; i < b.Rows; i++ {
		row = b.RowView(row[:0], i)
		r.rows = append(r.rows, row[0].String())
	}
	if r.failAfter > 0 && len(r.rows) >= r.failAfter {
		return errors.New("sink full")
	}
	return nil
}

func (h *harness) runTo(sql string, sink RowSink) (*Result, error) {
	h.t.Helper()
	stmt, err := parser.Parse(sql)
	if err != nil {
		h.t.Fatalf("parse %q: %v", sql, err)
	}
	return h.s.ExecuteTo(context.Background(), stmt, sql, nil, sink)
}

// TestExecuteToStreams: a query's columns come first, then its rows batch
// by batch; the result has the tag and columns but no rows. A statement
// that is no query (SHOW) never calls the sink and returns its rows as
// Execute does.
func TestExecuteToStreams(t *testing.T) {
	h := newHarness(t)
	h.ok("CREATE TABLE kv (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))")
	h.ok("INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	sink := &recordSink{}
	res, err := h.runTo("SELECT v, k FROM kv ORDER BY k", sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.events) < 2 || sink.events[0] != "start" || len(sink.cols) != 2 || sink.cols[0].Name != "v" {
		t.Fatalf("events %v, columns %v", sink.events, sink.cols)
	}
	if fmt.Sprint(sink.rows) != "[a b c]" || res.Rows != nil || res.Tag != "SELECT 3" || res.RowsAffected != 3 || len(res.Columns) != 2 {
		t.Fatalf("rows %v, result %+v", sink.rows, res)
	}
	// A query of no rows still describes itself.
	sink = &recordSink{}
	if res, err = h.runTo("SELECT k FROM kv WHERE k > 10", sink); err != nil || res.Tag != "SELECT 0" || len(sink.events) == 0 || sink.events[0] != "start" {
		t.Fatalf("empty: %v %+v %v", sink.events, res, err)
	}
	sink = &recordSink{}
	res, err = h.runTo("SHOW TimeZone", sink)
	if err != nil || len(sink.events) != 0 || len(res.Rows) != 1 {
		t.Fatalf("SHOW: events %v, result %+v, %v", sink.events, res, err)
	}
}

// TestExecuteToSinkError: a sink's error fails the statement like any
// other error, and inside a transaction aborts it.
func TestExecuteToSinkError(t *testing.T) {
	h := newHarness(t)
	h.ok("BEGIN")
	sink := &recordSink{failAfter: 1}
	if _, err := h.runTo("SELECT x FROM generate_series(1, 5000) AS g(x)", sink); err == nil || len(sink.rows) == 0 || len(sink.rows) == 5000 {
		t.Fatalf("%d rows, %v", len(sink.rows), err)
	}
	h.fails("SELECT 1", "25P02")
	h.ok("ROLLBACK")
}

// TestPuller: statements run one after another on one Puller hand out
// their batches on demand; Stop ends one early without failing it (the
// next runs); a statement returning rows whole never streams; after Close
// Start reports the Puller dead.
func TestPuller(t *testing.T) {
	h := newHarness(t)
	p := NewPuller()
	run := func(sql string, res **Result, err *error) func(RowSink) {
		return func(sink RowSink) { *res, *err = h.runTo(sql, sink) }
	}
	var res *Result
	var err error
	streaming, ok := p.Start(run("SELECT x FROM generate_series(1, 5000) AS g(x)", &res, &err))
	if !streaming || !ok || len(p.Columns()) != 1 || res != nil {
		t.Fatalf("start: %v %v %v %v", streaming, ok, p.Columns(), res)
	}
	n := 0
	for b, more := p.Next(); more; b, more = p.Next() {
		n += b.Rows
	}
	if err != nil || n != 5000 || res.Tag != "SELECT 5000" {
		t.Fatalf("%d rows, %+v, %v", n, res, err)
	}
	res = nil
	if streaming, _ = p.Start(run("SELECT x FROM generate_series(1, 100000) AS g(x)", &res, &err)); !streaming {
		t.Fatal("second statement did not stream")
	}
	if _, more := p.Next(); !more {
		t.Fatal("no first batch")
	}
	p.Stop()
	if err != nil || res == nil || len(res.Columns) != 1 {
		t.Fatalf("stopped: %+v, %v", res, err)
	}
	res = nil
	if streaming, ok = p.Start(run("SHOW TimeZone", &res, &err)); streaming || !ok || err != nil || len(res.Rows) != 1 {
		t.Fatalf("SHOW: %v %v %+v %v", streaming, ok, res, err)
	}
	p.Close()
	if _, ok = p.Start(run("SELECT 1", &res, &err)); ok {
		t.Fatal("a closed Puller ran a statement")
	}
}
