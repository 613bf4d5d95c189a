package pgwire

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// send flushes the messages queued on fe and returns what came back up to
// ReadyForQuery (receiveAll's transcript and rows).
func send(t *testing.T, fe *pgproto3.Frontend) ([]string, []string) {
	t.Helper()
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	return receiveAll(t, fe)
}

// compact joins a transcript with runs of DataRows counted: "D×3 S SELECT 2".
func compact(got []string) string {
	var out []string
	for i := 0; i < len(got); {
		j := i
		for j < len(got) && got[j] == "D" {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("D×%d", j-i))
			i = j
			continue
		}
		out = append(out, got[i])
		i++
	}
	return strings.Join(out, " ")
}

// checkSeq checks that rows are "1", "2", … from first.
func checkSeq(t *testing.T, rows []string, first int) {
	t.Helper()
	for i, r := range rows {
		if r != fmt.Sprint(first+i) {
			t.Fatalf("row %d is %q, want %d", i, r, first+i)
		}
	}
}

// TestCursorFetches: a portal executed with a row limit sends its rows a
// part at a time from its suspended statement, in order, suspending
// until the last part, whose tag counts that part; a part that ends
// exactly at the last row completes rather than suspends.
func TestCursorFetches(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	fe := c.PgConn().Frontend()
	fe.SendParse(&pgproto3.Parse{Name: "s", Query: "SELECT x FROM generate_series(1, 20000) AS g(x)"})
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "c"})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 7000})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 7000})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 7000})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 7000})
	fe.SendSync(&pgproto3.Sync{})
	got, rows := send(t, fe)
	if g := compact(got); g != "D×7000 S D×7000 S D×6000 SELECT 6000 SELECT 0" {
		t.Fatalf("got %s", g)
	}
	checkSeq(t, rows, 1)

	// As PostgreSQL's, a part that reaches the limit suspends even when
	// no row is left; the next Execute completes with none.
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s"})
	fe.SendExecute(&pgproto3.Execute{MaxRows: 10000})
	fe.SendExecute(&pgproto3.Execute{MaxRows: 10000})
	fe.SendExecute(&pgproto3.Execute{MaxRows: 10000})
	fe.SendSync(&pgproto3.Sync{})
	got, rows = send(t, fe)
	if g := compact(got); g != "D×10000 S D×10000 S SELECT 0" {
		t.Fatalf("exact parts: got %s", g)
	}
	checkSeq(t, rows, 1)
}

// TestCursorInterleaved: inside a transaction a cursor stays open across
// Syncs; a statement run meanwhile reads the rest of it into memory first,
// and the cursor goes on from there, its rows as they were; closing a
// cursor early stops its statement without failing the transaction.
func TestCursorInterleaved(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	fe := c.PgConn().Frontend()
	fe.SendQuery(&pgproto3.Query{String: "CREATE TABLE kv (k INT64 NOT NULL, PRIMARY KEY (k)); INSERT INTO kv SELECT x FROM generate_series(1, 5000) AS g(x); BEGIN"})
	send(t, fe)
	fe.SendParse(&pgproto3.Parse{Name: "s", Query: "SELECT k FROM kv ORDER BY k"})
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "c"})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 10})
	fe.SendSync(&pgproto3.Sync{})
	got, rows := send(t, fe)
	if g := compact(got); g != "D×10 S" {
		t.Fatalf("first part: %s", g)
	}
	checkSeq(t, rows, 1)
	fe.SendQuery(&pgproto3.Query{String: "INSERT INTO kv VALUES (9000)"})
	if got, _ := send(t, fe); compact(got) != "INSERT 0 1" {
		t.Fatalf("insert: %v", got)
	}
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 4000})
	fe.SendExecute(&pgproto3.Execute{Portal: "c"})
	fe.SendSync(&pgproto3.Sync{})
	got, rows = send(t, fe)
	if g := compact(got); g != "D×4000 S D×990 SELECT 990" {
		t.Fatalf("after the insert: %s", g)
	}
	checkSeq(t, rows, 11)

	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "d"})
	fe.SendExecute(&pgproto3.Execute{Portal: "d", MaxRows: 3})
	fe.SendClose(&pgproto3.Close{ObjectType: 'P', Name: "d"})
	fe.SendSync(&pgproto3.Sync{})
	if got, _ := send(t, fe); compact(got) != "D×3 S" {
		t.Fatalf("closed early: %v", got)
	}
	fe.SendQuery(&pgproto3.Query{String: "COMMIT; SELECT count(*) FROM kv"})
	got, rows = send(t, fe)
	if compact(got) != "COMMIT T D×1 SELECT 1" || rows[0] != "5001" {
		t.Fatalf("commit: %v %v", got, rows)
	}
}

// TestCursorErrors: a cursor's statement failing part way sends its error
// after the rows made before it, whether it fails during a fetch or while
// drained for another statement; a cursor left open when its implicit
// transaction ends (Sync) is stopped and the connection goes on.
func TestCursorErrors(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	fe := c.PgConn().Frontend()
	const q = "SELECT 1 / (3000 - x) FROM generate_series(1, 5000) AS g(x)"
	fe.SendParse(&pgproto3.Parse{Name: "s", Query: q})
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s"})
	fe.SendExecute(&pgproto3.Execute{MaxRows: 1000})
	fe.SendExecute(&pgproto3.Execute{MaxRows: 5000})
	fe.SendSync(&pgproto3.Sync{})
	got, _ := send(t, fe)
	if g := compact(got); !strings.HasPrefix(g, "D×1000 S D×") || !strings.HasSuffix(g, "E:22012") {
		t.Fatalf("fetch: %s", g)
	}

	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "c"})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 10})
	fe.SendParse(&pgproto3.Parse{Name: "t", Query: "SELECT 7"})
	fe.SendExecute(&pgproto3.Execute{Portal: "c"})
	fe.SendSync(&pgproto3.Sync{})
	got, _ = send(t, fe)
	if g := compact(got); !strings.HasPrefix(g, "D×10 S D×") || !strings.HasSuffix(g, "E:22012") {
		t.Fatalf("drained: %s", g)
	}

	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s"})
	fe.SendExecute(&pgproto3.Execute{MaxRows: 5})
	fe.SendSync(&pgproto3.Sync{})
	if got, _ := send(t, fe); compact(got) != "D×5 S" {
		t.Fatalf("left open: %v", got)
	}
	fe.SendQuery(&pgproto3.Query{String: "SELECT 8"})
	if got, rows := send(t, fe); compact(got) != "T D×1 SELECT 1" || rows[0] != "8" {
		t.Fatalf("after: %v %v", got, rows)
	}
}

// TestCursorTransaction: inside a transaction, a cursor failed by its own
// statement answers 25P02 to Describe and Execute (it crashed the
// connection once); COMMIT while a cursor is suspended closes its portal
// rather than reading it; Describe of the suspended cursor leaves it
// streaming; a CancelRequest while the cursor waits for its next Execute
// is ignored.
func TestCursorTransaction(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	pc := c.PgConn()
	fe := pc.Frontend()
	fe.SendQuery(&pgproto3.Query{String: "BEGIN"})
	send(t, fe)
	fe.SendParse(&pgproto3.Parse{Name: "bad", Query: "SELECT 1 / (3000 - x) FROM generate_series(1, 5000) AS g(x)"})
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "bad", DestinationPortal: "c"})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 5000})
	fe.SendSync(&pgproto3.Sync{})
	if got, _ := send(t, fe); !strings.HasSuffix(compact(got), "E:22012") {
		t.Fatalf("failing cursor: %s", compact(got))
	}
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'P', Name: "c"})
	fe.SendExecute(&pgproto3.Execute{Portal: "c", MaxRows: 10})
	fe.SendSync(&pgproto3.Sync{})
	if got, _ := send(t, fe); compact(got) != "E:25P02" { // the Describe's, as PostgreSQL's
		t.Fatalf("after its failure: %s", compact(got))
	}
	fe.SendQuery(&pgproto3.Query{String: "ROLLBACK; BEGIN"})
	send(t, fe)

	fe.SendParse(&pgproto3.Parse{Name: "s", Query: "SELECT x FROM generate_series(1, 100000) AS g(x)"})
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "d"})
	fe.SendExecute(&pgproto3.Execute{Portal: "d", MaxRows: 2})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'P', Name: "d"})
	fe.SendExecute(&pgproto3.Execute{Portal: "d", MaxRows: 2})
	fe.SendSync(&pgproto3.Sync{})
	got, rows := send(t, fe)
	if compact(got) != "D×2 S T D×2 S" {
		t.Fatalf("described while suspended: %s", compact(got))
	}
	checkSeq(t, rows, 1)
	if err := pc.CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	fe.SendExecute(&pgproto3.Execute{Portal: "d", MaxRows: 5000}) // past the first batch
	fe.SendSync(&pgproto3.Sync{})
	got, rows = send(t, fe)
	if compact(got) != "D×5000 S" {
		t.Fatalf("after a cancel while idle: %s", compact(got))
	}
	checkSeq(t, rows, 5)
	fe.SendQuery(&pgproto3.Query{String: "COMMIT"})
	if got, _ := send(t, fe); compact(got) != "COMMIT" {
		t.Fatalf("commit: %s", compact(got))
	}
	fe.SendExecute(&pgproto3.Execute{Portal: "d", MaxRows: 2})
	fe.SendSync(&pgproto3.Sync{})
	if got, _ := send(t, fe); compact(got) != "E:34000" {
		t.Fatalf("the cursor after COMMIT: %s", compact(got))
	}
}

// TestPortalsEndWithTransaction: COMMIT and ROLLBACK close the
// transaction's portals, finished or not, as PostgreSQL's (not WITH HOLD).
func TestPortalsEndWithTransaction(t *testing.T) {
	_, url := startServer(t)
	c := connect(t, url)
	fe := c.PgConn().Frontend()
	for _, end := range []string{"COMMIT", "ROLLBACK"} {
		fe.SendQuery(&pgproto3.Query{String: "BEGIN"})
		send(t, fe)
		fe.SendParse(&pgproto3.Parse{Name: "", Query: "SELECT x FROM generate_series(1, 3) AS g(x)"})
		fe.SendBind(&pgproto3.Bind{DestinationPortal: "p"})
		fe.SendExecute(&pgproto3.Execute{Portal: "p"})
		fe.SendExecute(&pgproto3.Execute{Portal: "p"})
		fe.SendSync(&pgproto3.Sync{})
		if got, _ := send(t, fe); compact(got) != "D×3 SELECT 3 SELECT 0" {
			t.Fatalf("%s: before: %s", end, compact(got))
		}
		fe.SendQuery(&pgproto3.Query{String: end})
		send(t, fe)
		fe.SendExecute(&pgproto3.Execute{Portal: "p"})
		fe.SendSync(&pgproto3.Sync{})
		if got, _ := send(t, fe); compact(got) != "E:34000" {
			t.Fatalf("after %s: %s", end, compact(got))
		}
	}
}
