//go:build unix

package pgwire

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// setBlocking puts nc's socket in blocking mode, so that the connection's
// goroutine waits for the next message inside read(2), as a PostgreSQL
// backend does, instead of taking EAGAIN, parking, and being woken by the
// runtime's network poller (docs/pgwire.md, "Blocking reads"). It reports
// whether it did.
func setBlocking(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil || serr != nil {
		return false
	}
	return true
}

// shutdownSocket shuts nc's socket down in both directions: a read or
// write blocked in the kernel returns, which closing it would not do (and
// Go's Close waits for them).
func shutdownSocket(nc net.Conn) {
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { syscall.Shutdown(int(fd), syscall.SHUT_RDWR) }) //nolint:errcheck
		}
	}
}

// detach moves nc's socket off the runtime's network poller: it returns
// a blocking socket on a duplicate of the descriptor and closes nc, which
// takes the original out of the poller's epoll set. Left in the set (as
// setBlocking leaves it), every request that arrives while the
// connection's thread waits in read(2) would also wake the poller's
// thread, for nothing. On failure nc is left as it was.
func detach(nc net.Conn) (*fdSocket, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = syscall.Dup(int(fd)) }); err != nil || derr != nil {
		return nil, false
	}
	syscall.CloseOnExec(nfd)
	// O_NONBLOCK belongs to the open socket, shared by both descriptors.
	if err := syscall.SetNonblock(nfd, false); err != nil {
		syscall.Close(nfd)
		return nil, false
	}
	nc.Close()
	return &fdSocket{fd: nfd}, true
}

// fdSocket is a detached socket read and written with blocking system
// calls (syscall.Read and Write tell the runtime the thread may block).
// Only the connection's goroutine reads it and closes it (close, when the
// connection ends, under the connection's write lock, so no write is in
// progress); any goroutine may shut it down, which ends a read or write
// blocked in the kernel. mu keeps a shutdown from reaching a descriptor
// number that close has freed for reuse.
type fdSocket struct {
	fd     int
	mu     sync.Mutex
	closed atomic.Bool
}

// Read reads what the socket has, at least one byte; 0 bytes is io.EOF.
func (s *fdSocket) Read(p []byte) (int, error) {
	if s.closed.Load() {
		return 0, net.ErrClosed
	}
	for {
		n, err := syscall.Read(s.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p.
func (s *fdSocket) Write(p []byte) (int, error) {
	if s.closed.Load() {
		return 0, net.ErrClosed
	}
	done := 0
	for done < len(p) {
		n, err := syscall.Write(s.fd, p[done:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, &net.OpError{Op: "write", Net: "tcp", Err: err}
		}
		done += n
	}
	return done, nil
}

// shutdown shuts the socket down in both directions, unless it is closed.
func (s *fdSocket) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed.Load() {
		syscall.Shutdown(s.fd, syscall.SHUT_RDWR) //nolint:errcheck
	}
}

// close closes the descriptor once.
func (s *fdSocket) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed.Swap(true) {
		syscall.Close(s.fd) //nolint:errcheck
	}
}
