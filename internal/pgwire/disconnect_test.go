package pgwire

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// settleGoroutines waits until the process is back to at most base
// goroutines, since the server's per-connection goroutines end
// asynchronously after the client's close.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines 10s after the clients left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClientLeavesMidStream (R13.5): clients that disconnect in the middle
// of a large result, of COPY TO, and of COPY FROM (with data sent but no
// CopyDone) leave no goroutine behind, the half-sent COPY writes nothing,
// and the server goes on serving.
func TestClientLeavesMidStream(t *testing.T) {
	srv, url := startServer(t)
	c := connect(t, url)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE big (id INT64, s STRING, PRIMARY KEY (id))"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO big SELECT g, '"+strings.Repeat("x", 200)+"' FROM generate_series(1, 20000) AS g"); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	addr := srv.Addr().String()
	leave := func(query string, extra []byte, readBytes int) {
		t.Helper()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		msgs := appendMsg(startupBytes(), &pgproto3.Query{String: query})
		if _, err := nc.Write(append(msgs, extra...)); err != nil {
			t.Fatal(err)
		}
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, readBytes)
		if _, err := nc.Read(buf); err != nil {
			t.Fatalf("%s: no reply before leaving: %v", query, err)
		}
		nc.Close()
	}
	half := appendMsg(nil, &pgproto3.CopyData{Data: []byte("900001\tpartial\n900002\tpartial\n")})
	for i := 0; i < 5; i++ {
		leave("SELECT * FROM big", nil, 4096)
		leave("SELECT a.id, b.s FROM big AS a JOIN big AS b ON a.id = b.id", nil, 4096)
		leave("COPY big TO STDOUT", nil, 4096)
		leave("COPY big FROM STDIN", half, 64)
	}
	settleGoroutines(t, base)
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM big").Scan(&n); err != nil || n != 20000 {
		t.Fatalf("after the clients left: count %d, %v (want 20000: a COPY without CopyDone writes nothing)", n, err)
	}
	if got := srv.Connections(); got != 1 {
		t.Fatalf("server counts %d connections, want 1 (this test's)", got)
	}
}

// TestFuzzSeedsLeaveNoGoroutines: every message-fuzz seed, run on the
// shared fuzz server, leaves the goroutine count where it was.
func TestFuzzSeedsLeaveNoGoroutines(t *testing.T) {
	srv, panics := sharedServer(t)
	addr := srv.Addr().String()
	healthy(t, addr, panics)
	base := runtime.NumGoroutine()
	for _, in := range [][]byte{
		{0, 1, 0, 1, 0, 1, 1, 0, 1, 3, 5, 0, 3, 1, 0, 4},
		{7, 6, 8, 12, 49, 9},
		{7, 8, 13, 20, 0, 2, 0, 0, 0, 1, 49, 255, 255, 255, 255},
		{12, 0},
		{12, 200},
	} {
		exchange(t, addr, messages(in))
	}
	settleGoroutines(t, base)
	healthy(t, addr, panics)
}

// TestHugeFrameBeforeAuth: a client that has not authenticated cannot make
// the server reserve a large buffer by announcing a long message: the
// frame is refused from its header. (Before, each such connection held a
// 200 MiB buffer while the server waited for a body that never came, so
// a few dozen unauthenticated sockets could exhaust memory.)
func TestHugeFrameBeforeAuth(t *testing.T) {
	srv, url := startServer(t)
	admin := connect(t, url)
	if _, err := admin.Exec(context.Background(), "CREATE USER alice PASSWORD 'pw'"); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var conns []net.Conn
	for i := 0; i < 4; i++ {
		nc, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": "alice"}}).Encode(nil)
		// The SASLInitialResponse's header only, announcing 200 MiB.
		b = append(b, 'p', 0x0c, 0x80, 0x00, 0x00)
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
	}
	for _, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 4096)
		for {
			if _, err := nc.Read(buf); err != nil {
				break // closed by the server, or still waiting at the deadline
			}
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("4 unauthenticated connections announcing 200 MiB frames made the server allocate %d MiB", grew>>20)
	}
}
