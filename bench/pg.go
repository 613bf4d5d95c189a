package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// pgServer is a PostgreSQL started the way ../shared/scripts/pg-peer.sh
// starts one: a fresh data directory, the loopback address only, fsync and
// synchronous_commit left on (their defaults), shared_buffers 1 GB. As root
// it runs as the postgres user, which PostgreSQL requires.
type pgServer struct {
	bin, data string
	asUser    string
	dsn       string
}

// pgBin finds the newest installed PostgreSQL's bin directory.
func pgBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(dirs) == 0 {
		return "", fmt.Errorf("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin; apt-get install postgresql)")
	}
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	return dirs[len(dirs)-1], nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *pgServer) run(ctx context.Context, name string, args ...string) error {
	path := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startPostgres initialises and starts a server under dir.
func startPostgres(ctx context.Context, dir string) (*pgServer, error) {
	bin, err := pgBin()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &pgServer{bin: bin, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres user: %w", err)
		}
		s.asUser = "postgres"
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		// The server's user must reach the directory: open the temporary
		// parents for traversal and hand it dir.
		for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
			if strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
				if err := os.Chmod(d, 0o755); err != nil {
					return nil, err
				}
			}
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if err := s.run(ctx, "initdb", "-D", s.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c shared_buffers=1GB -c max_connections=50 -c fsync=on -c synchronous_commit=on", port, dir)
	if err := s.run(ctx, "pg_ctl", "-D", s.data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		return nil, err
	}
	s.dsn = fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", port)
	return s, nil
}

// stop shuts the server down; the harness removes its directory.
func (s *pgServer) stop() error {
	return s.run(context.Background(), "pg_ctl", "-D", s.data, "-m", "fast", "-w", "stop")
}
