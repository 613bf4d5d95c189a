//go:build unix

package pgwire

import (
	"net"
	"os"
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
// a blocking *os.File on a duplicate of the descriptor and closes nc, which
// takes the original out of the poller's epoll set. Left in the set (as
// setBlocking leaves it), every request that arrives while the
// connection's thread waits in read(2) would also wake the poller's
// thread, for nothing. On failure nc is left as it was.
func detach(nc net.Conn) (*os.File, bool) {
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
	f := os.NewFile(uintptr(nfd), "pgwire socket")
	nc.Close()
	return f, true
}

// shutdownFile is shutdownSocket for a detached socket.
func shutdownFile(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.Shutdown(int(fd), syscall.SHUT_RDWR) }) //nolint:errcheck
	}
}
