// Package clients runs the clients people use against `strata serve`
// (issue 5, item 5): psql with a script that also runs \dt and \d,
// psycopg2 with parameters and COPY, node-postgres with a prepared
// statement, and Go's pgx and database/sql through lib/pq. Every client
// writes UINT256 max and a DATETIME64(3) and reads them back exactly.
//
// A missing client fails the test with the command that installs it
// (test/clients/install.sh, which CI runs); set STRATA_CLIENTS_SKIP to a
// comma list of psql, psycopg2, node (or "all") to skip them on a machine
// that lacks them. Set STRATA_CLIENTS_PG=host:port to run the very same
// programs against a PostgreSQL 15 instead (the one
// /work/shared/scripts/pg-peer.sh starts): that is how the programs
// themselves were checked, and psql's output is then compared with
// psql/expected.pg.out.
package clients

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/test/clients/goclients"
)

// target is the server the clients talk to.
type target struct {
	host, port, user, db string
	dialect              goclients.Dialect
	// metrics is strata serve's /metrics URL; empty for PostgreSQL.
	metrics string
}

func (tg target) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		// The caller's PG* settings must not leak into the clients.
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	env = append(env, "PGHOST="+tg.host, "PGPORT="+tg.port, "PGUSER="+tg.user,
		"PGDATABASE="+tg.db, "PGSSLMODE=disable", "PGTZ=UTC", "PGCONNECT_TIMEOUT=10")
	if tg.dialect == goclients.PG {
		env = append(env, "CLIENT_DIALECT=pg")
	}
	return env
}

func (tg target) url() string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", tg.user, net.JoinHostPort(tg.host, tg.port), tg.db)
}

func skipped(name string) bool {
	for _, s := range strings.Split(os.Getenv("STRATA_CLIENTS_SKIP"), ",") {
		if s = strings.TrimSpace(s); s == name || s == "all" {
			return true
		}
	}
	return false
}

// need fails the test when a client is missing, unless it is skipped.
func need(t *testing.T, name string, present bool, why string) {
	t.Helper()
	if present {
		return
	}
	if skipped(name) {
		t.Skipf("%s is not installed (%s); skipped because STRATA_CLIENTS_SKIP names it", name, why)
	}
	t.Fatalf("%s is not installed (%s): run test/clients/install.sh, or set STRATA_CLIENTS_SKIP=%s to skip it on this machine", name, why, name)
}

func TestClients(t *testing.T) {
	tg := startTarget(t)
	run := func(t *testing.T, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = tg.env()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s failed: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}

	// psql runs first, so its \dt lists only its own table.
	t.Run("psql", func(t *testing.T) {
		if tg.dialect == goclients.PG {
			// A reused PostgreSQL keeps the other clients' tables.
			run(t, "psql", "psql", "-X", "-q", "-c", "DROP TABLE IF EXISTS node_t, pgx_t, pq_t, py_t")
		}
		_, err := exec.LookPath("psql")
		need(t, "psql", err == nil, "no psql on PATH; Debian package postgresql-client")
		amount, at, expected := "UINT256", "DATETIME64(3, 'UTC')", "psql/expected.out"
		if tg.dialect == goclients.PG {
			amount, at, expected = "numeric", "timestamptz(3)", "psql/expected.pg.out"
		}
		got := run(t, "psql", "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1",
			"-v", "amount_type="+amount, "-v", "at_type="+at, "-f", "psql/script.sql")
		compareFile(t, expected, got)
	})
	t.Run("pgx", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := goclients.PGX(ctx, tg.url(), tg.dialect); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("lib/pq", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := goclients.PQ(ctx, tg.url(), tg.dialect); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("psycopg2", func(t *testing.T) {
		// Debian's python3-psycopg2 is seen only by /usr/bin/python3, not
		// by whichever python3 comes first on PATH.
		err := exec.Command("/usr/bin/python3", "-c", "import psycopg2").Run()
		need(t, "psycopg2", err == nil, "/usr/bin/python3 cannot import psycopg2; Debian package python3-psycopg2")
		if got := run(t, "psycopg2", "/usr/bin/python3", "python/client.py"); got != "psycopg2: ok\n" {
			t.Fatalf("psycopg2 printed %q", got)
		}
	})
	t.Run("node", func(t *testing.T) {
		_, err := exec.LookPath("node")
		need(t, "node", err == nil, "no node on PATH; Debian package nodejs")
		_, err = os.Stat("node/node_modules/pg/package.json")
		need(t, "node", err == nil, "node/node_modules has no pg; run npm ci in test/clients/node")
		if got := run(t, "node", "node", "node/client.js"); got != "node-postgres: ok\n" {
			t.Fatalf("node printed %q", got)
		}
	})
	// What the clients did shows on /metrics (issue 5, item 7).
	t.Run("metrics", func(t *testing.T) {
		if tg.metrics == "" {
			t.Skip("PostgreSQL has no /metrics")
		}
		resp, err := http.Get(tg.metrics)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", tg.metrics, resp.StatusCode, err)
		}
		for _, name := range []string{"strata_commits_total", "strata_rows_written_total",
			"strata_query_duration_seconds_count", "strata_wal_fsync_duration_seconds_count"} {
			m := regexp.MustCompile("(?m)^" + name + " ([0-9.e+]+)$").FindSubmatch(body)
			if m == nil {
				t.Errorf("/metrics has no %s", name)
				continue
			}
			if v, _ := strconv.ParseFloat(string(m[1]), 64); v < 5 {
				t.Errorf("%s = %s after every client ran, want at least 5", name, m[1])
			}
		}
		if !bytes.Contains(body, []byte(`strata_parts{shard="0",table="psql_t"}`)) {
			t.Errorf("/metrics lists no shard of psql_t:\n%s", body)
		}
	})
	// The runtime's profiles sit beside /metrics (cmd/strata/pprof.go).
	t.Run("pprof", func(t *testing.T) {
		if tg.metrics == "" {
			t.Skip("PostgreSQL has no --http")
		}
		url := strings.TrimSuffix(tg.metrics, "/metrics") + "/debug/pprof/goroutine?debug=1"
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
		}
		if !bytes.Contains(body, []byte("pgwire")) {
			t.Errorf("the goroutine profile names no pgwire goroutine:\n%.2000s", body)
		}
	})
}

// compareFile compares got with the file; STRATA_CLIENTS_REWRITE=1
// rewrites the file instead (read the diff before committing it).
func compareFile(t *testing.T, path, got string) {
	t.Helper()
	if os.Getenv("STRATA_CLIENTS_REWRITE") == "1" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

// startTarget builds strata and serves a fresh data directory on a free
// loopback port, or returns the PostgreSQL named by STRATA_CLIENTS_PG.
func startTarget(t *testing.T) target {
	t.Helper()
	if peer := os.Getenv("STRATA_CLIENTS_PG"); peer != "" {
		host, port, err := net.SplitHostPort(peer)
		if err != nil {
			t.Fatalf("STRATA_CLIENTS_PG=%q: want host:port: %v", peer, err)
		}
		return target{host: host, port: port, user: "postgres", db: "postgres", dialect: goclients.PG}
	}
	dir := t.TempDir()
	addr, httpAddr := freePort(t), freePort(t)
	startStrata(t, "", "serve", "--data", filepath.Join(dir, "data"), "--listen", addr, "--http", httpAddr).waitListening(t, addr)
	host, port, _ := net.SplitHostPort(addr)
	return target{host: host, port: port, user: "strata", db: "strata", dialect: goclients.Strata,
		metrics: "http://" + httpAddr + "/metrics"}
}

// strataBin is the strata command built once for the package's tests.
var strataBin struct {
	once sync.Once
	path string
	err  error
}

// buildStrata builds ./cmd/strata into a directory the test binary
// removes at exit (TestMain).
func buildStrata(t *testing.T) string {
	t.Helper()
	strataBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "strata-clients-")
		if err != nil {
			strataBin.err = err
			return
		}
		buildDirs = append(buildDirs, dir)
		strataBin.path = filepath.Join(dir, "strata")
		out, err := exec.Command("go", "build", "-o", strataBin.path, "../../cmd/strata").CombinedOutput()
		if err != nil {
			strataBin.err = fmt.Errorf("go build ./cmd/strata: %v\n%s", err, out)
		}
	})
	if strataBin.err != nil {
		t.Fatal(strataBin.err)
	}
	return strataBin.path
}

var buildDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range buildDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// syncBuffer is a bytes.Buffer that a running process writes while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// proc is a running strata command.
type proc struct {
	name   string
	stdout *syncBuffer // standard output
	logs   *syncBuffer // standard error
	done   chan struct{}
	err    error // its exit, once done is closed
}

// startStrata runs `strata args…` in dir (the test's working directory if
// ""), and stops it with SIGINT when the test ends; it must then exit 0
// within 30s.
func startStrata(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{name: "strata " + args[0], stdout: &syncBuffer{}, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd := exec.Command(buildStrata(t), args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = p.stdout, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
			if p.err != nil {
				t.Errorf("%s did not exit cleanly on SIGINT: %v", p.name, p.err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("%s did not exit within 30s of SIGINT", p.name)
		}
		if t.Failed() {
			t.Logf("%s standard error:\n%s", p.name, p.logs.String())
		}
	})
	return p
}

// waitListening waits until addr accepts connections, failing the test
// when the process exits first or 30s pass.
func (p *proc) waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before listening: %v\n%s", p.name, p.err, p.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not listening on %s after 30s\n%s", p.name, addr, p.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a loopback address no one listens on now. Another
// process could take it before strata does; the start then fails loudly.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
