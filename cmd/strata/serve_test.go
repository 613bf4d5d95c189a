package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/strata-db/strata/internal/pgwire"
)

// TestServeSubprocess runs `strata serve` as a real process: it serves
// queries, holds the directory against a second server (whose error names
// the holder's pid), refuses a taken port clearly, and exits 0 on SIGTERM.
func TestServeSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	var logs bytes.Buffer
	srv := exec.Command(bin, "serve", "--data", data, "--listen", addr, "--log-format", "json")
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() {
		if srv.ProcessState == nil {
			srv.Process.Kill()
		}
	}()
	waitListening(t, addr, exited, &logs)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://someone@"+addr+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT 1 + 1").Scan(&n); err != nil || n != 2 {
		t.Fatalf("SELECT 1 + 1: %v %v", n, err)
	}

	// A second server on the same directory: refused, naming the holder.
	out, err := exec.Command(bin, "serve", "--data", data, "--listen", freeAddr(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "held by pid "+strconv.Itoa(srv.Process.Pid)) {
		t.Fatalf("second serve on the directory: %v\n%s", err, out)
	}
	// Another directory on the taken port: a clear error.
	out, err = exec.Command(bin, "serve", "--data", filepath.Join(dir, "other"), "--listen", addr).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already in use") {
		t.Fatalf("serve on a taken port: %v\n%s", err, out)
	}
	// A non-loopback address with no user: refused with the way out.
	out, err = exec.Command(bin, "serve", "--data", filepath.Join(dir, "other2"), "--listen", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CREATE USER") {
		t.Fatalf("serve 0.0.0.0 without a user: %v\n%s", err, out)
	}

	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no exit 20s after SIGTERM\n%s", logs.String())
	}
	// The idle connection was told why it ends.
	if err := c.Ping(ctx); err == nil {
		t.Fatal("connection still works after shutdown")
	}
	if !strings.Contains(logs.String(), `"msg":"strata stopped"`) {
		t.Fatalf("no stop line in the JSON log:\n%s", logs.String())
	}
}

// buildBinary builds the strata command into a temporary directory and
// returns its path and a data directory path beside it (not created).
func buildBinary(t *testing.T) (bin, data string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin, filepath.Join(dir, "data")
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitListening(t *testing.T, addr string, exited chan error, logs *bytes.Buffer) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening after 20s\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeFlagErrors: flag mistakes fail before anything is opened.
func TestServeFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		fl   serveFlags
		want string
	}{
		{serveFlags{data: dir, logFormat: "xml", listen: "127.0.0.1:0"}, "--log-format"},
		{serveFlags{data: dir, logFormat: "text", logLevel: "verbose", listen: "127.0.0.1:0"}, "--log-level \"verbose\""},
		{serveFlags{data: dir, logFormat: "text", logLevel: "info+2", listen: "127.0.0.1:0"}, "--log-level"},
		{serveFlags{data: dir, logFormat: "text", listen: "127.0.0.1:0", tlsCert: "c.pem"}, "go together"},
		{serveFlags{data: dir, logFormat: "text", listen: "127.0.0.1:0", tlsCert: filepath.Join(dir, "no.pem"), tlsKey: filepath.Join(dir, "no.key")}, "TLS"},
		{serveFlags{data: dir, logFormat: "text", listen: "nonsense"}, "listen address"},
		{serveFlags{data: filepath.Join(dir, "never"), logFormat: "text", listen: "127.0.0.1:0", pageCacheMiB: -1}, "--page-cache-mib -1"},
		{serveFlags{data: filepath.Join(dir, "never"), logFormat: "text", listen: "127.0.0.1:0", hugePageMiB: -2}, "--huge-page-mib -2"},
	} {
		err := runServe(context.Background(), c.fl, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", c.fl, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); !os.IsNotExist(err) {
		t.Errorf("a rejected --page-cache-mib created the data directory: %v", err)
	}
}

// TestServeLogLevel: --log-level debug logs the debug lines (a client's
// connection), the default info level does not.
func TestServeLogLevel(t *testing.T) {
	for _, c := range []struct {
		level string
		want  bool
	}{{"debug", true}, {"", false}, {"info", false}} {
		out := &lockedBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		addrs := make(chan string, 1)
		done := make(chan error, 1)
		fl := serveFlags{data: t.TempDir(), listen: "127.0.0.1:0", logFormat: "text", logLevel: c.level, hugePageMiB: -1}
		go func() {
			done <- runServe(ctx, fl, out, func(srv *pgwire.Server) { addrs <- srv.Addr().String() })
		}()
		stopped := false
		stop := func() error {
			if stopped {
				return nil
			}
			stopped = true
			cancel()
			return <-done
		}
		// Registered after TempDir's cleanup, so run before it.
		t.Cleanup(func() { stop() })
		var addr string
		select {
		case addr = <-addrs:
		case err := <-done:
			stopped = true
			cancel()
			t.Fatalf("--log-level %q: %v", c.level, err)
		}
		conn, err := pgx.Connect(ctx, "postgres://strata@"+addr+"/strata?sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec(ctx, "SELECT 1")
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatalf("--log-level %q: %v", c.level, err)
		}
		// The connection was logged when it was accepted; a line written
		// by a connection still closing does not matter.
		if got := strings.Contains(out.String(), "pgwire: connected"); got != c.want {
			t.Errorf("--log-level %q: debug line logged %v, want %v:\n%s", c.level, got, c.want, out.String())
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a server's goroutines to write
// while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
