package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/strata-db/strata/internal/storage"
)

// panicCounter is a slog handler that counts the server's "panic serving a
// connection" records: the server survives a panic by design, so the fuzz
// targets need this to see one at all.
type panicCounter struct {
	n    atomic.Int64
	mu   sync.Mutex
	last string
}

func (h *panicCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *panicCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *panicCounter) WithGroup(string) slog.Handler            { return h }
func (h *panicCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.Key + "=" + a.Value.String())
			return true
		})
		h.mu.Lock()
		h.last = b.String()
		h.mu.Unlock()
		h.n.Add(1)
	}
	return nil
}

// fuzzServer is one server per fuzzing process, shared by every input (a
// server per input would spend the run starting engines).
var fuzzServer struct {
	once   sync.Once
	srv    *Server
	panics *panicCounter
	err    error
}

func sharedServer(t testing.TB) (*Server, *panicCounter) {
	fuzzServer.once.Do(func() {
		dir, err := tempDir()
		if err != nil {
			fuzzServer.err = err
			return
		}
		eng, err := storage.Open(dir, storage.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			fuzzServer.err = err
			return
		}
		pc := &panicCounter{}
		srv, err := New(eng, Config{Listen: "127.0.0.1:0", Logger: slog.New(pc)})
		if err != nil {
			fuzzServer.err = err
			return
		}
		go srv.Serve(context.Background())
		fuzzServer.srv, fuzzServer.panics = srv, pc
		// The tables the generated statements name.
		nc, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			fuzzServer.err = err
			return
		}
		defer nc.Close()
		msgs := startupBytes()
		msgs = appendMsg(msgs, &pgproto3.Query{String: "CREATE TABLE f (id INT64, s STRING, d DECIMAL(10,2), PRIMARY KEY (id)) MODE VERSIONED; " +
			"CREATE TABLE a (x INT32, b BYTES) MODE APPEND; INSERT INTO f VALUES (1, 'one', 1.5), (2, NULL, NULL)"})
		msgs = appendMsg(msgs, &pgproto3.Terminate{})
		if _, err := nc.Write(msgs); err != nil {
			fuzzServer.err = err
			return
		}
		io.Copy(io.Discard, nc)
	})
	if fuzzServer.err != nil {
		t.Fatal(fuzzServer.err)
	}
	return fuzzServer.srv, fuzzServer.panics
}

// tempDir is a directory for the shared server's data; it lives as long as
// the fuzzing process (t.TempDir would go with the first input).
var tempDir = func() (string, error) { return os.MkdirTemp("", "strata-pgwire-fuzz-") }

func startupBytes() []byte {
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "fuzz", "database": "strata"}}).Encode(nil)
	return b
}

func appendMsg(dst []byte, m pgproto3.FrontendMessage) []byte {
	out, err := m.Encode(dst)
	if err != nil {
		return dst
	}
	return out
}

// exchange sends b on a fresh connection, half-closes it so the server sees
// the end of the stream, and reads every reply until the server closes. A
// server that neither answers nor closes after the client's end is a hang,
// and an internal error (XX000) in an ErrorResponse is a bug. It returns
// the replies' error codes.
func exchange(t testing.TB, addr string, b []byte) []string {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	// The write may fail when the server closes early on a bad message.
	nc.Write(b)
	nc.(*net.TCPConn).CloseWrite()
	// The first reply bytes may be the one-byte answer to SSLRequest or
	// GSSENCRequest, which a frontend cannot decode: read raw, then decode
	// what follows a valid startup only.
	raw, err := io.ReadAll(nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server neither answered nor closed within 20s of the client's end (%d bytes read)", len(raw))
	}
	var codes []string
	for len(raw) >= 5 {
		if raw[0] == 'N' || raw[0] == 'S' {
			// An SSL/GSS answer byte when it does not start a frame.
			if n := binary.BigEndian.Uint32(raw[1:5]); n < 4 || int(n) > len(raw)-1 {
				raw = raw[1:]
				continue
			}
		}
		n := int(binary.BigEndian.Uint32(raw[1:5]))
		if n < 4 || n+1 > len(raw) {
			break
		}
		if raw[0] == 'E' {
			var e pgproto3.ErrorResponse
			if e.Decode(raw[5:n+1]) == nil {
				codes = append(codes, e.Code)
				if e.Code == "XX000" {
					t.Errorf("internal error for input %q: %s", b, e.Message)
				}
			}
		}
		raw = raw[n+1:]
	}
	return codes
}

// healthy checks that a fresh connection is served and answers a query.
func healthy(t testing.TB, addr string, panics *panicCounter) {
	t.Helper()
	if n := panics.n.Load(); n != 0 {
		panics.mu.Lock()
		defer panics.mu.Unlock()
		t.Fatalf("the server logged %d panic(s); last: %s", n, panics.last)
	}
	msgs := appendMsg(startupBytes(), &pgproto3.Query{String: "SELECT 40 + 2"})
	msgs = appendMsg(msgs, &pgproto3.Terminate{})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("a fresh connection after the input: %v", err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := nc.Write(msgs); err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(nc)
	if !strings.Contains(string(raw), "42") {
		t.Fatalf("a fresh connection after the input got no answer to SELECT 40 + 2: %q", raw)
	}
}

// FuzzStartup: arbitrary bytes as the first packet(s) of a connection get a
// FATAL error or a closed connection, and the server keeps serving.
func FuzzStartup(f *testing.F) {
	f.Add([]byte{0, 0, 0, 8, 4, 210, 22, 47})                          // SSLRequest
	f.Add([]byte{0, 0, 0, 8, 4, 210, 22, 48})                          // GSSENCRequest
	f.Add([]byte{0, 0, 0, 16, 4, 210, 22, 46, 0, 0, 0, 1, 0, 0, 0, 2}) // CancelRequest
	f.Add(startupBytes())
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0}) // a 2 GiB length
	f.Add([]byte("\x00\x00\x00\x14\x00\x03\x00\x00user\x00\x00\x00\x00"))
	f.Add([]byte("\x00\x00\x00\x1a\x00\x03\x00\x02user\x00u\x00_pq_.x\x00y\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		srv, panics := sharedServer(t)
		exchange(t, srv.Addr().String(), b)
		healthy(t, srv.Addr().String(), panics)
	})
}

// FuzzAfterStartup: arbitrary bytes after a valid startup packet.
func FuzzAfterStartup(f *testing.F) {
	f.Add([]byte("Q\x00\x00\x00\x0dSELECT 1\x00"))
	f.Add([]byte("d\x00\x00\x00\x08abcd"))
	f.Add([]byte("P\x7f\xff\xff\xff"))
	f.Add([]byte("B\x00\x00\x00\x0c\x00\x00\xff\xff\xff\xff\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		srv, panics := sharedServer(t)
		exchange(t, srv.Addr().String(), append(startupBytes(), b...))
		healthy(t, srv.Addr().String(), panics)
	})
}

// fuzzQueries are the statements the message fuzzer prepares or sends; the
// parameters and formats around them are what it varies.
var fuzzQueries = []string{
	"SELECT * FROM f WHERE id = $1",
	"INSERT INTO f VALUES ($1, $2, $3)",
	"UPSERT INTO f (id, s) VALUES ($1, $2)",
	"SELECT $1::INT64 + $2",
	"SELECT $1::DECIMAL(10,2), $2::BYTES, $3::UUID, $4::DATE, $5::DATETIME64(6, 'UTC')",
	"SELECT id, s, d FROM f",
	"COPY f FROM STDIN",
	"COPY f FROM STDIN (FORMAT csv)",
	"COPY f FROM STDIN (FORMAT binary)",
	"COPY a FROM STDIN (FORMAT binary)",
	"COPY f TO STDOUT",
	"BEGIN", "COMMIT", "ROLLBACK",
	"SELECT 1/0",
	"",
	"SELECT 1; SELECT 2",
	"SELECT * FROM versions(f) WHERE id = $1",
	"DELETE FROM f WHERE id = $1",
	"SELECT nope FROM",
	"SET statement_timeout = $1",
}

// fuzzReader hands out the input's bytes as small numbers, zero past the end.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) bytes(n int) []byte {
	if n > len(r.b) {
		n = len(r.b)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *fuzzReader) name() string { return [...]string{"", "s1", "s2", "unknown"}[r.byte()%4] }

// messages turns fuzz input into a sequence of well-formed frontend
// messages with wrong counts, formats, lengths and orders.
func messages(in []byte) []byte {
	r := &fuzzReader{b: in}
	out := startupBytes()
	oids := []uint32{0, 16, 17, 20, 21, 23, 25, 700, 701, 1043, 1082, 1184, 1700, 2950, 99999}
	for steps := 0; len(r.b) > 0 && steps < 64; steps++ {
		switch op := r.byte() % 14; op {
		case 0:
			m := &pgproto3.Parse{Name: r.name(), Query: fuzzQueries[int(r.byte())%len(fuzzQueries)]}
			for i := int(r.byte() % 6); i > 0; i-- {
				m.ParameterOIDs = append(m.ParameterOIDs, oids[int(r.byte())%len(oids)])
			}
			out = appendMsg(out, m)
		case 1:
			m := &pgproto3.Bind{DestinationPortal: r.name(), PreparedStatement: r.name()}
			for i := int(r.byte() % 4); i > 0; i-- {
				m.ParameterFormatCodes = append(m.ParameterFormatCodes, int16(r.byte()%3))
			}
			for i := int(r.byte() % 7); i > 0; i-- {
				if n := r.byte(); n == 255 {
					m.Parameters = append(m.Parameters, nil)
				} else {
					m.Parameters = append(m.Parameters, r.bytes(int(n%24)))
				}
			}
			for i := int(r.byte() % 4); i > 0; i-- {
				m.ResultFormatCodes = append(m.ResultFormatCodes, int16(r.byte()%3))
			}
			out = appendMsg(out, m)
		case 2:
			out = appendMsg(out, &pgproto3.Describe{ObjectType: "SPX"[r.byte()%3], Name: r.name()})
		case 3:
			out = appendMsg(out, &pgproto3.Execute{Portal: r.name(), MaxRows: uint32(r.byte() % 3)})
		case 4:
			out = appendMsg(out, &pgproto3.Sync{})
		case 5:
			out = appendMsg(out, &pgproto3.Flush{})
		case 6:
			out = appendMsg(out, &pgproto3.Close{ObjectType: "SPX"[r.byte()%3], Name: r.name()})
		case 7:
			out = appendMsg(out, &pgproto3.Query{String: fuzzQueries[int(r.byte())%len(fuzzQueries)]})
		case 8:
			out = appendMsg(out, &pgproto3.CopyData{Data: r.bytes(int(r.byte() % 64))})
		case 9:
			out = appendMsg(out, &pgproto3.CopyDone{})
		case 10:
			out = appendMsg(out, &pgproto3.CopyFail{Message: "fuzz"})
		case 11:
			out = appendMsg(out, &pgproto3.FunctionCall{Function: 1, ResultFormatCode: 0})
		case 12:
			// A frame announcing far more than follows.
			t := "QPBDEHSdcf"[r.byte()%10]
			out = append(out, t)
			out = binary.BigEndian.AppendUint32(out, uint32(r.byte())<<24|0xffff)
			return out
		case 13:
			// Binary COPY framing: signature, then raw tuples.
			data := append([]byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"), r.bytes(int(r.byte()%48))...)
			out = appendMsg(out, &pgproto3.CopyData{Data: data})
		}
	}
	out = appendMsg(out, &pgproto3.Sync{})
	return appendMsg(out, &pgproto3.Terminate{})
}

// FuzzMessages: sequences of well-formed frontend messages in any order
// with any counts (Bind with the wrong number of parameters or formats,
// Execute of unknown portals, COPY data without COPY, frames longer than
// what follows) get ErrorResponses or a closed connection, never a panic
// or an internal error, and the server keeps serving.
func FuzzMessages(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 0, 1, 1, 0, 1, 3, 5, 0, 3, 1, 0, 4})            // Parse, Bind, Execute, Sync
	f.Add([]byte{1, 1, 1, 0, 3, 1, 2, 3, 4, 1, 3, 1, 0, 4})                  // Bind of an unknown statement
	f.Add([]byte{8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 9, 4})                // CopyData without COPY
	f.Add([]byte{7, 6, 8, 12, 49, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}) // COPY FROM, then data
	f.Add([]byte{7, 8, 13, 20, 0, 2, 0, 0, 0, 1, 49, 255, 255, 255, 255})    // binary COPY
	f.Add([]byte{12, 0})
	f.Add([]byte{7, 11, 0, 0, 6, 1, 3, 4, 2, 2, 2, 2, 1, 1, 1, 3, 1, 1, 4})
	f.Fuzz(func(t *testing.T, in []byte) {
		srv, panics := sharedServer(t)
		exchange(t, srv.Addr().String(), messages(in))
		healthy(t, srv.Addr().String(), panics)
	})
}
