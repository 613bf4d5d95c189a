package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// strataPG is Strata over the PostgreSQL wire protocol: the harness builds
// cmd/strata from this repository, runs `strata serve` on a free loopback
// port and talks to it through pgx, the statements being Strata's own
// (bench/peers/strata.sql).
type strataPG struct {
	seed uint64
	data string
	cmd  *exec.Cmd
	sqlReads
	buf []byte
	// logPath, if set, receives the server's log at debug level
	// (-engine-log) instead of serve.log in its directory.
	logPath string
}

// errNotAvailable marks a system that cannot run on this machine or in
// this tree; the run reports it instead of a number.
var errNotAvailable = errors.New("not available")

func (x *strataPG) Name() string { return "strata-pg" }

// repoRoot finds the main module's directory above the working directory.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/strata-db/strata\n") {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", fmt.Errorf("%w: the Strata repository is not above %s", errNotAvailable, d)
		}
		d = p
	}
}

func (x *strataPG) Open(ctx context.Context, dir string) error {
	st, err := statements("strata")
	if err != nil {
		return err
	}
	if err := need(st, "strata", "wire_point", "wire_point_asof"); err != nil {
		return err
	}
	// The amount read as text, as the peers read it (peers/strata.sql).
	st["point"], st["point_asof"] = st["wire_point"], st["wire_point_asof"]
	x.st = st
	root, err := repoRoot()
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "strata")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/strata")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: go build ./cmd/strata: %v\n%s", errNotAvailable, err, out)
	}
	if out, err := exec.CommandContext(ctx, bin, "serve", "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "--listen") {
		return fmt.Errorf("%w: this strata has no serve --listen", errNotAvailable)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	x.data = filepath.Join(dir, "data")
	args := []string{"serve", "--data", x.data, "--listen", addr, "--page-cache-mib", fmt.Sprint(pageCacheBytes >> 20)}
	logPath := filepath.Join(dir, "serve.log")
	if x.logPath != "" {
		args = append(args, "--log-level", "debug")
		logPath = x.logPath
	}
	x.cmd = exec.Command(bin, args...)
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	x.cmd.Stdout, x.cmd.Stderr = logf, logf
	err = x.cmd.Start()
	// The server writes to its own copy of the descriptor.
	logf.Close()
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("strata serve did not listen on %s within 30 s (see %s)", addr, logf.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=strata dbname=strata sslmode=disable", port)
	if x.db, err = sql.Open("pgx", dsn); err != nil {
		return err
	}
	x.db.SetMaxOpenConns(1)
	if _, err := x.db.ExecContext(ctx, st["schema"]); err != nil {
		return fmt.Errorf("strata-pg schema: %w", err)
	}
	if x.point, err = x.db.PrepareContext(ctx, st["point"]); err != nil {
		return err
	}
	x.versions, err = x.db.PrepareContext(ctx, st["versions"])
	return err
}

func (x *strataPG) Ingest(ctx context.Context, rows []Row, _ int) (uint64, error) {
	x.buf = ingestSQL(x.buf, x.st["ingest"], x.seed, rows)
	// One statement is one commit (R5.1); last_commit() says which, on
	// the same connection.
	conn, err := x.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, string(x.buf)); err != nil {
		return 0, err
	}
	var c uint64
	if err := conn.QueryRowContext(ctx, "SELECT last_commit()").Scan(&c); err != nil {
		return 0, err
	}
	return c, nil
}

func (x *strataPG) overWire() bool { return true }

// Settle runs CHECKPOINT: the server flushes and runs its due merges
// before it returns, as the embedded system's MergeNow does.
func (x *strataPG) Settle(ctx context.Context) (bool, error) {
	_, err := x.db.ExecContext(ctx, "CHECKPOINT")
	return true, err
}

func (x *strataPG) Bytes(context.Context) (int64, error) { return dirBytes(x.data) }

func (x *strataPG) Close() error {
	var err error
	if x.db != nil {
		err = x.db.Close()
	}
	if x.cmd != nil && x.cmd.Process != nil {
		_ = x.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- x.cmd.Wait() }()
		select {
		case e := <-done:
			if err == nil && e != nil {
				err = fmt.Errorf("strata serve: %w", e)
			}
		case <-time.After(30 * time.Second):
			_ = x.cmd.Process.Kill()
			<-done
		}
	}
	return err
}

// serverPID is the strata serve process, which answers every connection.
func (x *strataPG) serverPID(context.Context) (int, error) {
	if x.cmd == nil || x.cmd.Process == nil {
		return 0, errors.New("strata serve is not running")
	}
	return x.cmd.Process.Pid, nil
}
