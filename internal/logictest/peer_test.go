package logictest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The peer check: the scripts of test/sql that carry the comment line
// "# peer: postgresql" promise the results PostgreSQL returns, so
// TestSQLOnPostgres runs them on a real PostgreSQL through psql when
// STRATA_PG_PEER holds a psql connection string (../shared/scripts/pg-peer.sh
// starts one), e.g.
//
//	STRATA_PG_PEER="host=127.0.0.1 port=55432 user=postgres sslmode=disable" \
//	  go test ./internal/logictest -run SQLOnPostgres [-peer-rewrite]
//
// With -peer-rewrite it writes PostgreSQL's results into the scripts
// (Complete) instead of comparing: write a new script's SQL, let PostgreSQL
// fill in the expected output, read the diff.
// Each script gets its own new database; a restart reconnects to it.

// The separators psql is told to print between fields and records, and the
// text it prints for NULL: control bytes that no script's values contain.
const (
	peerMarker = "# peer: postgresql"
	peerField  = "\x1f"
	peerRecord = "\x1e"
	peerNull   = "\x01NULL\x01"
)

var peerRewrite = flag.Bool("peer-rewrite", false,
	"TestSQLOnPostgres: write PostgreSQL's results into the test/sql scripts it runs, instead of comparing")

func TestSQLOnPostgres(t *testing.T) {
	conn := os.Getenv("STRATA_PG_PEER")
	if conn == "" {
		t.Skip("set STRATA_PG_PEER to a psql connection string to check test/sql against PostgreSQL")
	}
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	peer := &pgPeer{conn: conn, dbs: map[string]string{}}
	t.Cleanup(peer.dropAll)
	ran := 0
	for _, f := range globOrFatal(t, filepath.Join(sqlDir(t), "*.slt")) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("\n"+peerMarker+"\n")) {
			continue
		}
		ran++
		t.Run(filepath.Base(f), func(t *testing.T) {
			if !*peerRewrite {
				RunFile(t, f, peer.open, Options{})
				return
			}
			out, rep, err := Complete(context.Background(), f, peer.open, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) {
				if err := os.WriteFile(f, out, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote PostgreSQL's results into %s: review the diff", f)
			}
			// Statements and queries that fail on PostgreSQL itself need a
			// person: completion cannot fix them.
			for _, fl := range rep.Failures {
				if fl.Expected == nil {
					t.Errorf("%s", fl)
				}
			}
		})
	}
	if ran == 0 {
		t.Errorf("no script in test/sql carries %q", peerMarker)
	}
}

// pgPeer opens one PostgreSQL database per data directory.
type pgPeer struct {
	conn string
	mu   sync.Mutex
	dbs  map[string]string // data directory -> database name
}

func (p *pgPeer) open(dir string) (DB, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	name, ok := p.dbs[dir]
	if !ok {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		name = "logictest_" + hex.EncodeToString(b[:])
		if _, err := psql(context.Background(), p.conn+" dbname=postgres", "CREATE DATABASE "+name); err != nil {
			return nil, err
		}
		p.dbs[dir] = name
	}
	return &pgDB{conn: p.conn + " dbname=" + name}, nil
}

func (p *pgPeer) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, name := range p.dbs {
		_, _ = psql(context.Background(), p.conn+" dbname=postgres", "DROP DATABASE IF EXISTS "+name)
	}
}

// pgDB runs every statement in its own psql process. Scripts keep no
// session state between statements, so that is enough.
type pgDB struct{ conn string }

func (d *pgDB) Exec(ctx context.Context, sql string) (*Result, error) {
	out, err := psql(ctx, d.conn, sql)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for _, rec := range strings.Split(strings.TrimSuffix(out, peerRecord), peerRecord) {
		if rec == "" {
			continue
		}
		var row []Value
		for _, v := range strings.Split(rec, peerField) {
			if v == peerNull {
				row = append(row, Null)
			} else {
				row = append(row, Text(v))
			}
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func (d *pgDB) Close() error { return nil }

// psql runs one statement and returns its unaligned, header-less output.
func psql(ctx context.Context, conn, sql string) (string, error) {
	cmd := exec.CommandContext(ctx, "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-F", peerField, "-R", peerRecord, "-P", "null="+peerNull, "-P", "footer=off", "-d", conn, "-c", sql)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: %w", msg, ctx.Err())
		}
		return "", errors.New(msg)
	}
	return strings.TrimSuffix(stdout.String(), "\n"), nil
}

// asWritten is the Rewrite of a peer engine: the corpus as written.
func asWritten(sql string) string { return sql }

// sqliteOpener returns an Opener for the SQLite peer: each database is a
// file in the run's data directory, served by testdata/sqlite_peer.py.
func sqliteOpener(t *testing.T) Opener {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "sqlite_peer.py"))
	if err != nil {
		t.Fatal(err)
	}
	python := "/usr/bin/python3" // the system one has sqlite3 for certain
	if _, err := os.Stat(python); err != nil {
		if python, err = exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed")
		}
	}
	return func(dir string) (DB, error) {
		cmd := exec.Command(python, script, filepath.Join(dir, "peer.sqlite"))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &sqliteDB{cmd: cmd, in: stdin, out: bufio.NewReader(stdout)}, nil
	}
}

// sqliteDB is one running sqlite_peer.py.
type sqliteDB struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (d *sqliteDB) Exec(ctx context.Context, sql string) (*Result, error) {
	// The answer will never come once the context ends: kill the peer so
	// that the read below returns.
	stop := context.AfterFunc(ctx, func() { _ = d.cmd.Process.Kill() })
	defer stop()
	req, err := json.Marshal(map[string]string{"sql": sql})
	if err != nil {
		return nil, err
	}
	if _, err := d.in.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("sqlite peer: %w", err)
	}
	line, err := d.out.ReadBytes('\n')
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("sqlite peer: %w", err)
	}
	var ans struct {
		Rows  [][]*string `json:"rows"`
		Error *string     `json:"error"`
	}
	if err := json.Unmarshal(line, &ans); err != nil {
		return nil, fmt.Errorf("sqlite peer: %w", err)
	}
	if ans.Error != nil {
		return nil, errors.New(*ans.Error)
	}
	res := &Result{Rows: make([][]Value, len(ans.Rows))}
	for r, row := range ans.Rows {
		res.Rows[r] = make([]Value, len(row))
		for c, v := range row {
			if v == nil {
				res.Rows[r][c] = Null
			} else {
				res.Rows[r][c] = Text(*v)
			}
		}
	}
	return res, nil
}

func (d *sqliteDB) Close() error {
	if err := d.in.Close(); err != nil {
		return err
	}
	return d.cmd.Wait()
}
